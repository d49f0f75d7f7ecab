package measure

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/stats"
)

// TestRowCellFamily: BenchmarkDeltas judges a row by every Δ cell the reply shows for it
// (its profile's figures, Δ memory and, on a fixed-rate row, Δ score), each interval at the
// row's family level, and counts a row flagged when any cell flags. A fixed-rate row's RPS
// (the offered rate) is not among them; a CPU/req rise is a change for the worse, and a drop
// of the score.
func TestRowCellFamily(t *testing.T) {
	fixed, _ := profile.Lookup("latency-10k")
	// run is one 10 s run at 10,000 requests/s with the given CPU µs per request and p99.
	run := func(cpuUS, p99 float64) result.Run {
		return result.Run{RPS: 10000, Status2xx: 100000, DurationS: 10, CPUCores: cpuUS * 10000 / 1e6,
			LatencyUS: result.Latency{P99: p99, Mean: p99 / 4}, MemoryPeak: 20 << 20}
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
	spin := newRowCell(comparison{HeadRuns: side(1000, 60, 61, 59, 60), BaseRuns: side(1000, 50, 51, 49, 50), Stop: stats.StopMaxRuns}, fixed)
	if got, want := cellNames(fixed), []string{"cpu/req", "p99", "mem", "score"}; !slices.Equal(got, want) || len(spin.figures) != len(want) {
		t.Fatalf("cells %q, %d measured; want latency-10k's %q", got, len(spin.figures), want)
	}
	if got := summarize([]figureCell{spin.figures[0]}, rule, string(profile.FigureCPUPerReq), func(c figureCell) (stats.Diff, error) { return c.diff, c.err }); !strings.HasPrefix(got, "flagged 1/1 (worse 1/1), median Δ +20.0%") {
		t.Errorf("cpu/req of a +20%% spin: %q; want it flagged worse", got)
	}
	if got := summarize([]figureCell{spin.figures[3]}, rule, cellScore, func(c figureCell) (stats.Diff, error) { return c.diff, c.err }); !strings.HasPrefix(got, "flagged 1/1 (worse 1/1), median Δ -") {
		t.Errorf("score of a +20%% spin: %q; want it flagged as a drop", got)
	}
	if got := summarizeRow([]rowCell{spin}, rule); !strings.HasPrefix(got, "4 figures at 98.8%: any flagged 1/1 by welch, 1/1 paired") {
		t.Errorf("row of a +20%% spin: %q; want it flagged by both methods at the family level of four cells", got)
	}
	// A CPU/req difference whose 95% interval excludes zero but whose 97.5% one does not:
	// one cell of several flags by luck more often, so the family level leaves it unflagged.
	base, head := side(1000, 50, 53, 47, 50, 52, 48), side(1000, 53.4, 56.4, 50.4, 53.4, 55.4, 51.4)
	d95, _ := stats.Compare(result.Values(base, "cpu/req"), result.Values(head, "cpu/req"))
	edge := newRowCell(comparison{HeadRuns: head, BaseRuns: base}, fixed)
	if !d95.ExcludesZero() || edge.figures[0].diff.ExcludesZero() {
		t.Fatalf("the test's samples: 95%% %+.3f ±%.3f, family %+.3f ±%.3f; want only the 95%% interval to exclude zero",
			d95.Rel, d95.Half, edge.figures[0].diff.Rel, edge.figures[0].diff.Half)
	}
	if got := summarizeRow([]rowCell{edge}, rule); !strings.Contains(got, "any flagged 0/1 by welch") {
		t.Errorf("row whose CPU/req flags only at 95%%: %q; want it not flagged at the family level", got)
	}
	if !worse("rps", -0.1) || worse("rps", 0.1) || !worse("p99", 0.1) || !worse(cellMem, 0.1) || !worse(cellScore, -0.1) || worse(cellScore, 0.1) {
		t.Error("worse: less RPS or score and more p99 or memory are worse")
	}
}

// TestComparisonsRoundTrip: what -delta-out writes, -delta-in reads back whole, and a line
// that is not a comparison is an error naming its place.
func TestComparisonsRoundTrip(t *testing.T) {
	want := []comparison{
		{Variant: "nethttp-aa", Pair: 1, Test: "baseline", Conns: 512, Order: "BH", Stop: stats.StopMaxRuns, WallS: 12.5,
			BaseRuns: []result.Run{{RPS: 100, MemoryPeak: 1 << 20}}, HeadRuns: []result.Run{{RPS: 101}}},
		{Variant: "nethttp-spin20", SpinNS: 7080, Pair: 1, Test: "latency-10k", Error: "base: no container"},
	}
	path := filepath.Join(t.TempDir(), "deltas.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for _, c := range want {
		if err := enc.Encode(c); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	got, err := readComparisons(path)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("readComparisons = %+v, %v; want %+v", got, err, want)
	}
	os.WriteFile(path, []byte("{\"variant\":\"a\"}\n[1]\n"), 0o644)
	if _, err := readComparisons(path); err == nil || !strings.Contains(err.Error(), "comparison 2") {
		t.Errorf("a line that is not a comparison: %v; want an error naming comparison 2", err)
	}
}
