package arenagen

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

// TestDeps: the generator's reader knows nothing of this harness, so it cannot share a
// mistake with the writer it checks.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{StdOnly: true})
}
