package runner

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{
		Module: []string{"text", "frameworks", "queue", "validate", "validate/protocol", "profile", "profile/selection", "result", "runner/build", "runner/loadgen", "runner/docker", "runner/cgroup", "runner/host", "arenadata", "stats"},
		Banned: map[string]string{
			"github.com/google/go-github/v60/github": "the runner never holds GitHub credentials",
		},
	})
}
