package measure

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/runnertest"
	"github.com/arenabot/arenabot/stats"
)

// vanishing is a Progress that runs remove once, when the run after the first one starts.
type vanishing struct {
	runnertest.Notes
	once   sync.Once
	remove func()
}

func (v *vanishing) Step(_ string, done, _ int) {
	if done == 1 {
		v.once.Do(v.remove)
	}
}

// TestBaseVanishesMidRow: the base's image is removed from the host between the row's first
// and last base runs (base images are kept between jobs, so an operator's prune or another
// process may do it while a job runs, as .ci/flaky met): the base is built again, saying so,
// and the row keeps its base runs instead of "the base failed".
func TestBaseVanishesMidRow(t *testing.T) {
	eng, data := runnertest.Engine(t, "")
	runnertest.StandIns(t, eng, "arenabot/golang:local")
	head := sidecarEntry(t)
	base := sidecarEntry(t)
	base.Name = "sidecars-base"
	head.Meta.Tests, base.Meta.Tests = []string{"baseline"}, []string{"baseline"}
	baseTag := build.ImageTag(base.Name)
	t.Cleanup(func() {
		eng.RemoveImagesLabeled(context.WithoutCancel(t.Context()), labelJob, runnertest.JobLabel(t))
		eng.RemoveImage(context.WithoutCancel(t.Context()), baseTag)
	})
	progress := &vanishing{remove: func() {
		if err := eng.RemoveImage(context.WithoutCancel(t.Context()), baseTag); err != nil {
			t.Errorf("remove the base image: %v", err)
		}
	}}
	p, _ := profile.Lookup("baseline")
	p.Conns = []int{16}
	b := New(eng, Config{DataDir: data, ScratchDir: t.TempDir(), Runs: 2, Duration: time.Second, SkipValidation: true,
		Rule: stats.Rule{MinEffect: 0.02, Target: 1e-9, MinRuns: 2, MaxRuns: 2}, Progress: progress,
		Labels: map[string]string{labelJob: runnertest.JobLabel(t)}})
	plan := Plan{Targets: []Target{{Entry: head, Profiles: []profile.Profile{p}, Base: &Base{Entry: base}}}}
	// Build first, then take the host lock, as a job does: the other packages'
	// measurements are not held up by this one's builds.
	b.Prebuild(t.Context(), plan)
	lockHost(t)
	if err := b.Prepare(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	rows, err := b.Measure(t.Context(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Err != "" || rows[0].Result == nil || rows[0].Result.Base == nil {
		t.Fatalf("rows %+v; want one row measured against its base", rows)
	}
	side := rows[0].Result.Base
	if side.Err != "" || len(side.Runs) != 2 || side.Order != "BHHB" {
		t.Errorf("base side: err %q, %d runs, order %q; want no error, 2 runs, BHHB", side.Err, len(side.Runs), side.Order)
	}
	want := "the base image " + baseTag + " is no longer on the host; building it again"
	if !slices.ContainsFunc(progress.Lines, func(l string) bool { return strings.Contains(l, want) }) {
		t.Errorf("notes %q; want one saying %q", progress.Lines, want)
	}
}

// TestStopOnPrimaryFigure: an interleaved row stops when its profile's primary figure's
// interval is narrow enough, and says which. On a fixed-rate row the achieved rate is the
// offered rate whatever the server does, so its RPS interval is ±0 after three runs; the
// row follows CPU per request instead. A closed-loop row follows RPS, and a run without a
// CPU reading lacks that sample without keeping the row from stopping at the run limit.
func TestStopOnPrimaryFigure(t *testing.T) {
	fixed, _ := profile.Lookup("latency-10k")
	closed, _ := profile.Lookup("baseline")
	rule := stats.Rule{MinEffect: 0.02, Target: 0.02, MinRuns: 3, MaxRuns: 5}
	// runs makes one run per CPU µs per request at rps for 10 s.
	runs := func(rps float64, cpuUS ...float64) []result.Run {
		out := make([]result.Run, len(cpuUS))
		for i, c := range cpuUS {
			n := int64(rps * 10)
			out[i] = result.Run{RPS: rps, Status2xx: n, DurationS: 10, CPUCores: c * float64(n) / 10 / 1e6}
		}
		return out
	}
	steady := []float64{50, 50.2, 49.9} // CPU µs per request within ±0.5%
	noisy := []float64{40, 60, 50}      // ±20%
	vary := func(r []result.Run, rps ...float64) []result.Run {
		for i := range r {
			r[i].RPS = rps[i]
		}
		return r
	}
	for _, c := range []struct {
		name       string
		p          profile.Profile
		base, head []result.Run
		over       bool
		want       string
	}{
		{"fixed rate, CPU/req steady", fixed, runs(10000, steady...), runs(10000, steady...), false, stats.StopNarrow + " (cpu/req)"},
		{"fixed rate, RPS ±0 but CPU/req noisy", fixed, runs(10000, noisy...), runs(10000, steady...), false, ""},
		{"fixed rate, two runs a side", fixed, runs(10000, 50, 50), runs(10000, 50, 50), false, ""},
		{"fixed rate, no CPU reading, below the run limit", fixed, runs(10000, 0, 0, 0), runs(10000, 0, 0, 0), false, ""},
		{"fixed rate, no CPU reading, at the run limit", fixed, runs(10000, 0, 0, 0, 0, 0), runs(10000, 0, 0, 0, 0, 0), false, stats.StopMaxRuns},
		{"fixed rate, one CPU reading missing", fixed, runs(10000, 50, 0, 50.2, 49.9), runs(10000, 50, 50.1, 49.9), false, stats.StopNarrow + " (cpu/req)"},
		{"fixed rate, noisy, budget spent", fixed, runs(10000, noisy...), runs(10000, noisy...), true, stats.StopBudget},
		{"closed loop, RPS steady, CPU/req noisy", closed, vary(runs(0, noisy...), 100000, 100200, 99900), vary(runs(0, noisy...), 95000, 95100, 94900), false, stats.StopNarrow + " (rps)"},
		{"closed loop, RPS noisy, CPU/req steady", closed, vary(runs(0, steady...), 80000, 120000, 100000), vary(runs(0, steady...), 100000, 100100, 99900), false, ""},
	} {
		if got := stop(rule, c.p, c.base, c.head, c.over); got != c.want {
			t.Errorf("%s: stop %q; want %q", c.name, got, c.want)
		}
	}
}
