package loadgen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/arenabot/arenabot/profile"
)

// H2load is h2load of nghttp2 1.52.0 (Debian's nghttp2-client package, 1.52.0-1+deb12u3 in
// bookworm) over TCP: h2 over TLS (scheme "h2",
// ALPN h2 offered first, h2load's default list), h2c with prior knowledge ("h2c") and
// HTTP/1.1 ("http", or "https" over TLS; --h1, where -m is the pipeline depth).
//
// The profile's Requests name what is requested: one entry starting with "/" is a path
// appended to the server's base URL; otherwise one file in the data directory's requests/
// holding URIs or paths, one a line, passed with -i and a -B base URL so that the host and
// port always come from the Spec.
//
// Latency: h2load prints no percentiles, only min, max, mean and sd of "time for request"
// (Mean and Max come from that row). With a Spec.OutDir the run also writes its request
// log there (--log-file: one line per request, bounded by the run's length, which is why
// the h2 profiles run 5 s), and its ReadLog fills in P50, P90, P99 and P999 from it; without one
// they stay 0.
//
// What h2load cannot tell, and how the Measurement reflects it:
//   - Socket errors: h2load counts failed requests, not sockets. Errors.Timeout is its
//     "timeout" count, Errors.Read is "errored" minus "timeout" (network failures and
//     streams reset by the server), Errors.Write stays 0. Failed connects leave no count of
//     their own: when no client connected at all (nothing started, every connect time 0),
//     Errors.Connect is the number of clients; a partial connect failure is not seen.
//     h2load counts nothing at all for connections the server resets or never answers
//     (testdata/h2load-h1-reset.txt: 4 started, 0 done, 0 errored): such a run shows as 0
//     requests without socket errors.
//   - Requests is the sum of the status classes (responses received); h2load's "failed"
//     includes its "errored" requests, which got no response. Over h2 h2load counts a
//     status when the response headers arrive, so Requests can exceed its "done" count by
//     the streams in flight at the end (testdata/h2load-h2c.txt: 29249 against 29226).
func H2load() Tool {
	return Tool{
		Name:          profile.ToolH2load,
		Binary:        "h2load",
		PinnedVersion: "1.52.0",
		Install:       Install{Debian: "nghttp2-client"},
		VersionArgs:   []string{"--version"},
		Log:           &RunLog{File: H2loadLog, Read: readH2loadLog},
		Adapter:       h2loadAdapter{},
	}
}

// h2loadAdapter is H2load's Adapter.
type h2loadAdapter struct{}

var h2loadVersionRE = regexp.MustCompile(`(?m)^h2load (\S+)`)

// ParseVersion reads "h2load nghttp2/1.52.0" (full "nghttp2/1.52.0", upstream "1.52.0").
func (h2loadAdapter) ParseVersion(out string) (full, upstream string, err error) {
	return packagedVersion(h2loadVersionRE, "h2load --version", out)
}

// WriteFiles writes GRPCSumFile for the gRPC profiles; others need no helper files.
func (h2loadAdapter) WriteFiles(spec Spec) error { return writeGRPCBody(spec) }

