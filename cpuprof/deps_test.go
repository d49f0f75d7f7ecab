package cpuprof_test

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

// TestDeps keeps the package a leaf: the runner will call it after a row's measured runs,
// and the bot may read its summaries, so it must not import either.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{
		ThirdParty: []string{"github.com/google/pprof/profile", "github.com/ianlancetaylor/demangle"},
	})
}
