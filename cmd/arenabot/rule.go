package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/stats"
)

// ruleFlags are the flags of the rule that rows measured against a base follow (bench
// --against or --compare, and every job of work).
type ruleFlags struct {
	minEffect, target float64 // percent
	minRuns, maxRuns  int
	budget            time.Duration
}

func (r *ruleFlags) flags(fs *pflag.FlagSet, budget time.Duration) {
	d := stats.DefaultRule
	fs.Float64Var(&r.minEffect, "min-effect", d.MinEffect*100, "the smallest Δ, in percent, that is called a change when its 95% interval excludes zero")
	fs.Float64Var(&r.target, "target-width", d.Target*100, "a row measured against a base stops once its Δ interval's half-width, in percent, is under this")
	fs.IntVar(&r.minRuns, "min-runs", d.MinRuns, "runs a side, at least, of a row measured against a base")
	fs.IntVar(&r.maxRuns, "max-runs", d.MaxRuns, "runs a side, at most, of a row measured against a base")
	fs.DurationVar(&r.budget, "budget", budget, "after this long, rows measured against a base stop at --min-runs (0: no limit)")
}

// rule checks the flags and returns the rule they give.
func (r *ruleFlags) rule(cmd string) (stats.Rule, error) {
	switch {
	case r.minEffect < 0 || r.target <= 0:
		return stats.Rule{}, fmt.Errorf("%s: --min-effect %g and --target-width %g: give percentages, --target-width above 0", cmd, r.minEffect, r.target)
	case r.minRuns < 2:
		return stats.Rule{}, fmt.Errorf("%s: --min-runs %d: an interval needs at least 2 runs a side", cmd, r.minRuns)
	case r.maxRuns < r.minRuns:
		return stats.Rule{}, fmt.Errorf("%s: --max-runs %d is below --min-runs %d", cmd, r.maxRuns, r.minRuns)
	case r.budget < 0:
		return stats.Rule{}, fmt.Errorf("%s: --budget %s: give 0 or a positive duration", cmd, r.budget)
	}
	return stats.Rule{MinEffect: r.minEffect / 100, Target: r.target / 100, MinRuns: r.minRuns, MaxRuns: r.maxRuns}, nil
}
