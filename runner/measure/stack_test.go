package measure

import (
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/runnertest"
)

// stackMap is deploy/base-images.sh's map for what the stacks build on and run (alpine for
// the arena-style entries' servers).
const stackMap = "alpine:*=arenabot/debian:local,golang:*=arenabot/golang:local,postgres:*=arenabot/postgres:local,redis:*=arenabot/redis:local,nginx:*=arenabot/nginx:local,caddy:*=arenabot/caddy:local"

// stackHost is sidecarHost plus the edges' stand-ins, the Postgres port free and the
// compose stacks' ports (8080, 8443, 9090) free.
func stackHost(t *testing.T) (*recording, string) {
	t.Helper()
	eng, data := stackTestEngine(t)
	holdPorts(t, profile.PortPostgres, profile.PortRedis, profile.PortH1, profile.PortTLS, 9090)
	return eng, data
}

// stackTestEngine is sidecarEngine with the stacks' proxies' stand-ins too, their registry
// images hidden.
func stackTestEngine(t *testing.T) (*recording, string) {
	t.Helper()
	eng, data := sidecarEngine(t)
	runnertest.StandIns(t, eng.Engine, "arenabot/nginx:local", "arenabot/caddy:local", "arenabot/debian:local")
	eng.Hidden["nginx:1.27-alpine"], eng.Hidden["caddy:2-alpine"] = true, true
	return eng, data
}

// stackBencher is a Bencher over eng for the stacks, with the stand-ins mapped, in --lite.
func stackBencher(t *testing.T, eng Engine, data string, cfg Config) *Bencher {
	t.Helper()
	m, err := build.ParseImageMap(stackMap)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir, cfg.ImageMap, cfg.Lite = data, m, true
	cfg.Labels = map[string]string{labelJob: runnertest.JobLabel(t)}
	if cfg.Root == "" {
		cfg.Root = filepath.Join("..", "..")
	}
	if cfg.ScratchDir == "" {
		cfg.ScratchDir = t.TempDir()
	}
	cfg.Log = slog.New(slog.NewTextHandler(t.Output(), nil))
	cfg.Progress = &runnertest.Notes{}
	b := New(eng, cfg)
	t.Cleanup(func() {
		ctx := context.WithoutCancel(t.Context())
		if n, err := eng.RemoveLabeled(ctx, labelJob, runnertest.JobLabel(t)); n != 0 || err != nil {
			t.Errorf("%d containers were left (%v)", n, err)
		}
	})
	return b
}

// leftStack lists the stack containers of the test that still exist.
func leftStack(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "--all", "--format", "{{.Names}}", "--filter", "label="+labelJob+"="+runnertest.JobLabel(t), "--filter", "label="+LabelStack).Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestStacks validates and measures each of nethttp-stack's three stacks, from its own
// compose files, in --lite with one 1 s run, as a job does: the stacks' images are built
// ahead (Prebuild), before the host lock, and the rows build nothing; every row has a
// result, production-stack's with its reads' and writes' counts, and no container is left.
func TestStacks(t *testing.T) {
	eng, data := stackTestEngine(t)
	e, err := frameworks.Load(filepath.Join("..", "..", "frameworks"), "nethttp-stack", profile.Names())
	if err != nil {
		t.Fatal(err)
	}
	b := stackBencher(t, eng, data, Config{Runs: 1, Duration: time.Second})
	var ps []profile.Profile
	for _, n := range []string{"gateway-64", "gateway-h3", "production-stack"} {
		p, _ := profile.Lookup(n)
		ps = append(ps, p)
	}
	plan := Plan{Lite: true, Targets: []Target{{Entry: e, Profiles: ps}}}
	notes := b.cfg.Progress.(*runnertest.Notes)
	b.Prebuild(t.Context(), plan)
	built := building(notes.Lines)
	for _, svc := range []string{"nethttp-stack-proxy", "nethttp-stack-server", "nethttp-stack-authsvc", "nethttp-stack-edge"} {
		if !slices.ContainsFunc(built, func(l string) bool { return strings.HasPrefix(l, svc+": building ") }) {
			t.Errorf("Prebuild did not build %s; it built %q", svc, built)
		}
	}
	holdPorts(t, profile.PortPostgres, profile.PortRedis, profile.PortH1, profile.PortTLS, 9090)
	if err := b.Prepare(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if again := building(notes.Lines); len(again) != len(built) {
			t.Errorf("the rows built %q under the host lock; want every image from Prebuild", again[len(built):])
		}
	}()
	var during []string
	b.out.progress = &midRun{fn: func() { during = append(during, leftStack(t)) }}
	rows, err := b.Measure(t.Context(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	for _, r := range rows {
		if r.Err != "" || r.Result == nil {
			t.Errorf("%s: %v", r.Profile, r.Err)
			continue
		}
		run := r.Result.Runs[0]
		t.Logf("%s %dc: %.0f rps, p99 %.0fus, cpu %.2f, mem %d", r.Profile, r.Conns, run.RPS, run.LatencyUS.P99, run.CPUCores, run.MemoryPeak)
		if run.RPS <= 0 || run.CPUCores <= 0 || run.MemoryPeak <= 0 {
			t.Errorf("%s: run %+v; want requests, CPU and memory counted", r.Profile, run)
		}
		if r.Profile == "production-stack" {
			if len(run.Parts) != 2 || run.Parts[0].Status2xx == 0 || run.Parts[1].Status2xx == 0 ||
				run.Status2xx != run.Parts[0].Status2xx+run.Parts[1].Status2xx {
				t.Errorf("production-stack parts %+v, 2xx %d; want reads and writes, both answered, summed", run.Parts, run.Status2xx)
			}
		}
	}
	for _, d := range during {
		if n := len(strings.Fields(d)); n != 2 && n != 4 {
			t.Errorf("stack containers during a run: %q; want 2 (gateway) or 4 (production-stack)", d)
		}
	}
	if left := leftStack(t); left != "" {
		t.Errorf("stack containers left after the rows: %s", left)
	}
}

// building is the "building …" notes among lines.
func building(lines []string) []string {
	return slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return !strings.Contains(l, ": building ") })
}

