package doctor

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

// TestDeps: the checks use the runner's own packages (and what they import) and the queue's Redis settings; bot
// never imports this package (bot may not import runner at all).
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{
		Module: []string{"profile", "text", "frameworks", "result", "runner/build", "runner/docker", "runner/host", "runner/loadgen", "cpuprof", "queue/redisconn", "internal/clock"},
		Banned: map[string]string{
			"github.com/google/go-github/v60/github": "the runner never holds GitHub credentials",
		},
	})
}
