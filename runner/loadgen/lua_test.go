package loadgen

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arenabot/arenabot/profile"
)

// TestWrkLua runs the real wrk with arena.lua against a raw HTTP/1.1 server on 127.0.0.1
// (about a second per case) and checks what the server saw.
func TestWrkLua(t *testing.T) {
	wrk := needTool(t, "wrk")
	baseline := []string{"get.raw", "post_cl.raw", "post_chunked.raw"}
	const conns, threads = 4, 2

	run := func(t *testing.T, p profile.Profile) (*rawServer, Measurement, []byte) {
		t.Helper()
		srv := startRaw(t, false)
		dataDir, scriptDir := testDirs(t)
		p.Name, p.Tool, p.Scheme, p.Port = t.Name(), profile.ToolWrk, "http", srv.port(t)
		spec := Spec{Profile: p, Host: "127.0.0.1", Conns: conns, Threads: threads, Duration: time.Second,
			DataDir: dataDir, ScriptDir: scriptDir}
		w := Wrk()
		if err := w.WriteFiles(spec); err != nil {
			t.Fatal(err)
		}
		args, err := w.Args(spec)
		if err != nil {
			t.Fatal(err)
		}
		out, code := runTool(t, 20*time.Second, wrk, args...)
		if code != 0 {
			t.Fatalf("wrk exited with %d:\n%s", code, out)
		}
		m, err := w.Parse(out)
		if err != nil {
			t.Fatalf("Parse: %v\n%s", err, out)
		}
		time.Sleep(50 * time.Millisecond) // let the server finish counting
		if m.Requests == 0 || m.Requests > srv.requests.Load() {
			t.Errorf("wrk counted %d responses, the server answered %d requests\n%s", m.Requests, srv.requests.Load(), out)
		}
		if m.Status2xx != m.Requests || m.NonSuccess != 0 || m.Errors.Total() != 0 {
			t.Errorf("got 2xx %d, non-success %d, socket errors %+v of %d responses; want all 2xx, no errors\n%s",
				m.Status2xx, m.NonSuccess, m.Errors, m.Requests, out)
		}
		return srv, m, out
	}

	t.Run("pipelined", func(t *testing.T) {
		srv, m, out := run(t, profile.Profile{Requests: baseline, Pipeline: 16, Headers: []string{"X-Arena: 1"}})
		if got := srv.maxPerRead.Load(); got < 16 {
			t.Errorf("the server read at most %d requests at once; want the 16 of a pipelined batch in one read", got)
		}
		if got := srv.conns.Load(); got > conns+1 {
			t.Errorf("the server accepted %d connections; want at most %d (wrk's probe and -c %d) with keep-alive", got, conns+1, conns)
		}
		if got, all := srv.marked.Load(), srv.requests.Load(); got != all {
			t.Errorf("%d of %d requests carried the profile's header X-Arena: 1", got, all)
		}
		// The three templates rotate: one GET for every two POSTs.
		tc := srv.targetCounts()
		get, post := tc["GET /baseline11?a=13&b=42"], tc["POST /baseline11?a=13&b=42"]
		if get == 0 || post < 2*get-32 || post > 2*get+32 {
			t.Errorf("server saw %v; want twice as many POSTs as GETs", tc)
		}
		// The latency comes from wrk's histogram with its correction redone per batch.
		rec := regexp.MustCompile(`source=batches recorded=([0-9]+)`).FindSubmatch(out)
		if rec == nil {
			t.Fatalf("no source=batches recorded=N in the ARENA block:\n%s", out)
		}
		batches, _ := strconv.ParseInt(string(rec[1]), 10, 64)
		if batches > m.Requests/16 || batches < m.Requests/16-conns {
			t.Errorf("wrk timed %d batches after undoing its correction; want %d/16 = %d (less at most %d in flight)",
				batches, m.Requests, m.Requests/16, conns)
		}
		l := m.Latency
		t.Logf("server: %d requests, at most %d in one read, %d connections accepted; wrk: %d responses, %d batches timed, latency %+v",
			srv.requests.Load(), srv.maxPerRead.Load(), srv.conns.Load(), m.Requests, batches, l)
		if l.P50 <= 0 || l.P50 > l.P90 || l.P90 > l.P99 || l.P99 > l.P999 || l.P999 > l.Max || l.Mean <= 0 || l.Mean > l.Max {
			t.Errorf("latency %+v; want 0 < p50 <= p90 <= p99 <= p99.9 <= max and 0 < mean <= max", l)
		}
	})

	for _, p := range []int{1, 4} {
		t.Run("limited-conn/pipeline="+strconv.Itoa(p), func(t *testing.T) {
			srv, m, out := run(t, profile.Profile{Requests: baseline, Pipeline: p, RequestsPerConn: 10})
			requests, closes, accepted := srv.requests.Load(), srv.closes.Load(), srv.conns.Load()
			t.Logf("server: %d requests, %d with Connection: close, %d connections accepted; wrk: %d responses",
				requests, closes, accepted, m.Requests)
			// R counts per thread: closes = Σ floor(sent/10) over threads, sent ≥ answered.
			// A batch of P < R requests crosses at most one multiple of R.
			if want := requests / 10; closes < want-threads || closes > want+conns*int64(p) {
				t.Errorf("the server saw %d Connection: close requests; want about %d/10 = %d", closes, requests, want)
			}
			// Every close makes wrk reconnect; add wrk's probe and its first connections.
			if want := closes + conns + 1; accepted < want-conns || accepted > want {
				t.Errorf("the server accepted %d connections; want about %d (one per close, plus %d+1)\n%s", accepted, want, conns, out)
			}
			// The close rides on the last request of a batch: nothing pipelined is lost.
			if lost := requests - m.Requests; lost > conns*int64(p) {
				t.Errorf("the server answered %d requests, wrk counted %d responses", requests, m.Requests)
			}
		})
	}
}

