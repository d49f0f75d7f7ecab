package plan

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{Module: []string{"text", "bot/command", "md", "frameworks", "profile", "profile/selection"}, StdOnly: true})
}
