package measure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/runner/runnertest"
	"github.com/arenabot/arenabot/validate"
)

// labelJob is the job label (runner.LabelJob) the tests put on what they create.
const labelJob = "arenabot.job"

// sidecarMap is the part of the printed ARENA_IMAGE_MAP line for the sidecars.
const sidecarMap = "postgres:*=arenabot/postgres:local,redis:*=arenabot/redis:local"

// Seeds of a few rows, in the shape of the arena's (a table items, COPY rows).
const (
	seedItems = 3
	goodSeed  = "CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL);\nCOPY items (id, name) FROM stdin;\n1\tone\n2\ttwo\n3\tthree\n\\.\nANALYZE;\n"
	badSeed   = "CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL);\nINSERT INTO items VALUES (1, 'one');\nINSERT INTO itemz VALUES (2, 'two');\n"
)

var (
	pgVersion    = regexp.MustCompile(`^postgres 1[5-9]\.\d+ \(arenabot/postgres:local\)$`)
	redisVersion = regexp.MustCompile(`^redis 7\.\d+\.\d+ \(arenabot/redis:local\)$`)
)

// recording is the real engine on a host that reaches no registry and lacks the sidecars'
// public images (whatever this host has), and that records what every Start was given.
type recording struct {
	*runnertest.WithoutRegistry
	mu     sync.Mutex
	starts []docker.RunOptions
}

func (e *recording) Start(ctx context.Context, o docker.RunOptions) (docker.Container, error) {
	e.mu.Lock()
	e.starts = append(e.starts, o)
	e.mu.Unlock()
	return e.WithoutRegistry.Start(ctx, o)
}

func (e *recording) started() []docker.RunOptions {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.starts)
}

// sidecarHost returns the engine for a sidecar test with the arena data directory
// (sidecarEngine), holding the host with 5432 and 6379 free (holdPorts).
func sidecarHost(t *testing.T) (*recording, string) {
	t.Helper()
	eng, data := sidecarEngine(t)
	holdPorts(t, profile.PortPostgres, profile.PortRedis)
	return eng, data
}

// sidecarEngine returns the engine for a sidecar test with the arena data directory, the
// sidecars' registry images hidden. It skips unless the host has the stand-ins
// deploy/base-images.sh makes (under CI, which runs it, their absence fails the test).
func sidecarEngine(t *testing.T) (*recording, string) {
	t.Helper()
	real, data := runnertest.Engine(t, "")
	runnertest.StandIns(t, real, "arenabot/postgres:local", "arenabot/redis:local", "arenabot/golang:local")
	hidden := map[string]bool{"postgres:18": true, "redis:7-alpine": true}
	return &recording{WithoutRegistry: &runnertest.WithoutRegistry{Engine: real, Hidden: hidden}}, data
}

