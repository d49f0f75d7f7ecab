// Package ws is arenaload's WebSocket echo generator, the model of the old arena's gcannon
// for the echo-ws, echo-ws-pipeline and echo-ws-limited profiles: C connections upgrade
// with GET on the target (RFC 6455, written here over plain TCP, no WebSocket library),
// each keeps P masked text frames carrying the message in flight and, with -r R, closes
// its connection after R echoes and upgrades a new one.
//
// The window opens once all C connections have upgraded (or failed to) and closes d later;
// echoes read after it are not counted. An echo's latency runs from the write that carried
// its frame to the read that returned the echo; echoes come back in order, so the k-th
// echo on a connection answers its k-th frame, and an echo whose payload is not that
// frame's counts as Errors.Mismatch (with --order each in-flight frame carries a distinct
// payload, so that a reordering server is caught; without it every frame carries exactly
// --message, as gcannon's "hello").
//
// Choices where RFC 6455 or gcannon leave room:
//
//   - The mask is random per connection (crypto/rand), not per frame, so that each
//     connection's frames are built and masked once; a reconnect draws a new mask.
//   - A connection closed for -r, at the end of the run or after an error is closed with
//     SO_LINGER 0 (a reset, no close frame), as gcannon does, so that rapid reconnects do not
//     pile up TIME_WAIT sockets; a close frame from the server is answered with a close frame
//     (echoing its status code) and a normal close, and the connection is redialled.
//   - Server pings are answered with a masked pong carrying the ping's payload; pongs are
//     ignored; fragmented messages are reassembled; a masked server frame, reserved bits,
//     an unknown opcode or a broken fragment sequence is a protocol error (Errors.Read) and
//     the connection is redialled.
//   - A failed dial or a non-101 answer counts Errors.Connect, a missing or wrong
//     Sec-WebSocket-Accept Errors.Mismatch; the connection is redialled after a back-off
//     that grows from 1 ms to 100 ms while dials keep failing (or connections keep
//     failing before their first echo).
//   - Result.Status stays zero: the 101 answers are counted as upgrades (Stats.Upgrades;
//     Result.Reconnects is those after the first C), not as responses. Result.Bytes counts the server's frames (headers and payloads) read
//     in the window, not the 101 answers.
package ws

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/arenaload"
)

// Mode is the Result.Mode this generator reports.
const Mode = "ws"

// Defaults of the flags.
const (
	DefaultConnections = 1
	DefaultDuration    = 5 * time.Second
	DefaultPipeline    = 1
	DefaultMessage     = "hello"
	DefaultTimeout     = 2 * time.Second
)

// maxMessage is the largest message the generator accepts from a server; a longer one is a
// protocol error.
const maxMessage = 16 << 20

// readBufferSize is the size of each connection's bufio.Reader.
const readBufferSize = 16 << 10

// latencyBatch is how many latencies a connection collects before adding them to the shared
// histogram under its lock.
const latencyBatch = 512

// A Config is one run's parameters; Run checks them.
type Config struct {
	// URL is the target, ws://host[:port]/path or http://host[:port]/path (the same).
	URL string
	// Connections is the number of concurrent connections (C).
	Connections int
	// Duration is the measured window (d).
	Duration time.Duration
	// Pipeline is the number of frames kept in flight per connection (P).
	Pipeline int
	// Reconnect closes a connection after that many echoes and upgrades a new one (R);
	// 0 keeps each connection for the whole run.
	Reconnect int
	// Message is the payload of every frame.
	Message string
	// Order makes each of a connection's P in-flight frames carry a distinct payload
	// (Message, '#', the frame's slot number), so that echoes returned out of order count
	// as mismatches.
	Order bool
	// Timeout bounds a dial with its upgrade and the wait for each echo.
	Timeout time.Duration
}

// Stats is a run's outcome: the Result Main prints and what Result has no field for.
type Stats struct {
	Result arenaload.Result
	// Upgrades is the number of successful upgrades (101 with the right
	// Sec-WebSocket-Accept), the C before the window included.
	Upgrades int64
	// Sent is the number of frames written.
	Sent int64
}

// target is a checked URL.
type target struct {
	addr string // host:port to dial
	host string // the Host header
	path string // the request URI
}

