package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/loadgen"
)

// TestBenchWebSocketAndH3Profiles measures the WebSocket profiles on nethttp (gorilla's echo
// at /ws) and the HTTP/3 ones on quic-go, in --lite on real containers, one short run each,
// arenaload in the pinned image: validated first, every echo or response a success, echoes
// and requests per second with per-frame or per-request latency, the generator's version
// recorded; echo-ws-limited's connections retire and upgrade again.
func TestBenchWebSocketAndH3Profiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images and runs load")
	}
	needDocker(t)
	root := arena(t, "nethttp", "quic-go")
	var stdout string
	for _, run := range []struct{ entry, tests string }{
		{"nethttp", "echo-ws,echo-ws-pipeline,echo-ws-limited"},
		{"quic-go", "baseline-h3,static-h3"},
	} {
		out, _, err := runBench(t, nil, run.entry, "-t", run.tests, "--lite", "--runs", "1", "--duration", "2s", "--save", "--root", root)
		if err != nil {
			t.Fatalf("bench %s: %v\n%s", run.entry, err, out)
		}
		t.Logf("stdout:\n%s", out)
		stdout += out
	}
	for _, tt := range []struct{ entry, profile string }{
		{"nethttp", "echo-ws"}, {"nethttp", "echo-ws-pipeline"}, {"nethttp", "echo-ws-limited"},
		{"quic-go", "baseline-h3"}, {"quic-go", "static-h3"},
	} {
		p, _ := profile.Lookup(tt.profile)
		conns := p.LiteConns[0]
		name := tt.entry + " " + tt.profile
		r, err := readSaved(filepath.Join(root, "frameworks", tt.entry), tt.profile, conns)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !r.Lite || r.Tool != "arenaload" || !strings.HasPrefix(r.ToolVersion, loadgen.ArenaloadVersion) {
			t.Errorf("%s: lite %v, tool %q %q", name, r.Lite, r.Tool, r.ToolVersion)
		}
		if r.RPS <= 0 || r.Status2xx != r.Requests || r.SocketErrors.Total() != 0 {
			t.Errorf("%s: rps %d, ok %d of %d, errors %+v", name, r.RPS, r.Status2xx, r.Requests, r.SocketErrors)
		}
		if l := r.LatencyUS; l.P50 <= 0 || l.P99 < l.P50 || l.P999 < l.P99 {
			t.Errorf("%s: latency %+v", name, l)
		}
		if tt.profile == "echo-ws-limited" && r.Reconnects < int64(conns) {
			t.Errorf("%s: %d reconnects; want each connection to retire after 10 echoes and upgrade again", name, r.Reconnects)
		}
		if !strings.Contains(stdout, "| "+tt.profile+" | "+strconv.Itoa(conns)+" | ") {
			t.Errorf("%s: no table row", name)
		}
		t.Logf("%s %dc: %d/s, p99 %.0f µs, reconnects %d, generator CPU %.2f s", name, conns, r.RPS, r.LatencyUS.P99, r.Reconnects, r.Runs[0].ToolCPUS)
	}
	if strings.Contains(stdout, "❌") {
		t.Errorf("a failed row:\n%s", stdout)
	}
}
