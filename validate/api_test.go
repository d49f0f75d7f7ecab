package validate_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/internal/deptest"

	"github.com/google/go-cmp/cmp"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/validate"
	"github.com/arenabot/arenabot/validate/validatetest"
)

func TestStatusString(t *testing.T) {
	for s, want := range map[validate.Status]string{validate.Pass: "PASS", validate.Fail: "FAIL", validate.Skip: "SKIP", validate.Warn: "WARN", 7: "Status(7)"} {
		if got := s.String(); got != want {
			t.Errorf("Status(%d).String() = %q, want %q", int(s), got, want)
		}
	}
}

func TestOutcomeString(t *testing.T) {
	for _, tt := range []struct {
		o    validate.Outcome
		want string
	}{
		{validate.Outcome{Profile: "baseline", Check: "GET sum 13+42", Status: validate.Pass, Request: "GET …", Got: "55"}, "PASS baseline: GET sum 13+42"},
		{validate.Outcome{Profile: "baseline", Check: "POST chunked body", Status: validate.Fail, Request: "POST …", Expected: `200 with body "75"`, Got: `200 "55"`, Contract: "baseline — …"},
			`FAIL baseline: POST chunked body: sent POST …; expected 200 with body "75"; got 200 "55"; contract: baseline — …`},
		{validate.Outcome{Profile: "json-tls", Status: validate.Skip, Reason: "not yet supported"}, "SKIP json-tls: not yet supported"},
		{validate.Outcome{Profile: "static", Check: "404 for a missing file", Status: validate.Skip, Reason: "cancelled"}, "SKIP static: 404 for a missing file: cancelled"},
	} {
		if got := tt.o.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// missed reports whether the outcome is a miss of its tier: a FAIL, or a WARN of an
// advisory check.
func missed(o validate.Outcome) bool {
	return o.Status == validate.Fail || o.Status == validate.Warn && o.Tier == validate.Advisory
}

func TestSummaryAndFirstFailure(t *testing.T) {
	out := []validate.Outcome{
		{Profile: "baseline", Check: "a", Status: validate.Pass},
		{Profile: "baseline", Check: "w", Status: validate.Warn, Tier: validate.Advisory},
		{Profile: "baseline", Check: "b", Status: validate.Fail},
		{Profile: "baseline", Check: "c", Status: validate.Fail},
		{Profile: "json", Check: "d", Status: validate.Pass},
		{Profile: "json-tls", Status: validate.Skip},
	}
	p, f, s, line := validate.Summary(out)
	if p != 2 || f != 2 || s != 1 || line != "2 passed, 2 failed, 1 skipped" {
		t.Errorf("Summary = %d, %d, %d, %q; want 2, 2, 1, \"2 passed, 2 failed, 1 skipped\"", p, f, s, line)
	}
	if o, ok := validate.FirstFailure(out, "baseline"); !ok || o.Check != "b" {
		t.Errorf("FirstFailure(baseline) = %q, %v; want b", o.Check, ok)
	}
	if o, ok := validate.FirstFailure(out, "json"); ok {
		t.Errorf("FirstFailure(json) = %v, want none", o)
	}
	if _, _, _, line := validate.Summary(nil); line != "0 passed, 0 failed, 0 skipped" {
		t.Errorf("Summary(nil) line = %q", line)
	}
	if w := validate.Warnings(out); len(w) != 1 || w[0].Check != "w" {
		t.Errorf("Warnings = %v, want the one WARN", w)
	}
	if line := validate.AdvisoryLine(out); !strings.HasPrefix(line, "1 advisory warning (WARN): ") || !strings.Contains(line, "--strict") {
		t.Errorf("AdvisoryLine = %q", line)
	}
	strict := validate.Strict(out)
	if _, f, _, _ := validate.Summary(strict); f != 3 || validate.AdvisoryLine(strict) != "" || out[1].Status != validate.Warn {
		t.Errorf("Strict: %d failed, advisory line %q, original %v; want 3, none, the original untouched", f, validate.AdvisoryLine(strict), out[1].Status)
	}
	if o, ok := validate.FirstFailure(out, "baseline"); !ok || o.Check != "b" {
		t.Errorf("FirstFailure skips a WARN: got %q", o.Check)
	}
}

func TestChecks(t *testing.T) {
	for _, p := range runnable {
		names := validate.Checks(p)
		if len(names) < 4 {
			t.Errorf("Checks(%s) = %q, want the profile's checks", p, names)
		}
		if !strings.HasPrefix(names[0], "probe GET ") {
			t.Errorf("Checks(%s) starts with %q, want the readiness probe", p, names[0])
		}
		seen := map[string]bool{}
		for _, n := range names {
			if seen[n] {
				t.Errorf("Checks(%s) lists %q twice", p, n)
			}
			seen[n] = true
		}
		t.Logf("%s (%d): %s", p, len(names), strings.Join(names, " | "))
	}
	for _, p := range profile.All {
		if has := validate.Checks(p.Name) != nil; has != p.Runnable() {
			t.Errorf("Checks(%s) != nil is %v, but Runnable() is %v: every profile the runner can run needs checks", p.Name, has, p.Runnable())
		}
		// The registration gives each builder its profile's name: every contract says it.
		for _, c := range validate.Describe(p.Name) {
			if !strings.HasPrefix(c.Contract, p.Name+" — ") {
				t.Errorf("Checks(%s): %q's contract %q names another profile", p.Name, c.Name, c.Contract)
			}
		}
	}
	if got := validate.Checks("nope"); got != nil {
		t.Errorf("Checks(nope) = %q, want nil", got)
	}
}

// TestRunOrderAndSkips gives profiles out of order, twice, with unsupported and unknown
// names: outcomes come in profile order, once each.
func TestRunOrderAndSkips(t *testing.T) {
	// Every profile runs now: make one unsupported for the test.
	i := profile.Index("gateway-h3")
	saved := profile.All[i].Unsupported
	profile.All[i].Unsupported = "not yet supported: a test's reason"
	t.Cleanup(func() { profile.All[i].Unsupported = saved })
	s := validatetest.Start(t, data(t), "")
	out := validate.Run(t.Context(), target(t, s), []string{"bogus", "gateway-h3", "pipelined", "gateway-h3", "baseline"})
	var got []string
	for _, o := range out {
		got = append(got, o.Profile+"/"+o.Status.String())
	}
	var want []string
	for range validate.Checks("baseline") {
		want = append(want, "baseline/PASS")
	}
	for range validate.Checks("pipelined") {
		want = append(want, "pipelined/PASS")
	}
	want = append(want, "gateway-h3/SKIP", "bogus/FAIL")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	skip := out[len(out)-2]
	if p, _ := profile.Lookup("gateway-h3"); skip.Reason != p.Unsupported || skip.Check != "" {
		t.Errorf("gateway-h3 outcome = %+v, want one SKIP with the profile's reason", skip)
	}
	if bogus := out[len(out)-1]; !strings.Contains(bogus.Got, "unknown profile") {
		t.Errorf("bogus outcome = %v, want an unknown-profile FAIL", bogus)
	}
	// Checks come in Checks order.
	var names []string
	for _, o := range out {
		if o.Profile == "baseline" {
			names = append(names, o.Check)
		}
	}
	if !slices.Equal(names, validate.Checks("baseline")) {
		t.Errorf("baseline outcomes in order %q, want %q", names, validate.Checks("baseline"))
	}
}

func TestRunCancelled(t *testing.T) {
	s := validatetest.Start(t, data(t), "")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	out := validate.Run(ctx, target(t, s), []string{"baseline"})
	for _, o := range out {
		if o.Status != validate.Skip || !strings.Contains(o.Reason, "cancel") {
			t.Errorf("after cancellation: %v, want SKIP (cancelled)", o)
		}
	}
}

// TestRunCancelledMidway cancels while the checks wait on a server that never answers:
// Run returns promptly, with the unfinished checks skipped.
func TestRunCancelledMidway(t *testing.T) {
	addr := silentServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	tg := validate.Target{Host: "127.0.0.1", Port: addr.Port, DataDir: data(t), Timeout: time.Minute}
	out := validate.Run(ctx, tg, []string{"baseline", "upload"})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run took %v after cancellation at 300ms", d)
	}
	for _, o := range out {
		if o.Status != validate.Skip {
			t.Errorf("%v, want SKIP (cancelled)", o)
		}
	}
}

// silentServer accepts connections, reads them and never answers.
func silentServer(t *testing.T) *net.TCPAddr {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			go func() {
				buf := make([]byte, 64<<10)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr)
}

// TestNeverHangs points every profile at a server that reads and never answers: each
// check fails after the timeout instead of waiting forever.
func TestNeverHangs(t *testing.T) {
	addr := silentServer(t)
	start := time.Now()
	// The source holds no template file, so fortunes' template check misses too.
	tg := validate.Target{Host: "127.0.0.1", Port: addr.Port, DataDir: data(t), Timeout: 100 * time.Millisecond, Source: t.TempDir()}
	out := validate.Run(t.Context(), tg, runnable)
	for _, o := range out {
		// Not answering HTTP/1.1 at all is what the h2c port must do.
		if o.Profile+"/"+o.Check == "baseline-h2c/HTTP/1.1 not answered 200" {
			if o.Status != validate.Pass {
				t.Errorf("against a silent server: %v, want PASS", o)
			}
			continue
		}
		if !missed(o) {
			t.Errorf("against a silent server: %v, want FAIL (WARN for an advisory check)", o)
		}
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Run against a silent server took %v", d)
	}
	t.Logf("%d checks failed against a silent server in %v; e.g.\n%s\n%s", len(out), time.Since(start).Round(time.Millisecond), out[1], out[len(out)-3])
}

// TestNothingListening: a refused connection is a failure, at once.
func TestNothingListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	out := validate.Run(t.Context(), validate.Target{Port: port, DataDir: data(t), Timeout: time.Second}, []string{"baseline", "static"})
	for _, o := range out {
		if !missed(o) || !strings.Contains(o.Got, "connect") {
			t.Errorf("with nothing listening: %v, want a connect FAIL", o)
		}
	}
}

