package host

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

// TestDeps: the host's facts need the standard library and the result model (the shape of
// current.json) only.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{Module: []string{"result", "internal/clock"}, StdOnly: true})
}
