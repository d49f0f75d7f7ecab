package profile

import (
	"slices"
	"strconv"
	"time"
)

// Sidecars a profile can need beside the server.
const (
	SidecarPostgres = "postgres" // postgres:18 seeded with the items, users and fortune tables, on 5432
	SidecarRedis    = "redis"    // redis:7-alpine on 6379
)

// Readiness probes: the path the runner polls until a server answers.
const (
	probeBaseline11 = "/baseline11?a=1&b=1"
	probeBaseline2  = "/baseline2?a=1&b=1"
	probeStatic     = "/static/reset.css"
	probeGetSum     = "/benchmark.BenchmarkService/GetSum"
	// pathLatency is what the fixed-rate latency profiles request.
	pathLatency = "/baseline11?a=1&b=2"
)

// Headers the static and compressed-json profiles send.
const (
	headerStaticAE = "Accept-Encoding: br;q=1, gzip;q=0.8"
	headerJSONAE   = "Accept-Encoding: gzip, br"
)

// URI files of the h2 tools, in the arena data's requests/ directory: one URI a line.
const (
	staticH2URIs = "static-h2-uris.txt"  // the 20 static files on 8443
	jsonH2CURIs  = "json-h2c-uris.txt"   // json's 7 (count, m) pairs on 8082
	gatewayURIs  = "gateway-64-uris.txt" // gateway-64's and gateway-h3's 20 URIs through the edge
	// production-stack's 20,000 reads, its writes (POST /api/items/1 … 20) and their body
	productionReads     = "production-stack-reads.txt"
	productionWrites    = "production-stack-writes.txt"
	productionWriteBody = "production-stack-write-body.json"
	// jwtToken is the arena's bearer token, in the arena data (arenadata.JWTTokenFile).
	jwtToken = "jwt-token.txt"
)

// Request files, in the arena data's requests/ directory (arenadata).
var (
	baselineRequests = []string{"get.raw", "post_cl.raw", "post_chunked.raw"}
	jsonRequests     = []string{"json-1.raw", "json-5.raw", "json-10.raw", "json-15.raw", "json-25.raw", "json-40.raw", "json-50.raw"}
	jsonCompRequests = []string{"json-gzip-25.raw", "json-gzip-40.raw", "json-gzip-50.raw"}
	uploadRequests   = []string{"upload-500k.raw", "upload-2m.raw", "upload-10m.raw", "upload-20m.raw"}
	asyncDBRequests  = []string{"async-db-5.raw", "async-db-10.raw", "async-db-20.raw", "async-db-35.raw", "async-db-50.raw"}
	// apiRequests weights the mix by repetition: 3 baseline, 3 /json/50?m=1, 2 /async-db.
	apiRequests = []string{"get.raw", "get.raw", "get.raw", "json-get.raw", "json-get.raw", "json-get.raw",
		"async-db-get.raw", "async-db-get.raw"}
	// crudRequests are the 20 crud templates in the order the arena sends them (its file
	// names sorted bytewise): 1 create, 15 get, 1 list, 3 update.
	crudRequests = func() []string {
		rs := []string{"crud-create-1.raw", "crud-list-rand-1.raw"}
		for i := 1; i <= 15; i++ {
			rs = append(rs, "crud-get-"+strconv.Itoa(i)+".raw")
		}
		for i := 1; i <= 3; i++ {
			rs = append(rs, "crud-update-"+strconv.Itoa(i)+".raw")
		}
		slices.Sort(rs)
		return rs
	}()
	// staticFiles are the 20 files the static profiles request, under /static/.
	staticFiles = []string{
		"analytics.js", "app.js", "bold.woff2", "components.css", "footer.html",
		"header.html", "helpers.js", "hero.webp", "icon-sprite.svg", "layout.css",
		"logo.svg", "manifest.json", "regular.woff2", "reset.css", "router.js",
		"theme.css", "thumb1.webp", "thumb2.webp", "utilities.css", "vendor.js",
	}
	staticRequests = func() []string {
		var rs []string
		for _, f := range staticFiles {
			rs = append(rs, "static-"+f+".raw")
		}
		return rs
	}()
)