// TestMissingDataDir: without the data the json and static checks cannot judge, and say so.
func TestMissingDataDir(t *testing.T) {
	s := validatetest.Start(t, data(t), "")
	tg := target(t, s)
	tg.DataDir = t.TempDir()
	out := validate.Run(t.Context(), tg, []string{"json", "static"})
	for _, o := range out {
		if strings.HasPrefix(o.Check, "probe") || strings.Contains(o.Check, "Content-Type") || strings.Contains(o.Check, "404") {
			continue
		}
		if !missed(o) || !strings.Contains(o.Got, "cannot check") {
			t.Errorf("without data: %v, want FAIL (cannot check)", o)
		}
	}
}

// TestDeps keeps validate's imports to what the layout allows: profile and its own
// validate/protocol from this module, brotli, grpc-go, quic-go, gorilla/websocket, the
// standard library; no test code.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{Module: []string{"frameworks", "profile", "text", "validate/protocol"},
		ThirdParty: []string{"github.com/andybalholm/brotli",
			// grpc-go and what it needs (validate/protocol's TestDeps)
			"google.golang.org/grpc", "google.golang.org/protobuf", "google.golang.org/genproto",
			"golang.org/x/net", "golang.org/x/sys", "golang.org/x/text",
			// validate/protocol's h3 and ws units
			"github.com/quic-go/quic-go", "github.com/quic-go/qpack", "golang.org/x/crypto", "github.com/gorilla/websocket"}})
}

