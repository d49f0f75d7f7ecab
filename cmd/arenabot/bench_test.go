package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/docker"
)

// repoRoot is the repository this test runs in.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// needDocker skips when no Docker Engine answers, except under CI, where it fails.
func needDocker(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	eng, err := docker.New(ctx)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI needs a Docker Engine: %v", err)
		}
		t.Skipf("no Docker Engine: %v", err)
	}
	eng.Close()
}

// arena makes a temporary arena repository holding copies of the named entries of this
// repository, so --save writes there.
func arena(t *testing.T, entries ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, e := range entries {
		src := filepath.Join(repoRoot(t), "frameworks", e)
		dst := filepath.Join(root, "frameworks", e)
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(filepath.Join(dst, "results"))
	}
	return root
}

// cacheDir is shared by the tests of one run, so the arena data is generated once.
var cacheDir = filepath.Join(os.TempDir(), "arenabot-test-cache")

func runBench(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	getenv := func(k string) string { return env[k] }
	err = run(t.Context(), append([]string{"bench", "--cache-dir", cacheDir}, args...), getenv, &out, &errb)
	t.Logf("arenabot bench %s\nstderr:\n%s", strings.Join(args, " "), errb.String())
	return out.String(), errb.String(), err
}

// TestBenchEndToEnd builds two entries into images on the real engine, measures baseline and
// json with the real wrk pinned to the load-generator CPUs, and checks the result files and
// the printed tables against each other.
func TestBenchEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images and runs load")
	}
	needDocker(t)
	root := arena(t, "nethttp", "fasthttp")
	// 2 s a run: on a machine busy with the whole suite, wrk's 4,096 connections can take
	// most of a 1 s run to connect, and a run that ends before they answer has no 2xx.
	stdout, _, err := runBench(t, nil, "nethttp", "fasthttp", "-t", "baseline,json", "--runs", "2", "--duration", "2s", "--save", "--root", root)
	if err != nil {
		t.Fatalf("bench: %v\nstdout:\n%s", err, stdout)
	}
	t.Logf("stdout:\n%s", stdout)
	rows := map[string]string{} // "entry/profile/conns" -> table row
	entry := ""
	for _, line := range strings.Split(stdout, "\n") {
		if m := regexp.MustCompile("^### (✅|❌) `([^`]+)`").FindStringSubmatch(line); m != nil {
			if m[1] != "✅" {
				t.Errorf("table of %s is marked failed", m[2])
			}
			entry = m[2]
		}
		if cells := strings.Split(line, " | "); len(cells) == 11 && entry != "" && cells[0] != "| Test" {
			rows[entry+"/"+strings.TrimPrefix(cells[0], "| ")+"/"+cells[1]] = line
		}
	}
	want := []struct {
		entry, profile string
		conns          int
	}{
		{"nethttp", "baseline", 512}, {"nethttp", "baseline", 4096}, {"nethttp", "json", 4096},
		{"fasthttp", "baseline", 512}, {"fasthttp", "baseline", 4096}, {"fasthttp", "json", 4096},
	}
	for _, w := range want {
		dir := filepath.Join(root, "frameworks", w.entry)
		r, err := readSaved(dir, w.profile, w.conns)
		if err != nil {
			t.Errorf("%s %s %d: %v", w.entry, w.profile, w.conns, err)
			continue
		}
		name := w.entry + " " + w.profile + " " + itoa(w.conns)
		if r.RPS <= 0 || r.Status2xx <= 0 {
			t.Errorf("%s: rps %d, 2xx %d; want > 0", name, r.RPS, r.Status2xx)
		}
		if r.Status2xx != r.Requests || r.NonSuccess != 0 {
			t.Errorf("%s: %d requests but %d 2xx (%d non-2xx)", name, r.Requests, r.Status2xx, r.NonSuccess)
		}
		// Socket errors are the best run's, as wrk counted them. A timeout (an answer wrk
		// waited 2 s for) says how loaded the machine was: at 4096 connections on a CI
		// machine busy with the whole suite, fasthttp's json row timed out 955 of its
		// requests. A connection refused or reset, or more timeouts than answers, is the
		// server's fault.
		if len(r.Runs) > r.BestRun && r.SocketErrors != r.Runs[r.BestRun].Errors {
			t.Errorf("%s: socket errors %+v, its best run's %+v", name, r.SocketErrors, r.Runs[r.BestRun].Errors)
		}
		if e := r.SocketErrors; e.Connect != 0 || e.Read != 0 || e.Write != 0 || e.Timeout >= r.Status2xx {
			t.Errorf("%s: socket errors %+v for %d 2xx responses", name, e, r.Status2xx)
		} else if e.Timeout > 0 {
			t.Logf("%s: %d of the requests timed out (a loaded machine)", name, e.Timeout)
		}
		if r.CPUCores <= 0 || r.MemoryPeak <= 0 || r.CPUPerRequest <= 0 {
			t.Errorf("%s: cpu %v cores, memory %d, cpu/req %v; want > 0", name, r.CPUCores, r.MemoryPeak, r.CPUPerRequest)
		}
		if r.Tool != "wrk" || !strings.Contains(r.ToolVersion, "4.1.0") {
			t.Errorf("%s: tool %q version %q; want wrk 4.1.0", name, r.Tool, r.ToolVersion)
		}
		if len(r.Runs) != 2 || r.Connections != w.conns || r.Profile != w.profile || r.Entry != w.entry {
			t.Errorf("%s: %d runs, conns %d, profile %q, entry %q", name, len(r.Runs), r.Connections, r.Profile, r.Entry)
		}
		if r.LatencyUS.P99 <= 0 || r.LatencyUS.P999 < r.LatencyUS.P99 {
			t.Errorf("%s: latency p99 %v p99.9 %v", name, r.LatencyUS.P99, r.LatencyUS.P999)
		}
		row, ok := rows[w.entry+"/"+w.profile+"/"+itoa(w.conns)]
		if !ok {
			t.Errorf("%s: no table row", name)
			continue
		}
		cells := strings.Split(row, " | ")
		if got, want := cells[2], report.FormatCount(float64(r.RPS)); got != want {
			t.Errorf("%s: table RPS %q, file says %q", name, got, want)
		}
		if got, want := cells[8], report.FormatBytes(r.MemoryPeak); got != want {
			t.Errorf("%s: table Mem %q, file says %q", name, got, want)
		}
		if got := strings.TrimSuffix(cells[10], " |"); cells[9] != "NEW" || got != "NEW" {
			t.Errorf("%s: deltas %q %q; want NEW (no committed results)", name, cells[9], got)
		}
	}
	// A second bench compares against what the first one saved.
	stdout, _, err = runBench(t, nil, "nethttp", "-t", "baseline", "--runs", "1", "--duration", "2s", "--root", root)
	if err != nil {
		t.Fatalf("second bench: %v", err)
	}
	// One run a side: the difference of the means, said to have no interval.
	if !regexp.MustCompile(`\| baseline \| 512 \| [^|]+ \|.*\| [+-]\d+\.\d% \(no interval\) \| ([+-]\d+\.\d% \(no interval\)|—) \|`).MatchString(stdout) {
		t.Errorf("second bench shows no delta against the saved result:\n%s", stdout)
	}
	if !strings.Contains(stdout, "measured at another time") {
		t.Errorf("second bench does not say its Δ is against committed results measured at another time:\n%s", stdout)
	}
	// --save wrote today's layout: a results file per display name and frameworks.json, which
	// the arena's generator reads; no current.json, which only the benchmark host's runner
	// writes.
	for _, p := range []string{result.SitePath("go-nethttp", false), result.SitePath("go-fasthttp", false), result.FrameworksPath} {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(result.CurrentPath))); err == nil {
		t.Errorf("a local bench --save wrote %s", result.CurrentPath)
	}
	board := checkBoard(t, root)
	if rows := board.Results["baseline-4096"]; len(rows) != 2 || rows[0]["fw"] != "go-fasthttp" || rows[1]["fw"] != "go-nethttp" {
		t.Errorf("the board's baseline-4096 = %v, want go-fasthttp's and go-nethttp's rows", rows)
	}
	if r, err := readSaved(filepath.Join(root, "frameworks", "nethttp"), "baseline", 512); err != nil || r.HostFacts == nil || r.HostFacts.Kernel == "unknown" {
		t.Errorf("the saved row's host facts = %+v (%v), want this machine's", r.HostFacts, err)
	}
}

