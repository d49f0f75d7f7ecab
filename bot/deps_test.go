package bot

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{
		Module: []string{
			"frameworks", "queue", "runner/profile", "runner/profile/selection", "runner/result", "runner/stats",
			"bot/command", "bot/hook", "bot/ghapi", "bot/md", "bot/plan", "bot/report",
		},
		Banned: map[string]string{
			"github.com/arenabot/arenabot/runner":        "the bot imports only the runner's data packages",
			"github.com/arenabot/arenabot/runner/docker": "the bot never runs containers",
			"github.com/docker/docker/client":            "the bot never runs containers",
		},
	})
}
