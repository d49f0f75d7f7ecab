package paced

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/arenaload"
)

// startFixture builds testdata/fixture and starts it in mode ("plain", "stall") in its own
// process, so it is not slowed by the race detector; it returns the base URL. The process
// ends when the test does.
func startFixture(tb testing.TB, mode string) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "fixture")
	gobin, err := exec.LookPath("go")
	if err != nil {
		tb.Fatalf("building the fixture needs the go command on PATH: %v", err)
	}
	build := exec.Command(gobin, "build", "-o", bin, "./testdata/fixture")
	if out, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("building the fixture: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, mode)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		tb.Fatalf("reading the fixture's address: %v", err)
	}
	return "http://" + strings.TrimSpace(line)
}

// runMain runs Main with args and decodes the Result it writes.
func runMain(t *testing.T, args ...string) (arenaload.Result, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := Main(context.Background(), args, &stdout, &stderr)
	var res arenaload.Result
	if stdout.Len() > 0 {
		if jerr := json.Unmarshal(stdout.Bytes(), &res); jerr != nil {
			t.Fatalf("the output is no Result: %v\n%s", jerr, stdout.String())
		}
	}
	return res, stderr.String(), err
}

// logResult logs the Result's main numbers.
func logResult(t testing.TB, name string, r arenaload.Result) {
	t.Helper()
	t.Logf("%s: %d requests, rate %.1f of %.1f (ratio %.4f), max schedule lag %.0f µs, latency p50 %.0f p99 %.0f p99.9 %.0f max %.0f µs, errors %+v, cpu %.3f s (%.1f µs/req), limit %q",
		name, r.Requests, r.AchievedRate, r.TargetRate, r.RateRatio, r.MaxScheduleLag,
		r.Latency.P50, r.Latency.P99, r.Latency.P999, r.Latency.Max, r.Errors, r.CPU, r.CPUPerRequest, r.Limit)
}
