// Package cpuprof records CPU profiles of a benchmarked server's processes with Linux
// perf and turns them into what a reply shows: perf script output parsed into samples
// ([ParseScript]), frames perf left unnamed resolved from Go's pclntab, ELF symbol tables
// and JIT perf maps ([Symbolizer]), a pprof profile ([WritePprof]), a flame graph
// ([WriteFlameGraph]) and small JSON-friendly summaries ([Summarize], [Compare]).
//
// It is a leaf: it knows nothing of the runner, the queue or Docker. The caller passes the
// container's PIDs, cgroup or CPU set and decides when to record. A container's binaries
// and perf maps are read through /proc/<pid>/root, so [Script] and [Symbolizer.Symbolize]
// must run before the container is removed.
package cpuprof

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Call graph modes for [Recording.CallGraph].
const (
	// FramePointers walks frame pointers in the kernel at sample time: a few hundred
	// bytes per sample. Go keeps frame pointers on amd64 and arm64, so Go stacks are
	// complete; C code built without them (distribution libc) loses its callers, never the
	// leaf, so self shares stay right.
	FramePointers = "fp"
	// DWARF copies 8 KiB of stack per sample and unwinds it in perf script: complete
	// native stacks, but tens of MB/s of perf.data at benchmark load, a slow perf script,
	// and nothing more for Go or JIT code. Available for one-off investigations.
	DWARF = "dwarf"
)

// DefaultFrequency is the sampling rate (per CPU) used when [Recording.Frequency] is
// zero: about 5,000 samples in a 5 s run on two busy CPUs, enough for shares to 1%. Its
// cost on a net/http server under wrk, recording its CPUs system-wide with frame
// pointers, was below what the loaded 2-core development VM could resolve (README.md);
// an odd rate avoids sampling in lock step with timers.
const DefaultFrequency = 499

// A Recording is one perf record run.
type Recording struct {
	// Perf is the perf binary; "" means "perf" from PATH.
	Perf string
	// PIDs are the processes to sample (perf -p); perf follows their existing threads and
	// the threads they start.
	PIDs []int
	// Cgroup, instead of PIDs, samples every process of a cgroup on all CPUs (perf -a -G).
	// It is the path below the cgroup mount perf uses (the perf_event controller's on
	// cgroup v1, the cgroup2 mount otherwise), e.g. "system.slice/docker-<id>.scope".
	Cgroup string
	// CPUs, instead of PIDs or a cgroup, samples everything running on these CPUs
	// (perf -a -C, a list like "2-3,6"): the server's CPU set. It is the cheapest mode,
	// because no event is switched when a thread is: with PIDs or a cgroup, perf stops
	// and starts its sampling timer on every context switch of the server, which cost a
	// context-switch-heavy net/http server 15-20% CPU per request on a 2-core VM at any
	// rate from 99 to 999 Hz, while system-wide sampling cost nothing measurable.
	// [Script] with PIDs, or [Trace.KeepPIDs], drops other processes' samples.
	CPUs string
	// Frequency is the sampling rate in Hz; 0 means DefaultFrequency.
	Frequency int
	// CallGraph is FramePointers ("" too) or DWARF.
	CallGraph string
	// Duration is how long to sample.
	Duration time.Duration
	// Output is the perf.data file to write.
	Output string
}

// Args is perf's command line after the binary name.
func (r Recording) Args() ([]string, error) {
	if r.Output == "" {
		return nil, errors.New("perf record: no output file")
	}
	if r.Duration <= 0 {
		return nil, fmt.Errorf("perf record: duration %v, want > 0", r.Duration)
	}
	targets := 0
	for _, set := range []bool{len(r.PIDs) > 0, r.Cgroup != "", r.CPUs != ""} {
		if set {
			targets++
		}
	}
	if targets != 1 {
		return nil, errors.New("perf record: give one of PIDs, a cgroup or CPUs")
	}
	freq := r.Frequency
	if freq == 0 {
		freq = DefaultFrequency
	}
	if freq < 0 {
		return nil, fmt.Errorf("perf record: frequency %d, want > 0", freq)
	}
	var cg string
	switch r.CallGraph {
	case "", FramePointers:
		cg = FramePointers
	case DWARF:
		cg = DWARF
	default:
		return nil, fmt.Errorf("perf record: call graph %q, want %q or %q", r.CallGraph, FramePointers, DWARF)
	}
	// cpu-clock exists on every machine (VMs have no PMU) and its period is CPU time in
	// nanoseconds, which is what the pprof profile's cpu/nanoseconds wants.
	args := []string{"record", "--quiet", "-e", "cpu-clock", "-F", strconv.Itoa(freq), "--call-graph", cg,
		"--no-buildid-cache", "-o", r.Output}
	switch {
	case r.Cgroup != "":
		// -G applies to the events before it; it needs system-wide mode.
		args = append(args, "-a", "-G", strings.TrimPrefix(r.Cgroup, "/"))
	case r.CPUs != "":
		args = append(args, "-a", "-C", r.CPUs)
	default:
		pids := make([]string, len(r.PIDs))
		for i, p := range r.PIDs {
			if p <= 0 {
				return nil, fmt.Errorf("perf record: pid %d", p)
			}
			pids[i] = strconv.Itoa(p)
		}
		args = append(args, "-p", strings.Join(pids, ","))
	}
	// perf stops when its workload ends; sleep is the workload.
	args = append(args, "--", "sleep", strconv.FormatFloat(r.Duration.Seconds(), 'f', 3, 64))
	return args, nil
}

// Run records for r.Duration. When ctx ends first, perf is interrupted, which makes it
// write what it has, and Run returns ctx's error. A failure carries perf's stderr.
func (r Recording) Run(ctx context.Context) error {
	args, err := r.Args()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, perfBinary(r.Perf), args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("perf record: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// ScriptArgs is the perf script command line (after the binary name) that [ParseScript]
// reads: explicit fields, mmap events shown; with pids, only those processes' events
// (a CPU set recorded system-wide holds everyone's).
func ScriptArgs(input string, pids ...int) []string {
	args := []string{"script", "-i", input, "-F", ScriptFields, "--show-mmap-events"}
	if len(pids) > 0 {
		list := make([]string, len(pids))
		for i, p := range pids {
			list[i] = strconv.Itoa(p)
		}
		args = append(args, "--pid", strings.Join(list, ","))
	}
	return args
}

// Script runs perf script on a recording and parses its output; pids, if any, keep only
// those processes' events.
func Script(ctx context.Context, perf, input string, pids ...int) (*Trace, error) {
	cmd := exec.CommandContext(ctx, perfBinary(perf), ScriptArgs(input, pids...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("perf script: %w", err)
	}
	tr, perr := ParseScript(out)
	if perr != nil {
		// Drain so perf can exit before Wait.
		_, _ = io.Copy(io.Discard, out)
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("perf script: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return tr, perr
}

func perfBinary(p string) string {
	if p == "" {
		return "perf"
	}
	return p
}
