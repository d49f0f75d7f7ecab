package loadgen

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/arenabot/arenabot/runner/profile"
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
		var w Wrk
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