func parseTarget(raw string) (target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return target{}, fmt.Errorf("target %q: %v; give a URL such as ws://host:8080/ws", raw, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "ws", "http":
	case "wss", "https":
		return target{}, fmt.Errorf("target %q: TLS (%s://) is not supported; use ws:// or http://", raw, u.Scheme)
	default:
		return target{}, fmt.Errorf("target %q: scheme %q is not supported; use ws://host:port/path (or http://, the same)", raw, u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return target{}, fmt.Errorf("target %q has no host; give a URL such as ws://host:8080/ws", raw)
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return target{
		addr: net.JoinHostPort(u.Hostname(), port),
		host: u.Host,
		path: u.RequestURI(),
	}, nil
}

func (c *Config) check() (target, error) {
	if c.URL == "" {
		return target{}, errors.New("no target URL; give one, e.g. arenaload ws -c 64 ws://host:8080/ws")
	}
	t, err := parseTarget(c.URL)
	if err != nil {
		return t, err
	}
	switch {
	case c.Connections <= 0:
		return t, fmt.Errorf("-c %d: the number of connections must be at least 1", c.Connections)
	case c.Pipeline <= 0:
		return t, fmt.Errorf("-p %d: the frames in flight per connection must be at least 1", c.Pipeline)
	case c.Reconnect < 0:
		return t, fmt.Errorf("-r %d: reconnect after R echoes needs R ≥ 1, or 0 to keep each connection", c.Reconnect)
	case c.Duration <= 0:
		return t, fmt.Errorf("-d %v: the duration must be positive, e.g. -d 5s", c.Duration)
	case c.Timeout <= 0:
		return t, fmt.Errorf("--timeout %v: the timeout must be positive, e.g. --timeout 2s", c.Timeout)
	case len(c.Message) > maxMessage:
		return t, fmt.Errorf("--message is %d bytes; keep it at most %d", len(c.Message), maxMessage)
	}
	return t, nil
}

// Main runs the generator with its command-line arguments and prints the Result on stdout.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("ws", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg Config
	fs.IntVarP(&cfg.Connections, "connections", "c", DefaultConnections, "concurrent connections")
	fs.DurationVarP(&cfg.Duration, "duration", "d", DefaultDuration, "measured window")
	fs.IntVarP(&cfg.Pipeline, "pipeline", "p", DefaultPipeline, "frames in flight per connection")
	fs.IntVarP(&cfg.Reconnect, "reconnect", "r", 0, "close a connection after R echoes and upgrade a new one (0: keep it)")
	fs.StringVar(&cfg.Message, "message", DefaultMessage, "payload of each text frame")
	fs.BoolVar(&cfg.Order, "order", false, "give each in-flight frame a distinct payload (message#slot) to catch reordered echoes")
	fs.DurationVar(&cfg.Timeout, "timeout", DefaultTimeout, "bound on a dial with its upgrade and on the wait for each echo")
	help := fs.BoolP("help", "h", false, "print this help")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: arenaload ws [flags] ws://host:port/path\n\nflags:\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("%v; run 'arenaload ws --help' for the flags", err)
	}
	if *help {
		fmt.Fprintf(stdout, "usage: arenaload ws [flags] ws://host:port/path\n\nflags:\n%s", fs.FlagUsages())
		return nil
	}
	switch fs.NArg() {
	case 0:
	case 1:
		cfg.URL = fs.Arg(0)
	default:
		return fmt.Errorf("%d arguments %q: give exactly one target URL, flags before or after it", fs.NArg(), fs.Args())
	}
	st, err := Run(ctx, cfg)
	if err != nil {
		return err
	}
	return st.Result.Write(stdout)
}

// run is what a run's connections share.
type run struct {
	cfg    Config
	t      target
	start  chan struct{} // closed at t0, after runEnd and runCtx are set
	runEnd time.Time
	runCtx context.Context
	// stopped is set when runCtx ends (the window closed or the caller cancelled).
	stopped atomic.Bool

	mu   sync.Mutex
	hist *hdrhistogram.Histogram
}

// over reports whether the window has closed.
func (r *run) over() bool {
	return r.stopped.Load() || r.runCtx.Err() != nil || !time.Now().Before(r.runEnd)
}

