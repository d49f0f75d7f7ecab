package loadgen

import (
	"cmp"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arenabot/arenabot/profile"
)

var (
	record      = flag.Bool("record", false, "run the real wrk and h2load against local servers and rewrite testdata/<tool>-<case>.txt")
	recordCases = flag.String("record-cases", "", "with -record, only the cases whose name matches this regular expression (their notes replace theirs in recorded.txt)")
)

// TestRecord is the recorder of testdata/, not a test: it runs the real tools against servers
// on 127.0.0.1 (1–3 s each, 4 connections) and writes their combined output, plus what each
// server saw to testdata/recorded.txt. Run it with
//
//	go test -run TestRecord -record ./runner/loadgen
//
// then update the expectations in parse_test.go from the new files. A case with a request
// log (log) also writes testdata/<case>.log, the run's h2load --log-file. -record-cases
// re-records only some cases.
func TestRecord(t *testing.T) {
	if !*record {
		t.Skip("recorder: pass -record to rewrite testdata from the real tools")
	}
	wrk, h2load := needTool(t, "wrk"), needTool(t, "h2load")
	dataDir, scriptDir := testDirs(t)
	var notes strings.Builder
	fmt.Fprintf(&notes, "# Written by TestRecord (record_test.go) on %s; $DATA and $SCRIPTS are temporary directories.\n", time.Now().UTC().Format(time.DateOnly))

	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("ok"))
	})
	var n atomic.Int64
	mixed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) % 4 {
		case 0:
			w.Write([]byte("ok"))
		case 1:
			http.Redirect(w, r, "/", http.StatusFound)
		case 2:
			http.NotFound(w, r)
		case 3:
			http.Error(w, "boom", http.StatusInternalServerError)
		}
	})
	// paced answers after 5 ms, so that a run's request log stays small.
	paced := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond)
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("ok"))
	})
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(1500 * time.Millisecond):
			w.Write([]byte("late"))
		case <-r.Context().Done():
		}
	})

	// A server is started per case so that its counts are the case's own.
	type server struct {
		port   int
		counts func() (conns, requests int64)
	}
	httpServer := func(h http.Handler, stopAfter time.Duration) server {
		srv, c := startHTTP(t, h)
		if stopAfter > 0 {
			time.AfterFunc(stopAfter, srv.Close)
		}
		return server{portOf(t, srv.URL), func() (int64, int64) { return c.conns.Load(), c.requests.Load() }}
	}
	httpsServer := func(h http.Handler, h2 bool, stopAfter time.Duration) server {
		srv, c := startHTTPS(t, h, h2)
		if stopAfter > 0 {
			time.AfterFunc(stopAfter, srv.Close)
		}
		return server{portOf(t, srv.URL), func() (int64, int64) { return c.conns.Load(), c.requests.Load() }}
	}
	resetServer := func() server {
		s := startRaw(t, true)
		return server{s.port(t), func() (int64, int64) { return s.conns.Load(), s.requests.Load() }}
	}
	nothing := func() server {
		return server{closedPort(t), func() (int64, int64) { return 0, 0 }}
	}

	baseline := []string{"get.raw", "post_cl.raw", "post_chunked.raw"}
	cases := []struct {
		name    string
		tool    Tool
		plain   bool // wrk without arena.lua: the same flags, no script
		latency bool // plain wrk with --latency
		server  func() server
		prof    profile.Profile
		dur     time.Duration
		timeout time.Duration
		log     bool // h2load writes its request log (Spec.OutDir)
	}{
		{name: "wrk-baseline", tool: Wrk(), server: func() server { return httpServer(ok, 0) }, prof: profile.Profile{Requests: baseline, Pipeline: 1}},
		{name: "wrk-non2xx", tool: Wrk(), server: func() server { return httpServer(mixed, 0) }, prof: profile.Profile{Requests: baseline, Pipeline: 1}},
		{name: "wrk-timeout", tool: Wrk(), server: func() server { return httpServer(slow, 0) }, prof: profile.Profile{Requests: baseline, Pipeline: 1}, dur: 3 * time.Second, timeout: time.Second},
		{name: "wrk-closed-port", tool: Wrk(), server: nothing, prof: profile.Profile{Requests: baseline, Pipeline: 1}},
		{name: "wrk-server-gone", tool: Wrk(), server: func() server { return httpServer(ok, 500*time.Millisecond) }, prof: profile.Profile{Requests: baseline, Pipeline: 1}},
		{name: "wrk-reset", tool: Wrk(), server: resetServer, prof: profile.Profile{Requests: baseline, Pipeline: 1}},
		{name: "wrk-pipelined", tool: Wrk(), server: func() server { return httpServer(ok, 0) }, prof: profile.Profile{Requests: []string{"pipeline.raw"}, Pipeline: 16}},
		{name: "wrk-limited-conn", tool: Wrk(), server: func() server { return httpServer(ok, 0) }, prof: profile.Profile{Requests: baseline, Pipeline: 1, RequestsPerConn: 10}},

		{name: "wrk-plain-baseline", tool: Wrk(), plain: true, latency: true, server: func() server { return httpServer(ok, 0) }, prof: profile.Profile{Requests: baseline}},
		{name: "wrk-plain-non2xx", tool: Wrk(), plain: true, server: func() server { return httpServer(mixed, 0) }, prof: profile.Profile{Requests: baseline}},
		{name: "wrk-plain-timeout", tool: Wrk(), plain: true, server: func() server { return httpServer(slow, 0) }, prof: profile.Profile{Requests: baseline}, dur: 3 * time.Second, timeout: time.Second},
		{name: "wrk-plain-closed-port", tool: Wrk(), plain: true, server: nothing, prof: profile.Profile{Requests: baseline}},
		{name: "wrk-plain-server-gone", tool: Wrk(), plain: true, server: func() server { return httpServer(ok, 500*time.Millisecond) }, prof: profile.Profile{Requests: baseline}},
		{name: "wrk-plain-reset", tool: Wrk(), plain: true, server: resetServer, prof: profile.Profile{Requests: baseline}},

		{name: "h2load-h2c", tool: H2load(), server: func() server { return httpServer(ok, 0) }, prof: profile.Profile{Scheme: "h2c", Streams: 10, Requests: []string{"uris.txt"}}},
		{name: "h2load-h1", tool: H2load(), server: func() server { return httpServer(ok, 0) }, prof: profile.Profile{Scheme: "http", Requests: []string{"/baseline2?a=1&b=1"}}},
		{name: "h2load-non2xx", tool: H2load(), server: func() server { return httpServer(mixed, 0) }, prof: profile.Profile{Scheme: "h2c", Streams: 10, Requests: []string{"/baseline2?a=1&b=1"}}},
		{name: "h2load-closed-port", tool: H2load(), server: nothing, prof: profile.Profile{Scheme: "h2c", Streams: 10, Requests: []string{"/baseline2?a=1&b=1"}}},
		{name: "h2load-h1-reset", tool: H2load(), server: resetServer, prof: profile.Profile{Scheme: "http", Requests: []string{"/baseline2?a=1&b=1"}}},

		{name: "wrk-tls", tool: Wrk(), server: func() server { return httpsServer(ok, false, 0) }, prof: profile.Profile{Scheme: profile.SchemeHTTPS, Requests: baseline, Pipeline: 1}},
		{name: "h2load-h2", tool: H2load(), server: func() server { return httpsServer(ok, true, 0) }, prof: profile.Profile{Scheme: profile.SchemeH2, Streams: 10, Path: "/baseline2?a=1&b=1"}},
		{name: "h2load-h2c-log", tool: H2load(), log: true, server: func() server { return httpServer(paced, 0) }, prof: profile.Profile{Scheme: profile.SchemeH2C, Streams: 2, Path: "/baseline2?a=1&b=1"}},
		{name: "h2load-h2-log-reset", tool: H2load(), log: true, server: func() server { return httpsServer(pacedResets(), true, 0) }, prof: profile.Profile{Scheme: profile.SchemeH2, Streams: 2, Path: "/baseline2?a=1&b=1"}},
		{name: "h2load-h2c-log-non2xx", tool: H2load(), log: true, server: func() server { return httpServer(pacedMixed(mixed), 0) }, prof: profile.Profile{Scheme: profile.SchemeH2C, Streams: 1, Path: "/baseline2?a=1&b=1"}},
	}
	only := regexp.MustCompile(*recordCases)
	for _, tc := range cases {
		if !only.MatchString(tc.name) {
			continue
		}
		srv := tc.server()
		p := tc.prof
		p.Name, p.Tool, p.Port = tc.name, tc.tool.Name, srv.port
		if p.Scheme == "" {
			p.Scheme = "http"
		}
		spec := Spec{Profile: p, Host: "127.0.0.1", Conns: 4, Threads: 2, Duration: cmp.Or(tc.dur, time.Second),
			Timeout: tc.timeout, DataDir: dataDir, ScriptDir: scriptDir}
		if tc.log {
			spec.OutDir = t.TempDir()
		}
		if err := tc.tool.WriteFiles(spec); err != nil {
			t.Fatal(err)
		}
		args, err := tc.tool.Args(spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.plain {
			args = plainWrkArgs(args, tc.latency)
		}
		bin := wrk
		if tc.tool.Name == profile.ToolH2load {
			bin = h2load
		}
		out, code := runTool(t, spec.Duration+20*time.Second, bin, args...)
		time.Sleep(100 * time.Millisecond) // let the server count the last closes
		conns, requests := srv.counts()
		if err := os.WriteFile(filepath.Join("testdata", tc.name+".txt"), out, 0o644); err != nil {
			t.Fatal(err)
		}
		if tc.log {
			b, err := os.ReadFile(H2load().LogFile(spec))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join("testdata", tc.name+".log"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		names := []string{dataDir, "$DATA", scriptDir, "$SCRIPTS"}
		if spec.OutDir != "" {
			names = append(names, spec.OutDir, "$OUT")
		}
		argv := strings.NewReplacer(names...).Replace(strings.Join(args, " "))
		fmt.Fprintf(&notes, "\n%s: %s %s\n  exit %d; server accepted %d connections, answered %d requests\n", tc.name, bin, argv, code, conns, requests)
		t.Logf("%s: exit %d, server accepted %d connections, answered %d requests", tc.name, code, conns, requests)
	}
	text := notes.String()
	if *recordCases != "" {
		text = mergeNotes(t, text)
	}
	if err := os.WriteFile(filepath.Join("testdata", "recorded.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// mergeNotes puts the notes of the cases just recorded into testdata/recorded.txt in place
// of theirs, keeping the others' (blocks start with a blank line and "<case>: ").
func mergeNotes(t *testing.T, fresh string) string {
	t.Helper()
	old, err := os.ReadFile(filepath.Join("testdata", "recorded.txt"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := func(s string) (head string, names []string, body map[string]string) {
		parts := strings.Split(s, "\n\n")
		body = map[string]string{}
		for _, b := range parts[1:] {
			name, _, _ := strings.Cut(b, ":")
			names = append(names, name)
			body[name] = b
		}
		return parts[0], names, body
	}
	head, names, body := blocks(strings.TrimSuffix(string(old), "\n"))
	_, freshNames, freshBody := blocks(strings.TrimSuffix(fresh, "\n"))
	for _, n := range freshNames {
		if _, ok := body[n]; !ok {
			names = append(names, n)
		}
		body[n] = freshBody[n]
	}
	out := head
	for _, n := range names {
		out += "\n\n" + body[n]
	}
	return out + "\n"
}

// pacedResets answers after 5 ms, and resets every fourth stream instead.
func pacedResets() http.Handler {
	var n atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond)
		if n.Add(1)%4 == 0 {
			panic(http.ErrAbortHandler) // net/http resets the stream
		}
		w.Write([]byte("ok"))
	})
}

// pacedMixed answers after 5 ms with h's mix of statuses.
func pacedMixed(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond)
		h.ServeHTTP(w, r)
	})
}

// plainWrkArgs turns arena.lua arguments into a plain wrk run with the same flags: no -s,
// nothing after "--", the URL with path "/".
func plainWrkArgs(args []string, latency bool) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-s":
			i++
		case args[i] == "--":
			return out
		case strings.HasPrefix(args[i], "http"):
			if latency {
				out = append(out, "--latency")
			}
			out = append(out, args[i]+"/")
		default:
			out = append(out, args[i])
		}
	}
	return slices.Clip(out)
}