// TestWrongServers runs every profile against servers that ignore the contracts: every
// check fails, except the few a server that answers everything the same way cannot help
// passing.
func TestWrongServers(t *testing.T) {
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		passing []string // profile/check
	}{
		{"404 for everything", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) },
			[]string{"static/404 for a missing file", "crud/GET /crud/items/999999 404",
				"download/404 for a missing large file", "download/no path traversal", "static-large/404 for a missing large file",
				"baseline-h2c/HTTP/1.1 not answered 200"}},
		{`200 "ok" for everything`, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "ok")
		}, []string{
			"baseline/probe GET /baseline11?a=1&b=1", "limited-conn/probe GET /baseline11?a=1&b=1",
			"pipelined/probe GET /baseline11?a=1&b=1", "json/probe GET /json/1", "json-comp/probe GET /baseline11?a=1&b=1",
			"upload/probe GET /baseline11?a=1&b=1", "static/probe GET /static/reset.css",
			"pipelined/GET /pipeline", "pipelined/GET /pipeline Content-Type", "pipelined/16 pipelined GET /pipeline",
			"baseline/GET Content-Type", "baseline/POST Content-Type", "limited-conn/GET Content-Type",
			"limited-conn/POST Content-Type", "upload/Content-Type",
			"api-4/probe GET /baseline11?a=1&b=1", "api-16/probe GET /baseline11?a=1&b=1",
			"async-db/probe GET /baseline11?a=1&b=1", "crud/probe GET /baseline11?a=1&b=1", "fortunes/probe GET /baseline11?a=1&b=1",
			"api-4/GET Content-Type", "api-4/POST Content-Type", "api-16/GET Content-Type", "api-16/POST Content-Type",
			"latency-10k/probe GET /baseline11?a=1&b=1", "latency-1m/probe GET /baseline11?a=1&b=1",
			"latency-500k-8cpu/probe GET /baseline11?a=1&b=1", "latency-10k/GET Content-Type",
			"latency-1m/GET Content-Type", "latency-500k-8cpu/GET Content-Type",
			"async/probe GET /baseline11?a=1&b=1", "async/GET /delay Content-Type",
			"download/probe GET /baseline11?a=1&b=1", "static-large/probe GET /baseline11?a=1&b=1",
			"download/no path traversal",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			port := srv.Listener.Addr().(*net.TCPAddr).Port
			// An entry's source without a template file: fortunes' template check misses too.
			out := validate.Run(t.Context(), validate.Target{Port: port, DataDir: data(t), Timeout: testTimeout, Source: t.TempDir()}, runnable)
			for _, o := range out {
				if slices.Contains(tt.passing, o.Profile+"/"+o.Check) {
					if o.Status != validate.Pass {
						t.Errorf("%v, want PASS", o)
					}
				} else if !missed(o) {
					t.Errorf("%v, want FAIL (WARN for an advisory check)", o)
				}
			}
		})
	}
}
