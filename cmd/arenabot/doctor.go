package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/doctor"
)

// doctorConfig says which roles' checks to run, with the settings work and serve would use.
type doctorConfig struct {
	Runner, Bot bool
	work        workConfig
	bot         doctor.BotConfig
}

func parseDoctor(args []string, getenv func(string) string, stderr io.Writer) (doctorConfig, error) {
	fs := pflag.NewFlagSet("doctor", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: arenabot doctor [--runner] [--bot] [flags]\n\nChecks this host for what the runner (work) and the bot (serve) need, one line per\ncheck: ok, warn or FAIL, what was measured and the fix. Exits 1 on a FAIL. Without\n--runner or --bot it checks both. It takes work's and serve's flags and ARENA_*\nvariables, so give it the same settings they run with.\n\nflags:")
		fs.PrintDefaults()
	}
	var c doctorConfig
	fs.BoolVar(&c.Runner, "runner", false, "check the benchmark host (arenabot work)")
	fs.BoolVar(&c.Bot, "bot", false, "check the webhook service's host (arenabot serve)")
	fs.StringVar(&c.bot.Listen, "listen", envOr(getenv, "ARENA_LISTEN", ":8080"), "serve's HTTP address (ARENA_LISTEN)")
	fs.StringVar(&c.bot.RedisURL, "redis-url", getenv("ARENA_REDIS_URL"), "the queue's Redis; unset: the embedded store in --state-dir (ARENA_REDIS_URL)")
	redisTLSFlags(fs, getenv, &c.bot.RedisTLS)
	fs.StringVar(&c.bot.StateDir, "state-dir", defaultStateDir(getenv), "serve's embedded store (ARENA_STATE_DIR)")
	c.work.runnerFlags(fs, getenv)
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("doctor: unexpected argument %q; doctor takes flags only", fs.Arg(0))
	}
	if !c.Runner && !c.Bot {
		c.Runner, c.Bot = true, true
	}
	return c, c.work.check("doctor")
}

// runnerChecks are the runner checks for work's settings.
func (c *workConfig) runnerChecks(env doctor.Env) []doctor.Check {
	return doctor.RunnerChecks(doctor.RunnerConfig{
		ServerCPUs: c.ServerCPUs, LoadgenCPUs: c.LoadgenCPUs, Lite: c.Lite,
		ImageMap: c.ImageMap, WorkDir: c.WorkDir,
	}, env)
}

// doctorCommand prints the checks; a FAIL makes it exit 1.
func doctorCommand(ctx context.Context, c doctorConfig, getenv func(string) string, stdout io.Writer) error {
	env := doctor.System()
	env.Getenv = getenv
	var checks []doctor.Check
	if c.Runner {
		checks = append(checks, c.work.runnerChecks(env)...)
	}
	if c.Bot {
		checks = append(checks, doctor.BotChecks(c.bot, env)...)
	}
	if doctor.Print(stdout, doctor.RunAll(ctx, checks)) {
		return errReported
	}
	return nil
}

// checkRunnerHost is what work does before it claims a job (once the leftovers of an earlier
// runner are removed): the runner checks, warns logged, a FAIL refused.
func checkRunnerHost(ctx context.Context, c workConfig, log *slog.Logger) error {
	return doctor.Gate(ctx, c.runnerChecks(doctor.System()), log.With("component", "doctor"))
}