// Run runs the generator with cfg and returns its Stats; an error means the configuration
// is wrong (the run's own failures are counted in Result.Errors).
func Run(ctx context.Context, cfg Config) (Stats, error) {
	t, err := cfg.check()
	if err != nil {
		return Stats{}, err
	}
	r := &run{cfg: cfg, t: t, start: make(chan struct{}), hist: arenaload.NewHistogram()}
	workers := make([]*worker, cfg.Connections)
	var ready, done sync.WaitGroup
	ready.Add(len(workers))
	done.Add(len(workers))
	for i := range workers {
		w := newWorker(r)
		workers[i] = w
		go func() {
			defer done.Done()
			w.main(ctx, &ready)
		}()
	}
	ready.Wait()

	t0 := time.Now()
	r.runEnd = t0.Add(cfg.Duration)
	runCtx, cancel := context.WithDeadline(ctx, r.runEnd)
	defer cancel()
	r.runCtx = runCtx
	stop := context.AfterFunc(runCtx, func() { r.stopped.Store(true) })
	defer stop()
	cpu0 := arenaload.CPUTime()
	close(r.start)
	done.Wait()
	cpu := arenaload.CPUTime() - cpu0
	window := min(time.Since(t0), cfg.Duration)

	res := arenaload.Result{
		Tool:        "arenaload",
		Version:     arenaload.FullVersion(),
		Mode:        Mode,
		Target:      cfg.URL,
		Connections: cfg.Connections,
		Duration:    window.Seconds(),
		CPU:         cpu.Seconds(),
	}
	st := Stats{}
	for _, w := range workers {
		res.Requests += w.requests
		res.OK += w.ok
		res.Bytes += w.bytes
		res.Errors.Connect += w.errs.Connect
		res.Errors.Read += w.errs.Read
		res.Errors.Write += w.errs.Write
		res.Errors.Timeout += w.errs.Timeout
		res.Errors.Mismatch += w.errs.Mismatch
		st.Upgrades += w.upgrades
		st.Sent += w.sentTotal
	}
	res.Reconnects = max(0, st.Upgrades-int64(cfg.Connections))
	res.Latency = arenaload.Summarize(r.hist)
	if window > 0 {
		res.AchievedRate = float64(res.OK) / window.Seconds()
	}
	if res.Requests > 0 {
		res.CPUPerRequest = float64(cpu.Microseconds()) / float64(res.Requests)
	}
	res.Limit = arenaload.CPUSaturated(cpu, window, arenaload.UsableCores())
	st.Result = res
	return st, nil
}

// A worker is one of the C connections, redialled as needed; only its goroutine touches it
// until Run collects its counts.
type worker struct {
	r *run

	br      *bufio.Reader // reset for each connection
	req     []byte        // the upgrade request being built
	wbuf    []byte        // the next write: pongs, a close answer, frames
	scratch []byte        // payloads longer than br's buffer
	msg     []byte        // a fragmented message being reassembled

	mask    [4]byte
	payload [][]byte // the payload of each slot: one, or P with Order
	frames  [][]byte // the masked frame of each slot
	sendAt  []time.Time
	lat     []time.Duration

	// the current connection
	sent, recv, freed int
	inMsg             bool

	requests, ok, bytes, upgrades, sentTotal int64
	errs                                     arenaload.Errors
}

func newWorker(r *run) *worker {
	p := r.cfg.Pipeline
	w := &worker{
		r:      r,
		br:     bufio.NewReaderSize(nil, readBufferSize),
		sendAt: make([]time.Time, p),
		lat:    make([]time.Duration, 0, latencyBatch),
	}
	slots := 1
	if r.cfg.Order {
		slots = p
	}
	width := len(strconv.Itoa(p - 1))
	for i := range slots {
		pl := []byte(r.cfg.Message)
		if r.cfg.Order {
			pl = fmt.Appendf(pl, "#%0*d", width, i)
		}
		w.payload = append(w.payload, pl)
		w.frames = append(w.frames, nil)
	}
	return w
}

