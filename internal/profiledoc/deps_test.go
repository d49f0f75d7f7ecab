package profiledoc_test

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

// TestDeps: the doc is rendered from the profile table, the adapters and the checks only.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{Module: []string{"text", "frameworks", "profile", "runner/loadgen", "validate", "validate/protocol", "result", "runner/compose"}}) // result: through loadgen
}
