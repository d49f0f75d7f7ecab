// Package h3 is arenaload's HTTP/3 generator: a closed-loop load over exactly C QUIC
// connections (quic-go), each carrying M request streams at once, the way h2load-h3 ran the
// arena's baseline-h3 and static-h3 profiles.
//
// Each connection is its own QUIC connection from its own UDP socket, dialled (with ALPN h3
// required) before the measured window starts. On each connection M goroutines send GET
// requests one after another, so M streams are in flight; each request takes the
// connection's next URI from the list (-i), as h2load rotates it. Response bodies are read
// fully and discarded. Only responses completed inside the window [t0, t0+D) count; at t0+D
// the requests still in flight are cancelled. A connection that fails or is lost is dialled
// again with a short backoff, each failed dial counting as a connect error.
//
// quic-go wants UDP socket buffers of about 7.5 MB; the run refuses to start when the host's
// net.core.rmem_max or net.core.wmem_max is below that (it would measure the drops of a
// small buffer, not the server), unless --allow-small-udp-buffers is given, which notes the
// limits in the result's Limit.
package h3

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/arenaload"

	"github.com/arenabot/arenabot/internal/clock"
)

// WantUDPBuffer is the socket buffer size, in bytes, quic-go asks for (7 MiB, rounded up to
// the 7.5 MB its documentation tells hosts to allow); net.core.rmem_max and
// net.core.wmem_max must be at least this.
const WantUDPBuffer = 7_500_000

// SysctlDir is where the host's net.core limits are read from.
const SysctlDir = "/proc/sys/net/core"

// Dial backoff after a failed dial: doubled per consecutive failure of a connection.
const (
	backoffMin = 50 * time.Millisecond
	backoffMax = time.Second
)

const usage = `usage: arenaload h3 [flags] https://host:port/path

HTTP/3 load over exactly C QUIC connections with M streams in flight on each; every stream
sends GET requests one after another for the duration and reads each body fully. Prints one
JSON result.

examples:
  arenaload h3 -c 64 -m 64 -D 5s 'https://localhost:8443/baseline2?a=1&b=1'
  arenaload h3 -c 64 -m 64 -i static-uris.txt -H 'Accept-Encoding: br;q=1, gzip;q=0.8' https://localhost:8443

flags:
`

// Main runs the generator with its command-line arguments (without the mode) and prints
// its result on stdout.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return mainWith(ctx, args, stdout, stderr, SysctlDir)
}

