package measure

// Benchmarks of the harness itself, against the real engine, the real wrk and a real entry:
//
//	go test -run '^$' -bench . -benchtime 1x ./runner/measure
//
// Each reports ratios measured side by side in one run, never absolute times.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/cgroup"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/loadgen"
	"github.com/arenabot/arenabot/stats"
)

// benchEntry is the entry the harness benchmarks measure (env ARENA_BENCH_ENTRY).
func benchEntry() string {
	if e := os.Getenv("ARENA_BENCH_ENTRY"); e != "" {
		return e
	}
	return "nethttp"
}

// benchEngine connects to the Docker Engine (the benchmark is skipped without one) and
// returns it with the arena data directory the tests share.
func benchEngine(b *testing.B) (*docker.Engine, string) {
	b.Helper()
	eng, err := docker.New(context.Background())
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { eng.Close() })
	data, err := arenadata.Ensure(filepath.Join(os.TempDir(), "arenabot-test-cache"))
	if err != nil {
		b.Fatal(err)
	}
	return eng, data
}

// setup builds the entry, starts it for profile p and returns what a run needs.
func setup(b *testing.B, entry string, p profile.Profile, conns int) (*Bencher, loadgen.Tool, []string, loadgen.Spec, *cgroup.Group) {
	b.Helper()
	ctx := context.Background()
	eng, data := benchEngine(b)
	root, _ := filepath.Abs("../../frameworks")
	e, err := frameworks.Load(root, entry, profile.Names())
	if err != nil {
		b.Fatal(err)
	}
	bn := New(eng, Config{DataDir: data, ScratchDir: b.TempDir(), Runs: 1, Duration: 3 * time.Second})
	if err := bn.Prepare(ctx, Plan{Targets: []Target{{Entry: e, Profiles: []profile.Profile{p}}}}); err != nil {
		b.Fatal(err)
	}
	image, err := bn.Build(ctx, e)
	if err != nil {
		b.Fatal(err)
	}
	c, err := eng.Start(ctx, bn.servers.options(image, e, p))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eng.Remove(context.Background(), c.ID) })
	if err := bn.servers.waitReady(ctx, c, e, p); err != nil {
		b.Fatal(err)
	}
	group, err := cgroup.ForContainer(bn.cfg.CgroupRoot, c.Pid, c.ID)
	if err != nil {
		b.Fatal(err)
	}
	tool := bn.tools.checks[p.Tool].tool
	spec, args, err := bn.tools.spec(tool, p, conns)
	if err != nil {
		b.Fatal(err)
	}
	if err := bn.tools.warmUp(ctx, tool, spec, p.Warmup); err != nil {
		b.Fatal(err)
	}
	return bn, tool, args, spec, group
}

// fidelityCases are the rows BenchmarkFidelity compares: one per load tool and protocol
// family (HTTP/1.1 with wrk, h2 over TLS with h2load, unary gRPC with h2load and the
// runner's grpc-status sampling beside it, streaming gRPC with ghz), each at its lite count.
var fidelityCases = []struct{ entry, profile string }{
	{"nethttp", "baseline"},
	{"nethttp", "baseline-h2"},
	{"grpc-go", "unary-grpc"},
	{"grpc-go", "stream-grpc"},
}

// BenchmarkFidelity compares the harness's RPS with the same load tool run by hand with the
// same flags on the same container, interleaved pair by pair; the ratio should be ≥ 0.97, and is reported with its 95% interval.
// ARENA_BENCH_ENTRY replaces the entry of the HTTP rows.
//
//	go test -run '^$' -bench Fidelity -benchtime 1x ./runner/measure
func BenchmarkFidelity(b *testing.B) {
	for _, fc := range fidelityCases {
		b.Run(fc.profile, func(b *testing.B) {
			p, _ := profile.Lookup(fc.profile)
			entry := fc.entry
			if !strings.Contains(p.Scheme, "grpc") {
				entry = benchEntry()
			}
			fidelity(b, entry, p)
		})
	}
}

func fidelity(b *testing.B, entry string, p profile.Profile) {
	bn, tool, args, spec, group := setup(b, entry, p, p.LiteConns[0])
	pairs := max(stats.DefaultRule.MinRuns*2, 6)
	var harness, plain stats.Sample
	for range b.N {
		for i := range pairs {
			// Alternate which goes first, so drift in the machine's load cancels out.
			runHarness := func() {
				run, err := bn.tools.runOnce(context.Background(), tool, args, spec, group)
				if err != nil {
					b.Fatal(err)
				}
				harness = append(harness, run.RPS)
			}
			runPlain := func() { plain = append(plain, plainRun(b, bn, tool, args, spec).RPS()) }
			if i%2 == 0 {
				runHarness()
				runPlain()
			} else {
				runPlain()
				runHarness()
			}
		}
	}
	// The ratio with its interval, by the same Welch rule the replies' Δ cells use.
	d, err := stats.Compare(plain, harness)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: harness/plain %.3f, 95%% interval [%.3f, %.3f] over %d interleaved pairs (%s)", p.Name, 1+d.Rel, 1+d.Lo(), 1+d.Hi(), len(harness), stats.Method)
	b.ReportMetric(1+d.Rel, "harness/plain-rps")
	b.ReportMetric(d.Half, "ratio-half-width")
	b.ReportMetric(harness.Mean(), "harness-rps")
	b.ReportMetric(plain.Mean(), "plain-rps")
}

// plainRun runs the tool by hand: the same binary and arguments, pinned by taskset to the
// load-generator CPUs, its output (and the file it writes, for ghz's report) parsed by the
// adapter.
func plainRun(b *testing.B, bn *Bencher, tool loadgen.Tool, args []string, spec loadgen.Spec) loadgen.Measurement {
	if err := tool.ClearLog(spec); err != nil { // h2load appends to its log
		b.Fatal(err)
	}
	argv := append([]string{"taskset", "-c", bn.cfg.LoadgenCPUs, tool.Binary}, args...)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		b.Fatalf("plain %s: %v\n%s", tool.Name, err, out)
	}
	m, err := tool.Parse(out)
	if err != nil {
		b.Fatal(err)
	}
	// Only ghz's rate lives in its file; h2load's log adds percentiles, which the rate does
	// not need, but the file is read as the harness reads it.
	if err := tool.ReadLog(spec, &m); err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkHarnessCPU compares the CPU the harness process itself uses during a measured run
// (its own user+system time, not the load tool's) with the server's; it should be ≤ 1%.
func BenchmarkHarnessCPU(b *testing.B) {
	p, _ := profile.Lookup("baseline")
	bn, tool, args, spec, group := setup(b, benchEntry(), p, 512)
	var self, server time.Duration
	for range b.N {
		before := selfCPU()
		win, err := group.Begin()
		if err != nil {
			b.Fatal(err)
		}
		out, err := bn.tools.exec(context.Background(), tool, args, spec.Duration)
		if err != nil {
			b.Fatal(err)
		}
		usage, err := win.End()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tool.Parse(out); err != nil {
			b.Fatal(err)
		}
		self += selfCPU() - before
		server += usage.CPU
	}
	b.ReportMetric(100*float64(self)/float64(server), "harness-cpu-%-of-server")
	b.ReportMetric(self.Seconds()*1000/float64(b.N), "harness-cpu-ms/run")
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
