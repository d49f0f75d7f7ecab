package metrics

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

// TestDeps: the collector knows the queue and Prometheus; nothing of the bot or the runner.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{Module: []string{"queue", "profile", "text"}}) // profile: the row key a queued job carries
}