// mainWith is Main reading the UDP buffer limits from sysctlDir.
func mainWith(ctx context.Context, args []string, stdout, stderr io.Writer, sysctlDir string) error {
	cfg, err := parseArgs(args, stdout)
	if errors.Is(err, pflag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	cfg.sysctlDir = sysctlDir
	res, err := run(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	return res.Write(stdout)
}

// config is a parsed command line.
type config struct {
	target  string     // the URL as given (or the first URI of -i)
	base    *url.URL   // scheme and authority every connection dials
	uris    []*url.URL // the request targets, rotated per request
	conns   int
	streams int
	dur     time.Duration
	timeout time.Duration
	header  http.Header
	host    string // :authority when -H set it, else the URL's
	tls     *tls.Config

	allowSmallBuffers bool
	sysctlDir         string
}

// secondsValue is a pflag duration that also takes a bare number as seconds, as h2load's
// -D does ("5" and "5s" are both five seconds).
type secondsValue struct{ d *time.Duration }

func (v secondsValue) String() string { return v.d.String() }
func (v secondsValue) Type() string   { return "duration" }
func (v secondsValue) Set(s string) error {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		*v.d = time.Duration(f * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want seconds (5) or a Go duration (5s, 500ms)")
	}
	*v.d = d
	return nil
}

func parseArgs(args []string, helpOut io.Writer) (*config, error) {
	cfg := &config{dur: 5 * time.Second, timeout: 2 * time.Second}
	fs := pflag.NewFlagSet("arenaload h3", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVarP(&cfg.conns, "clients", "c", 1, "QUIC connections (each its own UDP socket)")
	fs.IntVarP(&cfg.streams, "max-concurrent-streams", "m", 1, "request streams in flight per connection")
	fs.VarP(secondsValue{&cfg.dur}, "duration", "D", "measured window (seconds or a duration: 5, 5s)")
	fs.Var(secondsValue{&cfg.timeout}, "timeout", "per-request timeout, also bounds each dial (seconds or a duration)")
	input := fs.StringP("input-file", "i", "", "file of URIs, one a line (absolute https:// or paths on the URL); each request takes the next")
	headers := fs.StringArrayP("header", "H", nil, `request header "Name: value" (repeatable; "Host" or ":authority" sets the authority)`)
	insecure := fs.Bool("insecure", false, "skip verification of the server's certificate")
	cacert := fs.String("cacert", "", "PEM file of CA certificates to verify the server with (instead of the system's)")
	fs.BoolVar(&cfg.allowSmallBuffers, "allow-small-udp-buffers", false, "run even when net.core.rmem_max/wmem_max are below quic-go's 7.5 MB (noted in the result's limit)")
	fs.IntP("threads", "t", 1, "accepted for h2load compatibility and ignored: goroutines use every core")
	help := fs.BoolP("help", "h", false, "print this help")
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("%v (see arenaload h3 --help)", err)
	}
	if *help {
		fmt.Fprint(helpOut, usage+fs.FlagUsages())
		return nil, pflag.ErrHelp
	}
	if cfg.conns <= 0 {
		return nil, fmt.Errorf("-c %d: the number of connections must be at least 1 (e.g. -c 64)", cfg.conns)
	}
	if cfg.streams <= 0 {
		return nil, fmt.Errorf("-m %d: the streams per connection must be at least 1 (e.g. -m 64)", cfg.streams)
	}
	if cfg.dur <= 0 {
		return nil, fmt.Errorf("-D %v: the duration must be positive (e.g. -D 5s)", cfg.dur)
	}
	if cfg.timeout <= 0 {
		return nil, fmt.Errorf("--timeout %v: the timeout must be positive (e.g. --timeout 2s)", cfg.timeout)
	}
	if fs.NArg() > 1 {
		return nil, fmt.Errorf("%d URLs given (%s); give one, and more URIs with -i FILE", fs.NArg(), strings.Join(fs.Args(), " "))
	}
	if fs.NArg() == 0 && *input == "" {
		return nil, errors.New("no target: give an https:// URL (arenaload h3 -c 64 -m 64 https://localhost:8443/path) or a URI list with -i FILE")
	}

	if fs.NArg() == 1 {
		cfg.target = fs.Arg(0)
		u, err := parseHTTPS(cfg.target)
		if err != nil {
			return nil, err
		}
		cfg.base = u
	}
	if *input != "" {
		if err := cfg.readURIs(*input); err != nil {
			return nil, err
		}
	} else {
		cfg.uris = []*url.URL{cfg.base}
	}

	cfg.header = http.Header{}
	cfg.header.Set("User-Agent", "arenaload/"+arenaload.Version)
	set := map[string]bool{}
	for _, h := range *headers {
		name, value, err := parseHeader(h)
		if err != nil {
			return nil, err
		}
		switch strings.ToLower(name) {
		case "host", ":authority":
			cfg.host = value
			continue
		}
		// A header given with -H replaces the default; repeating it adds values.
		if !set[http.CanonicalHeaderKey(name)] {
			cfg.header.Del(name)
			set[http.CanonicalHeaderKey(name)] = true
		}
		cfg.header.Add(name, value)
	}
	if cfg.host == "" {
		cfg.host = cfg.base.Host
	}

	cfg.tls = &tls.Config{
		ServerName:         cfg.base.Hostname(),
		NextProtos:         []string{http3.NextProtoH3},
		InsecureSkipVerify: *insecure,
	}
	if *cacert != "" {
		pem, err := os.ReadFile(*cacert)
		if err != nil {
			return nil, fmt.Errorf("--cacert: %v; give a readable PEM file of CA certificates", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--cacert %s: no PEM certificate in it; give a PEM file (-----BEGIN CERTIFICATE-----)", *cacert)
		}
		cfg.tls.RootCAs = pool
	}
	return cfg, nil
}

// parseHTTPS parses an absolute https URL with a host.
func parseHTTPS(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("URL %q: %v; give https://host:port/path", s, err)
	}
	if u.Scheme != "https" {
		return nil, fmt.Errorf("URL %q: scheme %q, but HTTP/3 runs over QUIC with TLS only; give https://host:port/path", s, u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("URL %q has no host; give https://host:port/path", s)
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u, nil
}

// readURIs reads the -i file: one URI a line, blank lines skipped. With a positional URL,
// that URL is the server every connection goes to, as h2load's -B base URI is: an absolute
// URI's scheme and authority are ignored and its path and query are requested there (the
// arena's URI files name https://localhost:8443). Without one, absolute URIs must be https
// on one authority, the first one's (all connections go to one server, as with h2load).
// Paths are resolved against the base URL.
func (cfg *config) readURIs(file string) error {
	given := cfg.base != nil
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("-i: %v; give a readable file of URIs, one a line", err)
	}
	var lines []string
	for l := range strings.Lines(string(data)) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return fmt.Errorf("-i %s has no URIs; put one URI (https://host:port/path or /path) on each line", file)
	}
	for i, l := range lines {
		ref, err := url.Parse(l)
		if err != nil {
			return fmt.Errorf("-i %s line %d: %q: %v", file, i+1, l, err)
		}
		if ref.IsAbs() && given {
			cfg.uris = append(cfg.uris, cfg.base.ResolveReference(&url.URL{Path: ref.Path, RawPath: ref.RawPath, RawQuery: ref.RawQuery}))
			continue
		}
		if ref.IsAbs() {
			u, err := parseHTTPS(l)
			if err != nil {
				return fmt.Errorf("-i %s line %d: %v", file, i+1, err)
			}
			if cfg.base == nil {
				cfg.base = &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}
				cfg.target = l
			}
			if u.Host != cfg.base.Host {
				return fmt.Errorf("-i %s line %d: host %s, but the run loads %s; every URI must name the same server (or be a path)", file, i+1, u.Host, cfg.base.Host)
			}
			cfg.uris = append(cfg.uris, u)
			continue
		}
		if ref.Host != "" {
			return fmt.Errorf("-i %s line %d: %q has a host but no scheme; write https://%s%s", file, i+1, l, ref.Host, ref.Path)
		}
		if cfg.base == nil {
			return fmt.Errorf("-i %s line %d: %q is a path, but there is no URL to resolve it on; give the server as the argument (arenaload h3 -i %s https://host:port)", file, i+1, l, file)
		}
		cfg.uris = append(cfg.uris, cfg.base.ResolveReference(ref))
	}
	return nil
}

// parseHeader splits "Name: value" (or ":authority: value").
func parseHeader(h string) (name, value string, err error) {
	i := strings.Index(h[min(1, len(h)):], ":")
	if i < 0 {
		return "", "", fmt.Errorf(`-H %q: no colon; write -H "Name: value"`, h)
	}
	i += min(1, len(h))
	name, value = strings.TrimSpace(h[:i]), strings.TrimSpace(h[i+1:])
	pseudo := strings.HasPrefix(name, ":")
	if pseudo && name != ":authority" {
		return "", "", fmt.Errorf(`-H %q: pseudo-header %s cannot be set; only :authority (or Host) can`, h, name)
	}
	if n := strings.TrimPrefix(name, ":"); n == "" || strings.IndexFunc(n, notTokenChar) >= 0 {
		return "", "", fmt.Errorf(`-H %q: header name %q is not a token (letters, digits, !#$%%&'*+-.^_|~); write -H "Name: value"`, h, name)
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return "", "", fmt.Errorf(`-H %q: the value has a CR, LF or NUL; write one header per -H`, h)
	}
	return name, value, nil
}

func notTokenChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	}
	return !strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}

