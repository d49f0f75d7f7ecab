package validate

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

// TestDeps: the checks know the entries and the profiles, never the runner that calls them.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{
		Module: []string{"frameworks", "profile", "validate/protocol"},
		Banned: map[string]string{
			"github.com/arenabot/arenabot/runner":        "the checks are called by the runner and never import it",
			"github.com/arenabot/arenabot/runner/docker": "a check talks HTTP to a server it is given; it runs no containers",
		},
	})
}
