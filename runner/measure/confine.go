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
// broken entry cannot take the host's memory or process table. docs/operating.md has the
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

// serverCaps are the capabilities a server keeps, out of Docker's default set: what a
// server that starts as root and drops to another user itself needs (an nginx-style master
// setting its workers' user, an entrypoint that chowns its directories and execs through
// gosu or su-exec), since entries written for the old arena must run here unedited. Gone
// are the ones a server has no use for and a hostile one would: NET_RAW above all (raw
// sockets on the host's network), MKNOD, SETFCAP, SETPCAP, SYS_CHROOT, AUDIT_WRITE and
// FSETID; none outside Docker's default set was ever there (SYS_ADMIN, NET_ADMIN,
// SYS_RESOURCE, …). A server running as a non-root user has none of them in effect.
var serverCaps = []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "SETGID", "SETUID", "NET_BIND_SERVICE"}

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
