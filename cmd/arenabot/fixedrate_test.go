package main

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/loadgen"
)

// TestBenchFixedRateProfiles measures the fixed-rate, async and bandwidth profiles in --lite
// on real containers, one short run each, the load tools in the pinned image (arenaload
// among them): nethttp on all seven, fasthttp on the three whose server code differs most
// (8gbit's TLS echo, the download, the gzipped large files). Every row is validated first;
// the fixed-rate rows record the offered lite rate, the rate ratio and the generator's
// version; the bandwidth rows bytes per second; static-large's responses are compressed (its
// validation, which gates the row, decodes them).
func TestBenchFixedRateProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images and runs load")
	}
	needDocker(t)
	root := arena(t, "nethttp", "fasthttp")
	var stdout string
	for _, run := range []struct{ entry, tests, duration string }{
		{"nethttp", "latency-10k,latency-1m,latency-500k-8cpu,8gbit,async,download,static-large", "2s"},
		// 5 s, the profiles' own length: fasthttp gzips the 1-2 MiB files on the fly, about
		// 2 MB/s on a machine busy with the whole suite, so 32 connections complete no
		// response in 2 s (.ci/flaky), and a run without one fails its row.
		{"fasthttp", "8gbit,download,static-large", "5s"},
	} {
		out, stderr, err := runBench(t, nil, run.entry, "-t", run.tests, "--lite", "--runs", "1", "--duration", run.duration, "--save", "--root", root)
		if err != nil {
			t.Fatalf("bench %s: %v\n%s", run.entry, err, out)
		}
		t.Logf("stdout:\n%s", out)
		stdout += out
		// Every row was gated by its profile's validation in the measured image: for
		// static-large that is the check that each large file, asked for with
		// Accept-Encoding: gzip, comes gzipped and decodes to the file's exact bytes. That,
		// not the bytes of a short loaded run divided by its completed responses (the
		// responses still in flight when the run ends count their bytes but not themselves),
		// is what says the files were compressed.
		want := fmt.Sprintf("%s: validating %d test(s)", run.entry, len(strings.Split(run.tests, ",")))
		if !strings.Contains(stderr, want) || strings.Contains(stderr, "fails validation") || strings.Contains(stderr, "was not validated") {
			t.Errorf("bench %s: want %q and no failed validation; stderr:\n%s", run.entry, want, stderr)
		}
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
		r, err := readSaved(filepath.Join(root, "frameworks", tt.entry), tt.profile, conns)
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
			// The rate on a shared 2-core machine may fall short (under the whole suite's
			// load it does, by an amount no test can bound); the row must say by how much:
			// the ratio is the achieved rate over the offered one, never above it.
			if r.TargetRate != p.LiteTargetRate || r.RPS <= 0 || r.RateRatio <= 0 || r.RateRatio > 1.01 ||
				math.Abs(r.RateRatio-r.AchievedRate/float64(r.TargetRate)) > 1e-3 {
				t.Errorf("%s: target %d (want %d), rate ratio %v of achieved %v, rps %d", name, r.TargetRate, p.LiteTargetRate, r.RateRatio, r.AchievedRate, r.RPS)
			}
			if l := r.LatencyUS; l.P50 <= 0 || l.P99 < l.P50 || l.P999 < l.P99 {
				t.Errorf("%s: latency %+v", name, l)
			}
			// The arena's fixed-rate fields, which its board reads: the CPU time of the best
			// run in µs, per 2xx response, and the p99.9 as a latency string.
			if r.CPUUsec == nil || *r.CPUUsec <= 0 || r.CPUPerReqUS == nil || math.Abs(*r.CPUPerReqUS-float64(*r.CPUUsec)/float64(r.Runs[r.BestRun].Status2xx)) > 1e-4 ||
				r.P999Latency != result.FormatLatency(l999(r)) {
				t.Errorf("%s: cpu_usec %v, cpu_per_req_us %v, p99_9_latency %q", name, r.CPUUsec, r.CPUPerReqUS, r.P999Latency)
			}
			if len(r.Runs) != 1 || r.Runs[0].ToolCPUS <= 0 {
				t.Errorf("%s: runs %+v; want the generator's own CPU", name, r.Runs)
			}
			if !regexp.MustCompile(`\| ` + regexp.QuoteMeta(tt.profile) + ` \| ` + strconv.Itoa(conns) + ` \| [^|]+ \| (\*\*)?[01]\.[0-9]{4}`).MatchString(stdout) {
				t.Errorf("%s: no row with a 4-decimal Rate", name)
			}
		case p.Bandwidth:
			// No speed is asserted (a loaded machine sets it); the figures must be the run's.
			run := r.Runs[0]
			if run.Bytes <= 0 || r.BytesPerSec <= 0 || math.Abs(r.BytesPerSec-float64(run.Bytes)/run.DurationS) > 1 || r.CPUPerGB <= 0 {
				t.Errorf("%s: %d bytes in %v s, %v bytes/s, %v CPU s/GB", name, run.Bytes, run.DurationS, r.BytesPerSec, r.CPUPerGB)
			}
			if !regexp.MustCompile(`\| ` + regexp.QuoteMeta(tt.profile) + ` \| ` + strconv.Itoa(conns) + ` \| [0-9.]+ MB/s`).MatchString(stdout) {
				t.Errorf("%s: no row in MB/s", name)
			}
		default:
			if r.RPS <= 0 {
				t.Errorf("%s: rps %d", name, r.RPS)
			}
		}
		if tt.profile == "static-large" && len(r.Runs) == 1 {
			// A bound no partial response can break: the completed responses, each at most
			// 1 MiB gzipped (gzip -1 takes the 2 MiB file to 27%), plus at most one response
			// in flight per connection, each at most the larger file as it is. A server
			// sending the files uncompressed (1.5 MiB a response on average) exceeds it once
			// it completes more than four responses per connection; below that the
			// validation above is the evidence.
			limit := r.Requests*(1<<20) + int64(conns)*((2<<20)+4096)
			if r.Runs[0].Bytes > limit {
				t.Errorf("%s: %d bytes for %d responses over %d connections, above the %d a gzipped run can read", name, r.Runs[0].Bytes, r.Requests, conns, limit)
			}
		}
	}
	if strings.Contains(stdout, "❌") {
		t.Errorf("a failed row:\n%s", stdout)
	}
}

// l999 is the best run's p99.9 latency in µs.
func l999(r result.Result) float64 { return r.Runs[r.BestRun].LatencyUS.P999 }
