package profile

import "time"

// A Sidecar is a service the runner starts beside the server, before it, for the rows of the
// profiles that list it (Profile.Sidecars): its own container on the host network, its data
// on tmpfs, started fresh for every row and removed after it.
type Sidecar struct {
	Name  string // SidecarPostgres, SidecarRedis
	Image string // the public image ("postgres:18"); ARENA_IMAGE_MAP may name a local stand-in
	Port  int    // the host port it listens on (host network)

	Args []string // the container's command, after the image's entrypoint
	Env  []string // the container's environment, "KEY=value"

	// CPUs is its cpuset on the benchmark host ("0,64"); ServerCPUsStd ("") leaves it to
	// the host's scheduler. In --lite nothing is pinned.
	CPUs string
	// Tmpfs mounts, path in the container → mount options ("rw,size=2g").
	Tmpfs map[string]string
	// Mounts are files of the arena data mounted read-only into the container.
	Mounts []DataMount

	// ServerEnv is what the server gets when the sidecar runs beside it, "KEY=value".
	ServerEnv []string

	// Ready is how long the sidecar may take to be ready: for Postgres the seed loaded (every
	// item in the items table), for Redis an answer PONG to PING.
	Ready time.Duration
}

// A DataMount is a file of the arena data mounted read-only into a container.
type DataMount struct {
	Source string // relative to the arena data directory ("db/seed.sql")
	Target string // path in the container
}

// Ports of the sidecars on the host network.
const (
	PortPostgres = 5432
	PortRedis    = 6379
)

// Sidecars are the services profiles can need, by name. The Postgres and Redis lines are the
// arena's: its database and its cache, started the same way.
var Sidecars = map[string]Sidecar{
	SidecarPostgres: {
		Name:  SidecarPostgres,
		Image: "postgres:18",
		Port:  PortPostgres,
		Args:  []string{"-c", "max_connections=256"},
		Env:   []string{"POSTGRES_USER=bench", "POSTGRES_PASSWORD=bench", "POSTGRES_DB=benchmark"},
		CPUs:  ServerCPUsStd,
		Tmpfs: map[string]string{"/var/lib/postgresql": "rw,size=2g"},
		// The seed of the items table (arenadata), run by the image's entrypoint on
		// its empty data directory.
		Mounts:    []DataMount{{Source: "db/seed.sql", Target: "/docker-entrypoint-initdb.d/seed.sql"}},
		ServerEnv: []string{"DATABASE_URL=postgres://bench:bench@localhost:5432/benchmark", "DATABASE_MAX_CONN=256"},
		Ready:     60 * time.Second,
	},
	SidecarRedis: {
		Name:  SidecarRedis,
		Image: "redis:7-alpine",
		Port:  PortRedis,
		Args: []string{"redis-server", "--protected-mode", "no", "--bind", "0.0.0.0", "--port", "6379",
			"--save", "", "--appendonly", "no", "--maxmemory", "512mb", "--maxmemory-policy", "allkeys-lru", "--io-threads", "1"},
		CPUs:      "0,64",
		ServerEnv: []string{"REDIS_URL=redis://localhost:6379"},
		Ready:     30 * time.Second,
	},
}
