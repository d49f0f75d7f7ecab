package measure

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/runnertest"
	"github.com/arenabot/arenabot/stats"
)

// TestProfilePairOnEngine: a profiled row measured against a base (here nethttp against
// itself, as --compare would), in --lite mode on the real engine with real wrk and perf:
// both sides get a profiling run on fresh servers, the head's result carries the base's
// profile and the difference, and the head's top cumulative functions are net/http's
// serving path. Under CI a missing perf fails the test.
func TestProfilePairOnEngine(t *testing.T) {
	eng, data := runnertest.Engine(t, "")
	if _, err := exec.LookPath("perf"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI needs perf (Debian: linux-perf): %v", err)
		}
		t.Skip("perf is not on PATH")
	}
	runnertest.StandIns(t, eng, "arenabot/golang:local")
	root, err := filepath.Abs("../../frameworks")
	if err != nil {
		t.Fatal(err)
	}
	e, err := frameworks.Load(root, "nethttp", profile.Names())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.RemoveImagesLabeled(context.WithoutCancel(t.Context()), labelJob, runnertest.JobLabel(t)) })
	p, _ := profile.Lookup("baseline")
	b := New(eng, Config{Root: root, DataDir: data, ScratchDir: t.TempDir(), Lite: true, Runs: 2, Duration: time.Second,
		SkipValidation: true, BuildArgs: map[string]string{"GO_IMAGE": "arenabot/golang:local"},
		Rule:   stats.Rule{MinEffect: 0.02, Target: 1e-9, MinRuns: 2, MaxRuns: 2},
		Labels: map[string]string{labelJob: runnertest.JobLabel(t)}, Progress: &runnertest.Notes{}})
	plan := Plan{Lite: true, CPUProfile: profile.CPUProfileFirst,
		Targets: []Target{{Entry: e, Profiles: []profile.Profile{p}, Base: &Base{Entry: e}}}}
	// Build first, then take the host lock, as a job does: the other packages'
	// measurements are not held up by this one's builds.
	b.Prebuild(t.Context(), plan)
	lockHost(t)
	if err := b.Prepare(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	// Two tries: on a machine loaded by the whole suite a base run that got no response
	// fails the base side (.ci/flaky: 3m45s for the row), and a failed base is not profiled;
	// that is the measurement's rule, not the profile's, so the row is measured once more.
	// So is a row whose base's profiling run failed (.ci/flaky: both sides measured, the
	// base's profile missing): the result says why, and the next try must profile both.
	var r *result.Result
	var row result.Row
	for try := 1; ; try++ {
		start := time.Now()
		rows, err := b.Measure(t.Context(), plan)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("try %d: measured and profiled in %s", try, time.Since(start).Round(time.Second))
		if len(rows) != 1 || rows[0].Err != "" || rows[0].Result == nil {
			t.Fatalf("rows %+v; want one measured row", rows)
		}
		row, r = rows[0], rows[0].Result
		baseFailed := r.Base != nil && r.Base.Err != ""
		cp := r.CPUProfile
		baseProfileFailed := cp != nil && cp.Err == "" && cp.Base != nil && cp.Base.Err != ""
		if !baseFailed && !baseProfileFailed || try == 2 {
			break
		}
		if baseFailed {
			t.Logf("try %d: the base failed (%s); measuring again", try, r.Base.Err)
		} else {
			t.Logf("try %d: the base's profiling run failed (%s); measuring again", try, cp.Base.Err)
		}
	}
	cp := r.CPUProfile
	if cp == nil || cp.Err != "" || cp.Samples == 0 {
		t.Fatalf("profile %+v; want one with samples", cp)
	}
	if cp.Base == nil || cp.Base.Err != "" || cp.Base.Samples == 0 || cp.Diff == nil {
		t.Errorf("base profile %+v, difference %+v (base side %+v); want both", cp.Base, cp.Diff, r.Base)
	}
	var cum []string
	for _, f := range cp.TopCum {
		cum = append(cum, f.Name)
	}
	if !slices.ContainsFunc(cum, func(n string) bool { return strings.HasPrefix(n, "net/http.(*conn).serve") }) {
		t.Errorf("top cumulative functions %q; want net/http.(*conn).serve", cum)
	}
	if len(row.Pprof) == 0 || len(row.Flame) == 0 {
		t.Errorf("pprof %d bytes, flame graph %d bytes; want both", len(row.Pprof), len(row.Flame))
	}
	if cp.Diff != nil {
		for _, c := range cp.Diff.Self {
			t.Logf("self %s", c)
		}
	}
}

var profileOverhead = flag.Bool("profile.overhead", false, "measure what a profiling run costs a real container row (nethttp baseline, lite; about 2 min)")

// TestProfileOverheadOnEngine measures what profiling costs a real row: one nethttp server
// (lite, baseline 512), unprofiled and profiled 3 s runs interleaved (the order swapped each
// pair), comparing RPS and server CPU per request. Opt-in: -profile.overhead.
func TestProfileOverheadOnEngine(t *testing.T) {
	if !*profileOverhead {
		t.Skip("opt-in: -profile.overhead")
	}
	eng, data := runnertest.Engine(t, "")
	runnertest.StandIns(t, eng, "arenabot/golang:local")
	root, _ := filepath.Abs("../../frameworks")
	e, err := frameworks.Load(root, "nethttp", profile.Names())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := profile.Lookup("baseline")
	b := New(eng, Config{Root: root, DataDir: data, ScratchDir: t.TempDir(), Lite: true, Duration: 3 * time.Second,
		SkipValidation: true, BuildArgs: map[string]string{"GO_IMAGE": "arenabot/golang:local"}, Labels: map[string]string{labelJob: runnertest.JobLabel(t)}})
	plan := Plan{Lite: true, Targets: []Target{{Entry: e, Profiles: []profile.Profile{p}}}}
	// Build first, then take the host lock, as a job does: the other packages'
	// measurements are not held up by this one's builds.
	b.Prebuild(t.Context(), plan)
	lockHost(t)
	if err := b.Prepare(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	image, err := b.Build(t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.open(t.Context(), image, e, p, p.ConnCounts(true)[0])
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if err := b.tools.warmUp(t.Context(), s.tool.tool, s.spec, time.Second); err != nil {
		t.Fatal(err)
	}
	var rps, cpu []float64
	for pair := range 4 {
		var plain result.Run
		var prof *cpuRun
		for _, profiled := range []bool{pair%2 == 1, pair%2 == 0} {
			if profiled {
				c, err := b.prof.record(t.Context(), s, p, []result.Run{plain})
				if err != nil {
					t.Fatal(err)
				}
				prof = c
				continue
			}
			if plain, err = b.tools.runOnce(t.Context(), s.tool.tool, s.args, s.spec, s.group); err != nil {
				t.Fatal(err)
			}
		}
		r, c := prof.run.RPS/plain.RPS, cpuPerRequest(prof.run)/cpuPerRequest(plain)
		rps, cpu = append(rps, r), append(cpu, c)
		t.Logf("pair %d: unprofiled %.0f rps, profiled %.0f rps (%d samples): ratio %.3f rps, %.3f cpu/req", pair+1, plain.RPS, prof.run.RPS, prof.res.Samples, r, c)
	}
	slices.Sort(rps)
	slices.Sort(cpu)
	t.Logf("profiled ÷ unprofiled: RPS median %.3f (%.3f-%.3f), CPU/request median %.3f (%.3f-%.3f)",
		(rps[1]+rps[2])/2, rps[0], rps[3], (cpu[1]+cpu[2])/2, cpu[0], cpu[3])
}
