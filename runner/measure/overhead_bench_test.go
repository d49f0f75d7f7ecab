package measure_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/runner"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/measure"
)

// BenchmarkOverhead runs a whole bench of one entry over all its profiles with its image
// cached and reports the share of wall time spent outside the measured windows (container
// start, readiness, teardown, tool start); it should be ≤ 10%.
func BenchmarkOverhead(b *testing.B) {
	ctx := context.Background()
	eng, err := docker.New(ctx)
	if err != nil {
		b.Skip(err)
	}
	defer eng.Close()
	data, err := arenadata.Ensure(filepath.Join(os.TempDir(), "arenabot-test-cache"))
	if err != nil {
		b.Fatal(err)
	}
	root, _ := filepath.Abs("../../frameworks")
	lite := os.Getenv("ARENA_BENCH_FULL") == ""
	plan, err := runner.NewPlan(root, []string{measure.BenchEntry()}, nil, lite)
	if err != nil {
		b.Fatal(err)
	}
	// Lite connection counts, but native pinned tools: the benchmark host's loop on fewer rows.
	bn := measure.New(eng, measure.Config{DataDir: data, ScratchDir: b.TempDir()})
	if err := bn.Prepare(ctx, plan); err != nil {
		b.Fatal(err)
	}
	if _, err := bn.Build(ctx, plan.Targets[0].Entry); err != nil { // warm the image cache
		b.Fatal(err)
	}
	var wall, measured time.Duration
	var names []string
	for range b.N {
		start := time.Now()
		rows, err := bn.Measure(ctx, plan)
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		for _, r := range rows {
			if r.Err != "" {
				b.Fatalf("%s %dc: %v", r.Profile, r.Conns, r.Err)
			}
			for _, run := range r.Result.Runs {
				measured += time.Duration(run.DurationS * float64(time.Second))
			}
			names = append(names, r.Profile)
		}
	}
	b.Logf("profiles: %s", strings.Join(names, ", "))
	b.ReportMetric(100*(1-float64(measured)/float64(wall)), "overhead-%")
	b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s")
}