// holdPorts takes the host lock, as every run that uses the host's ports does, removes the
// containers an earlier holder left (as Prepare does: a process killed while it held the
// lock, as the SIGKILL tests kill serve, leaves its server on 8080 until the next run
// sweeps), and checks that the ports are free: a test skips on a developer's host where one
// is taken, and fails on the CI host.
func holdPorts(t *testing.T, ports ...int) {
	t.Helper()
	lockHost(t)
	eng, err := docker.New(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if n, err := eng.RemoveLabeled(t.Context(), build.LabelManaged, "true"); err != nil {
		t.Fatalf("remove leftover containers: %v", err)
	} else if n > 0 {
		t.Logf("removed %d leftover container(s) of an earlier run", n)
	}
	for _, port := range ports {
		if busy, _ := portInUse(port); busy {
			if os.Getenv("CI") != "" {
				t.Fatalf("port %d is in use on the CI host; the test needs it", port)
			}
			t.Skipf("port %d is in use on this host; the test needs it", port)
		}
	}
}

// lockHost takes the host lock for the rest of the test, as every run that starts servers on
// the host's ports and CPUs does.
func lockHost(t *testing.T) {
	t.Helper()
	unlock, err := host.LockHost(t.Context(), func(holder string) { t.Logf("waiting for the host lock (%s)", holder) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
}

// seedData is an arena data directory whose db/seed.sql is seed; the rest links to the real
// arena data in data.
func seedData(t *testing.T, data, seed string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{arenadata.DatasetFile, arenadata.StaticDir, arenadata.CertsDir, "requests"} {
		if err := os.Symlink(filepath.Join(data, f), filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	writeSeed(t, dir, seed)
	return dir
}

func writeSeed(t *testing.T, dir, seed string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(arenadata.DBSeedFile)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, arenadata.DBSeedFile), []byte(seed), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sidecarBencher is a Bencher over eng whose Postgres seed holds seedItems items.
func sidecarBencher(t *testing.T, eng Engine, dataDir string, cfg Config) *Bencher {
	t.Helper()
	m, err := build.ParseImageMap(sidecarMap)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir, cfg.ImageMap = dataDir, m
	cfg.Labels = map[string]string{labelJob: runnertest.JobLabel(t)}
	if cfg.ScratchDir == "" {
		cfg.ScratchDir = t.TempDir()
	}
	cfg.Log = slog.New(slog.NewTextHandler(t.Output(), nil))
	b := New(eng, cfg)
	b.sidecars.seedItems = seedItems
	t.Cleanup(func() {
		ctx := context.WithoutCancel(t.Context())
		if n, err := eng.RemoveLabeled(ctx, labelJob, runnertest.JobLabel(t)); n != 0 || err != nil {
			t.Errorf("%d containers were left (%v)", n, err)
		}
	})
	return b
}

// leftSidecars lists the sidecar containers of the test that still exist.
func leftSidecars(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "--all", "--quiet", "--filter", "label="+labelJob+"="+runnertest.JobLabel(t), "--filter", "label="+LabelSidecar).Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestSidecarWaitsForTheSeed: the Postgres stand-in is ready only once the items table holds
// every item of the seed, not when its port opens; the Redis stand-in once it answers PONG.
// Both report their versions, run as the runner's other containers do, and are gone after.
func TestSidecarWaitsForTheSeed(t *testing.T) {
	eng, data := sidecarHost(t)
	progress := &runnertest.Notes{}
	b := sidecarBencher(t, eng, seedData(t, data, goodSeed), Config{Progress: progress})
	// A Postgres without a seed: the test fills the table itself, row by row, while the
	// runner waits.
	table := maps.Clone(profile.Sidecars)
	pg := table[profile.SidecarPostgres]
	pg.Mounts = nil
	table[profile.SidecarPostgres] = pg
	b.sidecars.table = table
	e := frameworks.Entry{Name: "sidecars"}
	p, _ := profile.Lookup("async-db")

	type started struct {
		s   *sidecars
		err error
		at  time.Time
	}
	done := make(chan started, 1)
	start := time.Now()
	go func() {
		s, err := b.sidecars.startAll(t.Context(), e, p, []string{profile.SidecarPostgres, profile.SidecarRedis})
		done <- started{s, err, time.Now()}
	}()

	var conn *pgx.Conn
	for deadline := time.Now().Add(60 * time.Second); ; {
		c, err := pgx.Connect(t.Context(), "postgres://bench:bench@localhost:5432/benchmark")
		if err == nil {
			conn = c
			break
		}
		select {
		case r := <-done:
			t.Fatalf("startSidecars returned before Postgres took connections: %v", r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("Postgres never took connections: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	defer conn.Close(context.WithoutCancel(t.Context()))
	t.Logf("Postgres took connections after %s", time.Since(start).Round(time.Millisecond))
	stillWaiting := func(state string) {
		t.Helper()
		select {
		case r := <-done:
			t.Fatalf("startSidecars returned with %s: %v", state, r.err)
		case <-time.After(time.Second):
		}
	}
	stillWaiting("the port open and no items table")
	if _, err := conn.Exec(t.Context(), "CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL); INSERT INTO items VALUES (1, 'one'), (2, 'two')"); err != nil {
		t.Fatal(err)
	}
	stillWaiting(fmt.Sprintf("2 of %d items", seedItems))
	filled := time.Now()
	if _, err := conn.Exec(t.Context(), "INSERT INTO items VALUES (3, 'three')"); err != nil {
		t.Fatal(err)
	}
	var r started
	select {
	case r = <-done:
	case <-time.After(40 * time.Second):
		t.Fatal("startSidecars did not return after the last item went in")
	}
	if r.err != nil {
		t.Fatalf("startSidecars: %v", r.err)
	}
	t.Logf("ready %s after the last item went in", r.at.Sub(filled).Round(time.Millisecond))

	if v := r.s.versions(); len(v) != 2 || !pgVersion.MatchString(v[0]) || !redisVersion.MatchString(v[1]) {
		t.Errorf("versions %q; want postgres and redis with the stand-ins named", v)
	} else {
		t.Logf("versions %q", v)
	}
	for _, note := range []string{
		"sidecar image postgres:18 is not on this host and cannot be pulled; starting postgres from arenabot/postgres:local instead (ARENA_IMAGE_MAP postgres:*=arenabot/postgres:local)",
		"sidecar image redis:7-alpine is not on this host and cannot be pulled; starting redis from arenabot/redis:local instead (ARENA_IMAGE_MAP redis:*=arenabot/redis:local)",
	} {
		if !slices.Contains(progress.Lines, note) {
			t.Errorf("notes %q lack %q", progress.Lines, note)
		}
	}
	want := []string{"DATABASE_URL=postgres://bench:bench@localhost:5432/benchmark", "DATABASE_MAX_CONN=256", "REDIS_URL=redis://localhost:6379"}
	if got := r.s.env(); !slices.Equal(got, want) {
		t.Errorf("env %q, want %q", got, want)
	}
	starts := eng.started()
	if len(starts) != 2 {
		t.Fatalf("%d containers started, want 2", len(starts))
	}
	for _, o := range starts {
		name := o.Labels[LabelSidecar]
		sc := profile.Sidecars[name]
		if !o.HostNetwork || o.Image != "arenabot/"+name+":local" || o.Labels[build.LabelManaged] != "true" || o.Labels[labelJob] != runnertest.JobLabel(t) ||
			o.Labels[build.LabelEntry] != "sidecars" || o.Labels[LabelProfile] != "async-db" || !slices.Equal(o.Cmd, sc.Args) || !slices.Equal(o.Env, sc.Env) {
			t.Errorf("sidecar %s started with %+v", name, o)
		}
		if !slices.Equal(o.CapDrop, []string{"ALL"}) || !slices.Equal(o.CapAdd, sidecarCaps[name]) || !slices.Contains(o.SecurityOpt, noNewPrivileges) ||
			o.PidsLimit != DefaultPidsLimit || o.Memory != DefaultSidecarMemory {
			t.Errorf("sidecar %s confined as cap-drop %q cap-add %q security %q pids %d memory %d; want ALL, %q, no-new-privileges, %d, %d",
				name, o.CapDrop, o.CapAdd, o.SecurityOpt, o.PidsLimit, o.Memory, sidecarCaps[name], DefaultPidsLimit, DefaultSidecarMemory)
		}
		if wantCPUs := map[bool]string{true: "0,64", false: ""}[name == profile.SidecarRedis && host.NumCPU() > 64]; o.CPUSet != wantCPUs {
			t.Errorf("sidecar %s on CPUs %q, want %q on this %d-CPU host", name, o.CPUSet, wantCPUs, host.NumCPU())
		}
	}
	if starts[0].Tmpfs["/var/lib/postgresql"] != "rw,size=2g" {
		t.Errorf("Postgres tmpfs %v", starts[0].Tmpfs)
	}
	// The data directory really is on tmpfs.
	out, err := exec.Command("docker", "exec", "arenabot-sidecar-postgres", "sh", "-c", `stat -f -c %T "$PGDATA"`).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "tmpfs" {
		t.Errorf("PGDATA is on %q (%v), want tmpfs", out, err)
	}

	if left := leftSidecars(t); left == "" {
		t.Fatal("no sidecar containers while they run")
	}
	r.s.stop()
	if left := leftSidecars(t); left != "" {
		t.Errorf("sidecars left after stop: %s", left)
	}
	if busy, _ := portInUse(profile.PortPostgres); busy {
		t.Error("5432 is still taken after stop")
	}
}

// TestSidecarNotReady: a Postgres that is not ready in its time, a port that is taken and a
// sidecar image that is missing each fail with a *SidecarError whose cell and text say so,
// with the container's log tail when it ran; nothing is left running.
func TestSidecarNotReady(t *testing.T) {
	eng, data := sidecarHost(t)
	b := sidecarBencher(t, eng, seedData(t, data, goodSeed), Config{})
	table := maps.Clone(profile.Sidecars)
	pg := table[profile.SidecarPostgres]
	pg.Ready = 300 * time.Millisecond
	table[profile.SidecarPostgres] = pg
	b.sidecars.table = table
	e := frameworks.Entry{Name: "sidecars"}
	p, _ := profile.Lookup("crud")

	_, err := b.sidecars.startAll(t.Context(), e, p, p.Sidecars)
	se, ok := errors.AsType[*SidecarError](err)
	if !ok {
		t.Fatalf("startSidecars = %v; want a *SidecarError", err)
	}
	t.Log(err)
	if se.Name != "postgres" || se.Image != "arenabot/postgres:local" || se.Short() != "postgres not ready after 300ms" || ShortReason(err) != "postgres not ready after 300ms" {
		t.Errorf("SidecarError %+v, Short %q", se, se.Short())
	}
	if !strings.HasPrefix(err.Error(), "the postgres sidecar (arenabot/postgres:local) was not ready after 300ms (") || !strings.Contains(err.Error(), "; container log: ") || se.LogTail == "" {
		t.Errorf("error %q; want what was not ready and the log tail", err)
	}
	if left := leftSidecars(t); left != "" {
		t.Errorf("sidecars left after the failure: %s", left)
	}

	// Something else on 6379.
	l, err := net.Listen("tcp", ":6379")
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.sidecars.startAll(t.Context(), e, p, []string{profile.SidecarRedis})
	l.Close()
	want := "the redis sidecar cannot start: port 6379 is in use on this host (a system Redis?); stop it (systemctl stop redis-server): the sidecar listens on the host network"
	if se, ok := errors.AsType[*SidecarError](err); !ok || err.Error() != want || se.Short() != "port 6379 in use" {
		t.Errorf("with 6379 taken: %v\nwant %s", err, want)
	}

	// The image missing: no map, then a map to a stand-in the host lacks.
	eng.Hidden["arenabot/redis:local"] = true
	_, err = New(eng, Config{DataDir: b.cfg.DataDir}).sidecars.startAll(t.Context(), e, p, []string{profile.SidecarRedis})
	want = "the redis sidecar's image redis:7-alpine is not on this host and cannot be pulled (lookup registry-1.docker.io: no such host); load it (docker load) or map it to a local image with ARENA_IMAGE_MAP=redis:*=<local image> (deploy/base-images.sh makes arenabot/postgres:local and arenabot/redis:local and prints the map)"
	if se, ok := errors.AsType[*SidecarError](err); !ok || err.Error() != want || se.Short() != "sidecar image missing: redis:7-alpine" {
		t.Errorf("without the image: %v\nwant %s", err, want)
	}
	_, err = b.sidecars.startAll(t.Context(), e, p, []string{profile.SidecarRedis})
	want = "the redis sidecar's image redis:7-alpine is not on this host and cannot be pulled (lookup registry-1.docker.io: no such host), and its stand-in arenabot/redis:local (ARENA_IMAGE_MAP redis:*=arenabot/redis:local) is not on this host either; make it (deploy/base-images.sh makes arenabot/postgres:local and arenabot/redis:local and prints the map) or load it (docker load)"
	if se, ok := errors.AsType[*SidecarError](err); !ok || err.Error() != want || se.Short() != "stand-in missing: arenabot/redis:local" {
		t.Errorf("without the stand-in: %v\nwant %s", err, want)
	}
}

// sidecarEntry is a server that answers every request with 200 "ok" and GET /env with the
// sidecars' variables it was started with.
func sidecarEntry(t *testing.T) frameworks.Entry {
	t.Helper()
	e := runnertest.EntryDir(t, "sidecars", map[string]string{
		"Dockerfile": "FROM arenabot/golang:local AS build\nWORKDIR /src\nCOPY go.mod main.go ./\nRUN CGO_ENABLED=0 go build -trimpath -o /server .\nFROM scratch\nCOPY --from=build /server /server\nENTRYPOINT [\"/server\"]\n",
		"go.mod":     "module sidecars\n\ngo 1.26\n",
		"main.go": `package main

import (
	"fmt"
	"net/http"
	"os"
)

func main() {
	http.HandleFunc("/env", func(w http.ResponseWriter, r *http.Request) {
		for _, k := range []string{"DATABASE_URL", "DATABASE_MAX_CONN", "REDIS_URL"} {
			fmt.Fprintf(w, "%s=%s\n", k, os.Getenv(k))
		}
	})
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	panic(http.ListenAndServe(":8080", nil))
}
`,
	})
	e.Meta.DisplayName, e.Meta.Language = "sidecars", "Go"
	return e
}

// midRun calls fn after each run of the load tool, while the server and its sidecars still
// run: a step of the row that had the previous step (the first is the row's start).
type midRun struct {
	last string
	fn   func()
}

func (m *midRun) Step(desc string, done, total int) {
	if desc == m.last {
		m.fn()
	}
	m.last = desc
}
func (*midRun) Note(string) {}

// TestSidecarRows measures two rows of a profile with both sidecars: the first row's seed
// breaks (Postgres exits), which fails that row with the container's log tail; the next row
// gets a good seed, runs with the sidecars' env in its server, records their versions, and
// nothing is left afterwards.
func TestSidecarRows(t *testing.T) {
	eng, data := sidecarHost(t)
	dir := seedData(t, data, badSeed)
	p, _ := profile.Lookup("baseline")
	p.Sidecars = []string{profile.SidecarPostgres, profile.SidecarRedis}
	p.Conns = []int{8, 16}
	var env, running []string
	b := sidecarBencher(t, eng, dir, Config{Runs: 1, Duration: time.Second, SkipValidation: true,
		OnRowStart: func(r result.Row) {
			if r.Conns == 16 {
				writeSeed(t, dir, goodSeed)
			}
		},
	})
	b.out.progress = &midRun{fn: func() {
		resp, err := http.Get("http://127.0.0.1:8080/env")
		if err != nil {
			t.Errorf("GET /env: %v", err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		env = strings.Fields(string(body))
		running = strings.Fields(leftSidecars(t))
	}}
	e := sidecarEntry(t)
	t.Cleanup(func() { eng.RemoveImagesLabeled(context.WithoutCancel(t.Context()), labelJob, runnertest.JobLabel(t)) })
	plan := Plan{Targets: []Target{{Entry: e, Profiles: []profile.Profile{p}}}}
	if err := b.Prepare(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rows, err := b.Measure(t.Context(), plan)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("two rows in %s", time.Since(start).Round(time.Millisecond))
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}

	broken := rows[0]
	if broken.Err == "" {
		t.Fatalf("row 8c: %+v; want it failed by the postgres sidecar", broken)
	}
	t.Log(broken.Err)
	if broken.Result != nil || broken.Short != "postgres exited with status 3" {
		t.Errorf("row 8c: result %v, short %q", broken.Result, broken.Short)
	}
	msg := broken.Err
	if !strings.HasPrefix(msg, "the postgres sidecar (arenabot/postgres:local) exited with status 3 before it was ready; its entrypoint loads the seed db/seed.sql of the arena data") ||
		!strings.Contains(msg, `; container log: `) || !strings.Contains(msg, `relation "itemz" does not exist`) {
		t.Errorf("row 8c error %q; want the exit, the seed and the log tail naming the bad line", msg)
	}

	ok16 := rows[1]
	if ok16.Err != "" || ok16.Result == nil || ok16.Result.RPS <= 0 {
		t.Fatalf("row 16c: %v, result %+v; want it measured", ok16.Err, ok16.Result)
	}
	if v := ok16.Result.Sidecars; len(v) != 2 || !pgVersion.MatchString(v[0]) || !redisVersion.MatchString(v[1]) {
		t.Errorf("row 16c sidecars %q", v)
	} else {
		t.Logf("row 16c: %d rps beside %q", ok16.Result.RPS, v)
	}
	want := []string{"DATABASE_URL=postgres://bench:bench@localhost:5432/benchmark", "DATABASE_MAX_CONN=256", "REDIS_URL=redis://localhost:6379"}
	if !slices.Equal(env, want) {
		t.Errorf("the server's env %q, want %q", env, want)
	}
	if len(running) != 2 {
		t.Errorf("%d sidecars ran during the measurement (%q), want 2", len(running), running)
	}
	if left := leftSidecars(t); left != "" {
		t.Errorf("sidecars left after the rows: %s", left)
	}
}

// TestSidecarValidation: validation starts the union of the selected profiles' sidecars
// before the server and passes their env; a profile whose sidecar does not come up is not
// validated (its rows fail with the *SidecarError), the others are.
func TestSidecarValidation(t *testing.T) {
	eng, data := sidecarHost(t)
	// async-db stands in for every profile with a sidecar, runnable or not yet.
	i := profile.Index("async-db")
	saved := profile.All[i]
	profile.All[i].Unsupported = ""
	t.Cleanup(func() { profile.All[i] = saved })

	dir := seedData(t, data, badSeed)
	b := sidecarBencher(t, eng, dir, Config{})
	e := sidecarEntry(t)
	t.Cleanup(func() { eng.RemoveImagesLabeled(context.WithoutCancel(t.Context()), labelJob, runnertest.JobLabel(t)) })
	image, err := b.Build(t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	baseline, _ := profile.Lookup("baseline")
	asyncDB, _ := profile.Lookup("async-db")
	failed, _, err := b.gate(t.Context(), image, Target{Entry: e, Profiles: []profile.Profile{baseline, asyncDB}})
	if err != nil {
		t.Fatal(err)
	}
	if se, ok := errors.AsType[*SidecarError](failed["async-db"]); !ok || se.Short() != "postgres exited with status 3" {
		t.Errorf("async-db: %v; want the sidecar's failure", failed["async-db"])
	}
	if _, ok := errors.AsType[*ValidationFailure](failed["baseline"]); !ok {
		t.Errorf("baseline: %v; want it validated (and failed: the test server answers ok to all)", failed["baseline"])
	}
	server := func() docker.RunOptions {
		for _, o := range slices.Backward(eng.started()) {
			if o.Labels[LabelSidecar] == "" {
				return o
			}
		}
		t.Fatal("no server started")
		return docker.RunOptions{}
	}
	if o := server(); len(o.Env) != 0 || o.Labels[LabelProfile] != "baseline" {
		t.Errorf("the server got env %q (profile %s), want none: its only sidecar did not come up", o.Env, o.Labels[LabelProfile])
	}

	// The seed mended: the sidecar comes up first, the server gets its env.
	writeSeed(t, dir, goodSeed)
	outcomes, err := b.Validate(t.Context(), e, []string{"async-db"})
	if err != nil {
		t.Fatal(err)
	}
	if o := server(); !slices.Equal(o.Env, profile.Sidecars[profile.SidecarPostgres].ServerEnv) || o.Labels[LabelProfile] != "async-db" {
		t.Errorf("the server got env %q (profile %s), want the Postgres sidecar's", o.Env, o.Labels[LabelProfile])
	}
	for _, o := range outcomes {
		if o.Check == "postgres sidecar" {
			t.Errorf("outcome %s; want the sidecar up", o)
		}
	}
	starts := eng.started()
	if n := len(starts); n < 2 || starts[n-2].Labels[LabelSidecar] != "postgres" {
		t.Errorf("the sidecar did not start before the server")
	}

	// Validate (arenabot validate) lists a profile whose sidecar failed as one FAIL.
	writeSeed(t, dir, badSeed)
	outcomes, err = b.Validate(t.Context(), e, []string{"async-db"})
	if err != nil {
		t.Fatal(err)
	}
	if len(outcomes) != 1 || outcomes[0].Status != validate.Fail || outcomes[0].Check != "postgres sidecar" || !strings.Contains(outcomes[0].Got, "exited with status 3") {
		t.Errorf("outcomes %v; want one FAIL for the sidecar", outcomes)
	} else {
		t.Log(outcomes[0])
	}
	if left := leftSidecars(t); left != "" {
		t.Errorf("sidecars left after validation: %s", left)
	}
}

// TestSidecarArenaSeed starts the Postgres sidecar as a row does, on the arena's own seed:
// ready (startSidecars counts all arenadata.DBItemCount items) within its ready time. How
// long the seed takes is logged, not judged: on a machine shared with a whole CI run it says
// more about the machine than about the seed.
func TestSidecarArenaSeed(t *testing.T) {
	eng, data := sidecarHost(t)
	b := sidecarBencher(t, eng, data, Config{})
	b.sidecars.seedItems = arenadata.DBItemCount
	p, _ := profile.Lookup("async-db")
	start := time.Now()
	s, err := b.sidecars.startAll(t.Context(), frameworks.Entry{Name: "sidecars"}, p, p.Sidecars)
	if err != nil {
		t.Fatal(err)
	}
	defer s.stop()
	took := time.Since(start)
	t.Logf("%s ready with %d items %s after its start (its ready time is %s)", s.versions()[0], arenadata.DBItemCount,
		took.Round(time.Millisecond), profile.Sidecars[profile.SidecarPostgres].Ready)
}

// TestSidecarCPUs: Redis gets its own CPUs 0,64 on a benchmark host that has them, Postgres
// the host's scheduler; in --lite, or on a host without CPU 64, nothing is pinned.
func TestSidecarCPUs(t *testing.T) {
	defer func(n func() int) { host.NumCPU = n }(host.NumCPU)
	pg, rd := profile.Sidecars[profile.SidecarPostgres], profile.Sidecars[profile.SidecarRedis]
	for _, c := range []struct {
		cpus      int
		lite      bool
		pg, redis string
	}{
		{128, false, "", "0,64"},
		{128, true, "", ""},
		{64, false, "", ""},
	} {
		host.NumCPU = func() int { return c.cpus }
		b := New(nil, Config{Lite: c.lite, ServerCPUs: "0", LoadgenCPUs: "1"})
		if got, want := [2]string{b.sidecars.cpus(pg), b.sidecars.cpus(rd)}, [2]string{c.pg, c.redis}; got != want {
			t.Errorf("%d CPUs, lite %v: postgres, redis on %q, want %q", c.cpus, c.lite, got, want)
		}
	}
}
