package measure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	pprof "github.com/google/pprof/profile"

	"github.com/arenabot/arenabot/cpuprof"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/stats"
)

// profileTop is how many functions a result keeps by self and by cumulative share, and
// how many changes its difference lists.
const profileTop = 10

// A profiler records the profiling runs of a Bencher: perf on the server's CPU set,
// system-wide (the mode whose cost the development VM could not resolve; per-process
// sampling cost 7-18%: cpuprof/README.md), then only the container's processes'
// samples kept.
type profiler struct {
	images *build.Builder // its scratch directory holds the recordings
	tools  *tools         // the profiled run's load
	out    *reporter
	log    *slog.Logger

	perf    string // the perf binary; "" means "perf" from PATH
	freq    int    // 0 means cpuprof.DefaultFrequency
	checked bool
	err     error // why perf cannot record here; nil when it can
	noted   bool  // err was noted in the log
}

// ErrNoPerf is what the error of a row that could not be profiled because perf is missing
// or may not record system-wide on this host matches (errors.Is).
var ErrNoPerf = errors.New("perf cannot record on this host")

// A perfError says why perf cannot record here and how to fix it; it is ErrNoPerf.
type perfError struct{ msg string }

func (e *perfError) Error() string        { return e.msg }
func (e *perfError) Is(target error) bool { return target == ErrNoPerf }

