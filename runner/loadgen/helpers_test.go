package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Test helpers shared by the Lua test and the recorder: request fixtures, local servers on
// loopback, and running a real tool for a bounded time.

// requestFiles are raw requests shaped like the arena's (arenadata): CRLF line ends.
var requestFiles = map[string]string{
	"get.raw":          "GET /baseline11?a=13&b=42 HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
	"post_cl.raw":      "POST /baseline11?a=13&b=42 HTTP/1.1\r\nHost: localhost:8080\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n20",
	"post_chunked.raw": "POST /baseline11?a=13&b=42 HTTP/1.1\r\nHost: localhost:8080\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n20\r\n0\r\n\r\n",
	"pipeline.raw":     "GET /pipeline HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
	"uris.txt":         "/baseline2?a=1&b=1\n/json/1?m=3\n",
}

// testDirs returns a data directory holding requests/ with requestFiles, and a script
// directory.
func testDirs(t *testing.T) (dataDir, scriptDir string) {
	t.Helper()
	dataDir, scriptDir = t.TempDir(), t.TempDir()
	req := filepath.Join(dataDir, "requests")
	if err := os.Mkdir(req, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range requestFiles {
		if err := os.WriteFile(filepath.Join(req, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dataDir, scriptDir
}

// needTool returns the tool's path. A missing tool skips the test locally and fails it
// under CI (CI set), where the tools are part of the machine.
func needTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not on PATH (CI=%s): install it (Debian: wrk, nghttp2-client)", name, os.Getenv("CI"))
		}
		t.Skipf("%s is not on PATH", name)
	}
	return path
}

// runTool runs a tool with a hard time limit and returns its combined output and exit code.
func runTool(t *testing.T, limit time.Duration, bin string, args ...string) ([]byte, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s did not finish within %v:\n%s", bin, strings.Join(args, " "), limit, out.Bytes())
	}
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s: %v", bin, err)
		}
		code = ee.ExitCode()
	}
	return out.Bytes(), code
}

// counts is what a test server saw.
type counts struct {
	conns    atomic.Int64 // connections accepted
	requests atomic.Int64 // requests answered
}

// startHTTP starts a net/http server on 127.0.0.1 that speaks HTTP/1.1 and h2c with prior
// knowledge (net/http's own unencrypted HTTP/2), counting connections and requests.
func startHTTP(t *testing.T, h http.Handler) (*httptest.Server, *counts) {
	t.Helper()
	c := new(counts)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv.Config.Protocols = &p
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, c
}

// startHTTPS starts a net/http server over TLS on 127.0.0.1 (httptest's certificate) that
// speaks HTTP/1.1 only (ALPN http/1.1) or, with h2, h2 and HTTP/1.1.
func startHTTPS(t *testing.T, h http.Handler, h2 bool) (*httptest.Server, *counts) {
	t.Helper()
	c := new(counts)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	srv.EnableHTTP2 = h2
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, c
}

// portOf returns the port of a server URL or listener address.
func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, port, err := net.SplitHostPort(strings.TrimPrefix(strings.TrimPrefix(addr, "http://"), "https://"))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	fmt.Sscan(port, &n)
	return n
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := portOf(t, ln.Addr().String())
	ln.Close()
	return port
}

// rawServer is a minimal HTTP/1.1 server on 127.0.0.1 that sees what net/http hides: how
// many requests arrive in one read (pipelining), the request targets, and a header.
type rawServer struct {
	ln         net.Listener
	reset      bool // close every connection with a RST after its first read, answering nothing
	conns      atomic.Int64
	requests   atomic.Int64
	maxPerRead atomic.Int64 // most request lines seen in one read
	marked     atomic.Int64 // requests carrying "X-Arena: 1"
	closes     atomic.Int64 // requests carrying "Connection: close"

	mu      sync.Mutex
	targets map[string]int64 // method + " " + target → requests
	open    map[net.Conn]bool
	wg      sync.WaitGroup
}

func startRaw(t *testing.T, reset bool) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln, reset: reset, targets: map[string]int64{}, open: map[net.Conn]bool{}}
	s.wg.Go(s.accept)
	t.Cleanup(s.close)
	return s
}

func (s *rawServer) port(t *testing.T) int { return portOf(t, s.ln.Addr().String()) }

func (s *rawServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.open {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *rawServer) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.conns.Add(1)
		s.mu.Lock()
		s.open[c] = true
		s.mu.Unlock()
		s.wg.Go(func() {
			defer func() {
				s.mu.Lock()
				delete(s.open, c)
				s.mu.Unlock()
				c.Close()
			}()
			if s.reset {
				c.Read(make([]byte, 4096))
				c.(*net.TCPConn).SetLinger(0)
				return
			}
			s.serve(c)
		})
	}
}

// readCounter counts request lines per Read.
type readCounter struct {
	net.Conn
	s *rawServer
}

func (r readCounter) Read(p []byte) (int, error) {
	n, err := r.Conn.Read(p)
	k := int64(bytes.Count(p[:n], []byte(" HTTP/1.1\r\n")))
	for {
		old := r.s.maxPerRead.Load()
		if k <= old || r.s.maxPerRead.CompareAndSwap(old, k) {
			break
		}
	}
	return n, err
}

func (s *rawServer) serve(c net.Conn) {
	br := bufio.NewReaderSize(readCounter{c, s}, 64<<10)
	bw := bufio.NewWriter(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return
		}
		req.Body.Close()
		s.requests.Add(1)
		if req.Header.Get("X-Arena") == "1" {
			s.marked.Add(1)
		}
		s.mu.Lock()
		s.targets[req.Method+" "+req.RequestURI]++
		s.mu.Unlock()
		bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n")
		if req.Close {
			s.closes.Add(1)
			bw.WriteString("Connection: close\r\n\r\nok")
			bw.Flush()
			return
		}
		bw.WriteString("\r\nok")
		if br.Buffered() == 0 {
			if bw.Flush() != nil {
				return
			}
		}
	}
}

func (s *rawServer) targetCounts() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int64{}
	for k, v := range s.targets {
		out[k] = v
	}
	return out
}
