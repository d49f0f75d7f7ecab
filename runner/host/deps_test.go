package host

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

// TestDeps: the host's facts need the standard library only.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{StdOnly: true})
}