// stackEntry writes an entry whose gateway-64 file is compose.
func stackEntry(t *testing.T, compose string) frameworks.Entry {
	e := runnertest.EntryDir(t, "badstack", map[string]string{"compose.gateway.yml": compose})
	e.Meta.DisplayName, e.Meta.Tests = "badstack", []string{"gateway-64"}
	return e
}

// stackProfile is gateway-64 without its Postgres sidecar (the failures come first).
func stackProfile() profile.Profile {
	p, _ := profile.Lookup("gateway-64")
	p.Sidecars = nil
	return p
}

// TestStackFailures: a stack the runner cannot run fails its row with a one-line cell and
// the reason, within its bounds, and leaves no container: a healthcheck that never passes,
// an image neither present nor mapped, a network other than the host's, a service that
// exits.
func TestStackFailures(t *testing.T) {
	eng, data := stackHost(t)
	const sleeper = `    image: arenabot/debian:local
    network_mode: host
    command: ["sleep", "60"]
`
	for _, c := range []struct {
		name, file, cell, msg string
	}{
		{"unhealthy", "services:\n  dep:\n" + sleeper + "    healthcheck:\n      test: [\"CMD\", \"false\"]\n      interval: 200ms\n      timeout: 1s\n      retries: 2\n  edge:\n" + sleeper +
			"    depends_on:\n      dep:\n        condition: service_healthy\n",
			"dep unhealthy", "service dep is unhealthy"},
		{"unmapped", "services:\n  edge:\n    image: nosuch/edge:1\n    network_mode: host\n",
			"image missing: nosuch/edge:1", "image nosuch/edge:1 is not on this host and cannot be pulled"},
		{"bridge", "services:\n  edge:\n    image: arenabot/debian:local\n",
			"compose: edge: network_mode is not set (compose's default network)", "set network_mode: host"},
		{"exits", "services:\n  dep:\n" + strings.Replace(sleeper, `["sleep", "60"]`, `["sh", "-c", "exit 3"]`, 1) + "  edge:\n" + sleeper +
			"    depends_on:\n      dep:\n        condition: service_completed_successfully\n",
			"dep exited with status 3", "service dep exited with status 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			eng.Hidden["nosuch/edge:1"] = true
			b := stackBencher(t, eng, data, Config{Runs: 1, Duration: time.Second, SkipValidation: true, ReadyTimeout: 5 * time.Second})
			e := stackEntry(t, c.file)
			p := stackProfile()
			start := time.Now()
			rows, err := b.Measure(t.Context(), Plan{Lite: true, Targets: []Target{{Entry: e, Profiles: []profile.Profile{p}}}})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s in %s: %v", c.name, time.Since(start).Round(time.Millisecond), rows[0].Err)
			if rows[0].Err == "" || rows[0].Result != nil {
				t.Fatalf("row error %q, result %v; want it failed", rows[0].Err, rows[0].Result)
			}
			if got := rows[0].Short; got != c.cell {
				t.Errorf("cell %q, want %q", got, c.cell)
			}
			if !strings.Contains(rows[0].Err, c.msg) || strings.Contains(rows[0].Err, "\n") {
				t.Errorf("error %q; want one line saying %q", rows[0].Err, c.msg)
			}
			if left := leftStack(t); left != "" {
				t.Errorf("stack containers left: %s", left)
			}
		})
	}
}

// TestStackCancelled: a job cancelled while its stack starts (waiting for a service to be
// healthy) ends at once and leaves no container.
func TestStackCancelled(t *testing.T) {
	eng, data := stackHost(t)
	b := stackBencher(t, eng, data, Config{Runs: 1, Duration: time.Second, SkipValidation: true})
	e := stackEntry(t, `services:
  dep:
    image: arenabot/debian:local
    network_mode: host
    command: ["sleep", "60"]
    healthcheck:
      test: ["CMD", "sh", "-c", "sleep 30"]
      interval: 1s
      timeout: 40s
      retries: 3
  edge:
    image: arenabot/debian:local
    network_mode: host
    command: ["sleep", "60"]
    depends_on:
      dep:
        condition: service_healthy
`)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var seen string
	go func() {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) && ctx.Err() == nil {
			if seen = leftStack(t); seen != "" {
				cancel()
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	start := time.Now()
	rows, err := b.Measure(ctx, Plan{Lite: true, Targets: []Target{{Entry: e, Profiles: []profile.Profile{stackProfile()}}}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Measure: %v (rows %v); want it cancelled", err, rows)
	}
	if seen == "" {
		t.Fatal("the stack never started")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Measure took %s after the cancel; want it to end at once", d)
	}
	if left := leftStack(t); left != "" {
		t.Errorf("stack containers left after the cancel: %s (running at the cancel: %s)", left, seen)
	}
}