// TestBenchLite runs the contributors' mode: load tools in the pinned image, no pinning.
func TestBenchLite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images and runs load")
	}
	needDocker(t)
	root := arena(t, "nethttp")
	stdout, _, err := runBench(t, nil, "nethttp", "-t", "pipelined", "--lite", "--runs", "1", "--duration", "1s", "--save", "--root", root)
	if err != nil {
		t.Fatalf("bench --lite: %v\n%s", err, stdout)
	}
	r, err := readSaved(filepath.Join(root, "frameworks", "nethttp"), "pipelined", 512)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Lite || r.RPS <= 0 || r.Status2xx != r.Requests || r.Pipeline != 16 || !strings.Contains(r.ToolVersion, "4.1.0") {
		t.Errorf("lite result: lite %v rps %d 2xx %d of %d pipeline %d tool %q", r.Lite, r.RPS, r.Status2xx, r.Requests, r.Pipeline, r.ToolVersion)
	}
	// A --lite row goes to the lite file, which the arena's board never reads.
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(result.SitePath("go-nethttp", true)))); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(result.SitePath("go-nethttp", false)))); err == nil {
		t.Error("a --lite row reached the board's results file")
	}
	if !strings.Contains(stdout, "| pipelined | 512 |") {
		t.Errorf("no pipelined row in:\n%s", stdout)
	}
}

