// Package profile is the arena's table of test profiles: data only.
//
// A profile says what load a framework is measured under: the endpoint, the load tool, the
// connection counts, the pipeline depth, the requests each connection sends before it
// reconnects, the CPU sets, the ports, the readiness probe and the request files. Adding a
// profile is adding a row to All. The order of All is the order reports list rows in.
package profile

import "time"

// Load tools. Each names an adapter in runner/loadgen.
const (
	ToolWrk      = "wrk"
	ToolH2load   = "h2load"
	ToolH2loadH3 = "h2load-h3"
	ToolGhz      = "ghz"
	// ToolArenaload is this module's own generator (cmd/arenaload): paced open-loop HTTP/1.1,
	// WebSocket echo and HTTP/3, where no pinned tool runs a profile faithfully.
	ToolArenaload = "arenaload"
)

// Ports the entries listen on (docs/profiles.md).
const (
	PortH1    = 8080 // HTTP/1.1 plaintext; also h2c for gRPC and the WebSocket upgrade
	PortH1TLS = 8081 // HTTP/1.1 over TLS
	PortH2C   = 8082 // h2c with prior knowledge only
	PortTLS   = 8443 // h2 over TLS (ALPN) and h3 over QUIC
)

// Schemes: the protocol a profile's load and probe speak (Profile.Scheme, ProbeScheme). Each
// names a protocol unit in validate/protocol, which both the readiness probe and the
// validation checks use.
const (
	SchemeHTTP  = "http"  // HTTP/1.1 over TCP
	SchemeHTTPS = "https" // HTTP/1.1 over TLS (no ALPN or ALPN http/1.1)
	SchemeH2    = "h2"    // HTTP/2 over TLS, negotiated with ALPN h2
	SchemeH2C   = "h2c"   // HTTP/2 over TCP with prior knowledge
	SchemeH3    = "h3"    // HTTP/3 over QUIC
	SchemeWS    = "ws"    // WebSocket (HTTP/1.1 upgrade)
	SchemeGRPC  = "grpc"  // gRPC over h2c
	SchemeGRPCS = "grpcs" // gRPC over TLS (ALPN h2)
)

// Schemes lists every scheme a profile may have.
var Schemes = []string{SchemeHTTP, SchemeHTTPS, SchemeH2, SchemeH2C, SchemeH3, SchemeWS, SchemeGRPC, SchemeGRPCS}

// DefaultDuration is the length of one run of a profile whose Duration is 0, unless the
// job says otherwise.
const DefaultDuration = 5 * time.Second

// ServerCPUsStd means "the host's server CPU set" (ARENA_SERVER_CPUS), as opposed to a
// profile's own fixed set.
const ServerCPUsStd = ""

