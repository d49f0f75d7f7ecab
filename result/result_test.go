package result

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFromRunsReportsBestRunWithSpread(t *testing.T) {
	runs := []Run{
		{RPS: 90000, Requests: 450000, Status2xx: 450000, DurationS: 5, Bytes: 5 << 20, CPUCores: 0.9, MemoryPeak: 20 << 20, LatencyUS: Latency{Mean: 500, P99: 1500}},
		{RPS: 100000, Requests: 500100, Status2xx: 500000, DurationS: 5, Bytes: 10 << 20, CPUCores: 1.0, MemoryPeak: 30 << 20, LatencyUS: Latency{Mean: 450, P99: 1200, P999: 3000}},
		{RPS: 95000, Requests: 475000, Status2xx: 475000, DurationS: 5, CPUCores: 0.95, MemoryPeak: 25 << 20},
	}
	var r Result
	r.FromRuns(runs)
	want := Result{
		RPS: 100000, AvgLatency: "450us", P99Latency: "1.20ms", CPU: "100.0%", Memory: "30MiB",
		Bandwidth: "2.00MB/s", Status2xx: 500000, Requests: 500100, NonSuccess: 0,
		LatencyUS: Latency{Mean: 450, P99: 1200, P999: 3000}, CPUPerRequest: 10, CPUCores: 1,
		MemoryPeak: 30 << 20, AchievedRate: 100000, Runs: runs, BestRun: 1, SpreadPct: 10,
		BytesPerSec: 2097152, CPUPerGB: 476.8372, // 5 CPU-s for 10 MiB
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("FromRuns (-want +got):\n%s", diff)
	}
	if got := r.Spread(); got != 0.1 {
		t.Errorf("Spread() = %v, want 0.1", got)
	}
}

func TestFormatting(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{FormatLatency(0), "0us"},
		{FormatLatency(6.184), "6.18us"},
		{FormatLatency(173), "173us"},
		{FormatLatency(4900), "4.90ms"},
		{FormatLatency(1.07e6), "1.07s"},
		{FormatMemory(76 << 20), "76MiB"},
		{FormatMemory(12 << 28), "3.0GiB"},
		{FormatBandwidth(512), "512B/s"},
		{FormatBandwidth(3 << 30), "3.00GB/s"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	for in, want := range map[string]int64{"76MiB": 76 << 20, "2.0GiB": 2 << 30, "512KiB": 512 << 10, "10B": 10} {
		got, err := ParseMemory(in)
		if err != nil || got != want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "12", "xMiB", "-1MiB"} {
		if _, err := ParseMemory(bad); err == nil {
			t.Errorf("ParseMemory(%q) succeeded, want an error", bad)
		}
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	r := Result{Framework: "go-nethttp", Entry: "nethttp", Profile: "baseline", Connections: 512, Time: time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC),
		Limits: &Limits{MemoryBytes: 8 << 30, Pids: 32768, Nofile: 1 << 20, CapAdd: []string{}, NoNewPrivileges: true}}
	r.FromRuns([]Run{{RPS: 1234.5, Requests: 6000, Status2xx: 6000, DurationS: 5, CPUCores: 0.5, MemoryPeak: 8 << 20}})
	path, err := Write(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "results", "baseline-512.json"); path != want {
		t.Errorf("Write path = %s, want %s", path, want)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasSuffix(string(b), "}\n") || !strings.Contains(string(b), `"framework": "go-nethttp"`) {
		t.Errorf("file is not indented JSON with a trailing newline:\n%s", b)
	}
	got, err := Read(dir, "baseline", 512)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("round trip (-wrote +read):\n%s", diff)
	}
	all, err := ReadAll(dir)
	if err != nil || len(all) != 1 {
		t.Fatalf("ReadAll = %d results, %v; want 1", len(all), err)
	}
	if _, err := Read(dir, "json", 512); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read of a missing file = %v, want fs.ErrNotExist", err)
	}
}

func TestUnmarshalArenaFile(t *testing.T) {
	// A leaderboard row as the old arena wrote it: only its own fields.
	old := `{"framework":"go-fasthttp","language":"Go","rps":1234567,"avg_latency":"1.20ms","p99_latency":"1.20ms",
	"cpu":"6636.6%","memory":"76MiB","connections":512,"threads":64,"duration":"5s","pipeline":1,
	"bandwidth":"150.00MB/s","reconnects":0,"status_2xx":6172835,"status_3xx":0,"status_4xx":0,"status_5xx":0}`
	r, err := Unmarshal([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if r.RPS != 1234567 || r.MemoryPeak != 76<<20 || r.AchievedRate != 1234567 || r.Limits != nil {
		t.Errorf("old file read as rps %d, memory %d, rate %v, limits %+v", r.RPS, r.MemoryPeak, r.AchievedRate, r.Limits)
	}
	if _, err := Unmarshal([]byte(`{"rps":"fast"}`)); err == nil {
		t.Error("a wrong type was accepted")
	}
}

// TestFromRunsFixedRate: a fixed-rate result carries the rate ratio and the generator's
// account of the best run.
func TestFromRunsFixedRate(t *testing.T) {
	runs := []Run{
		{RPS: 9990, Status2xx: 99900, DurationS: 10, CPUCores: 0.2},
		{RPS: 9700, Status2xx: 97000, DurationS: 10, CPUCores: 0.2, ToolLimit: "generator CPU saturated", Reconnects: 3},
	}
	r := Result{TargetRate: 10000}
	r.FromRuns(runs)
	if r.RateRatio != 0.999 || r.ToolLimit != "" || r.BestRun != 0 {
		t.Errorf("rate ratio %v, tool limit %q, best run %d; want 0.999 from run 0, no limit", r.RateRatio, r.ToolLimit, r.BestRun)
	}
	runs[0].RPS = 9000
	r.FromRuns(runs)
	if r.RateRatio != 0.97 || r.ToolLimit != "generator CPU saturated" || r.Reconnects != 3 {
		t.Errorf("rate ratio %v, tool limit %q, reconnects %d; want run 1's 0.97, its limit, 3", r.RateRatio, r.ToolLimit, r.Reconnects)
	}
}
