package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestBenchGRPCProfiles measures the real grpc-go entry on the four gRPC profiles in --lite
// (one 1 s run each, the load tools in the pinned image): validated over gRPC first (h2c on
// 8080, TLS on 8443), probed with GetSum, unary rows by h2load with the 9-byte frame and a
// grpc-status sample beside it, stream rows by ghz counting replies.
func TestBenchGRPCProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images and runs load")
	}
	needDocker(t)
	root := arena(t, "grpc-go")
	// 3 s runs: unary-grpc's 512 connections, opened on a machine busy with the whole suite
	// (a fresh CI run, load average 18), had not brought one response back in 1 s, twice.
	stdout, stderr, err := runBench(t, nil, "grpc-go", "-t", "unary-grpc,unary-grpc-tls,stream-grpc,stream-grpc-tls",
		"--lite", "--runs", "1", "--duration", "3s", "--save", "--root", root)
	if err != nil {
		t.Fatalf("bench: %v\n%s\n%s", err, stdout, stderr)
	}
	dir := filepath.Join(root, "frameworks", "grpc-go")
	for _, tt := range []struct {
		profile, tool, version string
		conns                  int
	}{
		{"unary-grpc", "h2load", "1.52.0", 512},
		{"unary-grpc-tls", "h2load", "1.52.0", 64},
		{"stream-grpc", "ghz", "0.121.0", 64},
		{"stream-grpc-tls", "ghz", "0.121.0", 64},
	} {
		r, err := readSaved(dir, tt.profile, tt.conns)
		if err != nil {
			t.Errorf("%s: %v", tt.profile, err)
			continue
		}
		if r.RPS <= 0 || r.Status2xx <= 0 || !r.Lite || r.Tool != tt.tool || !strings.Contains(r.ToolVersion, tt.version) {
			t.Errorf("%s: rps %d, 2xx %d of %d, lite %v, tool %s %s; want measured by %s %s", tt.profile, r.RPS, r.Status2xx, r.Requests, r.Lite, r.Tool, r.ToolVersion, tt.tool, tt.version)
		}
		if tt.tool == "ghz" && (r.Status2xx%5000 != 0 || r.LatencyUS.P99 <= 0 || r.LatencyUS.P999 < r.LatencyUS.P99) {
			t.Errorf("%s: 2xx %d (want whole calls of 5000 replies), p99 %.0f µs, p99.9 %.0f µs", tt.profile, r.Status2xx, r.LatencyUS.P99, r.LatencyUS.P999)
		}
		if !strings.Contains(stdout, "| "+tt.profile+" | "+strconv.Itoa(tt.conns)+" | ") {
			t.Errorf("no %s row in:\n%s", tt.profile, stdout)
		}
		t.Logf("%s %dc: %d/s (%s %s), p99 %.0f µs, p99.9 %.0f µs", tt.profile, tt.conns, r.RPS, r.Tool, r.ToolVersion, r.LatencyUS.P99, r.LatencyUS.P999)
	}
}

// TestValidateGRPCEntry validates the real grpc-go entry: every gRPC check passes, over h2c
// and over TLS.
func TestValidateGRPCEntry(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images")
	}
	needDocker(t)
	stdout, _, err := runCmd(t, "validate", "grpc-go", "--strict", "--root", repoRoot(t))
	if err != nil {
		t.Fatalf("validate grpc-go: %v\n%s", err, stdout)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if m := regexp.MustCompile(`^(\d+) passed, 0 failed, 0 skipped$`).FindStringSubmatch(lines[len(lines)-1]); m == nil || m[1] != itoa(len(lines)-1) {
		t.Fatalf("summary line %q after %d check lines, want N passed, 0 failed, 0 skipped:\n%s", lines[len(lines)-1], len(lines)-1, stdout)
	}
	for _, p := range []string{"unary-grpc", "unary-grpc-tls", "stream-grpc", "stream-grpc-tls"} {
		if !strings.Contains(stdout, "PASS "+p+": ") {
			t.Errorf("no passing check of %s:\n%s", p, stdout)
		}
	}
}