// main makes the connection before t0, waits for t0 and loads until the window closes.
func (w *worker) main(ctx context.Context, ready *sync.WaitGroup) {
	nc := w.upgrade(ctx, true)
	ready.Done()
	<-w.r.start
	var backoff time.Duration
	for {
		if nc == nil {
			if w.r.over() {
				return
			}
			if nc = w.upgrade(ctx, false); nc == nil {
				backoff = min(max(2*backoff, time.Millisecond), 100*time.Millisecond)
				if !w.sleep(backoff) {
					return
				}
				continue
			}
		}
		errs := w.errs.Total()
		w.serve(nc)
		if w.recv > 0 {
			backoff = 0
		}
		w.flushLatencies()
		nc = nil
		if w.r.over() {
			return
		}
		if w.recv == 0 && w.errs.Total() > errs {
			// The connection failed before its first echo: back off as after a failed
			// dial, rather than spin on a server that breaks every connection.
			backoff = min(max(2*backoff, time.Millisecond), 100*time.Millisecond)
			if !w.sleep(backoff) {
				return
			}
		}
	}
}

// sleep waits d or until the window closes; false means it closed.
func (w *worker) sleep(d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-w.r.runCtx.Done():
		return false
	}
}

// count reports whether an error now is to be counted: before t0 (the first connections)
// and within the window.
func (w *worker) count(early bool) bool {
	return early || !w.r.over()
}

// upgrade dials the target and upgrades the connection; nil means it failed (and was
// counted). A handshake begun before the window closed is finished, so that every 101 the
// server sends is read and counted.
func (w *worker) upgrade(ctx context.Context, early bool) net.Conn {
	timeout := w.r.cfg.Timeout
	d := net.Dialer{Timeout: timeout}
	nc, err := d.DialContext(ctx, "tcp", w.r.t.addr)
	if err != nil {
		if w.count(early) {
			w.errs.Connect++
		}
		return nil
	}
	fail := func(mismatch bool) net.Conn {
		closeHard(nc)
		if w.count(early) {
			if mismatch {
				w.errs.Mismatch++
			} else {
				w.errs.Connect++
			}
		}
		return nil
	}
	_ = nc.SetDeadline(time.Now().Add(timeout))

	var raw [16 + 4]byte
	_, _ = rand.Read(raw[:]) // never fails (crypto/rand)
	var key [24]byte
	base64.StdEncoding.Encode(key[:], raw[:16])
	copy(w.mask[:], raw[16:])

	b := append(w.req[:0], "GET "...)
	b = append(b, w.r.t.path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, w.r.t.host...)
	b = append(b, "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "...)
	b = append(b, key[:]...)
	b = append(b, "\r\nSec-WebSocket-Version: 13\r\n\r\n"...)
	w.req = b
	if _, err := nc.Write(b); err != nil {
		return fail(false)
	}
	w.br.Reset(nc)
	resp, err := http.ReadResponse(w.br, nil)
	if err != nil {
		return fail(false)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return fail(false)
	}
	if got := resp.Header.Get("Sec-WebSocket-Accept"); got != acceptKey(string(key[:])) {
		return fail(true)
	}
	_ = nc.SetDeadline(time.Time{})
	w.upgrades++
	for i, pl := range w.payload {
		w.frames[i] = appendFrame(w.frames[i][:0], true, opText, &w.mask, pl)
	}
	return nc
}

// closeHard closes nc with SO_LINGER 0: a reset, no TIME_WAIT.
func closeHard(nc net.Conn) {
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = nc.Close()
}

// aLongTimeAgo is a deadline in the past, to interrupt a blocked read or write.
var aLongTimeAgo = time.Unix(1, 0)

// The outcomes of a frame.
const (
	frameOK = iota
	frameClose
	frameProtocol
)

