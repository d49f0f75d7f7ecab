package measure

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

// TestDeps: measuring needs the builder, the Docker driver, the host's facts, the load
// tools and the checks; never the job service (runner) or the queue, which drive it.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{
		Module: []string{"text", "frameworks", "validate", "validate/protocol", "profile", "result", "stats", "arenadata",
			"runner/build", "runner/loadgen", "runner/docker", "runner/cgroup", "cpuprof", "runner/host", "runner/compose", "internal/clock"},
		Banned: map[string]string{
			"github.com/arenabot/arenabot/runner":    "the job service drives measurements, not the other way",
			"github.com/arenabot/arenabot/queue":     "measurements know nothing of jobs; the worker turns rows into events",
			"github.com/google/go-github/v60/github": "the runner never holds GitHub credentials",
		},
	})
}