// UDPBufferLimits reads net.core.rmem_max and net.core.wmem_max from dir (SysctlDir on a
// host; a directory of two files named rmem_max and wmem_max in tests).
func UDPBufferLimits(dir string) (rmem, wmem int64, err error) {
	read := func(name string) (int64, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return 0, err
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q is not a number", filepath.Join(dir, name), strings.TrimSpace(string(b)))
		}
		return v, nil
	}
	if rmem, err = read("rmem_max"); err != nil {
		return 0, 0, err
	}
	if wmem, err = read("wmem_max"); err != nil {
		return 0, 0, err
	}
	return rmem, wmem, nil
}

// checkUDPBuffers returns an error when the host's UDP buffer limits are below
// WantUDPBuffer, or, when allowed, a note for the result's Limit.
func checkUDPBuffers(dir string, allow bool) (note string, err error) {
	rmem, wmem, err := UDPBufferLimits(dir)
	if err != nil {
		if allow {
			return fmt.Sprintf("UDP buffer limits unknown (%v); ran with --allow-small-udp-buffers", err), nil
		}
		return "", fmt.Errorf("cannot read the UDP buffer limits net.core.rmem_max/wmem_max (%v); pass --allow-small-udp-buffers to run without knowing them", err)
	}
	var low []string
	if rmem < WantUDPBuffer {
		low = append(low, fmt.Sprintf("net.core.rmem_max=%d", rmem))
	}
	if wmem < WantUDPBuffer {
		low = append(low, fmt.Sprintf("net.core.wmem_max=%d", wmem))
	}
	if len(low) == 0 {
		return "", nil
	}
	if allow {
		return fmt.Sprintf("UDP buffers may be smaller than the %d bytes quic-go wants: %s (--allow-small-udp-buffers)", WantUDPBuffer, strings.Join(low, " ")), nil
	}
	return "", fmt.Errorf("%s, below the %d bytes quic-go wants for its UDP socket buffers (with smaller ones it drops packets under load and the run measures the drops); "+
		"raise them on the host with `sysctl -w net.core.rmem_max=%d net.core.wmem_max=%d` (as root), or pass --allow-small-udp-buffers to run anyway",
		strings.Join(low, " and "), WantUDPBuffer, WantUDPBuffer, WantUDPBuffer)
}