// StaticFiles returns the names of the 20 files the static profiles request under /static/
// (a copy).
func StaticFiles() []string { return slices.Clone(staticFiles) }

const gib = 1 << 30

// All is the arena's profile table, in the arena's PROFILE_ORDER: reports list rows in this
// order, then by connection count. Numbers are the arena's (docs/profiles.md renders them);
// the load tools are this harness's: wrk for HTTP/1.1 where the arena used gcannon.
var All = []Profile{
	{
		Name: "baseline", Endpoint: "", Tool: ToolWrk,
		Conns: []int{512, 4096}, LiteConns: []int{512},
		Pipeline: 1, RequestsPerConn: 0,
		Scheme: SchemeHTTP, Port: PortH1, Probe: probeBaseline11,
		Requests: baselineRequests,
	},
	{
		Name: "pipelined", Endpoint: "pipeline", Tool: ToolWrk,
		Conns: []int{512, 4096}, LiteConns: []int{512},
		Pipeline: 16, RequestsPerConn: 0,
		Scheme: SchemeHTTP, Port: PortH1, Probe: probeBaseline11,
		Requests: []string{"pipeline.raw"},
	},
	{
		Name: "limited-conn", Endpoint: "", Tool: ToolWrk,
		Conns: []int{512, 4096}, LiteConns: []int{512},
		Pipeline: 1, RequestsPerConn: 10,
		Scheme: SchemeHTTP, Port: PortH1, Probe: probeBaseline11,
		Requests: baselineRequests,
	},
	{
		Name: "json", Endpoint: "json", Tool: ToolWrk,
		Conns: []int{4096}, LiteConns: []int{512},
		Pipeline: 1, RequestsPerConn: 25,
		Scheme: SchemeHTTP, Port: PortH1, Probe: "/json/1",
		Requests: jsonRequests,
	},
	{
		Name: "json-comp", Endpoint: "json-compressed", Tool: ToolWrk,
		Conns: []int{512, 4096, 16384}, LiteConns: []int{512},
		Pipeline: 1, RequestsPerConn: 25,
		Scheme: SchemeHTTP, Port: PortH1, Probe: probeBaseline11,
		Requests: jsonCompRequests, Headers: []string{headerJSONAE},
	},
	{
		// The json workload over TLS, kept alive, no Accept-Encoding. The arena has no lite
		// json-tls; 256 connections are ours, for a 2-core machine.
		Name: "json-tls", Endpoint: "json-tls", Tool: ToolWrk,
		Conns: []int{4096}, LiteConns: []int{256},
		Pipeline: 1, RequestsPerConn: 0,
		Scheme: SchemeHTTPS, Port: PortH1TLS, Probe: "/json/1?m=1",
		Requests: jsonRequests,
	},
	{
		Name: "upload", Endpoint: "upload", Tool: ToolWrk,
		Conns: []int{32, 256}, LiteConns: []int{128},
		Pipeline: 1, RequestsPerConn: 5,
		Scheme: SchemeHTTP, Port: PortH1, Probe: probeBaseline11,
		Requests: uploadRequests,
	},
	{
		// 3 baseline, 3 /json/50?m=1 and 2 /async-db templates, as in the arena. The arena
		// has no lite api-4; 64 connections are ours, for a 2-core machine.
		Name: "api-4", Endpoint: "api-4", Tool: ToolWrk,
		Conns: []int{256}, LiteConns: []int{64},
		Pipeline: 1, RequestsPerConn: 5, Duration: 15 * time.Second,
		ServerCPUs: "0-3", Memory: 16 * gib,
		Scheme: SchemeHTTP, Port: PortH1, Probe: probeBaseline11,
		Requests: apiRequests,
		Sidecars: []string{SidecarPostgres},
	},
	{
		// api-4's mix; the lite count (128) is ours too.
		Name: "api-16", Endpoint: "api-16", Tool: ToolWrk,
		Conns: []int{1024}, LiteConns: []int{128},
		Pipeline: 1, RequestsPerConn: 5, Duration: 15 * time.Second,
		ServerCPUs: "0-7,64-71", Memory: 32 * gib,
		Scheme: SchemeHTTP, Port: PortH1, Probe: probeBaseline11,
		Requests: apiRequests,
		Sidecars: []string{SidecarPostgres},
	},
	{
		// The arena sets -r 200 (lite 10), but wrk keeps connections alive whatever it is
		// told, so 0 says what is measured.
		Name: "static", Endpoint: "static", Tool: ToolWrk,
		Conns: []int{1024, 4096, 6800}, LiteConns: []int{512},
		Pipeline: 1, RequestsPerConn: 0,
		Scheme: SchemeHTTP, Port: PortH1, Probe: probeStatic,
		Requests: staticRequests, Headers: []string{headerStaticAE},
	},
	{
		// The static rotation over TLS on 8081 (a newer arena profile; its connection counts
		// were not found, so these are static's; the lite 256 is ours).
		Name: "static-tls", Endpoint: "static-tls", Tool: ToolWrk,
		Conns: []int{1024, 4096, 6800}, LiteConns: []int{256},
		Pipeline: 1, RequestsPerConn: 0,
		Scheme: SchemeHTTPS, Port: PortH1TLS, Probe: probeStatic,
		Requests: staticRequests, Headers: []string{headerStaticAE},
	},
	{
		// GET /async-db?min=10&max=50&limit={5,10,20,35,50} in the arena.
		Name: "async-db", Endpoint: "async-db", Tool: ToolWrk,
		Conns: []int{1024}, LiteConns: []int{512},
		Pipeline: 1, RequestsPerConn: 25, Duration: 10 * time.Second,
		Scheme: SchemeHTTP, Port: PortH1, Probe: probeBaseline11,
		Requests: asyncDBRequests,
		Sidecars: []string{SidecarPostgres},
	},
	{
		// 15 get, 3 update, 1 list, 1 create templates with per-request substitution
		// ({RAND:1:50000} ids, {SEQ:100001} new ids), as in the arena; Redis pinned to CPUs
		// 0,64. The arena has no lite crud; 256 connections are ours.
		Name: "crud", Endpoint: "crud", Tool: ToolWrk,
		Conns: []int{4096}, LiteConns: []int{256},
		Pipeline: 1, RequestsPerConn: 200, Duration: 15 * time.Second,
		ServerCPUs: "1-31,65-95",
		Scheme:     SchemeHTTP, Port: PortH1, Probe: probeBaseline11,
		Requests: crudRequests,
		Sidecars: []string{SidecarPostgres, SidecarRedis},
	},
	{
		// GET /fortunes, kept alive (the arena's gcannon in URL mode, -c 1024, no -r): the 200
		// rows of the fortune table, a row added at request time, sorted and rendered as an
		// escaped HTML table. The arena has no lite fortunes; 256 connections are ours, as
		// crud's.
		Name: "fortunes", Endpoint: "fortunes", Tool: ToolWrk,
		Conns: []int{1024}, LiteConns: []int{256},
		Pipeline: 1, RequestsPerConn: 0,
		Scheme: SchemeHTTP, Port: PortH1, Probe: probeBaseline11,
		Requests: []string{"fortunes.raw"},
		Sidecars: []string{SidecarPostgres},
	},
	{
		// The arena's lite count is 512; ours is 64 (6,400 streams in flight), for a 2-core
		// machine: there h2load 1.52.0 opens 512 TLS connections so slowly that clients still
		// connecting when the run ends keep it from exiting.
		Name: "baseline-h2", Endpoint: "h2", Tool: ToolH2load,
		Conns: []int{256, 1024}, LiteConns: []int{64},
		Pipeline: 1, Streams: 100,
		Scheme: SchemeH2, Port: PortTLS, Probe: probeBaseline2,
		Path: probeBaseline2,
	},
	{
		// The 20 static files, one URI each in static-h2-uris.txt. Lite: 64, as baseline-h2.
		Name: "static-h2", Endpoint: "static-h2", Tool: ToolH2load,
		Conns: []int{256, 1024}, LiteConns: []int{64},
		Pipeline: 1, Streams: 32,
		Scheme: SchemeH2, Port: PortTLS, Probe: probeStatic,
		Requests: []string{staticH2URIs}, Headers: []string{headerStaticAE},
	},
	{
		// The arena has no lite baseline-h2c; 64 connections are ours, as baseline-h2's.
		Name: "baseline-h2c", Endpoint: "h2c", Tool: ToolH2load,
		Conns: []int{256, 1024, 4096}, LiteConns: []int{64},
		Pipeline: 1, Streams: 100,
		Scheme: SchemeH2C, Port: PortH2C, Probe: probeBaseline2,
		Path: probeBaseline2,
	},
	{
		// json's 7 (count, m) pairs, one URI each in json-h2c-uris.txt. The arena has no
		// lite json-h2c; 64 connections are ours, as baseline-h2's.
		Name: "json-h2c", Endpoint: "json-h2c", Tool: ToolH2load,
		Conns: []int{1024, 4096}, LiteConns: []int{64},
		Pipeline: 1, Streams: 32,
		Scheme: SchemeH2C, Port: PortH2C, Probe: probeBaseline2,
		Requests: []string{jsonH2CURIs},
	},
	{
		// arenaload h3 on quic-go: C QUIC connections x 64 streams, as h2load-h3 ran it. The
		// arena's lite count is 64; ours is 16 (1,024 streams), for a 2-core machine where
		// both quic-go stacks share the cores.
		Name: "baseline-h3", Endpoint: "h3", Tool: ToolArenaload,
		Conns: []int{64}, LiteConns: []int{16},
		Pipeline: 1, Streams: 64,
		Scheme: SchemeH3, Port: PortTLS, Probe: probeBaseline2, ProbeScheme: SchemeH2,
		Path: probeBaseline2,
	},
	{
		// The 20 static files over h3 (static-h2-uris.txt). Lite: 16, as baseline-h3.
		Name: "static-h3", Endpoint: "static-h3", Tool: ToolArenaload,
		Conns: []int{64}, LiteConns: []int{16},
		Pipeline: 1, Streams: 64,
		Scheme: SchemeH3, Port: PortTLS, Probe: probeBaseline2, ProbeScheme: SchemeH2,
		Requests: []string{staticH2URIs}, Headers: []string{headerStaticAE},
	},
	{
		// The entry's stack (an edge on 8443 in front of its server on 8080) under h2load with
		// the 20 URIs of gateway-64-uris.txt. Lite: 64, as baseline-h2.
		Name: "gateway-64", Endpoint: "gateway-64", Tool: ToolH2load,
		Conns: []int{512, 1024}, LiteConns: []int{64},
		Pipeline: 1, Streams: 32,
		Scheme: SchemeH2, Port: PortTLS, Probe: probeBaseline11, ProbePort: PortH1, ProbeScheme: SchemeHTTP,
		Requests: []string{gatewayURIs}, Headers: []string{headerStaticAE},
		Sidecars: []string{SidecarPostgres},
		Compose:  true,
		// The arena's name for the file first, then this harness's.
		ComposeFiles: []string{"compose.gateway.yml", "compose.gateway-64.yml"},
		StackPorts: []StackPort{
			{Service: "proxy", Port: PortTLS},
			{Service: ServiceServer, Port: PortH1},
		},
	},
	{
		// The stack's edge over HTTP/3 (UDP 8443) under arenaload h3 with gateway-64's URI
		// list: the arena's h2load built with HTTP/3 is not available here, and the Debian
		// h2load cannot speak h3. Lite: 16, as baseline-h3. Validate checks it over h2 on the
		// edge's TCP 8443, as the arena's suite does (its h3 checks make one request over QUIC).
		Name: "gateway-h3", Endpoint: "gateway-h3", Tool: ToolArenaload,
		Conns: []int{64, 256}, LiteConns: []int{16},
		Pipeline: 1, Streams: 32,
		Scheme: SchemeH3, Port: PortTLS, Probe: probeBaseline11, ProbePort: PortH1, ProbeScheme: SchemeHTTP,
		Requests: []string{gatewayURIs}, Headers: []string{headerStaticAE},
		Sidecars:    []string{SidecarPostgres},
		Compose:     true,
		CheckScheme: SchemeH2,
		StackPorts: []StackPort{
			{Service: "proxy", Port: PortTLS, UDP: true},
			{Service: ServiceServer, Port: PortH1},
		},
	},
	{
		// Reads (production-stack-reads.txt, -m 16, the arena's bearer token) and writes
		// (production-stack-writes.txt, max(C/8, 8) connections, -m 8, -t 8; compose.md) in
		// two parallel h2load runs. Lite: 64, as gateway-64.
		Name: "production-stack", Endpoint: "production-stack", Tool: ToolH2load,
		Conns: []int{256, 1024}, LiteConns: []int{64},
		Pipeline: 1, Streams: 16,
		Scheme: SchemeH2, Port: PortTLS, Probe: probeBaseline11, ProbePort: PortH1, ProbeScheme: SchemeHTTP,
		Requests: []string{productionReads}, Headers: []string{headerStaticAE},
		Sidecars: []string{SidecarPostgres},
		Compose:  true,
		StackPorts: []StackPort{
			{Service: "edge", Port: PortTLS},
			{Service: "cache", Port: PortRedis},
			{Service: "authsvc", Port: PortAuthsvc},
			{Service: ServiceServer, Port: PortH1},
		},
		Bearer: jwtToken,
		Writes: &WriteLoad{
			Requests: productionWrites, Body: productionWriteBody, Headers: []string{"Content-Type: application/json"},
			Streams: 8, ConnDivisor: 8, MinConns: 8, Threads: 8,
		},
	},
	{
		// h2load sends the 9-byte GetSum frame (00 00000004 08 01 10 02) with -m 100; beside
		// each run the runner samples the grpc-status h2load does not read.
		Name: "unary-grpc", Endpoint: "grpc", Tool: ToolH2load,
		Conns: []int{256, 1024}, LiteConns: []int{512},
		Pipeline: 1, Streams: 100,
		Scheme: SchemeGRPC, Port: PortH1, Probe: probeGetSum,
		Path:    probeGetSum,
		Headers: []string{"content-type: application/grpc", "te: trailers"},
	},
	{
		// The arena's lite count is 512; ours is 64 (6,400 calls in flight), as baseline-h2's:
		// h2load opens 512 TLS connections on 2 cores so slowly that it overran its bound.
		Name: "unary-grpc-tls", Endpoint: "grpc-tls", Tool: ToolH2load,
		Conns: []int{256, 1024}, LiteConns: []int{64},
		Pipeline: 1, Streams: 100,
		Scheme: SchemeGRPCS, Port: PortTLS, Probe: probeGetSum,
		Path:    probeGetSum,
		Headers: []string{"content-type: application/grpc", "te: trailers"},
	},
	{
		// ghz runs 4 concurrent StreamSum calls (count 5000) per connection; its rate is
		// replies per second. The arena has no lite stream-grpc; 64 connections are its own.
		// As in the arena, a 2 s run warms the server first.
		Name: "stream-grpc", Endpoint: "grpc-stream", Tool: ToolGhz,
		Conns: []int{64}, LiteConns: []int{64},
		Pipeline: 1, Streams: 4, Warmup: 2 * time.Second,
		Scheme: SchemeGRPC, Port: PortH1, Probe: probeGetSum,
		Path: "/benchmark.BenchmarkService/StreamSum",
	},
	{
		Name: "stream-grpc-tls", Endpoint: "grpc-stream-tls", Tool: ToolGhz,
		Conns: []int{64}, LiteConns: []int{64},
		Pipeline: 1, Streams: 4, Warmup: 2 * time.Second,
		Scheme: SchemeGRPCS, Port: PortTLS, Probe: probeGetSum,
		Path: "/benchmark.BenchmarkService/StreamSum",
	},
	{
		// The arena's fixed-rate profiles (zrk there): exactly 1,024 connections, each at
		// rate/1,024 with staggered phases, latency from each request's scheduled send time.
		// latency-10k measures what a running server costs at a low rate.
		Name: "latency-10k", Endpoint: "latency-10k", Tool: ToolArenaload,
		Conns: []int{1024}, LiteConns: []int{256},
		Pipeline: 1, Duration: 20 * time.Second,
		TargetRate: 10_000, LiteTargetRate: 10_000,
		ServerCPUs: "0-31,64-95",
		Scheme:     SchemeHTTP, Port: PortH1, Probe: probeBaseline11,
		Path: pathLatency,
	},
	{
		// 1,000,000 requests/s needs the arena's 32 generator cores. The lite rate is ours:
		// on 2 cores shared by the server and the generator, 10,000/s is offered in full
		// (rate 1.0000) while 20,000/s fell to 0.94 with the generator saturated.
		Name: "latency-1m", Endpoint: "latency-1m", Tool: ToolArenaload,
		Conns: []int{1024}, LiteConns: []int{256},
		Pipeline: 1, Duration: 20 * time.Second,
		TargetRate: 1_000_000, LiteTargetRate: 10_000,
		ServerCPUs: "0-31,64-95",
		Scheme:     SchemeHTTP, Port: PortH1, Probe: probeBaseline11,
		Path: pathLatency,
	},
	{
		// The server narrowed to 4 cores and their 4 siblings. The arena's connection count
		// and duration for it were not found; these are latency-1m's.
		Name: "latency-500k-8cpu", Endpoint: "latency-500k-8cpu", Tool: ToolArenaload,
		Conns: []int{1024}, LiteConns: []int{256},
		Pipeline: 1, Duration: 20 * time.Second,
		TargetRate: 500_000, LiteTargetRate: 10_000,
		ServerCPUs: "0-3,64-67",
		Scheme:     SchemeHTTP, Port: PortH1, Probe: probeBaseline11,
		Path: pathLatency,
	},
	{
		// A 10 KB body posted to /echo over TLS at 50,000 requests/s: 512 MB/s each way. The
		// arena's duration was not found; 20 s is the latency profiles'. Lite: 2,000/s.
		Name: "8gbit", Endpoint: "8gbit", Tool: ToolArenaload,
		Conns: []int{512}, LiteConns: []int{64},
		Pipeline: 1, Duration: 20 * time.Second,
		TargetRate: 50_000, LiteTargetRate: 2_000,
		Scheme: SchemeHTTPS, Port: PortH1TLS, Probe: probeBaseline11,
		Path: "/echo", Body: "echo-10k.bin",
		Bandwidth: true,
	},
	{
		// 32,000 connections each held by GET /delay/10 (closed loop, one request in flight
		// each): the ceiling is 3.2M requests/s. The lite 1,024 is ours.
		Name: "async", Endpoint: "async", Tool: ToolWrk,
		Conns: []int{32000}, LiteConns: []int{1024},
		Pipeline: 1, Duration: 10 * time.Second,
		Scheme: SchemeHTTP, Port: PortH1, Probe: probeBaseline11,
		Requests: []string{"async-delay.raw"},
	},
	{
		// This arena's own: 100 connections each downloading a 170 MB generated file
		// (/large/download.bin), measured in MB/s and server CPU per GB. The lite 8 is ours.
		Name: "download", Endpoint: "download", Tool: ToolWrk,
		Conns: []int{100}, LiteConns: []int{8},
		Pipeline: 1, Duration: 10 * time.Second, Timeout: 60 * time.Second,
		Scheme: SchemeHTTP, Port: PortH1, Probe: probeBaseline11,
		Requests:  []string{"download.raw"},
		Bandwidth: true,
	},
	{
		// This arena's own: 1 MB and 2 MB files asked for with Accept-Encoding: gzip, which
		// the server compresses as it sends them.
		Name: "static-large", Endpoint: "static-large", Tool: ToolWrk,
		Conns: []int{64, 256}, LiteConns: []int{32},
		Pipeline: 1, Timeout: 10 * time.Second,
		Scheme: SchemeHTTP, Port: PortH1, Probe: probeBaseline11,
		Requests:  []string{"static-large-1m.raw", "static-large-2m.raw"},
		Bandwidth: true,
	},
	{
		// arenaload ws: masked text frames "hello" (as the arena's gcannon sent), one in
		// flight per connection; the rate is echoes per second, the latency per frame.
		Name: "echo-ws", Endpoint: "ws-echo", Tool: ToolArenaload,
		Conns: []int{512, 4096, 16384}, LiteConns: []int{512},
		Pipeline: 1, RequestsPerConn: 0,
		Scheme: SchemeWS, Port: PortH1, Probe: "/ws", ProbeScheme: SchemeHTTP,
		Path:      "/ws",
		WebSocket: true,
	},
	{
		// 16 frames in flight per connection. The arena's other connection counts were not
		// found; 512 is its one. The lite 128 is ours.
		Name: "echo-ws-pipeline", Endpoint: "ws-echo-pipeline", Tool: ToolArenaload,
		Conns: []int{512}, LiteConns: []int{128},
		Pipeline: 16, RequestsPerConn: 0,
		Scheme: SchemeWS, Port: PortH1, Probe: "/ws", ProbeScheme: SchemeHTTP,
		Path:      "/ws",
		WebSocket: true,
	},
	{
		// A connection retires after 10 echoes and a new one upgrades (with a fresh key, whose
		// Accept is checked, so a canned 101 fails). The lite 128 is ours.
		Name: "echo-ws-limited", Endpoint: "ws-echo-limited", Tool: ToolArenaload,
		Conns: []int{512, 4096}, LiteConns: []int{128},
		Pipeline: 1, RequestsPerConn: 10,
		Scheme: SchemeWS, Port: PortH1, Probe: "/ws", ProbeScheme: SchemeHTTP,
		Path:      "/ws",
		WebSocket: true,
	},
}

// Lookup returns the profile with the given name. The profile's slices are copies, so the
// caller may change them.
func Lookup(name string) (Profile, bool) {
	i := Index(name)
	if i < 0 {
		return Profile{}, false
	}
	p := All[i]
	p.Conns = slices.Clone(p.Conns)
	p.LiteConns = slices.Clone(p.LiteConns)
	p.Requests = slices.Clone(p.Requests)
	p.Headers = slices.Clone(p.Headers)
	p.Sidecars = slices.Clone(p.Sidecars)
	p.ComposeFiles = slices.Clone(p.ComposeFiles)
	if p.Writes != nil {
		w := *p.Writes
		w.Headers = slices.Clone(w.Headers)
		p.Writes = &w
	}
	return p, true
}

// Names returns the profile names in order.
func Names() []string {
	names := make([]string, len(All))
	for i, p := range All {
		names[i] = p.Name
	}
	return names
}

// Index returns the position of the named profile in the order, or -1 if there is none.
func Index(name string) int {
	return slices.IndexFunc(All, func(p Profile) bool { return p.Name == name })
}