// check finds out once whether perf can record system-wide here: installed, and allowed
// (root, or kernel.perf_event_paranoid at most 0 with CAP_PERFMON). The error says how to
// fix it.
func (pr *profiler) check(ctx context.Context, scratch string) error {
	if pr.checked {
		return pr.err
	}
	pr.checked = true
	bin := pr.perf
	if bin == "" {
		bin = "perf"
	}
	if _, err := exec.LookPath(bin); err != nil {
		pr.err = &perfError{"perf is not installed on the runner host; install it (Debian: apt-get install linux-perf) to get CPU profiles"}
		return pr.err
	}
	probe := cpuprof.Recording{Perf: pr.perf, CPUs: "0", Duration: 10 * time.Millisecond, Output: filepath.Join(scratch, "perf-probe.data")}
	defer os.Remove(probe.Output)
	if err := probe.Run(ctx); err != nil {
		paranoid := "unknown"
		if b, rerr := os.ReadFile("/proc/sys/kernel/perf_event_paranoid"); rerr == nil {
			paranoid = strings.TrimSpace(string(b))
		}
		pr.err = &perfError{fmt.Sprintf("perf may not record system-wide on the runner host (kernel.perf_event_paranoid = %s): run the runner as root, or set sysctl kernel.perf_event_paranoid=-1 (%s)", paranoid, firstLine(err.Error()))}
	}
	return pr.err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// A cpuRun is a profiling run's outcome: the summary a result keeps, the whole summary
// (for the difference from the base), and the files saved beside the result.
type cpuRun struct {
	res     *result.CPUProfile
	run     result.Run // the profiled run
	summary cpuprof.Summary
	pprof   []byte
	flame   []byte
}

// attach puts the profile on a row's result and a profiled base beside it: its difference,
// or why the base has no profile.
func (c *cpuRun) attach(r *result.Result, base *cpuRun, p profile.Profile, conns int) {
	if c == nil || r == nil {
		return
	}
	c.res.Pprof, c.res.Flame = result.PprofFileName(p.Name, conns), result.FlameFileName(p.Name, conns)
	if len(c.pprof) == 0 {
		c.res.Pprof = ""
	}
	if len(c.flame) == 0 {
		c.res.Flame = ""
	}
	if base != nil && c.res.Err == "" {
		// A base whose profiling run failed goes beside it too, its Err saying why the
		// row has no difference from it (the worker may then compare with the profile
		// committed on the base branch).
		c.res.Base = base.res
		if base.res.Err == "" {
			c.res.Diff = cpuDiff(cpuprof.Compare(base.summary, c.summary, profileTop))
		}
	}
	r.CPUProfile = c.res
}

// CompareCommitted is the difference of a row's profile (head, gzipped pprof as Row.Pprof)
// from the one committed for the same row on the base branch (its .cpu.pb.gz), marked
// Committed: recorded at another time.
func CompareCommitted(committed, head []byte) (*result.CPUDiff, error) {
	summarize := func(b []byte) (cpuprof.Summary, error) {
		p, err := pprof.Parse(bytes.NewReader(b))
		if err != nil {
			return cpuprof.Summary{}, err
		}
		samples, err := cpuprof.FromPprof(p)
		if err != nil {
			return cpuprof.Summary{}, err
		}
		return cpuprof.Summarize(samples), nil
	}
	base, err := summarize(committed)
	if err != nil {
		return nil, fmt.Errorf("the committed profile: %w", err)
	}
	now, err := summarize(head)
	if err != nil {
		return nil, fmt.Errorf("the profile: %w", err)
	}
	diff := cpuDiff(cpuprof.Compare(base, now, profileTop))
	diff.Committed = true
	return diff, nil
}

// cpuDiff is a profile difference as results record it, to a tenth of a point.
func cpuDiff(d cpuprof.Diff) *result.CPUDiff {
	return &result.CPUDiff{
		Kernel: round1(d.Kernel), GC: round1(d.GC), Own: round1(d.Own),
		KernelMargin: round1(d.KernelMargin), GCMargin: round1(d.GCMargin), OwnMargin: round1(d.OwnMargin),
		Self: changes(d.Self), Cum: changes(d.Cum),
	}
}

func changes(cs []cpuprof.Change) []result.CPUChange {
	out := make([]result.CPUChange, len(cs))
	for i, c := range cs {
		out[i] = result.CPUChange{Name: c.Name, Before: round1(c.Before), After: round1(c.After), Delta: round1(c.Delta), Margin: round1(c.Margin)}
	}
	return out
}

func shares(fs []cpuprof.FuncShare) []result.FuncShare {
	out := make([]result.FuncShare, len(fs))
	for i, f := range fs {
		out[i] = result.FuncShare{Name: f.Name, Self: round2(f.Self), Cum: round2(f.Cum)}
	}
	return out
}

// cpuPerRequest is a run's server CPU seconds per 2xx response; 0 without any.
func cpuPerRequest(r result.Run) float64 {
	if r.Status2xx == 0 {
		return 0
	}
	return r.CPUCores * r.DurationS / float64(r.Status2xx)
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }
func round2(v float64) float64 { return math.Round(v*100) / 100 }

// profileRun is the profiling run of a row on a session's server, after its measured
// runs: the row's load once more, not counted in the numbers, while perf samples the
// server's CPUs. measured are the row's runs, for the cost the profiled run shows. A run
// that cannot be profiled (perf missing or not permitted, a failed recording) returns a
// cpuRun whose result says why; the row's numbers stand either way.
func (pr *profiler) run(ctx context.Context, s *session, e frameworks.Entry, p profile.Profile, conns int, measured []result.Run) *cpuRun {
	start := time.Now()
	desc := fmt.Sprintf("%s %s %dc", e.Name, p.Name, conns)
	c, err := pr.record(ctx, s, p, measured)
	if err != nil {
		if !errors.Is(err, ErrNoPerf) {
			pr.out.note(fmt.Sprintf("%s: no CPU profile: %v", desc, err))
		}
		return &cpuRun{res: &result.CPUProfile{Err: err.Error()}}
	}
	pr.log.Info("profiled", "framework", e.Name, "test", p.Name, "conns", conns, "samples", c.res.Samples,
		"duration", time.Since(start).Round(time.Millisecond), "rps_ratio", c.res.RPSRatio, "cpu_per_request_ratio", c.res.CPURatio)
	pr.out.note(fmt.Sprintf("%s: CPU profile of %d samples in %s", desc, c.res.Samples, time.Since(start).Round(100*time.Millisecond)))
	return c
}

func (pr *profiler) record(ctx context.Context, s *session, p profile.Profile, measured []result.Run) (*cpuRun, error) {
	scratch, err := pr.images.Scratch()
	if err != nil {
		return nil, err
	}
	if err := pr.check(ctx, scratch); err != nil {
		if !pr.noted {
			pr.noted = true
			pr.out.note(err.Error())
		}
		return nil, err
	}
	cpus := s.cpus
	if cpus == "" {
		cpus = "0-" + strconv.Itoa(host.NumCPU()-1) // --lite: nothing is pinned
	}
	data := filepath.Join(scratch, "cpu-"+strconv.Itoa(os.Getpid())+".data")
	defer os.Remove(data)
	freq := pr.freq
	if freq == 0 {
		freq = cpuprof.DefaultFrequency
	}
	// perf runs until the load tool ends (interrupted: it writes what it has); the bound is
	// only a backstop.
	rec := cpuprof.Recording{Perf: pr.perf, CPUs: cpus, Frequency: freq, Duration: s.spec.Duration + time.Minute, Output: data}
	perfCtx, stopPerf := context.WithCancel(ctx)
	defer stopPerf()
	done := make(chan error, 1)
	began := time.Now()
	go func() { done <- rec.Run(perfCtx) }()
	run, runErr := pr.tools.runOnce(ctx, s.tool.tool, s.args, s.spec, s.group)
	pids, pidErr := s.group.Procs() // before the container goes: its processes, for the samples to keep
	stopPerf()
	perfErr := <-done
	recorded := time.Since(began)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if perfErr != nil && !errors.Is(perfErr, context.Canceled) {
		return nil, perfErr
	}
	if runErr != nil {
		return nil, fmt.Errorf("the profiled run: %w", runErr)
	}
	if pidErr != nil {
		return nil, fmt.Errorf("the container's processes: %w", pidErr)
	}
	tr, err := cpuprof.Script(ctx, pr.perf, data, pids...)
	if err != nil {
		return nil, err
	}
	// The container's files are read through /proc/<pid>/root: before it is removed.
	var sym cpuprof.Symbolizer
	sym.Symbolize(tr)
	sum := cpuprof.Summarize(tr.Samples)
	if sum.Samples == 0 {
		return nil, fmt.Errorf("perf took no sample of the server's %d process(es) on CPUs %s", len(pids), cpus)
	}
	var pp, svg bytes.Buffer
	if err := cpuprof.WritePprof(&pp, cpuprof.ToPprof(tr.Samples, recorded)); err != nil {
		return nil, err
	}
	if err := cpuprof.WriteFlameGraph(&svg, tr.Samples, cpuprof.FlameOptions{Title: fmt.Sprintf("%s %s %dc: CPU", s.entry, p.Name, s.spec.Conns)}); err != nil {
		return nil, err
	}
	figure := throughput(p)
	res := &result.CPUProfile{
		Samples: sum.Samples, CPUNs: sum.CPUNs, DurationS: round2(recorded.Seconds()), Frequency: freq,
		Kernel: round2(sum.Kernel), GC: round2(sum.GC), Own: round2(sum.Own),
		TopSelf: shares(sum.TopSelf(profileTop)), TopCum: shares(sum.TopCum(profileTop)),
		RPS: round2(figure(run)),
	}
	if m := stats.Sample(result.Sample(measured, figure)).Mean(); m > 0 {
		res.RPSRatio = math.Round(figure(run)/m*1000) / 1000
	}
	if m := stats.Sample(result.Sample(measured, cpuPerRequest)).Mean(); m > 0 && cpuPerRequest(run) > 0 {
		res.CPURatio = math.Round(cpuPerRequest(run)/m*1000) / 1000
	}
	return &cpuRun{res: res, run: run, summary: sum, pprof: pp.Bytes(), flame: svg.Bytes()}, nil
}