// errorLog keeps the first error of each kind for the report on stderr.
type errorLog struct {
	mu    sync.Mutex
	first map[string]string
}

func (l *errorLog) note(kind string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.first == nil {
		l.first = map[string]string{}
	}
	if _, ok := l.first[kind]; !ok {
		l.first[kind] = err.Error()
	}
}

// stats is what one connection's streams counted.
type stats struct {
	mu       sync.Mutex
	hist     *hdrhistogram.Histogram
	status   arenaload.Status
	requests int64
	bytes    int64
	read     int64
	timeout  int64
}

// conn is one of the C connections: its UDP socket, its current QUIC connection (dialled
// again when lost) and its streams' counts.
type conn struct {
	r   *runner
	udp *net.UDPConn
	tr  *quic.Transport

	mu      sync.Mutex
	qc      *quic.Conn
	cc      *http3.ClientConn
	retryAt time.Time
	backoff time.Duration
	closed  bool

	next  atomic.Uint64 // the URI index the next request takes
	stats stats
}

// runner is one run.
type runner struct {
	cfg      *config
	addr     *net.UDPAddr
	qconf    *quic.Config
	h3       *http3.Transport
	reqs     []*http.Request // one template per URI
	connects atomic.Int64
	errs     errorLog
}

// get returns the connection's live HTTP/3 connection, dialling it when there is none (at
// most one dial at a time, after the backoff of a failed one). It returns nil once ctx ends.
func (c *conn) get(ctx context.Context) (*quic.Conn, *http3.ClientConn) {
	for {
		c.mu.Lock()
		if c.closed || ctx.Err() != nil {
			c.mu.Unlock()
			return nil, nil
		}
		if c.qc != nil && c.qc.Context().Err() == nil {
			qc, cc := c.qc, c.cc
			c.mu.Unlock()
			return qc, cc
		}
		c.qc, c.cc = nil, nil
		if wait := time.Until(c.retryAt); wait > 0 {
			c.mu.Unlock()
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, nil
			case <-t.C:
			}
			continue
		}
		c.dialLocked(ctx)
		c.mu.Unlock()
	}
}