// recorded is one request as a recordServer read it.
type recorded struct {
	method, target string
	contentLength  int64
	body           string
}

// recordServer is an HTTP/1.1 server on 127.0.0.1 that keeps every request it reads and
// every error that is not the end of a connection. A Content-Length that disagrees with
// the body shows as a parse error (the next request starts inside the body) or a stall.
type recordServer struct {
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	reqs []recorded
	errs []string
	open map[net.Conn]bool
}

func startRecord(t *testing.T) *recordServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &recordServer{ln: ln, open: map[net.Conn]bool{}}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.open[c] = true
			s.mu.Unlock()
			s.wg.Go(func() { s.serve(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for c := range s.open {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *recordServer) serve(c net.Conn) {
	defer func() {
		s.mu.Lock()
		delete(s.open, c)
		s.mu.Unlock()
		c.Close()
	}()
	br, bw := bufio.NewReader(c), bufio.NewWriter(c)
	fail := func(err error) {
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, syscall.ECONNRESET) {
			s.mu.Lock()
			s.errs = append(s.errs, err.Error())
			s.mu.Unlock()
		}
	}
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			fail(err)
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			fail(err)
			return
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, recorded{req.Method, req.RequestURI, req.ContentLength, string(body)})
		s.mu.Unlock()
		bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n")
		if req.Close {
			bw.WriteString("Connection: close\r\n\r\nok")
			bw.Flush()
			return
		}
		bw.WriteString("\r\nok")
		if br.Buffered() == 0 && bw.Flush() != nil {
			return
		}
	}
}

