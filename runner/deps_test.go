package runner

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

// TestDeps: the job service drives runner/measure, which uses runner/build; both below it
// (their own TestDeps keep them from importing it back).
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{
		Module: []string{"text", "frameworks", "queue", "validate", "validate/protocol", "profile", "profile/selection", "result", "runner/measure", "runner/build", "runner/loadgen", "runner/docker", "runner/cgroup", "cpuprof", "runner/host", "runner/compose", "result/site", "arenadata", "stats", "internal/clock"},
		Banned: map[string]string{
			"github.com/google/go-github/v60/github": "the runner never holds GitHub credentials",
		},
	})
}
