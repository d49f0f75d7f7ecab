package compose

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

// TestDeps keeps the package a leaf: the standard library, compose-go (with what it needs)
// and the profile table; nothing of the runner, the queue or the bot.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{
		Module: []string{"profile", "text"},
		Banned: map[string]string{
			"github.com/docker/docker/client":     "only runner/docker talks to Docker",
			"github.com/arenabot/arenabot/runner": "the runner uses this package, not the other way round",
		},
	})
}
