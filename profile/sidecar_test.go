package profile_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/profile"
)

// TestSidecars: every sidecar a profile lists is in the table under its own name, and the two
// are started as the arena started its database and its cache.
func TestSidecars(t *testing.T) {
	for _, p := range profile.All {
		for _, name := range p.Sidecars {
			if sc, ok := profile.Sidecars[name]; !ok || sc.Name != name {
				t.Errorf("%s needs sidecar %q: table has %+v", p.Name, name, sc)
			}
		}
	}
	if len(profile.Sidecars) != 2 {
		t.Errorf("%d sidecars, want postgres and redis", len(profile.Sidecars))
	}

	pg := profile.Sidecars[profile.SidecarPostgres]
	want := profile.Sidecar{
		Name: "postgres", Image: "postgres:18", Port: 5432,
		Args:      []string{"-c", "max_connections=256"},
		Env:       []string{"POSTGRES_USER=bench", "POSTGRES_PASSWORD=bench", "POSTGRES_DB=benchmark"},
		CPUs:      profile.ServerCPUsStd,
		Tmpfs:     map[string]string{"/var/lib/postgresql": "rw,size=2g"},
		Mounts:    []profile.DataMount{{Source: arenadata.DBSeedFile, Target: "/docker-entrypoint-initdb.d/seed.sql"}},
		ServerEnv: []string{"DATABASE_URL=postgres://bench:bench@localhost:5432/benchmark", "DATABASE_MAX_CONN=256"},
		Ready:     60 * time.Second,
	}
	checkSidecar(t, pg, want)

	rd := profile.Sidecars[profile.SidecarRedis]
	want = profile.Sidecar{
		Name: "redis", Image: "redis:7-alpine", Port: 6379,
		Args: []string{"redis-server", "--protected-mode", "no", "--bind", "0.0.0.0", "--port", "6379", "--save", "",
			"--appendonly", "no", "--maxmemory", "512mb", "--maxmemory-policy", "allkeys-lru", "--io-threads", "1"},
		CPUs:      "0,64",
		ServerEnv: []string{"REDIS_URL=redis://localhost:6379"},
		Ready:     30 * time.Second,
	}
	checkSidecar(t, rd, want)
	if i := slices.Index(rd.Args, "--port"); i < 0 || rd.Args[i+1] != strconv.Itoa(rd.Port) {
		t.Errorf("redis listens on %v, not on its Port %d", rd.Args, rd.Port)
	}
}

func checkSidecar(t *testing.T, got, want profile.Sidecar) {
	t.Helper()
	if got.Name != want.Name || got.Image != want.Image || got.Port != want.Port || got.CPUs != want.CPUs || got.Ready != want.Ready ||
		!slices.Equal(got.Args, want.Args) || !slices.Equal(got.Env, want.Env) || !slices.Equal(got.ServerEnv, want.ServerEnv) ||
		!slices.Equal(got.Mounts, want.Mounts) || len(got.Tmpfs) != len(want.Tmpfs) {
		t.Errorf("sidecar %s:\n got %+v\nwant %+v", want.Name, got, want)
	}
	for k, v := range want.Tmpfs {
		if got.Tmpfs[k] != v {
			t.Errorf("sidecar %s: tmpfs %s = %q, want %q", want.Name, k, got.Tmpfs[k], v)
		}
	}
}
