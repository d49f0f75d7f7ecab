package runnertest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps: runnertest helps the runner's tests only, so from this module it imports the
// Docker driver, the host's locks (and the shared result types its facts are kept in), the
// entries and the arena data, nothing of the stages it helps test. (It
// imports testing by design, so internal/deptest, which forbids that, does not fit.)
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{}
	for _, p := range []string{"runner/runnertest", "runner/docker", "runner/host", "internal/clock", "frameworks", "arenadata", "text", "result"} {
		allowed["github.com/arenabot/arenabot/"+p] = true
	}
	for dep := range strings.Lines(string(out)) {
		dep = strings.TrimSpace(dep)
		if strings.HasPrefix(dep, "github.com/arenabot/arenabot/") && !allowed[dep] {
			t.Errorf("runnertest depends on %s; it may import only the Docker driver, the host locks, the result types, the entries and the arena data", dep)
		}
	}
}
