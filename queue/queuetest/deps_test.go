package queuetest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps: queuetest helps the queue's tests only, so from this module it
// imports the queue and nothing else (and, through it, profile: the row key a job carries). (It imports testing by design, so
// internal/deptest, which forbids that, does not fit.)
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for dep := range strings.Lines(string(out)) {
		dep = strings.TrimSpace(dep)
		switch dep {
		case "github.com/arenabot/arenabot/queue", "github.com/arenabot/arenabot/queue/queuetest", "github.com/arenabot/arenabot/profile", "github.com/arenabot/arenabot/text":
			continue
		}
		if strings.HasPrefix(dep, "github.com/arenabot/arenabot") {
			t.Errorf("queuetest depends on %s; it may import only the queue", dep)
		}
	}
}
