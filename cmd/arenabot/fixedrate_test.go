package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/runner/loadgen"
	"github.com/arenabot/arenabot/runner/profile"
	"github.com/arenabot/arenabot/runner/result"
)

// TestBenchFixedRateProfiles measures the fixed-rate, async and bandwidth profiles in --lite
// on real containers, one short run each, the load tools in the pinned image (arenaload
// among them): nethttp on all seven, fasthttp on the three whose server code differs most
// (8gbit's TLS echo, the download, the gzipped large files). Every row is validated first;
// the fixed-rate rows record the offered lite rate, the rate ratio and the generator's
// version; the bandwidth rows bytes per second; static-large's responses are compressed.
func TestBenchFixedRateProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images and runs load")
	}
	needDocker(t)
	root := arena(t, "nethttp", "fasthttp")
	var stdout string
	for _, run := range []struct{ entry, tests string }{
		{"nethttp", "latency-10k,latency-1m,latency-500k-8cpu,8gbit,async,download,static-large"},
		{"fasthttp", "8gbit,download,static-large"},
	} {
		out, _, err := runBench(t, nil, run.entry, "-t", run.tests, "--lite", "--runs", "1", "--duration", "2s", "--save", "--root", root)
		if err != nil {
			t.Fatalf("bench %s: %v\n%s", run.entry, err, out)
		}
		t.Logf("stdout:\n%s", out)
		stdout += out
	}
	for _, tt := range []struct {
		entry, profile string
	}{
		{"nethttp", "latency-10k"}, {"nethttp", "latency-1m"}, {"nethttp", "latency-500k-8cpu"}, {"nethttp", "8gbit"},
		{"nethttp", "async"}, {"nethttp", "download"}, {"nethttp", "static-large"},
		{"fasthttp", "8gbit"}, {"fasthttp", "download"}, {"fasthttp", "static-large"},
	} {
		p, _ := profile.Lookup(tt.profile)
		conns := p.LiteConns[0]
		name := tt.entry + " " + tt.profile
		r, err := result.Read(filepath.Join(root, "frameworks", tt.entry), tt.profile, conns)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !r.Lite || r.Tool != p.Tool || r.Status2xx != r.Requests || r.NonSuccess != 0 {
			t.Errorf("%s: lite %v, tool %q, 2xx %d of %d", name, r.Lite, r.Tool, r.Status2xx, r.Requests)
		}
		if p.Tool == profile.ToolArenaload && !strings.HasPrefix(r.ToolVersion, loadgen.ArenaloadVersion) {
			t.Errorf("%s: tool version %q; want arenaload %s", name, r.ToolVersion, loadgen.ArenaloadVersion)
		}
		switch {
		case p.TargetRate > 0:
			// The rate on a shared 2-core machine may fall short; the row must say by how much.
			if r.TargetRate != p.LiteTargetRate || r.RateRatio <= 0.5 || r.RateRatio > 1.01 || r.RPS <= 0 {
				t.Errorf("%s: target %d (want %d), rate ratio %v, rps %d", name, r.TargetRate, p.LiteTargetRate, r.RateRatio, r.RPS)
			}
			if l := r.LatencyUS; l.P50 <= 0 || l.P99 < l.P50 || l.P999 < l.P99 {
				t.Errorf("%s: latency %+v", name, l)
			}
			if len(r.Runs) != 1 || r.Runs[0].ToolCPUS <= 0 {
				t.Errorf("%s: runs %+v; want the generator's own CPU", name, r.Runs)
			}
			if !regexp.MustCompile(`\| ` + regexp.QuoteMeta(tt.profile) + ` \| ` + strconv.Itoa(conns) + ` \| [^|]+ \| (\*\*)?[01]\.[0-9]{4}`).MatchString(stdout) {
				t.Errorf("%s: no row with a 4-decimal Rate", name)
			}
		case p.Bandwidth:
			if r.BytesPerSec <= 1e6 || r.CPUPerGB <= 0 {
				t.Errorf("%s: %v bytes/s, %v CPU s/GB", name, r.BytesPerSec, r.CPUPerGB)
			}
			if !regexp.MustCompile(`\| ` + regexp.QuoteMeta(tt.profile) + ` \| ` + strconv.Itoa(conns) + ` \| [0-9.]+ MB/s`).MatchString(stdout) {
				t.Errorf("%s: no row in MB/s", name)
			}
		default:
			if r.RPS <= 0 {
				t.Errorf("%s: rps %d", name, r.RPS)
			}
		}
		if tt.profile == "static-large" && r.Requests > 0 && r.Runs[0].Bytes/r.Requests > 1<<20 {
			t.Errorf("%s: %d bytes per response: the 1 and 2 MiB files came uncompressed", name, r.Runs[0].Bytes/r.Requests)
		}
	}
	if strings.Contains(stdout, "❌") {
		t.Errorf("a failed row:\n%s", stdout)
	}
}
