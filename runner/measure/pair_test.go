package measure

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/profile"
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
	if len(rows) != 1 || rows[0].Err != nil || rows[0].Result == nil || rows[0].Result.Base == nil {
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
