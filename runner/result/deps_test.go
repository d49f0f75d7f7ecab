package result

import (
	"os/exec"
	"strings"
	"testing"
)

func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for dep := range strings.Lines(string(out)) {
		dep = strings.TrimSpace(dep)
		if strings.HasPrefix(dep, "github.com/arenabot/arenabot/") && dep != "github.com/arenabot/arenabot/runner/result" {
			t.Errorf("result depends on %s; the result model is data and imports nothing from the module", dep)
		}
		if dep == "testing" {
			t.Error("result depends on testing in its production build")
		}
	}
}
