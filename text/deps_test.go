package text

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

// TestDeps: a leaf every stage may import; it imports the standard library only.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{StdOnly: true})
}
