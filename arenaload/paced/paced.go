// Package paced is arenaload's open-loop HTTP/1.1 generator, the model of the arena's zrk:
// exactly C keep-alive connections (plain TCP or TLS), each sending on its own schedule at
// R/C requests per second with the connections' phases staggered evenly, one request in
// flight per connection, and every latency measured from the request's scheduled send time,
// so a server that stalls is charged for each request its stall delayed (no coordinated
// omission).
//
// Connection i's k-th request is scheduled at t0 + (k + i/C)·(C/R). A request is written at
// the later of its scheduled time and the end of the previous response on its connection;
// the gap between the two is its schedule lag. When the connection was free and the
// generator still wrote late, the gap is the generator's own wake-up lag, and its 99th
// percentile, the generator's CPU time and its CPU cost per request decide whether the
// generator rather than the server limited the run (Result.Limit).
package paced

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/arenaload"
)

// Mode is the Result.Mode this generator reports.
const Mode = "paced"

// Defaults of the flags that have one.
const (
	DefaultConnections = 64
	DefaultDuration    = 5 * time.Second
	DefaultTimeout     = 2 * time.Second
)

// A Config is one run's settings, as the flags give them.
type Config struct {
	// URL is the target, http:// or https://.
	URL string
	// Rate is the total offered rate, requests per second, shared evenly by the connections.
	Rate float64
	// Connections is the number of connections, C; each sends at Rate/C.
	Connections int
	// Duration is the measured window: requests scheduled in [t0, t0+Duration) are sent.
	Duration time.Duration
	// Timeout bounds each response (from its write) and each dial and TLS handshake.
	Timeout time.Duration
	// Method is the request method ("GET" when empty).
	Method string
	// Headers are extra request headers, each "Name: value"; a Host header replaces the
	// URL's host, a User-Agent header the generator's.
	Headers []string
	// Body, when not nil, is sent with every request with its Content-Length.
	Body []byte
	// Insecure skips the verification of the server's certificate.
	Insecure bool
	// CACert is a PEM file of certificates to trust besides the system's.
	CACert string
}

// Main runs the generator with its command-line arguments and writes the Result as JSON to
// stdout. --help prints the usage to stdout and returns nil.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, help, err := parseArgs(args, stdout)
	if err != nil || help {
		return err
	}
	res, x, err := runFull(ctx, cfg)
	if err != nil && res.Tool == "" {
		return err
	}
	if res.Tool != "" {
		fmt.Fprintf(stderr, "arenaload paced: generator wake-up lag on free connections p50 %.3f ms, p99 %.3f ms\n", ms(x.wakeP50), ms(x.wakeP99))
	}
	if x.unsent > 0 {
		fmt.Fprintf(stderr, "arenaload paced: %d requests scheduled in the window were not sent by its end: their connections were still waiting for earlier responses\n", x.unsent)
	}
	if werr := res.Write(stdout); werr != nil {
		return werr
	}
	return err
}

const usageHead = `usage: arenaload paced -R RATE [flags] URL

Open-loop HTTP/1.1 load at RATE requests per second over exactly C keep-alive connections
(http:// or https://, ALPN http/1.1). Each connection sends at RATE/C on its own schedule,
phases staggered; latency is measured from each request's scheduled send time. Prints one
JSON result on stdout.

flags:
`

