package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/runner/measure"
	"github.com/arenabot/arenabot/stats"
)

// measureFlags are the measurement options bench and work (serve --runner too) share: each
// is a field here, a flag in flags, a check in check and one line of apply, which copies
// them into the measure.Config both commands measure with.
type measureFlags struct {
	Lite        bool // bench --lite; work's defaults to ARENA_LITE (serve plans its acks' rows in it too)
	Runs        int
	Duration    time.Duration
	LoadgenCPUs string
	Threads     int // bench --threads; work measures with the default
	Rule        stats.Rule

	deltas  ruleFlags
	badLite string // an ARENA_LITE that is not a boolean, reported by checkLite
}

// flags registers the measurement flags of cmd ("bench", or "work" for the runner): bench
// words --runs for its rows measured alone, has --threads, and gives rows against a base
// no budget; work reads --lite from ARENA_LITE and gives them an hour.
func (m *measureFlags) flags(fs *pflag.FlagSet, getenv func(string) string, cmd string) {
	if cmd == "bench" {
		fs.BoolVar(&m.Lite, "lite", false, "contributors' mode: no CPU pinning, one connection count per test, load tools in Docker")
		fs.IntVar(&m.Runs, "runs", 3, "runs of a row measured alone; the best is reported (a row measured against a base follows --min-runs and --max-runs)")
	} else {
		lite, err := strconv.ParseBool(envOr(getenv, "ARENA_LITE", "false"))
		if err != nil {
			m.badLite = getenv("ARENA_LITE")
		}
		fs.BoolVar(&m.Lite, "lite", lite, "measure as bench --lite does (no pinning, load tools in Docker): for trying the loop on a laptop, not for published numbers; serve plans the acks' rows in this mode, so set it on a bot whose runners use it (ARENA_LITE)")
		fs.IntVar(&m.Runs, "runs", 3, "runs per measurement; the best is reported")
	}
	fs.DurationVar(&m.Duration, "duration", 0, "length of one run (default: the test's own, else 5s)")
	if cmd == "bench" {
		fs.StringVar(&m.LoadgenCPUs, "loadgen-cpus", getenv("ARENA_LOADGEN_CPUS"), "cpuset of the load tools (env ARENA_LOADGEN_CPUS; default: upper half)")
		fs.IntVar(&m.Threads, "threads", 0, "load-tool threads (default: one per load-generator CPU)")
		m.deltas.flags(fs, 0)
	} else {
		fs.StringVar(&m.LoadgenCPUs, "loadgen-cpus", getenv("ARENA_LOADGEN_CPUS"), "cpuset of the load tools (ARENA_LOADGEN_CPUS; default: upper half)")
		m.deltas.flags(fs, time.Hour)
	}
}

// checkLite reports an ARENA_LITE that is not a boolean.
func (m *measureFlags) checkLite(cmd string) error {
	if m.badLite != "" {
		return fmt.Errorf("%s: ARENA_LITE %q: want true or false", cmd, m.badLite)
	}
	return nil
}

// check checks the flags and sets Rule from the rule's flags.
func (m *measureFlags) check(cmd string) error {
	if err := m.checkLite(cmd); err != nil {
		return err
	}
	if m.Runs < 1 {
		return fmt.Errorf("%s: --runs %d: need at least one run", cmd, m.Runs)
	}
	if m.Duration < 0 || (m.Duration > 0 && m.Duration < time.Second) {
		return fmt.Errorf("%s: --duration %s: give at least 1s (wrk measures in whole seconds)", cmd, m.Duration)
	}
	rule, err := m.deltas.rule(cmd)
	if err != nil {
		return err
	}
	m.Rule = rule
	return nil
}

// apply copies the options into a measurement's configuration.
func (m *measureFlags) apply(c *measure.Config) {
	c.Lite, c.Runs, c.Duration = m.Lite, m.Runs, m.Duration
	c.LoadgenCPUs, c.Threads = m.LoadgenCPUs, m.Threads
	c.Rule, c.Budget = m.Rule, m.deltas.budget
}