// Args returns
//
//	-c C -t T -m M -D <secs>s [-p h2c | --h1] [-H <header>...] [-d <ScriptDir>/grpc-sum.bin | -d <data>/requests/<Body>]
//	(<url> | -i <file> -B <base>)
//
// M is Profile.Streams (h2, h2c, gRPC) or Profile.Pipeline (--h1), at least 1. Threads are
// capped at the connection count (h2load refuses more). The URL is the base URL and
// Profile.Path when the profile names no request file. gRPC ("grpc" over h2c, "grpcs" over
// TLS) sends GRPCSumFrame as every request's body; h2load counts the HTTP status only, so a
// gRPC error inside an HTTP 200 is a 2xx here (the runner samples the grpc-status beside
// the run).
func (h2loadAdapter) Args(spec Spec) ([]string, error) {
	p := spec.Profile
	threads, secs, err := specBasics("h2load", spec)
	if err != nil {
		return nil, err
	}
	var (
		scheme string
		proto  []string
		m      int
	)
	switch p.Scheme {
	case profile.SchemeH2C:
		scheme, proto, m = "http", []string{"-p", "h2c"}, p.Streams
	case profile.SchemeH2:
		scheme, m = "https", p.Streams
	case profile.SchemeHTTP, profile.SchemeHTTPS:
		scheme, proto, m = p.Scheme, []string{"--h1"}, p.Pipeline
	case profile.SchemeGRPC: // gRPC over h2c: each request is GRPCSumFrame (-d)
		scheme, proto, m = "http", []string{"-p", "h2c"}, p.Streams
	case profile.SchemeGRPCS:
		scheme, m = "https", p.Streams
	default:
		return nil, fmt.Errorf("h2load args for %s: scheme %q is not h2, h2c, http or https", p.Name, p.Scheme)
	}
	if m < 0 {
		return nil, fmt.Errorf("h2load args for %s: negative streams or pipeline %d", p.Name, m)
	}
	args := []string{
		"-c", strconv.Itoa(spec.Conns),
		"-t", strconv.Itoa(threads),
		"-m", strconv.Itoa(max(m, 1)),
		"-D", strconv.FormatInt(secs, 10) + "s",
	}
	args = append(args, proto...)
	if log := logPath(spec, H2loadLog); log != "" {
		args = append(args, "--log-file", log)
	}
	for _, h := range p.Headers {
		if strings.ContainsAny(h, "\r\n") || !strings.Contains(h, ":") {
			return nil, fmt.Errorf("h2load args for %s: header %q is not one \"Name: value\" line", p.Name, h)
		}
		args = append(args, "-H", h)
	}
	if isGRPC(p) {
		if spec.ScriptDir == "" {
			return nil, fmt.Errorf("h2load args for %s: no script directory for %s", p.Name, GRPCSumFile)
		}
		args = append(args, "-d", filepath.Join(spec.ScriptDir, GRPCSumFile))
	} else if p.Body != "" { // production-stack's writes: every request posts the body
		path, err := requestPath(spec, p.Body)
		if err != nil {
			return nil, fmt.Errorf("h2load args for %s: %w", p.Name, err)
		}
		args = append(args, "-d", path)
	}
	args = append(args, connectTo(spec)...)
	base := baseURL(scheme, spec)
	if len(p.Requests) == 0 && strings.HasPrefix(p.Path, "/") {
		return append(args, base+p.Path), nil
	}
	if len(p.Requests) != 1 {
		return nil, fmt.Errorf("h2load args for %s: need exactly one request (a path or a URI file), have %d", p.Name, len(p.Requests))
	}
	if r := p.Requests[0]; strings.HasPrefix(r, "/") {
		args = append(args, base+r)
	} else {
		path, err := requestPath(spec, r)
		if err != nil {
			return nil, fmt.Errorf("h2load args for %s: %w", p.Name, err)
		}
		args = append(args, "-i", path, "-B", base)
	}
	return args, nil
}

var (
	// finished in 1.00s, 76561.00 req/s, 1.75MB/s
	h2loadFinishedRE = regexp.MustCompile(`(?m)^finished in ([0-9.]+)(us|ms|s|m|h), [0-9.]+ req/s, [0-9.]+[KMGTPE]?B/s\s*$`)
	// requests: 76561 total, 76601 started, 76561 done, 76561 succeeded, 0 failed, 0 errored, 0 timeout
	h2loadRequestsRE = regexp.MustCompile(`(?m)^requests: ([0-9]+) total, ([0-9]+) started, ([0-9]+) done, ([0-9]+) succeeded, ([0-9]+) failed, ([0-9]+) errored, ([0-9]+) timeout\s*$`)
	// status codes: 76561 2xx, 0 3xx, 0 4xx, 0 5xx
	h2loadStatusRE = regexp.MustCompile(`(?m)^status codes: ([0-9]+) 2xx, ([0-9]+) 3xx, ([0-9]+) 4xx, ([0-9]+) 5xx\s*$`)
	// traffic: 1.75MB (1837976) total, 299.33KB (306512) headers (space savings 95.79%), ...
	h2loadTrafficRE = regexp.MustCompile(`(?m)^traffic: [0-9.]+[KMGTPE]?B \(([0-9]+)\) total`)
	// time for request:       27us      4.59ms       511us       416us    87.36%
	h2loadRowRE = regexp.MustCompile(`(?m)^time for (request|connect):\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+\S+%\s*$`)
	// spawning thread #0: 2 total client(s). Timing-based test with ...
	h2loadClientsRE = regexp.MustCompile(`(?m)^spawning thread #[0-9]+: ([0-9]+) total client\(s\)`)
)

