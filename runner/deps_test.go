package runner

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
		switch {
		case strings.HasPrefix(dep, "github.com/arenabot/arenabot/bot"):
			t.Errorf("runner depends on %s; results travel to the bot as data, never by import", dep)
		case strings.HasPrefix(dep, "github.com/google/go-github"), strings.HasPrefix(dep, "github.com/bradleyfalzon/ghinstallation"):
			t.Errorf("runner depends on %s; the runner never holds GitHub credentials", dep)
		case dep == "testing":
			t.Error("runner depends on testing in its production build")
		}
	}
}
