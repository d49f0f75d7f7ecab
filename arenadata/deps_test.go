package arenadata_test

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

// TestDeps keeps the package a leaf: it imports nothing from the module, so the profile
// table, validate and the runner can all use it.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{ThirdParty: []string{"github.com/andybalholm/brotli"}})
}
