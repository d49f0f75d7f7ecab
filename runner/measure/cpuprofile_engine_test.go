package measure

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/host"
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
	unlock, err := host.LockHost(t.Context(), func(holder string) { t.Logf("waiting for the host lock (%s)", holder) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
	root, err := filepath.Abs("../../frameworks")
	if err != nil {
		t.Fatal(err)
	}
	e, err := frameworks.Load(root, "nethttp", profile.Names())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.RemoveImagesLabeled(context.WithoutCancel(t.Context()), labelJob, jobLabel(t)) })
	p, _ := profile.Lookup("baseline")
	b := New(eng, Config{Root: root, DataDir: data, ScratchDir: t.TempDir(), Lite: true, Runs: 2, Duration: time.Second,
		SkipValidation: true, BuildArgs: map[string]string{"GO_IMAGE": "arenabot/golang:local"},
		Rule:   stats.Rule{MinEffect: 0.02, Target: 1e-9, MinRuns: 2, MaxRuns: 2},
		Labels: map[string]string{labelJob: jobLabel(t)}, Progress: &runnertest.Notes{}})
	plan := Plan{Lite: true, CPUProfile: profile.CPUProfileFirst,
		Targets: []Target{{Entry: e, Profiles: []profile.Profile{p}, Base: &Base{Entry: e}}}}
	if err := b.Prepare(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rows, err := b.Measure(t.Context(), plan)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("measured and profiled in %s", time.Since(start).Round(time.Second))
	if len(rows) != 1 || rows[0].Err != nil || rows[0].Result == nil {
		t.Fatalf("rows %+v; want one measured row", rows)
	}
	r := rows[0].Result
	cp := r.CPUProfile
	if cp == nil || cp.Err != "" || cp.Samples == 0 {
		t.Fatalf("profile %+v; want one with samples", cp)
	}
	if cp.Base == nil || cp.Base.Samples == 0 || cp.Diff == nil {
		t.Errorf("base profile %+v, difference %+v; want both", cp.Base, cp.Diff)
	}
	var cum []string
	for _, f := range cp.TopCum {
		cum = append(cum, f.Name)
	}
	if !slices.ContainsFunc(cum, func(n string) bool { return strings.HasPrefix(n, "net/http.(*conn).serve") }) {
		t.Errorf("top cumulative functions %q; want net/http.(*conn).serve", cum)
	}
	if len(rows[0].Pprof) == 0 || len(rows[0].Flame) == 0 {
		t.Errorf("pprof %d bytes, flame graph %d bytes; want both", len(rows[0].Pprof), len(rows[0].Flame))
	}
	if cp.Diff != nil {
		for _, c := range cp.Diff.Self {
			t.Logf("self %s", c)
		}
	}
}