// TestWrkLuaSubstitution runs the real wrk with arena.lua on templates shaped like the
// arena's crud files, and checks every request the server read: {RAND:min:max} in range and
// zero-padded to the width of max, {SEQ:start} padded to the width of start and never sent
// twice (each thread its own numbers), wrapping within that width, Content-Length equal to
// the body, and files without placeholders sent byte for byte.
func TestWrkLuaSubstitution(t *testing.T) {
	wrk := needTool(t, "wrk")
	const (
		host   = "Host: localhost:8080\r\n"
		update = `{"name":"Desk Lamp Pro","category":"office","price":45,"quantity":40}`
		create = `{"id":{SEQ:100001},"name":"Bench Item","category":"office","price":25,"quantity":10}`
	)
	templates := map[string]string{
		"crud-get.raw":  "GET /crud/items/{RAND:1:50000} HTTP/1.1\r\n" + host + "\r\n",
		"crud-list.raw": "GET /crud/items?category=office&page={RAND:1:10}&limit=10 HTTP/1.1\r\n" + host + "\r\n",
		// braces, but no placeholder, in the body: sent as it is
		"crud-update.raw": "PUT /crud/items/{RAND:1:50000} HTTP/1.1\r\n" + host + "Content-Type: application/json\r\n" +
			fmt.Sprintf("Content-Length: %d\r\n\r\n", len(update)) + update,
		// {SEQ:100001} becomes six digits, as wide as the placeholder's 12 bytes less 6
		"crud-create.raw": "POST /crud/items HTTP/1.1\r\n" + host + "Content-Type: application/json\r\n" +
			fmt.Sprintf("Content-Length: %d\r\n\r\n", len(create)-6) + create,
		"wrap.raw": "GET /wrap/{SEQ:8} HTTP/1.1\r\n" + host + "\r\n", // 8, 9, then 8 again
	}
	files := append(slices.Sorted(maps.Keys(templates)), "get.raw")
	const conns, threads = 4, 2

	// A Content-Length that counts the placeholder rather than its value stops wrk before
	// it sends anything.
	t.Run("unpadded Content-Length", func(t *testing.T) {
		dataDir, scriptDir := testDirs(t)
		bad := "POST /crud/items HTTP/1.1\r\n" + host + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(create)) + create
		if err := os.WriteFile(filepath.Join(dataDir, "requests", "bad.raw"), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		srv := startRecord(t)
		p := profile.Profile{Name: t.Name(), Tool: profile.ToolWrk, Scheme: "http", Port: portOf(t, srv.ln.Addr().String()),
			Requests: []string{"get.raw", "bad.raw"}, Pipeline: 1}
		spec := Spec{Profile: p, Host: "127.0.0.1", Conns: 1, Threads: 1, Duration: time.Second, DataDir: dataDir, ScriptDir: scriptDir}
		w := Wrk()
		if err := w.WriteFiles(spec); err != nil {
			t.Fatal(err)
		}
		args, err := w.Args(spec)
		if err != nil {
			t.Fatal(err)
		}
		out, code := runTool(t, 20*time.Second, wrk, args...)
		t.Logf("wrk exited with %d:\n%s", code, out)
		want := fmt.Sprintf("bad.raw: Content-Length %d, but the body has %d bytes once its placeholders are replaced", len(create), len(create)-6)
		if code == 0 || !strings.Contains(string(out), want) {
			t.Errorf("wrk exited with %d; want a failure saying %q:\n%s", code, want, out)
		}
		srv.mu.Lock()
		defer srv.mu.Unlock()
		if len(srv.reqs) != 0 {
			t.Errorf("the server read %d requests; want none", len(srv.reqs))
		}
	})

	for _, tc := range []struct {
		name          string
		pipeline, per int
	}{{"keep-alive", 1, 0}, {"pipelined, closing", 4, 10}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startRecord(t)
			dataDir, scriptDir := testDirs(t)
			for name, body := range templates {
				if err := os.WriteFile(filepath.Join(dataDir, "requests", name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p := profile.Profile{Name: t.Name(), Tool: profile.ToolWrk, Scheme: "http", Port: portOf(t, srv.ln.Addr().String()),
				Requests: files, Pipeline: tc.pipeline, RequestsPerConn: tc.per}
			spec := Spec{Profile: p, Host: "127.0.0.1", Conns: conns, Threads: threads, Duration: time.Second,
				DataDir: dataDir, ScriptDir: scriptDir}
			w := Wrk()
			if err := w.WriteFiles(spec); err != nil {
				t.Fatal(err)
			}
			args, err := w.Args(spec)
			if err != nil {
				t.Fatal(err)
			}
			out, code := runTool(t, 20*time.Second, wrk, args...)
			if code != 0 {
				t.Fatalf("wrk exited with %d:\n%s", code, out)
			}
			m, err := w.Parse(out)
			if err != nil {
				t.Fatalf("Parse: %v\n%s", err, out)
			}
			time.Sleep(50 * time.Millisecond) // let the server finish reading
			srv.mu.Lock()
			reqs, errs := slices.Clone(srv.reqs), slices.Clone(srv.errs)
			srv.mu.Unlock()
			if len(errs) > 0 {
				t.Errorf("the server failed to read %d requests, first: %s", len(errs), errs[0])
			}
			if m.Requests == 0 || m.Errors.Total() != 0 || m.NonSuccess != 0 {
				t.Errorf("wrk: %d responses, socket errors %+v, non-success %d; want some, none, none\n%s",
					m.Requests, m.Errors, m.NonSuccess, out)
			}

			getRE := regexp.MustCompile(`^/crud/items/([0-9]+)$`)
			listRE := regexp.MustCompile(`^/crud/items\?category=office&page=([0-9]+)&limit=10$`)
			wrapRE := regexp.MustCompile(`^/wrap/([0-9]+)$`)
			ids := map[int]int{} // crud-get and crud-update ids → count
			pages := map[int]bool{}
			seq := map[int]int{} // created ids → count
			wraps := map[int]bool{}
			plain := 0
			num := func(r recorded, s string, width, lo, hi int) int {
				n, err := strconv.Atoi(s)
				if len(s) != width || err != nil || n < lo || n > hi {
					t.Errorf("%s %s: %q is not a %d-digit number in [%d, %d]", r.method, r.target, s, width, lo, hi)
				}
				return n
			}
			for _, r := range reqs {
				if r.contentLength != int64(len(r.body)) && (r.contentLength != -1 || r.body != "") {
					t.Errorf("%s %s: Content-Length %d, body %d bytes", r.method, r.target, r.contentLength, len(r.body))
				}
				switch g := getRE.FindStringSubmatch(r.target); {
				case r.method == "GET" && r.target == "/baseline11?a=13&b=42" && r.body == "":
					plain++
				case (r.method == "GET" && r.body == "" || r.method == "PUT" && r.body == update) && g != nil:
					ids[num(r, g[1], 5, 1, 50000)]++
				case r.method == "GET" && listRE.MatchString(r.target):
					pages[num(r, listRE.FindStringSubmatch(r.target)[1], 2, 1, 10)] = true
				case r.method == "GET" && wrapRE.MatchString(r.target):
					wraps[num(r, wrapRE.FindStringSubmatch(r.target)[1], 1, 8, 9)] = true
				case r.method == "POST" && r.target == "/crud/items":
					var v struct {
						ID json.RawMessage `json:"id"`
					}
					if !json.Valid([]byte(r.body)) || json.Unmarshal([]byte(r.body), &v) != nil ||
						strings.Replace(create, "{SEQ:100001}", string(v.ID), 1) != r.body {
						t.Errorf("POST body %q is not the template with one number for {SEQ:100001}", r.body)
						continue
					}
					seq[num(r, string(v.ID), 6, 100001, 999999)]++
				default:
					t.Errorf("unexpected request %s %s %q", r.method, r.target, r.body)
				}
			}
			t.Logf("server: %d requests (%d plain, %d crud ids, %d pages, %d created, wrap values %v); wrk: %d responses",
				len(reqs), plain, len(ids), len(pages), len(seq), slices.Sorted(maps.Keys(wraps)), m.Requests)
			if plain == 0 || len(reqs) < 100 {
				t.Fatalf("%d requests, %d of get.raw; want many", len(reqs), plain)
			}
			// Uniform in 1..50000: d draws find about 50000·(1−e^(−d/50000)) distinct ids
			// (fewer if the threads drew the same numbers), and both halves of the range.
			draws := 0
			for _, n := range ids {
				draws += n
			}
			if want := 50000 * (1 - math.Exp(-float64(draws)/50000)); float64(len(ids)) < 0.9*want {
				t.Errorf("%d distinct ids in %d draws from 1..50000; want about %.0f", len(ids), draws, want)
			}
			if lo, hi := slices.Min(slices.Collect(maps.Keys(ids))), slices.Max(slices.Collect(maps.Keys(ids))); lo > 25000 || hi < 25000 {
				t.Errorf("ids from %d to %d; want both halves of 1..50000", lo, hi)
			}
			if len(pages) != 10 {
				t.Errorf("pages %v; want all of 1..10", slices.Sorted(maps.Keys(pages)))
			}
			if !wraps[8] || !wraps[9] {
				t.Errorf("{SEQ:8} sent %v; want 8 and 9 (the one-digit numbers from 8, wrapping)", slices.Sorted(maps.Keys(wraps)))
			}
			// SEQ: no id twice; thread k of T sends 100001+k, 100001+k+T, ...: both threads'
			// residues appear, and each thread's numbers are consecutive in its own stride.
			residues := map[int]int{}
			for id, n := range seq {
				if n > 1 {
					t.Errorf("created id %d sent %d times", id, n)
				}
				residues[(id-100001)%threads]++
			}
			if len(residues) != threads {
				t.Errorf("created ids by thread (id-100001 mod %d): %v; want every thread", threads, residues)
			}
			for k, n := range residues {
				for i := range n {
					if seq[100001+k+i*threads] == 0 {
						t.Errorf("thread %d sent %d ids but not %d: its sequence has a gap", k, n, 100001+k+i*threads)
						break
					}
				}
			}
		})
	}
}
