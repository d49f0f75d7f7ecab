package cpuprof

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// needPerf skips the test unless perf can sample here; under CI (CI set, as .ci/run does,
// after .ci/setup installed linux-perf) it fails instead, so a CI run never passes with the
// profiling tests unrun.
func needPerf(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("records with perf; skipped in -short mode")
	}
	if _, err := exec.LookPath("perf"); err != nil {
		missing(t, "perf is not on PATH: install it (Debian: linux-perf)")
	}
	out := filepath.Join(t.TempDir(), "probe.data")
	if b, err := exec.Command("perf", "record", "-q", "-e", "cpu-clock", "-o", out, "--", "true").CombinedOutput(); err != nil {
		missing(t, fmt.Sprintf("perf cannot record here: %v: %s (run as root, or lower kernel.perf_event_paranoid)", err, b))
	}
}

// needTool is needPerf for another program the test runs (gcc, wrk).
func needTool(t *testing.T, name, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		missing(t, fmt.Sprintf("%s is not on PATH: install it (Debian: %s)", name, pkg))
	}
}

// missing skips with why, or fails under CI.
func missing(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI=%s)", why, os.Getenv("CI"))
	}
	t.Skip(why)
}

// profileCommand starts cmd, lets it warm up, records it with perf for d and returns
// what perf script says. cmd is killed at the end of the test.
func profileCommand(t *testing.T, cmd *exec.Cmd, d time.Duration) *Trace {
	t.Helper()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	time.Sleep(200 * time.Millisecond)
	data := filepath.Join(t.TempDir(), "perf.data")
	rec := Recording{PIDs: []int{cmd.Process.Pid}, Duration: d, Output: data}
	if err := rec.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	tr, err := Script(t.Context(), "", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Samples) == 0 {
		t.Fatalf("perf recorded no samples of %v", cmd.Args)
	}
	return tr
}

// writeModule writes a one-file Go program with its own go.mod into dir.
func writeModule(t *testing.T, dir, src string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/spin\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// run runs a build command in dir and fails the test with its output on error.
func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}