// TestBenchBadInput: each mistake is one line that names the fix, a non-zero exit, and no
// result file.
func TestBenchBadInput(t *testing.T) {
	root := arena(t, "nethttp", "gin")
	bad := filepath.Join(root, "frameworks", "badmeta")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "meta.json"), []byte(`{"display_name":"x","language":"Go","type":"production","engine":"x","enabled":"yes","tests":["baseline"]}`), 0o644)
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown framework", []string{"nethtp"}, []string{"nethtp", "nethttp"}},
		{"unknown test", []string{"nethttp", "-t", "jsn"}, []string{`unknown test "jsn"`, "json"}},
		{"not subscribed", []string{"gin", "-t", "async-db"}, []string{"async-db"}},
		{"bad meta.json", []string{"badmeta"}, []string{"badmeta/meta.json", "enabled", "fix"}},
		{"bad flag", []string{"nethttp", "--frobnicate"}, []string{"frobnicate", "--help"}},
		{"no framework", []string{"-t", "baseline"}, []string{"no framework given"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, err := runBench(t, nil, append(tt.args, "--save", "--root", root)...)
			if err == nil {
				t.Fatal("bench succeeded")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is more than one line: %q", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not name %q", msg, w)
				}
			}
			_ = stderr
			assertNoResults(t, root)
		})
	}
}

// TestBenchEnvironmentFailures: Docker unreachable, the load tool missing or of the wrong
// version, a server that never becomes ready, a Dockerfile that does not build.
func TestBenchEnvironmentFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Docker")
	}
	t.Run("docker unreachable", func(t *testing.T) {
		root := arena(t, "nethttp")
		t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
		_, _, err := runBench(t, nil, "nethttp", "-t", "baseline", "--save", "--root", root)
		if err == nil || !strings.Contains(err.Error(), "start the Docker daemon or set DOCKER_HOST") || strings.Contains(err.Error(), "\n") {
			t.Errorf("err = %v, want one line naming the fix", err)
		}
		assertNoResults(t, root)
	})
	needDocker(t)
	t.Run("load tool missing", func(t *testing.T) {
		root := arena(t, "nethttp")
		t.Setenv("PATH", t.TempDir())
		_, _, err := runBench(t, nil, "nethttp", "-t", "baseline", "--save", "--root", root)
		if err == nil || !strings.Contains(err.Error(), "wrk is not installed") || !strings.Contains(err.Error(), "apt-get install wrk") {
			t.Errorf("err = %v, want the missing tool and how to install it", err)
		}
		assertNoResults(t, root)
	})
	t.Run("load tool of the wrong version", func(t *testing.T) {
		root := arena(t, "nethttp")
		bin := t.TempDir()
		os.WriteFile(filepath.Join(bin, "wrk"), []byte("#!/bin/sh\necho 'wrk 4.0.2 [epoll] Copyright (C) 2012 Will Glozer'\nexit 1\n"), 0o755)
		t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
		_, _, err := runBench(t, nil, "nethttp", "-t", "baseline", "--save", "--root", root)
		if err == nil || !strings.Contains(err.Error(), "pinned to 4.1.0") {
			t.Errorf("err = %v, want the version mismatch", err)
		}
		assertNoResults(t, root)
	})
	t.Run("server never ready", func(t *testing.T) {
		root := t.TempDir()
		scratchEntry(t, root, "deaf", "package main\nimport \"time\"\nfunc main() { println(\"listening nowhere\"); time.Sleep(time.Hour) }\n", "COPY server /server\nENTRYPOINT [\"/server\"]\n")
		_, stderr, err := runBench(t, nil, "deaf", "-t", "baseline", "--runs", "1", "--duration", "1s", "--save", "--root", root, "--ready-timeout", "2s")
		if err == nil {
			t.Fatal("bench succeeded")
		}
		if !strings.Contains(stderr, "did not answer GET http://127.0.0.1:8080/baseline11") || !strings.Contains(stderr, "listen on 0.0.0.0:8080") || !strings.Contains(stderr, "listening nowhere") {
			t.Errorf("stderr does not say the server never answered, the fix and its log:\n%s", stderr)
		}
		assertNoResults(t, root)
	})
	t.Run("dockerfile fails to build", func(t *testing.T) {
		root := t.TempDir()
		scratchEntry(t, root, "unbuildable", "package main\nfunc main() {}\n", "COPY server /server\nCOPY missing-file /missing\n")
		_, stderr, err := runBench(t, nil, "unbuildable", "-t", "baseline", "--runs", "1", "--duration", "1s", "--save", "--root", root)
		if err == nil {
			t.Fatal("bench succeeded")
		}
		if !strings.Contains(stderr, "build of unbuildable failed") || !strings.Contains(stderr, "build log tail:") || !strings.Contains(stderr, "missing-file") {
			t.Errorf("stderr lacks the build failure and its log tail:\n%s", stderr)
		}
		assertNoResults(t, root)
	})
}

