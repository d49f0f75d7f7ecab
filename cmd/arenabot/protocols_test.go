package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestBenchProtocolProfiles measures the TLS, h2 and h2c profiles in --lite on real
// containers, one short run each: nethttp on all six (wrk over TLS to 8081, h2load over TLS
// with ALPN h2 to 8443 and with prior knowledge to 8082), fasthttp on the two it serves
// (HTTP/1.1 over TLS). Every row is validated first and measured with every response a 2xx;
// each records its tool and version, and the h2load rows real percentiles from the request
// log (the arena had only h2load's mean).
func TestBenchProtocolProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images and runs load")
	}
	needDocker(t)
	root := arena(t, "nethttp", "fasthttp")
	var stdout string
	for _, run := range []struct{ entry, tests string }{
		{"nethttp", "json-tls,static-tls,baseline-h2,static-h2,baseline-h2c,json-h2c"},
		{"fasthttp", "json-tls,static-tls"},
	} {
		out, _, err := runBench(t, nil, run.entry, "-t", run.tests, "--lite", "--runs", "1", "--duration", "1s", "--save", "--root", root)
		if err != nil {
			t.Fatalf("bench %s: %v\n%s", run.entry, err, out)
		}
		t.Logf("stdout:\n%s", out)
		stdout += out
	}
	for _, tt := range []struct {
		entry, profile string
		conns          int
		tool, version  string
	}{
		{"nethttp", "json-tls", 256, "wrk", "4.1.0"},
		{"nethttp", "static-tls", 256, "wrk", "4.1.0"},
		{"nethttp", "baseline-h2", 64, "h2load", "1.52.0"},
		{"nethttp", "static-h2", 64, "h2load", "1.52.0"},
		{"nethttp", "baseline-h2c", 64, "h2load", "1.52.0"},
		{"nethttp", "json-h2c", 64, "h2load", "1.52.0"},
		{"fasthttp", "json-tls", 256, "wrk", "4.1.0"},
		{"fasthttp", "static-tls", 256, "wrk", "4.1.0"},
	} {
		name := tt.entry + " " + tt.profile
		r, err := readSaved(filepath.Join(root, "frameworks", tt.entry), tt.profile, tt.conns)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if r.RPS <= 0 || r.Status2xx != r.Requests || r.NonSuccess != 0 || !r.Lite {
			t.Errorf("%s: rps %d, 2xx %d of %d (%d non-2xx), lite %v", name, r.RPS, r.Status2xx, r.Requests, r.NonSuccess, r.Lite)
		}
		if r.Tool != tt.tool || !strings.Contains(r.ToolVersion, tt.version) {
			t.Errorf("%s: tool %q version %q; want %s %s", name, r.Tool, r.ToolVersion, tt.tool, tt.version)
		}
		l := r.LatencyUS
		if l.P50 <= 0 || l.P90 < l.P50 || l.P99 < l.P90 || l.P999 < l.P99 || l.Mean <= 0 {
			t.Errorf("%s: latency %+v; want real percentiles p50 ≤ p90 ≤ p99 ≤ p99.9", name, l)
		}
		if !strings.Contains(stdout, "| "+tt.profile+" | "+strconv.Itoa(tt.conns)+" | ") {
			t.Errorf("%s: no table row", name)
		}
	}
	// fasthttp has no HTTP/2 and does not subscribe to the h2 profiles: no row fails.
	if strings.Contains(stdout, "❌") {
		t.Errorf("a failed row:\n%s", stdout)
	}
}
