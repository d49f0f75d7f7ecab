package report

import (
	"strings"
	"testing"

	"github.com/arenabot/arenabot/result"
)

// fixedRate is a fixed-rate result: target 10,000/s, the given achieved rate.
func fixedRate(achieved float64, limit string) *result.Result {
	r := &result.Result{TargetRate: 10000}
	r.FromRuns([]result.Run{{RPS: achieved, Status2xx: int64(achieved * 20), DurationS: 20, CPUCores: 0.25,
		MemoryPeak: 12 << 20, LatencyUS: result.Latency{P99: 350, P999: 1900}, ToolLimit: limit}})
	return r
}

// TestFixedRateAndBandwidthRows: a fixed-rate row's Rate has 4 decimals, bold with ⚠️ below
// 0.98; a bandwidth row shows MB/s and CPU per GB; a row the generator limited is flagged and
// explained under its table, in text that cannot mention or link.
func TestFixedRateAndBandwidthRows(t *testing.T) {
	dl := &result.Result{}
	dl.FromRuns([]result.Run{{RPS: 3, Status2xx: 30, DurationS: 10, Bytes: 8_123_000_000, CPUCores: 0.5, MemoryPeak: 30 << 20}})
	rows := []result.Row{
		{Entry: "nethttp", Profile: "latency-10k", Conns: 256, Result: fixedRate(9_998.7, "")},
		{Entry: "nethttp", Profile: "latency-1m", Conns: 256, Result: fixedRate(9_512.3, "generator CPU saturated: 1.95 of 2 cores @someone #12")},
		{Entry: "nethttp", Profile: "download", Conns: 8, Result: dl, Bandwidth: true},
		{Entry: "nethttp", Profile: "baseline", Conns: 512, Result: res(100000, 20<<20, 1)},
	}
	tables := Tables(rows, Baseline{Source: "main", Committed: func(string, string, int) (*result.Result, bool) { return nil, true }})
	got := RenderTable(tables[0])
	for _, want := range []string{
		"| latency-10k | 256 | 10.0K | 0.9999 | 25us | 350us | 1.90ms |",
		"| latency-1m | 256 | 9.5K ⚠️ | **0.9512** ⚠️ |",
		"| download | 8 | 812 MB/s | — | 0.62 s/GB |",
		"| baseline | 512 | 100.0K | — |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	limits := tables[0].Limits()
	if len(limits) != 1 || !strings.Contains(limits[0], "`latency-1m` 256: the load generator, not the server, was the limit: generator CPU saturated") {
		t.Fatalf("Limits() = %q", limits)
	}
	if strings.Contains(limits[0], " @someone") || strings.Contains(limits[0], " #12") {
		t.Errorf("the limit note can mention or link: %q", limits[0])
	}
	if FormatRate(res(100, 1, 0)) != "—" {
		t.Error("a closed-loop row has a Rate")
	}
}

// TestWebSocketRowsKeepLatency: an echo row shows its per-frame latency.
func TestWebSocketRowsKeepLatency(t *testing.T) {
	got := RenderTable(Tables([]result.Row{{Entry: "nethttp", Profile: "echo-ws", Conns: 512, Result: res(80000, 20<<20, 1), WebSocket: true}},
		Baseline{Source: "main", Committed: func(string, string, int) (*result.Result, bool) { return nil, true }})[0])
	if !strings.Contains(got, "| echo-ws | 512 | 80.0K | — | 12us | 2.10ms | 5.30ms |") {
		t.Errorf("echo row:\n%s", got)
	}
}