// serve loads the upgraded connection nc until the window closes, R echoes were read, the
// server closed it or it failed; it closes nc.
func (w *worker) serve(nc net.Conn) {
	hard := true
	defer func() {
		if hard {
			closeHard(nc)
		} else {
			_ = nc.Close()
		}
	}()
	r := w.r
	stop := context.AfterFunc(r.runCtx, func() { _ = nc.SetDeadline(aLongTimeAgo) })
	defer stop()
	_ = nc.SetWriteDeadline(r.runEnd)

	p, limit, timeout := r.cfg.Pipeline, r.cfg.Reconnect, r.cfg.Timeout
	w.sent, w.recv, w.inMsg = 0, 0, false
	w.wbuf = w.wbuf[:0]
	k := p
	if limit > 0 {
		k = min(k, limit)
	}
	if r.over() || !w.send(nc, k) {
		return
	}
	for {
		dl := w.sendAt[w.recv%p].Add(timeout)
		if dl.After(r.runEnd) {
			dl = r.runEnd
		}
		_ = nc.SetReadDeadline(dl)
		h, pl, n, err := readFrame(w.br, &w.scratch, maxMessage)
		if err != nil {
			w.readFailed(err)
			return
		}
		now := time.Now()
		if !now.Before(r.runEnd) || r.stopped.Load() {
			return
		}
		w.freed = 0
		for {
			w.bytes += int64(n)
			switch w.frame(h, pl, now) {
			case frameClose:
				hard = false
				_, _ = nc.Write(w.wbuf)
				return
			case frameProtocol:
				w.errs.Read++
				return
			}
			if !frameBuffered(w.br) {
				break
			}
			if h, pl, n, err = readFrame(w.br, &w.scratch, maxMessage); err != nil {
				w.readFailed(err)
				return
			}
		}
		if limit > 0 && w.recv >= limit {
			return
		}
		k := w.freed
		if limit > 0 {
			k = min(k, limit-w.sent)
		}
		if !w.send(nc, k) {
			return
		}
	}
}

// readFailed counts a failed read, unless the window has closed.
func (w *worker) readFailed(err error) {
	if w.r.over() {
		return
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		w.errs.Timeout++
		return
	}
	w.errs.Read++
}

// send writes what w.wbuf holds followed by the next k frames, in one write.
func (w *worker) send(nc net.Conn, k int) bool {
	if k == 0 && len(w.wbuf) == 0 {
		return true
	}
	p := w.r.cfg.Pipeline
	n := len(w.frames)
	var buf []byte
	if k == 1 && len(w.wbuf) == 0 {
		buf = w.frames[w.sent%n]
	} else {
		for i := range k {
			w.wbuf = append(w.wbuf, w.frames[(w.sent+i)%n]...)
		}
		buf = w.wbuf
	}
	t := time.Now()
	_, err := nc.Write(buf)
	w.wbuf = w.wbuf[:0]
	if err != nil {
		if !w.r.over() {
			w.errs.Write++
		}
		return false
	}
	for i := range k {
		w.sendAt[(w.sent+i)%p] = t
	}
	w.sent += k
	w.sentTotal += int64(k)
	return true
}

// frame handles one server frame read at now.
func (w *worker) frame(h header, pl []byte, now time.Time) int {
	if h.rsv != 0 || h.masked {
		return frameProtocol
	}
	switch h.op {
	case opText, opBinary:
		if w.inMsg {
			return frameProtocol
		}
		if h.fin {
			w.echo(pl, now)
			return frameOK
		}
		w.inMsg = true
		w.msg = append(w.msg[:0], pl...)
	case opContinuation:
		if !w.inMsg {
			return frameProtocol
		}
		if len(w.msg)+len(pl) > maxMessage {
			return frameProtocol
		}
		w.msg = append(w.msg, pl...)
		if h.fin {
			w.inMsg = false
			w.echo(w.msg, now)
		}
	case opPing:
		w.wbuf = appendFrame(w.wbuf, true, opPong, &w.mask, pl)
	case opPong:
	case opClose:
		var code []byte
		if len(pl) >= 2 {
			code = pl[:2]
		}
		w.wbuf = appendFrame(w.wbuf, true, opClose, &w.mask, code)
		return frameClose
	default:
		return frameProtocol
	}
	return frameOK
}

// echo counts one whole message read at now: the echo of the oldest frame in flight.
func (w *worker) echo(msg []byte, now time.Time) {
	w.requests++
	if w.recv >= w.sent {
		w.errs.Mismatch++ // a message no frame asked for
		return
	}
	p := w.r.cfg.Pipeline
	if bytes.Equal(msg, w.payload[w.recv%len(w.payload)]) {
		w.ok++
	} else {
		w.errs.Mismatch++
	}
	w.lat = append(w.lat, now.Sub(w.sendAt[w.recv%p]))
	if len(w.lat) == cap(w.lat) {
		w.flushLatencies()
	}
	w.recv++
	w.freed++
}

// flushLatencies adds the collected latencies to the run's histogram.
func (w *worker) flushLatencies() {
	if len(w.lat) == 0 {
		return
	}
	w.r.mu.Lock()
	for _, d := range w.lat {
		arenaload.Record(w.r.hist, d)
	}
	w.r.mu.Unlock()
	w.lat = w.lat[:0]
}
