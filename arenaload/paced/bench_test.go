package paced

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkPacedVersusTools loads one separate-process net/http server (testdata/fixture)
// at 20,000 req/s over 64 connections for 3 s with the paced generator, h2load --rps and,
// when it is installed, vegeta, and reports each one's achieved-rate ratio and CPU per
// request (the paced generator's own CPU time; the external tools' rusage). vegeta gets the
// same 64 connections and 2 s timeout. Then it steps
// the paced generator's rate up to find the highest at which it keeps a rate ratio of at
// least 0.995 on this machine. Run it alone:
//
//	go test -run '^$' -bench PacedVersusTools -benchtime 1x ./arenaload/paced
func BenchmarkPacedVersusTools(b *testing.B) {
	const (
		rate  = 20_000.0
		conns = 64
		dur   = 3 * time.Second
	)
	url := startFixture(b, "plain") + "/"

	res, err := Run(context.Background(), Config{URL: url, Rate: rate, Connections: conns, Duration: dur, Timeout: 2 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	logResult(b, "paced", res)
	b.ReportMetric(res.RateRatio, "paced-ratio")
	b.ReportMetric(res.CPUPerRequest, "paced-cpu-µs/req")
	b.ReportMetric(res.Latency.P99, "paced-p99-µs")

	h2load, err := exec.LookPath("h2load")
	if err != nil {
		b.Fatal("h2load is not on PATH: install it (apt-get install nghttp2-client)")
	}
	cmd := exec.Command(h2load, "--h1", "-c", strconv.Itoa(conns), "--rps", strconv.FormatFloat(rate/conns, 'f', -1, 64),
		"-D", strconv.Itoa(int(dur.Seconds())), url)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("h2load: %v\n%s", err, out)
	}
	done, hrate := parseH2load(b, string(out))
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	b.Logf("h2load: %d done, %.0f req/s (ratio %.4f), cpu %.3f s (%.1f µs/req)",
		done, hrate, hrate/rate, cpu.Seconds(), perRequest(cpu, done))
	b.ReportMetric(hrate/rate, "h2load-ratio")
	b.ReportMetric(perRequest(cpu, done), "h2load-cpu-µs/req")

	if vegeta := findVegeta(); vegeta == "" {
		b.Log("vegeta is not installed (go install github.com/tsenart/vegeta/v12@v12.13.0 to compare it)")
	} else {
		dir := b.TempDir()
		targets, results := filepath.Join(dir, "targets"), filepath.Join(dir, "results.bin")
		if err := os.WriteFile(targets, []byte("GET "+url+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		// The same connections and timeout as the others: vegeta's own defaults (unbounded
		// connections, 30 s timeout) let one overloaded run go on for half a minute.
		attack := exec.Command(vegeta, "attack", "-rate", fmt.Sprintf("%.0f/s", rate), "-duration", dur.String(),
			"-max-connections", strconv.Itoa(conns), "-timeout", "2s", "-targets", targets, "-output", results)
		if out, err := attack.CombinedOutput(); err != nil {
			b.Fatalf("vegeta attack: %v\n%s", err, out)
		}
		vcpu := attack.ProcessState.UserTime() + attack.ProcessState.SystemTime()
		report, err := exec.Command(vegeta, "report", "-type", "json", results).Output()
		if err != nil {
			b.Fatalf("vegeta report: %v", err)
		}
		var rep struct {
			Requests   int64   `json:"requests"`
			Throughput float64 `json:"throughput"`
			Latencies  struct {
				P99 float64 `json:"99th"` // nanoseconds
			} `json:"latencies"`
		}
		if err := json.Unmarshal(report, &rep); err != nil {
			b.Fatalf("vegeta report: %v\n%s", err, report)
		}
		b.Logf("vegeta: %d requests, throughput %.0f req/s (ratio %.4f), p99 %.0f µs, cpu %.3f s (%.1f µs/req)",
			rep.Requests, rep.Throughput, rep.Throughput/rate, rep.Latencies.P99/1e3, vcpu.Seconds(), perRequest(vcpu, rep.Requests))
		b.ReportMetric(rep.Throughput/rate, "vegeta-ratio")
		b.ReportMetric(perRequest(vcpu, rep.Requests), "vegeta-cpu-µs/req")
	}

	// The highest rate the paced generator keeps (ratio ≥ 0.995) here, 2 s per step; the
	// steps stop after two misses in a row (one can be another process's burst).
	best, misses := 0.0, 0
	for _, r := range []float64{10_000, 15_000, 20_000, 30_000, 40_000, 50_000, 60_000, 80_000} {
		res, err := Run(context.Background(), Config{URL: url, Rate: r, Connections: conns, Duration: 2 * time.Second, Timeout: 2 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		logResult(b, fmt.Sprintf("paced at %.0f", r), res)
		if res.RateRatio < 0.995 {
			if misses++; misses == 2 {
				break
			}
			continue
		}
		best, misses = r, 0
	}
	b.ReportMetric(best, "paced-max-rate-req/s")
}

func perRequest(cpu time.Duration, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(cpu) / float64(time.Microsecond) / float64(n)
}

var (
	h2loadDone     = regexp.MustCompile(`requests: \d+ total, \d+ started, (\d+) done`)
	h2loadFinished = regexp.MustCompile(`finished in [0-9.]+m?s, ([0-9.]+) req/s`)
)

// parseH2load returns h2load's count of requests done and its req/s.
func parseH2load(b *testing.B, out string) (int64, float64) {
	d := h2loadDone.FindStringSubmatch(out)
	f := h2loadFinished.FindStringSubmatch(out)
	if d == nil || f == nil {
		b.Fatalf("h2load's output has no requests or finished line:\n%s", out)
	}
	done, _ := strconv.ParseInt(d[1], 10, 64)
	rate, _ := strconv.ParseFloat(f[1], 64)
	return done, rate
}

// findVegeta returns the vegeta command on PATH or in GOPATH/bin, or "".
func findVegeta() string {
	if p, err := exec.LookPath("vegeta"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, dir := range filepath.SplitList(strings.TrimSpace(string(out))) {
			if p := filepath.Join(dir, "bin", "vegeta"); fileExists(p) {
				return p
			}
		}
	}
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