// dialLocked dials the connection, with c.mu held; a failure counts a connect error (unless
// ctx ended) and sets the backoff.
func (c *conn) dialLocked(ctx context.Context) {
	qc, cc, err := c.r.dial(ctx, c.tr)
	if err != nil {
		if ctx.Err() == nil {
			c.r.connects.Add(1)
			c.r.errs.note("connect", err)
		}
		c.backoff = min(max(2*c.backoff, backoffMin), backoffMax)
		c.retryAt = time.Now().Add(c.backoff)
		return
	}
	c.qc, c.cc, c.backoff = qc, cc, 0
}

// close closes the connection and stops it from being dialled again.
func (c *conn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.qc != nil {
		_ = c.qc.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeNoError), "")
	}
}

// dial makes one QUIC connection (full handshake, ALPN h3) and wraps it as an HTTP/3 client
// connection.
func (r *runner) dial(ctx context.Context, tr *quic.Transport) (*quic.Conn, *http3.ClientConn, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.timeout)
	defer cancel()
	qc, err := tr.Dial(ctx, r.addr, r.cfg.tls, r.qconf)
	if err != nil {
		return nil, nil, fmt.Errorf("dial %s: %w", r.addr, err)
	}
	if p := qc.ConnectionState().TLS.NegotiatedProtocol; p != http3.NextProtoH3 {
		_ = qc.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeNoError), "")
		return nil, nil, fmt.Errorf("dial %s: negotiated ALPN %q, want %q", r.addr, p, http3.NextProtoH3)
	}
	return qc, r.h3.NewClientConn(qc), nil
}

// stream sends requests one after another on c until ctx ends at deadline.
func (r *runner) stream(ctx context.Context, deadline time.Time, c *conn) {
	buf := make([]byte, 32<<10)
	for {
		qc, cc := c.get(ctx)
		if cc == nil {
			return
		}
		tmpl := r.reqs[(c.next.Add(1)-1)%uint64(len(r.reqs))]
		rctx, cancel := context.WithTimeout(ctx, r.cfg.timeout)
		start := time.Now()
		n, code, err := roundTrip(cc, tmpl.WithContext(rctx), buf)
		end := time.Now()
		timedOut := errors.Is(rctx.Err(), context.DeadlineExceeded)
		cancel()
		if ctx.Err() != nil || !end.Before(deadline) {
			return // the window ended: in flight then, not counted
		}
		s := &c.stats
		if err != nil {
			kind := "read"
			if timedOut {
				kind = "timeout"
			}
			r.errs.note(kind, err)
			s.mu.Lock()
			if timedOut {
				s.timeout++
			} else {
				s.read++
			}
			s.mu.Unlock()
			if qc.Context().Err() == nil && !timedOut {
				// A live connection that failed a request (a stream reset, a GOAWAY): do not
				// spin on it.
				_ = clock.Sleep(ctx, backoffMin)
			}
			continue
		}
		s.mu.Lock()
		s.requests++
		s.status.Add(code)
		s.bytes += n
		arenaload.Record(s.hist, end.Sub(start))
		s.mu.Unlock()
	}
}

// roundTrip sends req on cc and reads the body fully, returning the bytes received (the
// body plus the header fields' names and values, uncompressed, as h2load counts header
// bytes) and the status code.
func roundTrip(cc *http3.ClientConn, req *http.Request, buf []byte) (int64, int, error) {
	resp, err := cc.RoundTrip(req)
	if err != nil {
		return 0, 0, err
	}
	n := int64(len(":status") + 3)
	for k, vv := range resp.Header {
		for _, v := range vv {
			n += int64(len(k) + len(v))
		}
	}
	body, err := io.CopyBuffer(writerOnly{io.Discard}, resp.Body, buf)
	resp.Body.Close()
	if err != nil {
		return 0, 0, fmt.Errorf("reading the body of %s: %w", req.URL.RequestURI(), err)
	}
	return n + body, resp.StatusCode, nil
}

// writerOnly hides io.Discard's ReadFrom so that io.CopyBuffer uses the stream's buffer.
type writerOnly struct{ io.Writer }

