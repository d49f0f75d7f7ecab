package report

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
	allowed := map[string]bool{
		"github.com/arenabot/arenabot/bot/report":     true,
		"github.com/arenabot/arenabot/runner/result":  true,
		"github.com/arenabot/arenabot/runner/profile": true,
	}
	for dep := range strings.Lines(string(out)) {
		dep = strings.TrimSpace(dep)
		if strings.HasPrefix(dep, "github.com/arenabot/arenabot/") && !allowed[dep] {
			t.Errorf("report depends on %s; the bot sees only the runner's data packages", dep)
		}
		if strings.HasPrefix(dep, "github.com/docker/") || dep == "testing" {
			t.Errorf("report depends on %s", dep)
		}
	}
}
