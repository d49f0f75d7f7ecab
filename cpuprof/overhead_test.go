package cpuprof

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	overhead       = flag.Bool("overhead", false, "measure what recording costs a net/http server under wrk (about 40 s)")
	overheadTarget = flag.String("overhead.target", "cpus", "what -overhead records: cpus (system-wide) or pids")
	overheadFreq   = flag.Int("overhead.freq", DefaultFrequency, "sampling rate for -overhead")
	overheadGraph  = flag.String("overhead.callgraph", FramePointers, "call graph mode for -overhead")
)

// TestOverhead runs 5 s wrk loads against a net/http server, unprofiled and profiled in
// turn (three pairs, the order swapped every pair), and logs profiled ÷ unprofiled RPS
// and CPU per request. It is opt-in: go test -run TestOverhead -overhead.
func TestOverhead(t *testing.T) {
	if !*overhead {
		t.Skip("opt-in: -overhead")
	}
	needPerf(t)
	needTool(t, "wrk", "wrk")
	wrk, _ := exec.LookPath("wrk")
	dir := t.TempDir()
	writeModule(t, dir, serverGo)
	bin := filepath.Join(dir, "server")
	run(t, dir, "go", "build", "-o", bin, ".")
	addr := freeAddr(t)
	srv := exec.Command(bin, addr)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
	})
	waitListening(t, addr)
	url := "http://" + addr + "/json"
	load := func(d time.Duration) (rps, cpuPerReq float64) {
		t.Helper()
		c0 := cpuTicks(t, srv.Process.Pid)
		out, err := exec.Command(wrk, "-t1", "-c16", "-d"+d.String(), url).Output()
		if err != nil {
			t.Fatalf("wrk: %v", err)
		}
		c1 := cpuTicks(t, srv.Process.Pid)
		rps, reqs := wrkNumbers(t, string(out))
		return rps, float64(c1-c0) * 1e4 / reqs // ticks are 10 ms: µs per request
	}
	load(2 * time.Second) // warm up
	rec := Recording{Frequency: *overheadFreq, CallGraph: *overheadGraph, Duration: 5600 * time.Millisecond,
		Output: filepath.Join(dir, "perf.data")}
	if *overheadTarget == "pids" {
		rec.PIDs = []int{srv.Process.Pid}
	} else {
		rec.CPUs = fmt.Sprintf("0-%d", runtime.NumCPU()-1)
	}
	profiled := func() (float64, float64) {
		done := make(chan error, 1)
		go func() { done <- rec.Run(t.Context()) }()
		time.Sleep(300 * time.Millisecond)
		rps, cpu := load(5 * time.Second)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		return rps, cpu
	}
	var rpsRatios, cpuRatios []float64
	for i := range 3 {
		var pr, pc, qr, qc float64
		if i%2 == 0 {
			pr, pc = load(5 * time.Second)
			qr, qc = profiled()
		} else {
			qr, qc = profiled()
			pr, pc = load(5 * time.Second)
		}
		rpsRatios = append(rpsRatios, qr/pr)
		cpuRatios = append(cpuRatios, qc/pc)
		t.Logf("pair %d: unprofiled %.0f rps %.2f µs/req, profiled %.0f rps %.2f µs/req: ratio %.3f rps, %.3f cpu/req",
			i+1, pr, pc, qr, qc, qr/pr, qc/pc)
	}
	slices.Sort(rpsRatios)
	slices.Sort(cpuRatios)
	t.Logf("%s, %d Hz, %s: profiled ÷ unprofiled RPS median %.3f (%.3f-%.3f), CPU/request median %.3f (%.3f-%.3f)",
		*overheadTarget, rec.Frequency, *overheadGraph, rpsRatios[1], rpsRatios[0], rpsRatios[2], cpuRatios[1], cpuRatios[0], cpuRatios[2])
}

// cpuTicks is a process's user plus system time in clock ticks.
func cpuTicks(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The command name may hold spaces; the fields after its closing parenthesis are
	// state (3), ..., utime (14), stime (15).
	_, rest, _ := strings.Cut(string(data), ") ")
	f := strings.Fields(rest)
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return ut + st
}

var (
	wrkRPS  = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkReqs = regexp.MustCompile(`(\d+) requests in`)
)

func wrkNumbers(t *testing.T, out string) (rps, reqs float64) {
	t.Helper()
	m1, m2 := wrkRPS.FindStringSubmatch(out), wrkReqs.FindStringSubmatch(out)
	if m1 == nil || m2 == nil {
		t.Fatalf("wrk output without Requests/sec or a request count:\n%s", out)
	}
	rps, _ = strconv.ParseFloat(m1[1], 64)
	reqs, _ = strconv.ParseFloat(m2[1], 64)
	return rps, reqs
}
