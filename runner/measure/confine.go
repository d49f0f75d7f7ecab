package measure

import (
	"slices"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/docker"
)

// The containers of a row run code from a pull request: the server is the entry's own, and a
// sidecar's image is public but shares the host with it. Each runs with every capability
// dropped but the few its start needs, with no-new-privileges (no setuid binary or file
// capability raises them again), and with a memory and a pids limit, so that a hostile or
// broken entry cannot take the host's memory or process table. deploy/README.md has the
// threat model and what remains open (the host network).

// Limits a server or sidecar gets unless the profile or the Config says otherwise.
const (
	// DefaultServerMemory is a server's memory limit (swap included) when its profile sets
	// none: far above what the entries use at 16384 connections, far below a benchmark host.
	DefaultServerMemory = 8 << 30
	// DefaultSidecarMemory is a sidecar's: Postgres holds its data on a 2 GiB tmpfs, which
	// counts against it; Redis runs with maxmemory 512mb.
	DefaultSidecarMemory = 4 << 30
	// DefaultPidsLimit bounds processes and threads together per container: room for a
	// thread per connection at 16384 connections and more, and still a fraction of the
	// host's pid_max, so a fork bomb stops at it.
	DefaultPidsLimit = 32768
)

// serverCaps are the capabilities a server keeps: none. The entries are static binaries
// that run as the image's user, listen on ports above 1024 (NET_BIND_SERVICE is not needed),
// read world-readable read-only mounts (no DAC_OVERRIDE) and write nowhere but their own
// writable layer. An image that starts as root and drops to another user itself cannot do
// that here: it must say USER in its Dockerfile instead.
var serverCaps = []string{}

// sidecarCaps are the capabilities each sidecar's entrypoint needs as it starts as root:
// Postgres's (the official image's and its stand-in's) creates and chowns its data and
// socket directories (CHOWN, DAC_OVERRIDE, FOWNER) and then drops to the postgres user
// (SETUID, SETGID); the official Redis image's drops from root to redis with su-exec
// (SETUID, SETGID; its stand-in already runs as redis). None of them binds a port below 1024.
var sidecarCaps = map[string][]string{
	profile.SidecarPostgres: {"CHOWN", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID"},
	profile.SidecarRedis:    {"SETGID", "SETUID"},
}

// noNewPrivileges is the security option every container of a row runs with.
const noNewPrivileges = "no-new-privileges:true"

// confine sets the capabilities, no-new-privileges and the pids and memory limits of a
// row's container; memory 0 means the default.
func confine(o *docker.RunOptions, caps []string, memory, pids int64) {
	o.CapDrop = []string{"ALL"}
	o.CapAdd = slices.Clone(caps)
	o.SecurityOpt = append(o.SecurityOpt, noNewPrivileges)
	o.Memory = memory
	o.PidsLimit = pids
}

// serverMemory is the memory limit of a profile's server.
func (c Config) serverMemory(p profile.Profile) int64 {
	if p.Memory > 0 {
		return p.Memory
	}
	return c.ServerMemory
}

// limits are what a row's server ran under, for its result.
func (c Config) limits(p profile.Profile) *result.Limits {
	return &result.Limits{
		MemoryBytes:     c.serverMemory(p),
		Pids:            c.PidsLimit,
		Nofile:          c.Nofile,
		CapAdd:          slices.Clone(serverCaps),
		NoNewPrivileges: true,
	}
}
