package build

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

// TestDeps: building images needs the entries, the Docker driver and the load tools'
// install facts; never the measurement (runner/measure) or the job service (runner).
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{
		Module: []string{"text", "frameworks", "profile", "runner/docker", "runner/loadgen", "runner/host", "result", "internal/clock"}, // result: the latency type a load tool reports; runner/host: the lock files (and its waits, internal/clock)
		Banned: map[string]string{
			"github.com/arenabot/arenabot/runner":         "the job service uses the builder, not the other way",
			"github.com/arenabot/arenabot/runner/measure": "measurement uses the builder, not the other way",
			"github.com/google/go-github/v60/github":      "the runner never holds GitHub credentials",
		},
	})
}