// run dials the connections, runs the window and sums up.
func run(ctx context.Context, cfg *config, stderr io.Writer) (arenaload.Result, error) {
	var limits []string
	note, err := checkUDPBuffers(cfg.sysctlDir, cfg.allowSmallBuffers)
	if err != nil {
		return arenaload.Result{}, err
	}
	if note != "" {
		limits = append(limits, note)
	}

	port := cfg.base.Port()
	if port == "" {
		port = "443"
	}
	addr, err := net.ResolveUDPAddr("udp", net.JoinHostPort(cfg.base.Hostname(), port))
	if err != nil {
		return arenaload.Result{}, fmt.Errorf("resolving %s: %v; give a host that resolves", cfg.base.Host, err)
	}
	r := &runner{
		cfg:  cfg,
		addr: addr,
		qconf: &quic.Config{
			HandshakeIdleTimeout: cfg.timeout,
			MaxIdleTimeout:       30 * time.Second,
			KeepAlivePeriod:      10 * time.Second,
			MaxIncomingStreams:   -1, // the server opens no request streams
		},
		h3: &http3.Transport{DisableCompression: true},
	}
	for _, u := range cfg.uris {
		r.reqs = append(r.reqs, &http.Request{
			Method:     http.MethodGet,
			URL:        u,
			Proto:      "HTTP/3.0",
			ProtoMajor: 3,
			Header:     cfg.header,
			Host:       cfg.host,
		})
	}

	conns := make([]*conn, cfg.conns)
	defer func() {
		for _, c := range conns {
			if c == nil {
				continue
			}
			c.close()
			_ = c.tr.Close()
			_ = c.udp.Close()
		}
	}()
	for i := range conns {
		udp, err := net.ListenUDP("udp", nil)
		if err != nil {
			return arenaload.Result{}, fmt.Errorf("opening UDP socket %d of %d: %v", i+1, cfg.conns, err)
		}
		c := &conn{r: r, udp: udp, tr: &quic.Transport{Conn: udp}}
		c.stats.hist = arenaload.NewHistogram()
		conns[i] = c
	}

	// Dial every connection (one attempt each) before the window; those that fail are
	// dialled again inside it.
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.dialLocked(ctx)
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return arenaload.Result{}, context.Cause(ctx)
	}

	start := make(chan struct{})
	t0 := time.Now()
	deadline := t0.Add(cfg.dur)
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	for _, c := range conns {
		for range cfg.streams {
			wg.Go(func() {
				<-start
				r.stream(wctx, deadline, c)
			})
		}
	}
	cpu0 := arenaload.CPUTime()
	close(start)
	<-wctx.Done()
	cpu := arenaload.CPUTime() - cpu0
	elapsed := time.Since(t0)
	for _, c := range conns {
		c.close()
	}
	wg.Wait()

	res := arenaload.Result{
		Tool:        "arenaload",
		Version:     arenaload.FullVersion(),
		Mode:        "h3",
		Target:      cfg.target,
		Connections: cfg.conns,
		Duration:    cfg.dur.Seconds(),
	}
	if elapsed < cfg.dur {
		// Interrupted: the window is what ran.
		res.Duration = elapsed.Seconds()
	}
	hist := arenaload.NewHistogram()
	for _, c := range conns {
		s := &c.stats
		hist.Merge(s.hist)
		res.Requests += s.requests
		res.Status.S2xx += s.status.S2xx
		res.Status.S3xx += s.status.S3xx
		res.Status.S4xx += s.status.S4xx
		res.Status.S5xx += s.status.S5xx
		res.Bytes += s.bytes
		res.Errors.Read += s.read
		res.Errors.Timeout += s.timeout
	}
	res.Errors.Connect = r.connects.Load()
	res.OK = res.Status.S2xx
	if res.Duration > 0 {
		res.AchievedRate = float64(res.OK) / res.Duration
	}
	res.Latency = arenaload.Summarize(hist)
	res.CPU = cpu.Seconds()
	if res.Requests > 0 {
		res.CPUPerRequest = float64(cpu.Microseconds()) / float64(res.Requests)
	}
	if sat := arenaload.CPUSaturated(cpu, elapsed, arenaload.UsableCores()); sat != "" {
		limits = append(limits, sat)
	}
	res.Limit = strings.Join(limits, "; ")

	for _, kind := range []string{"connect", "read", "timeout"} {
		if e, ok := r.errs.first[kind]; ok {
			fmt.Fprintf(stderr, "arenaload h3: %s errors; the first: %s\n", kind, e)
		}
	}
	return res, nil
}