// H2loadLog is the name of the request log h2load writes into Spec.OutDir.
const H2loadLog = "h2load-requests.log"

// readH2loadLog fills in m's latency percentiles from the run's request log at path. It
// leaves Mean and Max (from the summary) alone.
func readH2loadLog(path string, m *Measurement) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("h2load request log: %w", err)
	}
	defer f.Close()
	rl, err := ParseRequestLog(f)
	if err != nil {
		return fmt.Errorf("h2load %w", err)
	}
	m.Latency.P50, m.Latency.P90, m.Latency.P99, m.Latency.P999 = rl.Latency.P50, rl.Latency.P90, rl.Latency.P99, rl.Latency.P999
	return nil
}

// Parse reads h2load's summary.
func (h2loadAdapter) Parse(out []byte) (Measurement, error) {
	var m Measurement
	f := h2loadFinishedRE.FindSubmatch(out)
	if f == nil {
		return m, fmt.Errorf("h2load: %w: %s", ErrNoResult, excerpt(out))
	}
	var err error
	if m.Duration, err = durationUnit(string(f[1]), string(f[2])); err != nil {
		return Measurement{}, fmt.Errorf("h2load duration: %w", err)
	}
	req, err := h2loadCounts(h2loadRequestsRE, out, "requests")
	if err != nil {
		return Measurement{}, err
	}
	started, errored, timeout := req[1], req[5], req[6]
	st, err := h2loadCounts(h2loadStatusRE, out, "status codes")
	if err != nil {
		return Measurement{}, err
	}
	m.Status2xx, m.Status3xx, m.Status4xx, m.Status5xx = st[0], st[1], st[2], st[3]
	m.Requests = st[0] + st[1] + st[2] + st[3]
	tr, err := h2loadCounts(h2loadTrafficRE, out, "traffic")
	if err != nil {
		return Measurement{}, err
	}
	m.Bytes = tr[0]

	m.Errors.Timeout = timeout
	m.Errors.Read = max(errored-timeout, 0)
	rows := map[string][4]time.Duration{}
	for _, r := range h2loadRowRE.FindAllSubmatch(out, -1) {
		var v [4]time.Duration // min, max, mean, sd
		for i := range v {
			if v[i], err = durationText(string(r[i+2])); err != nil {
				return Measurement{}, fmt.Errorf("h2load time for %s: %w", r[1], err)
			}
		}
		rows[string(r[1])] = v
	}
	reqRow, ok := rows["request"]
	if !ok {
		return Measurement{}, fmt.Errorf("h2load output lacks the %q row", "time for request")
	}
	m.Latency.Max, m.Latency.Mean = micros(reqRow[1]), micros(reqRow[2])
	if conn, ok := rows["connect"]; ok && started == 0 && conn == [4]time.Duration{} {
		var clients int64
		for _, c := range h2loadClientsRE.FindAllSubmatch(out, -1) {
			n, err := count(string(c[1]))
			if err != nil {
				return Measurement{}, fmt.Errorf("h2load clients: %w", err)
			}
			clients = min(clients+n, maxCount)
		}
		m.Errors.Connect = max(clients, 1)
	}
	sane(&m)
	return m, nil
}

// h2loadCounts reads the counts of the one line re matches.
func h2loadCounts(re *regexp.Regexp, out []byte, what string) ([]int64, error) {
	sub := re.FindSubmatch(out)
	if sub == nil {
		if i := bytes.Index(out, []byte(what+":")); i >= 0 {
			line, _, _ := bytes.Cut(out[i:], []byte("\n"))
			return nil, fmt.Errorf("h2load %s line not understood: %s", what, excerpt(line))
		}
		return nil, fmt.Errorf("h2load output lacks the %q line", what+":")
	}
	n := make([]int64, len(sub)-1)
	for i := range n {
		var err error
		if n[i], err = count(string(sub[i+1])); err != nil {
			return nil, fmt.Errorf("h2load %s: %w", what, err)
		}
	}
	return n, nil
}