func parseArgs(args []string, stdout io.Writer) (cfg Config, help bool, err error) {
	fs := pflag.NewFlagSet("arenaload paced", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.Float64VarP(&cfg.Rate, "rate", "R", 0, "total request rate, requests per second (required; fractions allowed)")
	fs.IntVarP(&cfg.Connections, "connections", "c", DefaultConnections, "connections, each sending at RATE/C")
	fs.DurationVarP(&cfg.Duration, "duration", "d", DefaultDuration, "measured window (requests scheduled in it are sent)")
	fs.DurationVar(&cfg.Timeout, "timeout", DefaultTimeout, "response timeout (from the write) and dial/handshake timeout")
	fs.StringVarP(&cfg.Method, "method", "m", "GET", "request method")
	fs.StringArrayVarP(&cfg.Headers, "header", "H", nil, `extra header "Name: value" (repeatable)`)
	body := fs.StringP("body", "b", "", "request body: @FILE for a file's bytes, else the literal text")
	bodyFile := fs.String("body-file", "", "request body from FILE (as -b @FILE)")
	fs.BoolVar(&cfg.Insecure, "insecure", false, "https: do not verify the server's certificate")
	fs.StringVar(&cfg.CACert, "cacert", "", "https: also trust the PEM certificates in FILE")
	helpFlag := fs.BoolP("help", "h", false, "print this help")
	usage := func(w io.Writer) {
		fmt.Fprint(w, usageHead)
		fmt.Fprint(w, fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			usage(stdout)
			return cfg, true, nil
		}
		return cfg, false, fmt.Errorf("%v (see arenaload paced --help)", err)
	}
	if *helpFlag {
		usage(stdout)
		return cfg, true, nil
	}
	switch fs.NArg() {
	case 0:
		return cfg, false, errors.New("no URL: give the target as the last argument, e.g. arenaload paced -R 1000 http://127.0.0.1:8080/")
	case 1:
		cfg.URL = fs.Arg(0)
	default:
		return cfg, false, fmt.Errorf("one URL wanted, got %d arguments (%s): put flags before the URL and quote values with spaces", fs.NArg(), strings.Join(fs.Args(), " "))
	}
	if !fs.Changed("rate") {
		return cfg, false, errors.New("no rate: -R/--rate is required (total requests per second, e.g. -R 10000)")
	}
	if fs.Changed("body") && fs.Changed("body-file") {
		return cfg, false, errors.New("both -b and --body-file given: use one of them")
	}
	switch {
	case *bodyFile != "":
		cfg.Body, err = readBody(*bodyFile)
	case strings.HasPrefix(*body, "@"):
		cfg.Body, err = readBody((*body)[1:])
	case fs.Changed("body"):
		cfg.Body = []byte(*body)
	}
	if err != nil {
		return cfg, false, err
	}
	if _, err := cfg.check(); err != nil {
		return cfg, false, err
	}
	return cfg, false, nil
}

func readBody(name string) ([]byte, error) {
	if name == "" {
		return nil, errors.New("empty body file name: write -b @FILE or --body-file FILE")
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("cannot read the body file: %v; give a readable file with -b @FILE or --body-file FILE", err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// target is what check derives from a Config.
type target struct {
	url    *url.URL
	addr   string // host:port to dial
	tls    *tls.Config
	method string
}

// check validates c and derives the dial address and TLS configuration.
func (c Config) check() (target, error) {
	var t target
	switch {
	case !(c.Rate > 0) || c.Rate > 1e12:
		return t, fmt.Errorf("rate %v req/s is not usable: -R/--rate must be a positive number of requests per second, e.g. -R 10000", c.Rate)
	case c.Connections <= 0:
		return t, fmt.Errorf("%d connections: -c/--connections must be at least 1", c.Connections)
	case c.Duration <= 0:
		return t, fmt.Errorf("duration %v: -d/--duration must be positive, e.g. -d 20s", c.Duration)
	case c.Timeout <= 0:
		return t, fmt.Errorf("timeout %v: --timeout must be positive, e.g. --timeout 2s", c.Timeout)
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return t, fmt.Errorf("bad URL %q: %v; write it as http://host:port/path or https://host:port/path", c.URL, err)
	}
	var port string
	switch u.Scheme {
	case "http":
		port = "80"
	case "https":
		port = "443"
	default:
		return t, fmt.Errorf("URL %q: scheme %q is not served; use http:// or https:// (HTTP/1.1 only)", c.URL, u.Scheme)
	}
	if u.Hostname() == "" {
		return t, fmt.Errorf("URL %q has no host; write it as %s://host:port/path", c.URL, u.Scheme)
	}
	if p := u.Port(); p != "" {
		port = p
	}
	t.url = u
	t.addr = net.JoinHostPort(u.Hostname(), port)
	t.method = c.Method
	if t.method == "" {
		t.method = "GET"
	}
	if !validToken(t.method) {
		return t, fmt.Errorf("method %q is not an HTTP token: give -m a method such as GET or POST", t.method)
	}
	for _, h := range c.Headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || !validToken(name) {
			return t, fmt.Errorf("header %q: write -H as \"Name: value\" with a name of letters, digits and -", h)
		}
		if strings.ContainsAny(value, "\r\n") {
			return t, fmt.Errorf("header %q has a line break in its value; give each header its own -H", name)
		}
		if strings.EqualFold(name, "Content-Length") || strings.EqualFold(name, "Transfer-Encoding") {
			return t, fmt.Errorf("header %s is set by the generator from the body; drop the -H and give the body with -b @FILE", name)
		}
	}
	if u.Scheme == "https" {
		t.tls = &tls.Config{
			ServerName:         u.Hostname(),
			NextProtos:         []string{"http/1.1"},
			InsecureSkipVerify: c.Insecure,
		}
		if c.CACert != "" {
			pem, err := os.ReadFile(c.CACert)
			if err != nil {
				return t, fmt.Errorf("cannot read the CA file: %v; give --cacert a readable PEM file", err)
			}
			pool, err := x509.SystemCertPool()
			if err != nil || pool == nil {
				pool = x509.NewCertPool()
			}
			if !pool.AppendCertsFromPEM(pem) {
				return t, fmt.Errorf("--cacert %s holds no PEM certificate; give the server's certificate or its CA in PEM", c.CACert)
			}
			t.tls.RootCAs = pool
		}
	} else if c.Insecure || c.CACert != "" {
		return t, fmt.Errorf("--insecure and --cacert apply to https:// only, and the URL is %s", c.URL)
	}
	return t, nil
}

func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// renderRequest renders the request bytes sent on every request of the run.
func renderRequest(c Config, t target) []byte {
	var b strings.Builder
	path := t.url.RequestURI()
	b.WriteString(t.method + " " + path + " HTTP/1.1\r\n")
	host, agent := t.url.Host, "arenaload/"+arenaload.Version
	var extra strings.Builder
	for _, h := range c.Headers {
		name, value, _ := strings.Cut(h, ":")
		value = strings.TrimSpace(value)
		switch {
		case strings.EqualFold(name, "Host"):
			host = value
		case strings.EqualFold(name, "User-Agent"):
			agent = value
		default:
			extra.WriteString(name + ": " + value + "\r\n")
		}
	}
	b.WriteString("Host: " + host + "\r\n")
	if agent != "" {
		b.WriteString("User-Agent: " + agent + "\r\n")
	}
	b.WriteString(extra.String())
	if c.Body != nil || t.method == "POST" || t.method == "PUT" || t.method == "PATCH" {
		b.WriteString("Content-Length: " + strconv.Itoa(len(c.Body)) + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(c.Body)
	return []byte(b.String())
}

// Run runs one paced load against cfg.URL and returns its Result. An error before the run
// (a bad Config, no connection could be made) returns a zero Result; when ctx is cancelled
// during the run, Run returns the Result of the part that ran with ctx's error.
func Run(ctx context.Context, cfg Config) (arenaload.Result, error) {
	res, _, err := runFull(ctx, cfg)
	return res, err
}

// extra is what a run measures besides its Result.
type extra struct {
	// unsent is the number of requests scheduled in the window that were still unsent at
	// its end (backlog on connections waiting for slow responses).
	unsent int64
	// wakeP50 and wakeP99 are percentiles of the generator's wake-up lag.
	wakeP50, wakeP99 time.Duration
}

// runFull is Run that also returns what the Result has no field for.
func runFull(ctx context.Context, cfg Config) (arenaload.Result, extra, error) {
	t, err := cfg.check()
	if err != nil {
		return arenaload.Result{}, extra{}, err
	}
	r := &run{
		cfg:      cfg,
		target:   t,
		request:  renderRequest(cfg, t),
		interval: float64(cfg.Connections) / cfg.Rate * float64(time.Second),
	}
	nshards := min(cfg.Connections, 4*runtime.GOMAXPROCS(0))
	r.shards = make([]shard, nshards)
	for i := range r.shards {
		r.shards[i].latency = arenaload.NewHistogram()
		r.shards[i].wake = arenaload.NewHistogram()
	}
	r.workers = make([]*worker, cfg.Connections)
	for i := range r.workers {
		r.workers[i] = r.newWorker(i)
	}

	// Connect phase, not measured: every connection (and its TLS handshake) before t0.
	var wg sync.WaitGroup
	sem := make(chan struct{}, 128)
	for _, w := range r.workers {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := w.dial(ctx); err != nil {
				w.errs.Connect++
				w.dialErr = err
			}
		}()
	}
	wg.Wait()
	connected := 0
	var firstErr error
	for _, w := range r.workers {
		if w.conn != nil {
			connected++
		} else if firstErr == nil {
			firstErr = w.dialErr
		}
	}
	if connected == 0 {
		for _, w := range r.workers {
			w.close()
		}
		if ctx.Err() != nil {
			return arenaload.Result{}, extra{}, ctx.Err()
		}
		return arenaload.Result{}, extra{}, fmt.Errorf("no connection to %s could be made (%v); is the server up and the URL right?", t.addr, firstErr)
	}

	// The measured run, after a collection of the connect phase's garbage.
	runtime.GC()
	cpu0 := arenaload.CPUTime()
	r.t0 = time.Now()
	r.end = r.t0.Add(cfg.Duration)
	for _, w := range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop(ctx)
		}()
	}
	wg.Wait()
	stopped := time.Now()
	cpu := arenaload.CPUTime() - cpu0

	res, x := r.result(cpu, stopped, ctx.Err() != nil)
	if err := ctx.Err(); err != nil {
		return res, x, fmt.Errorf("interrupted after %.1f s: %w", stopped.Sub(r.t0).Seconds(), err)
	}
	return res, x, nil
}

// run is one run's shared state; each worker owns its own counters.
type run struct {
	cfg      Config
	target   target
	request  []byte
	interval float64 // per-connection interval C/R, nanoseconds
	t0, end  time.Time
	workers  []*worker
	shards   []shard
}

// A shard holds the histograms a share of the connections record into.
type shard struct {
	mu      sync.Mutex
	latency *hdrhistogram.Histogram // scheduled send to end of response
	wake    *hdrhistogram.Histogram // the generator's wake-up lag on free connections
}

// countingReader counts the bytes read from the connection under the bufio.Reader.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// A worker is one connection and its schedule.
type worker struct {
	r     *run
	id    int
	shard *shard

	conn    net.Conn
	cr      countingReader
	br      *bufio.Reader
	req     *http.Request // for http.ReadResponse (HEAD has no body)
	dialErr error

	requests int64 // responses received
	sent     int64 // requests written
	attempts int64 // requests due (written, or charged to a failed dial)
	unsent   int64 // requests scheduled in the window not written by its end (backlog)
	status   arenaload.Status
	errs     arenaload.Errors
	maxLag   time.Duration
}

func (r *run) newWorker(i int) *worker {
	req := &http.Request{Method: r.target.method, URL: r.target.url, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	w := &worker{r: r, id: i, shard: &r.shards[i%len(r.shards)], req: req}
	w.br = bufio.NewReaderSize(&w.cr, 16<<10)
	return w
}

func (w *worker) dial(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, w.r.cfg.Timeout)
	defer cancel()
	d := net.Dialer{}
	c, err := d.DialContext(ctx, "tcp", w.r.target.addr)
	if err != nil {
		return err
	}
	if w.r.target.tls != nil {
		tc := tls.Client(c, w.r.target.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return err
		}
		if p := tc.ConnectionState().NegotiatedProtocol; p != "" && p != "http/1.1" {
			tc.Close()
			return fmt.Errorf("server negotiated ALPN %q, not http/1.1", p)
		}
		c = tc
	}
	w.conn = c
	w.cr.r = c
	w.br.Reset(&w.cr)
	return nil
}

func (w *worker) close() {
	if w.conn != nil {
		w.conn.Close()
		w.conn = nil
	}
}

// loop sends the connection's requests on its schedule until the window ends.
func (w *worker) loop(ctx context.Context) {
	defer w.close()
	r := w.r
	phase := float64(w.id) / float64(r.cfg.Connections)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var prevEnd time.Time // when the previous response on this connection ended
	for k := 0; ; k++ {
		if ctx.Err() != nil {
			return
		}
		sched := r.t0.Add(time.Duration((float64(k) + phase) * r.interval))
		if !sched.Before(r.end) {
			return
		}
		now := time.Now()
		if !now.Before(r.end) {
			// Behind schedule past the window's end: the rest is backlog, not sent.
			w.unsent += int64(math.Ceil(float64(r.end.Sub(sched)) / r.interval))
			return
		}
		if wait := sched.Sub(now); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		}
		// The connection was free when the request was due: any lag until now, before a
		// redial, is the generator's own.
		free := prevEnd.Before(sched)
		wake := time.Since(sched)
		w.attempts++
		if w.conn == nil {
			if err := w.dial(ctx); err != nil {
				w.errs.Connect++
				prevEnd = time.Now()
				continue
			}
		}
		start := time.Now()
		lag := start.Sub(sched)
		w.maxLag = max(w.maxLag, lag)
		end, ok := w.roundTrip(start)
		prevEnd = end
		w.shard.mu.Lock()
		if free {
			arenaload.Record(w.shard.wake, wake)
		}
		if ok {
			arenaload.Record(w.shard.latency, end.Sub(sched))
		}
		w.shard.mu.Unlock()
	}
}

// roundTrip writes the request and reads its response, returning when the response ended
// (or failed) and whether it was received.
func (w *worker) roundTrip(start time.Time) (time.Time, bool) {
	c := w.conn
	_ = c.SetDeadline(start.Add(w.r.cfg.Timeout))
	if _, err := c.Write(w.r.request); err != nil {
		w.fail(err, &w.errs.Write)
		return time.Now(), false
	}
	w.sent++
	resp, err := http.ReadResponse(w.br, w.req)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	end := time.Now()
	if err != nil {
		w.fail(err, &w.errs.Read)
		return end, false
	}
	w.requests++
	w.status.Add(resp.StatusCode)
	if resp.Close {
		w.close() // the server closes; the next request redials
	}
	return end, true
}

// fail counts err (as a timeout when the deadline passed, else in *kind) and drops the
// connection; the next request redials.
func (w *worker) fail(err error, kind *int64) {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		w.errs.Timeout++
	} else {
		*kind++
	}
	w.close()
}
