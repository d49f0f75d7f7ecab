package measure

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/compose"
	"github.com/arenabot/arenabot/validate"
)

// The arena-style stack entries (testdata/arenastacks/README.md) and the profiles each runs.
var arenaStacks = []struct {
	entry    string
	profiles []string
}{
	{"nethttp-arena_nginx", []string{"gateway-64", "production-stack"}},
	{"nethttp-arena_caddy", []string{"gateway-h3"}},
}

// arenaStackRoot makes a checkout holding the arena-style entries as the arena holds its
// own, beside what their files build from: frameworks/nethttp (the servers' source) and
// frameworks/_shared (authsvc).
func arenaStackRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	repo := filepath.Join("..", "..", "frameworks")
	for dst, src := range map[string]string{
		"nethttp": filepath.Join(repo, "nethttp"),
		"_shared": filepath.Join(repo, "_shared"),
	} {
		if err := os.CopyFS(filepath.Join(root, "frameworks", dst), os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range arenaStacks {
		if err := os.CopyFS(filepath.Join(root, "frameworks", s.entry), os.DirFS(filepath.Join("testdata", "arenastacks", s.entry))); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestStackMountsInArenaData loads every compose file of the repository's entries and of
// the arena-style ones and checks that each bind under ${DATA_DIR} names a file or a
// directory of the arena data: a stack that mounts what the data lacks cannot start (the
// arena's gateway-64 server mounts dataset-large.json, its production-stack cache
// redis-seed.txt and redis-entrypoint.sh).
func TestStackMountsInArenaData(t *testing.T) {
	have := map[string]bool{}
	for _, f := range arenadata.Files() {
		for p := f; p != "."; p = path.Dir(p) {
			have[p] = true
		}
	}
	const data = "/arena-data"
	env := map[string]string{compose.VarDataDir: data, compose.VarCertsDir: data + "/" + arenadata.CertsDir,
		compose.VarDatabaseURL: "postgres://bench:bench@localhost:5432/benchmark"}
	root := arenaStackRoot(t)
	dirs, err := os.ReadDir(filepath.Join("..", "..", "frameworks"))
	if err != nil {
		t.Fatal(err)
	}
	var entries []string
	for _, d := range dirs {
		if d.IsDir() && !strings.HasPrefix(d.Name(), "_") {
			entries = append(entries, filepath.Join("..", "..", "frameworks", d.Name()))
		}
	}
	for _, s := range arenaStacks {
		entries = append(entries, filepath.Join(root, "frameworks", s.entry))
	}
	var mounted []string
	for _, dir := range entries {
		for _, p := range []string{"gateway-64", "gateway-h3", "production-stack"} {
			st, err := compose.Load(dir, p, env)
			if errors.Is(err, compose.ErrNoFile) {
				continue
			}
			if err != nil {
				t.Errorf("%s %s: %v", filepath.Base(dir), p, err)
				continue
			}
			for _, sv := range st.Services {
				for _, m := range sv.Mounts {
					rel, ok := strings.CutPrefix(m.Source, data+"/")
					if !ok {
						continue
					}
					mounted = append(mounted, rel)
					if !have[rel] {
						t.Errorf("%s %s: service %s mounts ${DATA_DIR}/%s, which the arena data does not hold", filepath.Base(dir), p, sv.Name, rel)
					}
				}
			}
		}
	}
	for _, want := range []string{arenadata.DatasetLargeFile, arenadata.RedisSeedFile, arenadata.RedisEntrypointFile} {
		if !slices.Contains(mounted, want) {
			t.Errorf("no stack mounts ${DATA_DIR}/%s; the arena-style entries should (mounted: %q)", want, mounted)
		}
	}
}

// TestArenaStacks validates and measures stacks written the arena's way, unedited
// (testdata/arenastacks: its compose files, mounts and nginx and caddy configurations,
// a Go server in place of its ASP.NET one), in --lite with one 1 s run: gateway-64 and
// production-stack behind nginx, gateway-h3 behind caddy. Every required check passes
// (caddy's site for https://localhost:8443 serves the static files to the checks), and
// every row is measured, production-stack's with its reads and writes answered.
func TestArenaStacks(t *testing.T) {
	eng, data := stackTestEngine(t)
	for _, img := range []string{"golang:1.26-alpine", "alpine:3.21", "redis:7-alpine"} {
		eng.Hidden[img] = true
	}
	root := arenaStackRoot(t)
	b := stackBencher(t, eng, data, Config{Runs: 1, Duration: time.Second, Root: root, SkipValidation: true})
	var plan Plan
	plan.Lite = true
	for _, s := range arenaStacks {
		e, err := frameworks.Load(filepath.Join(root, "frameworks"), s.entry, profile.Names())
		if err != nil {
			t.Fatal(err)
		}
		var ps []profile.Profile
		for _, n := range s.profiles {
			p, _ := profile.Lookup(n)
			ps = append(ps, p)
		}
		plan.Targets = append(plan.Targets, Target{Entry: e, Profiles: ps})
	}
	b.Prebuild(t.Context(), plan)
	holdPorts(t, profile.PortPostgres, profile.PortRedis, profile.PortH1, profile.PortTLS, 9090)
	if err := b.Prepare(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	for _, tg := range plan.Targets {
		out, err := b.Validate(t.Context(), tg.Entry, tg.Entry.Meta.Tests)
		if err != nil {
			t.Fatalf("validate %s: %v", tg.Entry.Name, err)
		}
		counts := map[validate.Status]int{}
		for _, o := range out {
			counts[o.Status]++
			t.Logf("%s: %s", tg.Entry.Name, o)
			if o.Status == validate.Fail || o.Status == validate.Skip {
				t.Errorf("%s: %s", tg.Entry.Name, o)
			}
		}
		t.Logf("%s: %d passed, %d failed, %d warned, %d skipped", tg.Entry.Name, counts[validate.Pass], counts[validate.Fail], counts[validate.Warn], counts[validate.Skip])
		if counts[validate.Pass] == 0 {
			t.Errorf("%s: no check passed", tg.Entry.Name)
		}
	}
	if t.Failed() {
		return
	}
	rows, err := b.Measure(t.Context(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	for _, r := range rows {
		if r.Err != "" || r.Result == nil {
			t.Errorf("%s %s: %v", r.Entry, r.Profile, r.Err)
			continue
		}
		run := r.Result.Runs[0]
		t.Logf("%s %s %dc: %.0f rps, p99 %.0fus, cpu %.2f, mem %d, 2xx %d of %d", r.Entry, r.Profile, r.Conns, run.RPS, run.LatencyUS.P99, run.CPUCores, run.MemoryPeak, run.Status2xx, run.Requests)
		if run.RPS <= 0 || run.CPUCores <= 0 || run.MemoryPeak <= 0 || run.Status2xx == 0 {
			t.Errorf("%s: run %+v; want answered requests, CPU and memory counted", r.Profile, run)
		}
		if r.Profile == "production-stack" && (len(run.Parts) != 2 || run.Parts[0].Status2xx == 0 || run.Parts[1].Status2xx == 0) {
			t.Errorf("production-stack parts %+v; want reads and writes, both answered", run.Parts)
		}
	}
	if left := leftStack(t); left != "" {
		t.Errorf("stack containers left after the rows: %s", left)
	}
}
