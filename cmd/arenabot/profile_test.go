package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	profilepkg "github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
)

// needPerf skips unless perf can record system-wide here; under CI (which installs
// linux-perf and runs as root) it fails instead, so a green CI never hides the profiling run.
func needPerf(t *testing.T) {
	t.Helper()
	why := ""
	if _, err := exec.LookPath("perf"); err != nil {
		why = "perf is not on PATH: install it (Debian: linux-perf)"
	} else if b, err := exec.Command("perf", "record", "-q", "-e", "cpu-clock", "-a", "-C", "0", "-o", filepath.Join(t.TempDir(), "probe.data"), "--", "true").CombinedOutput(); err != nil {
		why = fmt.Sprintf("perf cannot record system-wide here: %v: %s (run as root, or lower kernel.perf_event_paranoid)", err, b)
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI=%s)", why, os.Getenv("CI"))
	}
	t.Skip(why)
}

// TestBenchProfile is a real profiling run: nethttp's baseline in --lite mode, one 1 s
// run, then the profiled run, recorded with perf on the host's CPUs and kept to the
// container's processes. Its top functions are net/http's serving path, symbolized from the
// entry's stripped binary (-ldflags=-s -w) inside the container; --save writes the pprof
// profile and the flame graph beside the result file, and the table is followed by the
// profile block.
func TestBenchProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images, runs load and records with perf")
	}
	needDocker(t)
	needPerf(t)
	root := arena(t, "nethttp")
	stdout, _, err := runBench(t, nil, "nethttp", "-t", "baseline", "--lite", "--runs", "1", "--duration", "1s", "--profile", "--save", "--root", root)
	if err != nil {
		t.Fatalf("bench --profile: %v\n%s", err, stdout)
	}
	t.Logf("stdout:\n%s", stdout)
	dir := filepath.Join(root, "frameworks", "nethttp")
	r, err := readSaved(dir, "baseline", 512)
	if err != nil {
		t.Fatal(err)
	}
	p := r.CPUProfile
	if p == nil || p.Err != "" || p.Samples < 50 {
		t.Fatalf("profile %+v; want one of at least 50 samples", p)
	}
	var cum []string
	for _, f := range p.TopCum {
		cum = append(cum, f.Name)
	}
	if !slices.ContainsFunc(cum, func(n string) bool { return strings.HasPrefix(n, "net/http.(*conn).serve") }) {
		t.Errorf("top cumulative functions %q; want net/http.(*conn).serve among them", cum)
	}
	if p.Kernel <= 0 || p.Kernel >= 100 {
		t.Errorf("kernel share %.1f%%; want some, not all", p.Kernel)
	}
	b, err := os.ReadFile(filepath.Join(dir, result.Dir, p.Pprof))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gzip.NewReader(bytes.NewReader(b)); err != nil {
		t.Errorf("%s is not gzipped: %v", p.Pprof, err)
	}
	pp, err := profile.Parse(bytes.NewReader(b))
	if err != nil || len(pp.Sample) == 0 {
		t.Errorf("%s: pprof reads %v samples, %v", p.Pprof, len(pp.Sample), err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, result.Dir, p.Flame))
	if err != nil || !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("net/http.(*conn).serve")) {
		t.Errorf("%s: %d bytes, %v; want an SVG naming net/http.(*conn).serve", p.Flame, len(svg), err)
	}
	for _, want := range []string{"<details><summary>CPU profile of <code>nethttp</code> baseline 512", "Top functions by self CPU", "`net/http.(*conn).serve`", "flame graph `baseline-512.cpu.svg`"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("bench output lacks %q", want)
		}
	}
}

// TestParseBenchProfile: --profile alone, =all and =none; anything else names the values;
// without it a local bench profiles nothing.
func TestParseBenchProfile(t *testing.T) {
	getenv := func(string) string { return "" }
	for _, tt := range []struct {
		args []string
		want string // the plan's mode
	}{
		{nil, ""},
		{[]string{"--profile"}, "first"},
		{[]string{"--profile=all"}, "all"},
		{[]string{"--profile=none"}, ""},
	} {
		c, err := parseBench(append([]string{"nethttp"}, tt.args...), getenv, io.Discard)
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if got := profilepkg.CPUProfileMode(c.Profile, false); got != tt.want {
			t.Errorf("%q: mode %q, want %q", tt.args, got, tt.want)
		}
	}
	if _, err := parseBench([]string{"nethttp", "--profile=some"}, getenv, io.Discard); err == nil || !strings.Contains(err.Error(), "--profile=all or --profile=none") {
		t.Errorf("--profile=some: %v", err)
	}
}
