package arenadata_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps keeps the package a leaf: it imports nothing from the module, so the profile
// table, validate and the runner can all use it.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	const self = "github.com/arenabot/arenabot/runner/arenadata"
	for dep := range strings.Lines(string(out)) {
		dep = strings.TrimSpace(dep)
		if strings.HasPrefix(dep, "github.com/arenabot/arenabot") && dep != self {
			t.Errorf("arenadata depends on %s; it must import nothing from the module", dep)
		}
		if dep == "testing" {
			t.Errorf("arenadata depends on testing in its production build")
		}
	}
}
