package bot

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{
		Module: []string{"text",
			"frameworks", "queue", "profile", "profile/selection", "result", "stats",
			"bot/command", "bot/hook", "bot/ghapi", "md", "bot/plan", "bot/route", "bot/report", "internal/clock", "settings",
		},
		Banned: map[string]string{
			"github.com/arenabot/arenabot/runner":         "the bot never imports the runner: the data it shares with it lives in profile/, result/ and stats/",
			"github.com/arenabot/arenabot/runner/measure": "the bot never measures: rows reach it as the queue's events",
			"github.com/arenabot/arenabot/runner/build":   "the bot never builds images",
			"github.com/arenabot/arenabot/runner/docker":  "the bot never runs containers",
			"github.com/docker/docker/client":             "the bot never runs containers",
		},
	})
}
