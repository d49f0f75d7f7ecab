package report

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{Module: []string{"text", "md", "result", "profile", "stats"}, Banned: map[string]string{"github.com/docker/docker/client": "the bot never runs containers"}})
}
