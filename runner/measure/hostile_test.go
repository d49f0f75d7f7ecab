package measure

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/runnertest"
)

// hostileReport is what testdata/hostile serves on GET /attempts.
type hostileReport struct {
	Attempts map[string]struct {
		Got    bool   `json:"got"`
		Detail string `json:"detail"`
	} `json:"attempts"`
	Mounts []string `json:"mounts"`
	CapEff string   `json:"cap_eff"`
}

// TestHostileEntry measures an entry that, as it starts, tries what a hostile pull request
// would (testdata/hostile: mount a tmpfs, unshare a user namespace, raise its rlimits above
// the hard limits, fork without bound, read the runner's secrets from its environment and
// from pid 1, reach the Docker socket and its TCP ports, write to the read-only mounts) on
// the real engine, as a job does: every attempt fails, the fork bomb stops at the pids limit,
// the container holds no capability and no mount but the arena data's, and the row is
// measured and reported with the limits it ran under.
func TestHostileEntry(t *testing.T) {
	real, data := runnertest.Engine(t, "")
	runnertest.StandIns(t, real, "arenabot/golang:local")
	const secret = "s3cret-of-the-runner"
	for _, k := range []string{"ARENA_REDIS_URL", "ARENA_WEBHOOK_SECRET", "GITHUB_TOKEN", "ARENA_GITHUB_TOKEN"} {
		t.Setenv(k, "rediss://runner:"+secret+"@redis.example:6379/0")
	}
	src, err := os.ReadFile("testdata/hostile/main.go")
	if err != nil {
		t.Fatal(err)
	}
	e := runnertest.EntryDir(t, "hostile", map[string]string{
		"Dockerfile": "FROM arenabot/golang:local AS build\nWORKDIR /src\nCOPY go.mod main.go ./\nRUN CGO_ENABLED=0 go build -trimpath -o /server .\nFROM scratch\nCOPY --from=build /server /server\nENTRYPOINT [\"/server\"]\n",
		"go.mod":     "module hostile\n\ngo 1.26\n",
		"main.go":    string(src),
	})
	e.Meta.DisplayName, e.Meta.Language = "hostile", "Go"

	const pids = 256
	var rep hostileReport
	var body []byte
	b := New(real, Config{DataDir: data, Runs: 1, Duration: time.Second, SkipValidation: true, PidsLimit: pids,
		ScratchDir: t.TempDir(), Labels: map[string]string{labelJob: runnertest.JobLabel(t)}, Log: slog.New(slog.NewTextHandler(t.Output(), nil))})
	b.out.progress = &midRun{fn: func() {
		resp, err := http.Get("http://127.0.0.1:8080/attempts")
		if err != nil {
			t.Errorf("GET /attempts: %v", err)
			return
		}
		defer resp.Body.Close()
		body, _ = io.ReadAll(resp.Body)
	}}
	t.Cleanup(func() {
		ctx := context.WithoutCancel(t.Context())
		real.RemoveLabeled(ctx, labelJob, runnertest.JobLabel(t))
		real.RemoveImagesLabeled(ctx, labelJob, runnertest.JobLabel(t))
	})
	p, _ := profile.Lookup("baseline")
	p.Conns = []int{16}
	plan := Plan{Targets: []Target{{Entry: e, Profiles: []profile.Profile{p}}}}
	// Build first, then take the host lock, as a job does: the other packages'
	// measurements are not held up by this one's builds.
	b.Prebuild(t.Context(), plan)
	lockHost(t)
	if err := b.Prepare(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	rows, err := b.Measure(t.Context(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Err != "" || rows[0].Result == nil || rows[0].Result.RPS <= 0 {
		t.Fatalf("rows %+v; want the one row measured", rows)
	}
	r := rows[0].Result
	t.Logf("measured %d rps", r.RPS)
	want := result.Limits{MemoryBytes: DefaultServerMemory, Pids: pids, Nofile: b.Config().Nofile, CapAdd: serverCaps, NoNewPrivileges: true}
	if r.Limits == nil || r.Limits.MemoryBytes != want.MemoryBytes || r.Limits.Pids != want.Pids || r.Limits.Nofile != want.Nofile ||
		!slices.Equal(r.Limits.CapAdd, want.CapAdd) || slices.Contains(r.Limits.CapAdd, "NET_RAW") || !r.Limits.NoNewPrivileges {
		t.Errorf("result limits %+v; want %+v", r.Limits, want)
	}

	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatalf("the entry's report %q: %v", body, err)
	}
	for _, name := range []string{"mount-tmpfs", "unshare-userns", "rlimit-nofile", "fork-bomb", "runner-env", "host-pid1-environ",
		"socket /var/run/docker.sock", "docker-tcp 2375", "write /data/dataset.json", "write /data/static/hostile.txt", "write /certs/hostile.pem"} {
		if _, ok := rep.Attempts[name]; !ok {
			t.Errorf("the report lacks the attempt %q", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(rep.Attempts)) {
		a := rep.Attempts[name]
		t.Logf("%-32s got=%v  %s", name, a.Got, a.Detail)
		if a.Got {
			t.Errorf("the hostile entry's %s worked: %s", name, a.Detail)
		}
		if strings.Contains(a.Detail, secret) {
			t.Errorf("the hostile entry's %s saw the runner's secret: %s", name, a.Detail)
		}
	}
	if d := rep.Attempts["fork-bomb"].Detail; !strings.Contains(d, "resource temporarily unavailable") {
		t.Errorf("fork bomb: %s; want it stopped by the pids limit (EAGAIN)", d)
	}
	// The server runs as root in its container: its effective set is serverCaps, and none
	// of the dangerous ones (NET_RAW 13, SYS_ADMIN 21, MKNOD 27, SETFCAP 31, …) is in it.
	const kept = 1<<0 | 1<<1 | 1<<3 | 1<<5 | 1<<6 | 1<<7 | 1<<10 // CHOWN DAC_OVERRIDE FOWNER KILL SETGID SETUID NET_BIND_SERVICE
	if eff, err := strconv.ParseUint(rep.CapEff, 16, 64); err != nil || eff&^kept != 0 || eff&(1<<13) != 0 {
		t.Errorf("the server's effective capabilities are %s (%v); want at most %x (serverCaps)", rep.CapEff, err, kept)
	}
	allowed := map[string]bool{"/": true, "/proc": true, "/dev": true, "/dev/pts": true, "/dev/mqueue": true, "/dev/shm": true, "/sys": true,
		"/etc/resolv.conf": true, "/etc/hostname": true, "/etc/hosts": true,
		"/data/dataset.json": true, "/data/static": true, "/certs": true, "/data/large": true}
	for _, m := range rep.Mounts {
		if !allowed[m] && !strings.HasPrefix(m, "/sys/") && !strings.HasPrefix(m, "/proc/") && !strings.HasPrefix(m, "/dev/") {
			t.Errorf("the server sees a mount %s; want only the arena data's and the runtime's own", m)
		}
	}
}
