package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/arenabot/arenabot/result"
)

// writeSite writes files (paths from the repository's root) under repo.
func writeSite(t *testing.T, repo string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(repo, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestScored: bench scores a fixed-rate row against every entry's committed results of its
// profile in the working tree, every connection count, and nothing of other profiles: the rows
// of today's results files (the arena's own among them), and April's files where today's has
// no row of that entry and connection count; never the lite files.
func TestScored(t *testing.T) {
	repo := t.TempDir()
	fw := filepath.Join(repo, "frameworks")
	for _, r := range []result.Result{
		{Entry: "a", Profile: "latency-10k", Connections: 1024, CPUPerRequest: 21},
		{Entry: "b", Profile: "latency-10k", Connections: 512, CPUPerRequest: 30},
		{Entry: "b", Profile: "latency-1m", Connections: 1024, CPUPerRequest: 5},
	} {
		r.Framework, r.Tool, r.Time = r.Entry, "arenaload", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		if _, err := result.Write(filepath.Join(fw, r.Entry), r); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(fw, "a", result.Dir, "latency-10k-64.json"), []byte("{broken"), 0o644)
	writeSite(t, repo, map[string]string{
		"site/data/results/b.json":      `{"framework": "b", "results": {"latency-10k-512": {"framework": "b", "entry": "b", "cpu_per_request_us": 25}}}`,
		"site/data/results/c.json":      `{"framework": "c", "results": {"latency-10k-1024": {"framework": "c", "cpu_per_req_us": 12.5, "p99_latency": "1ms"}}}`,
		"site/data/results/lite/a.json": `{"framework": "a", "results": {"latency-10k-256": {"framework": "a", "entry": "a", "cpu_per_request_us": 1}}}`,
	})
	var got []float64
	for _, r := range scored(repo, fw)("latency-10k") {
		got = append(got, r.CPUPerRequest)
	}
	slices.Sort(got)
	if want := []float64{12.5, 21, 25}; !slices.Equal(got, want) {
		t.Errorf("scored(latency-10k) CPU/req = %v, want %v (c's arena row, a's April file, b's today's row over its April one)", got, want)
	}
}

// TestCommitted: bench's Δ against committed results reads an entry's rows in today's
// layout (its own and the arena's, not a variant's), then April's where today's has none; a
// --lite run takes the lite file's row first.
func TestCommitted(t *testing.T) {
	repo := t.TempDir()
	fw := filepath.Join(repo, "frameworks")
	old := result.Result{Framework: "Alpha", Entry: "a", Profile: "baseline", Connections: 512, RPS: 1}
	old4096 := old
	old4096.Connections, old4096.RPS = 4096, 2
	siteEntry(t, repo, "a", "Alpha", old, old4096)
	writeSite(t, repo, map[string]string{
		"site/data/results/alpha.json": `{"framework": "Alpha", "results": {
  "baseline-512": {"framework": "Alpha", "entry": "a", "rps": 10},
  "baseline-16384": {"framework": "Alpha", "rps": 30},
  "baseline-256": {"framework": "Alpha", "entry": "a-tuned", "rps": 40}}}`,
		"site/data/results/lite/alpha.json": `{"framework": "Alpha", "results": {"baseline-512": {"framework": "Alpha", "entry": "a", "rps": 50, "lite": true}}}`,
	})
	for _, tt := range []struct {
		lite  bool
		conns int
		rps   int64 // 0: none
	}{
		{false, 512, 10},   // today's over April's
		{false, 4096, 2},   // April's where today's has none
		{false, 16384, 30}, // the arena's row, which names no entry
		{false, 256, 0},    // a variant's row is not a's
		{true, 512, 50},    // --lite: the lite file first
		{true, 4096, 2},
	} {
		r, runs := committed(repo, fw, tt.lite)("a", "baseline", tt.conns)
		if !runs {
			t.Errorf("lite %v %d: a does not run baseline", tt.lite, tt.conns)
		}
		switch {
		case tt.rps == 0 && r != nil:
			t.Errorf("lite %v %d: %+v, want none", tt.lite, tt.conns, r)
		case tt.rps != 0 && (r == nil || r.RPS != tt.rps):
			t.Errorf("lite %v %d: %+v, want rps %d", tt.lite, tt.conns, r, tt.rps)
		}
	}
	if r, runs := committed(repo, fw, false)("a", "json", 512); r != nil || runs {
		t.Errorf("a test a does not subscribe to: %+v, %v", r, runs)
	}
}
