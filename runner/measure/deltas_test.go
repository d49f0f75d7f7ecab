package measure

import (
	"strings"
	"testing"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/stats"
)

// TestRowCellFamily: BenchmarkDeltas judges a row by every figure of its profile, each
// interval at the row's family level, and counts a row flagged when any figure flags. A
// fixed-rate row's RPS (the offered rate) is not among its figures; a CPU/req rise is a
// change for the worse.
func TestRowCellFamily(t *testing.T) {
	fixed, _ := profile.Lookup("latency-10k")
	// run is one 10 s run at 10,000 requests/s with the given CPU µs per request and p99.
	run := func(cpuUS, p99 float64) result.Run {
		return result.Run{RPS: 10000, Status2xx: 100000, DurationS: 10, CPUCores: cpuUS * 10000 / 1e6, LatencyUS: result.Latency{P99: p99}}
	}
	side := func(p99 float64, cpu ...float64) []result.Run {
		var rs []result.Run
		for _, c := range cpu {
			rs = append(rs, run(c, p99+c)) // p99 moves a little with the run
		}
		return rs
	}
	rule := stats.DefaultRule
	// CPU/req +20% with ±2% noise: flagged, worse; p99 unchanged.
	spin := newRowCell(&result.Result{Runs: side(1000, 60, 61, 59, 60), Base: &result.Side{Runs: side(1000, 50, 51, 49, 50), Stop: stats.StopMaxRuns}}, fixed)
	if len(spin.figures) != 2 {
		t.Fatalf("%d figures; want latency-10k's two (cpu/req, p99)", len(spin.figures))
	}
	if got := summarize([]figureCell{spin.figures[0]}, rule, profile.FigureCPUPerReq, func(c figureCell) (stats.Diff, error) { return c.diff, c.err }); !strings.HasPrefix(got, "flagged 1/1 (worse 1/1), median Δ +20.0%") {
		t.Errorf("cpu/req of a +20%% spin: %q; want it flagged worse", got)
	}
	if got := summarizeRow([]rowCell{spin}, rule); !strings.HasPrefix(got, "2 figures at 97.5%: any flagged 1/1 by welch, 1/1 paired") {
		t.Errorf("row of a +20%% spin: %q; want it flagged by both methods at the family level of two figures", got)
	}
	// A CPU/req difference whose 95% interval excludes zero but whose 97.5% one does not:
	// one cell of several flags by luck more often, so the family level leaves it unflagged.
	base, head := side(1000, 50, 53, 47, 50, 52, 48), side(1000, 53.4, 56.4, 50.4, 53.4, 55.4, 51.4)
	d95, _ := stats.Compare(result.Values(base, "cpu/req"), result.Values(head, "cpu/req"))
	edge := newRowCell(&result.Result{Runs: head, Base: &result.Side{Runs: base}}, fixed)
	if !d95.ExcludesZero() || edge.figures[0].diff.ExcludesZero() {
		t.Fatalf("the test's samples: 95%% %+.3f ±%.3f, family %+.3f ±%.3f; want only the 95%% interval to exclude zero",
			d95.Rel, d95.Half, edge.figures[0].diff.Rel, edge.figures[0].diff.Half)
	}
	if got := summarizeRow([]rowCell{edge}, rule); !strings.Contains(got, "any flagged 0/1 by welch") {
		t.Errorf("row whose CPU/req flags only at 95%%: %q; want it not flagged at the family level", got)
	}
	if !worse(profile.FigureRPS, -0.1) || worse(profile.FigureRPS, 0.1) || !worse(profile.FigureP99, 0.1) {
		t.Error("worse: less RPS and more p99 are worse")
	}
}