// A Profile is one row of the arena's profile table.
type Profile struct {
	Name     string // "baseline"; the name used in meta.json tests and in -t
	Endpoint string // the arena's dispatch key ("" for baseline and limited-conn)
	Tool     string // ToolWrk, ToolH2load, …; "" when this harness has no tool for it yet

	Conns     []int // connection counts on the full benchmark host, one measurement each
	LiteConns []int // connection counts in --lite mode; nil: not run in --lite

	Pipeline        int           // requests in flight per connection (HTTP/1.1 pipelining); 1 means none
	RequestsPerConn int           // requests a connection sends before it reconnects; 0 keeps it alive
	Streams         int           // concurrent streams per connection (h2/h3 tools); 0 for HTTP/1.1
	Duration        time.Duration // the tool's duration for one run; 0 means the job's default
	// Warmup is a run of the tool this long before the measured runs, not recorded; 0: none.
	Warmup time.Duration

	ServerCPUs string // a fixed cpuset for the server ("0-3"); ServerCPUsStd: the host's set
	Memory     int64  // memory limit for the server container in bytes; 0: none

	Scheme string // one of Schemes: SchemeHTTP, SchemeHTTPS (h1 over TLS), SchemeH2, SchemeH2C, …
	Port   int    // the port the load goes to
	Probe  string // the readiness probe path (port Port unless ProbePort is set)

	// ProbePort is the port the readiness probe goes to when it differs from Port.
	ProbePort int
	// ProbeScheme is the scheme of the readiness probe when it differs from Scheme: the
	// h3 profiles are probed over TCP (SchemeH2), the compose stacks on the server's plain
	// port (SchemeHTTP), the WebSocket profile with a plain GET (SchemeHTTP). Any HTTP
	// response counts as ready. For SchemeGRPC and SchemeGRPCS the probe is a unary call to
	// the method named by Probe. ProbeAt returns the effective port and scheme.
	ProbeScheme string
	// CheckScheme is the scheme validate's checks speak when it differs from Scheme: the
	// arena's suite checks gateway-h3 over h2 on the edge's TCP port (SchemeH2); "": Scheme.
	CheckScheme string
	// ComposeFiles are the names of the entry's compose file for the profile (Compose only),
	// tried in this order, the arena's first (an entry may have only one of them); nil:
	// compose.<Name>.yml. runner/compose's FileNames reads them.
	ComposeFiles []string

	// Path is the request target for tools that load a single URL rather than request
	// files ("/baseline2?a=1&b=1"; for gRPC the method, "/benchmark.BenchmarkService/GetSum").
	Path string

	// Requests are the request templates (files in the arena data's requests/ directory),
	// rotated through by the load tool. For HTTP/1.1 tools they are raw requests; for h2
	// tools a file of URIs.
	Requests []string
	// Headers are sent with every request ("Accept-Encoding: br;q=1, gzip;q=0.8"). Raw
	// request files already carry them; tools that build requests from a URL add them.
	Headers []string

	// Body is a request body file in the arena data's requests/ directory, posted by tools
	// that build requests from a URL (the paced 8gbit profile's 10 KB /echo body).
	Body string

	// Timeout is the load tool's per-request timeout when the default (2 s) is too short:
	// a download of a 170 MB file by each of 100 connections takes longer.
	Timeout time.Duration

	Sidecars []string // services the profile needs beside the server (SidecarPostgres, SidecarRedis)
	Compose  bool     // the server is the entry's docker compose stack, not one container
	// StackPorts are the host ports the stack's services listen on (Compose only): the load's
	// and the probe's ports among them. HostPorts reads them.
	StackPorts []StackPort
	// Bearer, when set, is a token file of the arena data whose token every request of the
	// load (and of its Writes) carries as "Authorization: Bearer <token>".
	Bearer string
	// Writes, when set, is a second load the profile runs beside its own: production-stack's
	// writes.
	Writes *WriteLoad

	// TargetRate is the offered rate, requests per second, of a fixed-rate (open-loop)
	// profile on the benchmark host, and LiteTargetRate the rate with --lite, one a 2-core
	// machine can offer; 0: a closed-loop profile.
	TargetRate, LiteTargetRate int
	// Bandwidth marks a profile whose figure is bytes per second, not requests: its rows
	// show MB/s.
	Bandwidth bool
	WebSocket bool // an echo profile: its rate is echoes per second, its latency per frame

	// Unsupported, when set, says why this harness cannot run the profile yet. The profile
	// stays in the table so entries that subscribe to it load and reports keep their order.
	Unsupported string
}

// ProbeAt returns the port and the scheme the readiness probe speaks: ProbePort and
// ProbeScheme, or Port and Scheme where they are not set.
func (p Profile) ProbeAt() (port int, scheme string) {
	port, scheme = p.Port, p.Scheme
	if p.ProbePort != 0 {
		port = p.ProbePort
	}
	if p.ProbeScheme != "" {
		scheme = p.ProbeScheme
	}
	return port, scheme
}

// Runnable reports whether the harness can measure this profile.
func (p Profile) Runnable() bool { return p.Unsupported == "" }

// Rate returns the offered rate for the mode (0 for a closed-loop profile).
func (p Profile) Rate(lite bool) int {
	if lite {
		return p.LiteTargetRate
	}
	return p.TargetRate
}

// ConnCounts returns the connection counts for the mode.
func (p Profile) ConnCounts(lite bool) []int {
	if lite {
		return p.LiteConns
	}
	return p.Conns
}