// scratchEntry makes an entry whose image is FROM scratch with a static binary built here.
func scratchEntry(t *testing.T, root, name, src, dockerfileTail string) {
	t.Helper()
	dir := filepath.Join(root, "frameworks", name)
	os.MkdirAll(dir, 0o755)
	gosrc := t.TempDir()
	os.WriteFile(filepath.Join(gosrc, "main.go"), []byte(src), 0o644)
	os.WriteFile(filepath.Join(gosrc, "go.mod"), []byte("module x\n\ngo 1.26\n"), 0o644)
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "server"), ".")
	cmd.Dir = gosrc
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	meta := `{"display_name":"` + name + `","language":"Go","type":"engine","engine":"test","enabled":true,"tests":["baseline"]}`
	os.WriteFile(filepath.Join(dir, "meta.json"), []byte(meta), 0o644)
	os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\n"+dockerfileTail), 0o644)
}

func assertNoResults(t *testing.T, root string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(root, "frameworks", "*", "results", "*.json"))
	if len(files) > 0 {
		t.Errorf("result files were written: %v", files)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestBenchDatabaseProfiles measures the database profiles in --lite on real sidecars:
// a Postgres stand-in seeded with the arena's 100,000 items for async-db, api-4 and api-16
// and with its fortune table for fortunes, and Postgres with a Redis stand-in for crud. Every
// row is validated against the seeded tables first, measured with every response a 2xx, and
// records the sidecars' versions.
func TestBenchDatabaseProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images, starts sidecars and runs load")
	}
	needDocker(t)
	root := arena(t, "nethttp")
	stdout, stderr, err := runBench(t, nil, "nethttp", "-t", "async-db,api-4,api-16,crud,fortunes", "--lite", "--runs", "1", "--duration", "1s", "--save", "--root", root)
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, stdout)
	}
	dir := filepath.Join(root, "frameworks", "nethttp")
	for _, tt := range []struct {
		profile  string
		conns    int
		sidecars []string
	}{
		{"api-4", 64, []string{"postgres"}},
		{"api-16", 128, []string{"postgres"}},
		{"async-db", 512, []string{"postgres"}},
		{"crud", 256, []string{"postgres", "redis"}},
		{"fortunes", 256, []string{"postgres"}},
	} {
		r, err := readSaved(dir, tt.profile, tt.conns)
		if err != nil {
			t.Errorf("%s: %v", tt.profile, err)
			continue
		}
		if r.RPS <= 0 || r.Status2xx != r.Requests || !r.Lite {
			t.Errorf("%s: rps %d, 2xx %d of %d, lite %v", tt.profile, r.RPS, r.Status2xx, r.Requests, r.Lite)
		}
		if len(r.Sidecars) != len(tt.sidecars) {
			t.Errorf("%s: sidecars %q, want %q", tt.profile, r.Sidecars, tt.sidecars)
		}
		for i, name := range tt.sidecars {
			if i < len(r.Sidecars) && !regexp.MustCompile(`^`+name+` \d+\.\d+`).MatchString(r.Sidecars[i]) {
				t.Errorf("%s: sidecar %q does not record %s's version", tt.profile, r.Sidecars[i], name)
			}
		}
		if !strings.Contains(stdout, "| "+tt.profile+" | "+strconv.Itoa(tt.conns)+" | ") {
			t.Errorf("no %s row in:\n%s", tt.profile, stdout)
		}
	}
	if !strings.Contains(stderr, "arenabot/postgres:local") {
		t.Errorf("the log does not say which Postgres ran:\n%s", stderr)
	}
}
