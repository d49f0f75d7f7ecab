package paced

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/pem"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arenabot/arenabot/arenaload"
)

// TestScheduleAccuracy: the rate is met, exactly C connections carry it, and each keeps its
// own schedule (R/C·d requests, ±2). On a machine busy enough to starve the generator for
// hundreds of milliseconds (a whole CI run beside it) no schedule can be kept: the generator
// says so in its Limit (a wake-up lag), or the server, starved too, answers later than the
// next request on its connection is due (latency p50 above the interval C/R). Such a run is
// no evidence either way and is tried again, up to three times, and three such runs leave
// the schedule unjudged (skipped, saying why). A run that misses its schedule without either
// fails.
func TestScheduleAccuracy(t *testing.T) {
	for try := 1; ; try++ {
		res, late := scheduleRun(t)
		if !late {
			return
		}
		if try == 3 {
			// Three runs starved by the machine, each said so: the schedule cannot be judged
			// here. (A generator that wrongly reports waking late is TestLimit's to catch.)
			t.Skipf("the generator woke late or the server answered late in each of 3 runs (last: Limit %q, latency p50 %.0f µs): this machine is too busy to judge a schedule", res.Limit, res.Latency.P50)
		}
		t.Logf("try %d: Limit %q, latency p50 %.0f µs: the machine was busy; trying again", try, res.Limit, res.Latency.P50)
	}
}

// scheduleRun is one run of TestScheduleAccuracy. It reports late, having checked nothing
// of the schedule, when the generator's own verdict is that it woke late, or when the
// server answered later than the next request was due.
func scheduleRun(t *testing.T) (res arenaload.Result, late bool) {
	t.Helper()
	const (
		conns = 20
		rate  = 2000.0
		dur   = 2 * time.Second
	)
	var accepted atomic.Int64
	var mu sync.Mutex
	perConn := map[string]int{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		perConn[r.RemoteAddr]++
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	res, err := Run(context.Background(), Config{URL: srv.URL + "/x", Rate: rate, Connections: conns, Duration: dur, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	logResult(t, "paced", res)
	if res.OK != res.Requests || res.Errors.Total() != 0 {
		t.Errorf("%d of %d OK, errors %+v; want all OK and none", res.OK, res.Requests, res.Errors)
	}
	if n := accepted.Load(); n != conns {
		t.Errorf("the server accepted %d connections, want exactly %d", n, conns)
	}
	if res.Tool != "arenaload" || res.Mode != "paced" || res.Connections != conns || res.Duration != dur.Seconds() || res.TargetRate != rate {
		t.Errorf("result header %+v", res)
	}
	if res.Bytes <= 0 || res.Latency.P50 <= 0 || res.CPU <= 0 || res.CPUPerRequest <= 0 {
		t.Errorf("bytes %d, p50 %v, cpu %v, cpu/req %v: want all positive", res.Bytes, res.Latency.P50, res.CPU, res.CPUPerRequest)
	}
	if strings.Contains(res.Limit, "cores") {
		t.Errorf("Limit %q: the generator's CPU was not the limit at 2,000 req/s", res.Limit)
	}
	if res.Limit != "" {
		return res, true
	}
	// The server runs in this process: a machine that starves it (under .ci/flaky's load: p50
	// 481 ms, a rate ratio of 0.72) keeps the connections busy past their next due time, and
	// a request cannot go out on an HTTP/1.1 connection before the last one's answer. The
	// generator then rightly names no limit of its own (its wake-up lag on free connections
	// was low; latency counts from the due time), and the run says nothing of its schedule.
	interval := float64(conns) / rate * 1e6 // µs
	if res.Latency.P50 > interval {
		t.Logf("latency p50 %.0f µs above the per-connection interval %.0f µs: the server was too slow to judge the schedule", res.Latency.P50, interval)
		return res, true
	}
	if res.RateRatio < 0.99 {
		t.Errorf("rate ratio %.4f without a Limit, want ≥ 0.99", res.RateRatio)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(perConn) != conns {
		t.Errorf("requests came over %d connections, want %d", len(perConn), conns)
	}
	want := rate / conns * dur.Seconds()
	for addr, n := range perConn {
		if math.Abs(float64(n)-want) > 2 {
			t.Errorf("connection %s sent %d requests, want %.0f ± 2", addr, n, want)
		}
	}
	return res, false
}

// TestPhasesStaggered: C connections at R/C each send at evenly spread phases, not in
// bursts. With C=10 and R=100 the sends are due 10 ms apart, so a 10 ms window holds at
// most 2 (3 with jitter); were the phases aligned, every window would hold 10. A generator
// that falls behind on a loaded machine catches up in a burst, so the test asks that of the
// windows opening at each arrival, 90% hold at most 3 and the median at most 2.
func TestPhasesStaggered(t *testing.T) {
	// A machine that stalls for longer than a window (under .ci/flaky's load: 99 ms) piles
	// the requests due meanwhile into one burst, which says nothing of the phases: such a
	// run is tried again, three times at most. A bursty run that did not stall fails; three
	// that all stalled skip the test, saying so (as TestCoordinatedOmission does on a
	// machine too busy to judge): a run beside another go test on top of .ci/flaky's load
	// stalled 87 ms in each.
	var arrivals []time.Time
	var median, p90 int
	for try := 1; ; try++ {
		var res arenaload.Result
		arrivals, res = staggerRun(t)
		median, p90 = stagger(t, arrivals)
		if median <= 2 && p90 <= 3 {
			break
		}
		if res.MaxScheduleLag <= 10_000 {
			t.Errorf("10 ms windows hold median %d, p90 %d arrivals: want ≤ 2 and ≤ 3 (phases not staggered; max schedule lag %.0f µs)", median, p90, res.MaxScheduleLag)
			break
		}
		if try == 3 {
			t.Skipf("the machine stalled longer than a 10 ms window in each of 3 tries (the last %.0f µs; median %d, p90 %d arrivals): the phases cannot be judged here", res.MaxScheduleLag, median, p90)
		}
	}
	// Spread over the whole window, not front-loaded.
	if span := arrivals[len(arrivals)-1].Sub(arrivals[0]); span < 1400*time.Millisecond {
		t.Errorf("arrivals span %v, want ≈ 1.49 s", span)
	}
}

// staggerRun runs 100 requests a second over 10 connections for 1.5 s against a server that
// records when each arrives, and returns the arrivals in order.
func staggerRun(t *testing.T) ([]time.Time, arenaload.Result) {
	t.Helper()
	var mu sync.Mutex
	var arrivals []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		mu.Lock()
		arrivals = append(arrivals, now)
		mu.Unlock()
	}))
	defer srv.Close()
	res, err := Run(context.Background(), Config{URL: srv.URL, Rate: 100, Connections: 10, Duration: 1500 * time.Millisecond, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	logResult(t, "paced", res)
	srv.Close()
	mu.Lock()
	defer mu.Unlock()
	// 150 are due; those due in the run's last max-schedule-lag go unsent when the machine
	// stalled that long near the end (under .ci/flaky's load a 304 ms stall left 3).
	least := 150 - int(math.Ceil(res.MaxScheduleLag/1e6*100))
	if len(arrivals) > 150 || len(arrivals) < least {
		t.Fatalf("%d arrivals, want 150 (at least %d after a max schedule lag of %.0f µs)", len(arrivals), least, res.MaxScheduleLag)
	}
	slices.SortFunc(arrivals, func(a, b time.Time) int { return a.Compare(b) })
	return arrivals, res
}

// stagger returns the median and 90th percentile of the arrivals in the 10 ms windows that
// open at each arrival.
func stagger(t *testing.T, arrivals []time.Time) (median, p90 int) {
	counts := make([]int, len(arrivals))
	for i := range arrivals {
		j := i
		for j < len(arrivals) && arrivals[j].Sub(arrivals[i]) < 10*time.Millisecond {
			j++
		}
		counts[i] = j - i
	}
	slices.Sort(counts)
	median, p90 = counts[len(counts)/2], counts[len(counts)*9/10]
	t.Logf("arrivals in the 10 ms windows opening at each arrival: median %d, p90 %d, max %d", median, p90, counts[len(counts)-1])
	return median, p90
}

// fixtureStall is how long testdata/fixture's "stall" mode stalls once a second (its const
// stall).
const fixtureStall = 50 * time.Millisecond

// TestCoordinatedOmission: a server that stalls 50 ms once a second. The paced generator
// charges the stall to every request it delayed, so its p99 and p99.9 show it.
//
// wrk 4.1.0 runs the same server side by side. Its closed loop stops sending while the
// server stalls (each connection has one stalled request, charged 0-50 ms), but before
// printing wrk back-fills its histogram (stats_correct): every latency v above its mean
// per-connection interval i adds v-i, v-2i, ... That correction puts the stall back into
// wrk's p99 (measured here: wrk p99 40-52 ms against the paced 44 ms), so the test asserts
// that both show it. The closed loop that hides the stall is one that corrects nothing:
// h2load 1.52.0 over HTTP/1.1 on the same server, whose per-request log gives a p99 far
// below the stall (measured here: 4.6 ms against the paced 42.8 ms); the test asserts that.
func TestCoordinatedOmission(t *testing.T) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		t.Fatal("wrk is not on PATH: install wrk (apt-get install wrk)")
	}
	url := startFixture(t, "stall") + "/"

	res, err := Run(context.Background(), Config{URL: url, Rate: 2000, Connections: 50, Duration: 3 * time.Second, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	logResult(t, "paced", res)
	if res.Latency.P999 < 30_000 || res.Latency.P99 < 10_000 {
		t.Errorf("paced p99 %.0f µs, p99.9 %.0f µs: want ≥ 10 ms and ≥ 30 ms (the stall)", res.Latency.P99, res.Latency.P999)
	}
	checkNotLimited(t, res) // the stall is the server's, not the generator's

	out, err := exec.Command(wrk, "-t1", "-c50", "-d3s", "--latency", url).CombinedOutput()
	if err != nil {
		t.Fatalf("wrk: %v\n%s", err, out)
	}
	wrkP99, wrkRate := parseWrk(t, string(out))
	t.Logf("wrk: %.0f req/s, p99 %.0f µs; paced: %.0f req/s, p99 %.0f µs, p99.9 %.0f µs",
		wrkRate, wrkP99, res.AchievedRate, res.Latency.P99, res.Latency.P999)
	switch {
	case wrkRate >= 2*res.AchievedRate:
	case res.Limit != "":
		// The machine stalled the paced generator (checkNotLimited said so above); a
		// machine that busy slows wrk's closed loop too, so the two rates say nothing
		// about the stall. The latency assertions around this one still hold.
		t.Logf("wrk's closed loop ran %.0f req/s, under twice the paced run's %.0f, on a machine that woke the generator late", wrkRate, res.AchievedRate)
	default:
		t.Errorf("wrk's closed loop ran %.0f req/s, want at least twice the paced run's %.0f", wrkRate, res.AchievedRate)
	}
	if wrkP99 < 10_000 {
		t.Errorf("wrk's p99 %.0f µs: want ≥ 10 ms, wrk 4.1.0's stats_correct back-fills the stall", wrkP99)
	}

	// A closed-loop tool that times each request from its own send and corrects nothing
	// (h2load 1.52.0 over HTTP/1.1, its per-request log): the stall delays only the requests
	// in flight when it starts, one per connection, so its p99 does not show it.
	// On a machine busy enough to stall every process for tens of milliseconds the closed
	// loop shows those stalls too, so its run has three tries; one that hides the server's
	// stall shows the point. A try that does not is judged against the same run on the
	// fixture that never stalls, at the same moment: when the stall added less than half its
	// 50 ms to the closed loop's p99 over that one's, the loop hid it too (a loaded machine
	// adds its own tens of milliseconds to both; a tool that corrected for the stall would
	// add the whole 50 ms: in a run of .ci/flaky the loop measured 65 ms over 56, 40 and 48
	// ms on the plain fixture while the paced p99 was 86 ms). When the plain fixture's p99
	// is as high as half the paced one's, the machine stalled everything and the try shows
	// nothing either way. Three such tries skip the test (as TestScheduleAccuracy does on a
	// machine too busy to judge a schedule).
	h2load, err := exec.LookPath("h2load")
	if err != nil {
		t.Fatal("h2load is not on PATH: install nghttp2-client (apt-get install nghttp2-client)")
	}
	closedLoop := func(url string) (float64, int) {
		log := filepath.Join(t.TempDir(), "h2load.log")
		if out, err := exec.Command(h2load, "--h1", "-c", "50", "-t", "1", "-D", "3", "--log-file", log, url).CombinedOutput(); err != nil {
			t.Fatalf("h2load: %v\n%s", err, out)
		}
		return logP99(t, log)
	}
	var plainURL string
	busy := 0
	const tries = 3
	for try := 1; try <= tries; try++ {
		h2P99, n := closedLoop(url)
		t.Logf("h2load closed loop, try %d: %d requests, p99 %.0f µs (uncorrected); paced p99 %.0f µs", try, n, h2P99, res.Latency.P99)
		if h2P99 < res.Latency.P99/2 {
			return
		}
		if plainURL == "" {
			plainURL = startFixture(t, "plain") + "/"
		}
		plainP99, n := closedLoop(plainURL)
		t.Logf("h2load closed loop on the fixture that never stalls, try %d: %d requests, p99 %.0f µs", try, n, plainP99)
		if h2P99-plainP99 < float64(fixtureStall.Microseconds())/2 {
			return
		}
		if plainP99 >= res.Latency.P99/2 {
			busy++
		}
	}
	if busy == tries {
		t.Skipf("the machine stalled every request for as long as the server's stall in each of %d tries: a closed loop hiding the stall cannot be judged here", tries)
	}
	t.Errorf("h2load's closed-loop p99 is neither well below the paced p99 %.0f µs nor within half the stall of its p99 on the fixture that never stalls, in %d tries (%d on a machine that was not stalling everything): the uncorrected closed loop should hide the stall", res.Latency.P99, tries, tries-busy)
}

// logP99 returns the 99th percentile (µs) of h2load's --log-file (start µs, status, µs to
// the end of the response) and the number of responses in it.
func logP99(t *testing.T, file string) (float64, int) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var lat []float64
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) < 3 || f[1] == "-1" {
			continue
		}
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			t.Fatalf("h2load log line %q: %v", line, err)
		}
		lat = append(lat, v)
	}
	if len(lat) < 1000 {
		t.Fatalf("h2load logged %d responses; want a real run", len(lat))
	}
	slices.Sort(lat)
	return lat[len(lat)*99/100], len(lat)
}

// checkNotLimited fails when res blames the generator's CPU. A wake-up-lag verdict is only
// logged: on a shared 2-core machine (and under the race detector, which multiplies the
// generator's CPU per request by 5-10) other processes can make the generator wake late,
// and then the verdict is right. TestLimit asks for no Limit at all from a light run.
func checkNotLimited(t *testing.T, res arenaload.Result) {
	t.Helper()
	switch {
	case res.Limit == "":
	case strings.Contains(res.Limit, "cores"):
		t.Errorf("Limit %q: the generator's CPU was not the limit", res.Limit)
	default:
		t.Logf("Limit %q: the machine was busy enough to make the generator wake late", res.Limit)
	}
}

var (
	wrkP99Line  = regexp.MustCompile(`(?m)^\s*99%\s+([0-9.]+)(us|ms|s)\b`)
	wrkRateLine = regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)`)
)

// parseWrk returns wrk --latency's 99th percentile (µs) and Requests/sec.
func parseWrk(t *testing.T, out string) (p99, rate float64) {
	t.Helper()
	m := wrkP99Line.FindStringSubmatch(out)
	r := wrkRateLine.FindStringSubmatch(out)
	if m == nil || r == nil {
		t.Fatalf("wrk's output has no 99%% or Requests/sec line:\n%s", out)
	}
	p99, _ = strconv.ParseFloat(m[1], 64)
	p99 *= map[string]float64{"us": 1, "ms": 1e3, "s": 1e6}[m[2]]
	rate, _ = strconv.ParseFloat(r[1], 64)
	return p99, rate
}

// TestTLSPostBody: POST a 10 KB body from -b @FILE over TLS with --insecure and with
// --cacert; the server sees the Content-Length and the bytes, ALPN is http/1.1 (or none).
func TestTLSPostBody(t *testing.T) {
	body := make([]byte, 10<<10)
	rand.Read(body)
	file := filepath.Join(t.TempDir(), "body")
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	var bad, protoBad atomic.Int64
	var protos sync.Map
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, err := io.ReadAll(r.Body)
		if r.Method != "POST" || r.ContentLength != int64(len(body)) || err != nil || !bytes.Equal(got, body) || r.Header.Get("X-Arena") != "1" {
			bad.Add(1)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		p := r.TLS.NegotiatedProtocol
		protos.Store(p, true)
		if p != "http/1.1" && p != "" {
			protoBad.Add(1)
		}
		w.Write(got)
	}))
	// The server prefers h2 and offers http/1.1: the generator must pick http/1.1.
	srv.TLS = &tls.Config{NextProtos: []string{"h2", "http/1.1"}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusted run's handshake errors
	srv.StartTLS()
	defer srv.Close()
	url := srv.URL + "/echo"

	res, _, err := runMain(t, "-R", "200", "-c", "4", "-d", "1s", "-m", "POST", "-H", "X-Arena: 1", "-b", "@"+file, "--insecure", url)
	if err != nil {
		t.Fatal(err)
	}
	logResult(t, "insecure", res)
	// About 200 POSTs, all echoed right. Fewer only by the requests due in the run's last
	// max-schedule-lag (a machine stalled that long near the end leaves them unsent: under
	// .ci/flaky's load 49 ms took 6), and at least half when the generator says it woke late
	// (a starved machine): the rate is TestScheduleAccuracy's.
	least := int64(195) - int64(math.Ceil(res.MaxScheduleLag/1e6*200))
	if res.Limit != "" {
		least = 100
	}
	least = max(least, 100)
	if res.Status.S2xx < least || res.OK != res.Status.S2xx || res.Errors.Total() != 0 || bad.Load() != 0 {
		t.Errorf("2xx %d (want ≈ 200, at least %d; Limit %q), errors %+v, %d bodies wrong", res.Status.S2xx, least, res.Limit, res.Errors, bad.Load())
	}
	if res.Bytes < res.Requests*int64(len(body)) {
		t.Errorf("read %d bytes for %d echoes of %d bytes", res.Bytes, res.Requests, len(body))
	}
	if protoBad.Load() != 0 {
		t.Errorf("%d requests came over a protocol other than http/1.1", protoBad.Load())
	}
	if _, ok := protos.Load("http/1.1"); !ok {
		t.Errorf("no request negotiated ALPN http/1.1")
	}

	// The same with the server's certificate trusted instead of verification skipped.
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	res, _, err = runMain(t, "-R", "100", "-c", "2", "-d", "500ms", "-m", "POST", "-H", "X-Arena: 1", "--body-file", file, "--cacert", ca, url)
	if err != nil {
		t.Fatal(err)
	}
	// About 50, by the same rule as the run above.
	least = max(int64(48)-int64(math.Ceil(res.MaxScheduleLag/1e6*100)), 25)
	if res.Limit != "" {
		least = 25
	}
	if res.Status.S2xx < least || res.Errors.Total() != 0 {
		t.Errorf("--cacert: 2xx %d (want ≈ 50, at least %d; Limit %q), errors %+v", res.Status.S2xx, least, res.Limit, res.Errors)
	}
	// Without either, the self-signed certificate fails every handshake.
	_, _, err = runMain(t, "-R", "100", "-c", "2", "-d", "500ms", url)
	if err == nil || !strings.Contains(err.Error(), "no connection") {
		t.Errorf("an untrusted certificate: error %v, want no connection", err)
	}
}

// TestErrorsAndTimeouts: a server that drops some connections and never answers some
// requests. The errors are counted, the run ends on time and its Result is written.
func TestErrorsAndTimeouts(t *testing.T) {
	var n atomic.Int64
	var accepted atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) % 10 {
		case 3: // drop the connection without a response
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
		case 7: // never answer (until the client gives up)
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		default:
			io.WriteString(w, "ok")
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	start := time.Now()
	res, stderr, err := runMain(t, "-R", "200", "-c", "4", "-d", "1s", "--timeout", "200ms", srv.URL)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	logResult(t, "paced", res)
	t.Logf("took %v; stderr: %s", took, stderr)
	if res.Errors.Read == 0 || res.Errors.Timeout == 0 {
		t.Errorf("errors %+v: want read errors (dropped connections) and timeouts", res.Errors)
	}
	if res.Requests == 0 || res.OK != res.Requests {
		t.Errorf("%d requests, %d OK: want the answered ones counted", res.Requests, res.OK)
	}
	if accepted.Load() <= 4 {
		t.Errorf("%d connections accepted: want redials after the errors", accepted.Load())
	}
	// Window, plus at most one timeout for the last response, plus the connect phase.
	if took > 1*time.Second+200*time.Millisecond+1300*time.Millisecond {
		t.Errorf("the run took %v, want ≈ 1.2 s", took)
	}

	// Nothing listening: the run fails at once, naming the address.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, _, err = runMain(t, "-R", "10", "-c", "2", "-d", "1s", "http://"+addr+"/")
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "no connection") {
		t.Errorf("nothing listening: error %v, want one naming %s", err, addr)
	}
}

// TestConnectErrorsDuringRun: a server that goes away mid-run: the dials that fail are
// counted as connect errors, on the schedule, and the run still ends on time.
func TestConnectErrorsDuringRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	go func() {
		time.Sleep(300 * time.Millisecond)
		srv.CloseClientConnections()
		srv.Listener.Close()
	}()
	defer srv.Close()
	start := time.Now()
	res, err := Run(context.Background(), Config{URL: srv.URL, Rate: 100, Connections: 2, Duration: time.Second, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	logResult(t, "paced", res)
	if res.Errors.Connect < 50 {
		t.Errorf("%d connect errors, want ≈ 70 (one per request due after the listener closed)", res.Errors.Connect)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the run took %v", took)
	}
}

// TestBadFlags: each bad input is refused with an error naming the problem.
func TestBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-R", "100"}, "no URL"},
		{[]string{"http://127.0.0.1:1/"}, "-R/--rate is required"},
		{[]string{"-R", "0", "http://127.0.0.1:1/"}, "positive number"},
		{[]string{"-R", "-5", "http://127.0.0.1:1/"}, "positive number"},
		{[]string{"-R", "abc", "http://127.0.0.1:1/"}, "rate"},
		{[]string{"-R", "100", "-c", "0", "http://127.0.0.1:1/"}, "at least 1"},
		{[]string{"-R", "100", "-d", "0s", "http://127.0.0.1:1/"}, "duration"},
		{[]string{"-R", "100", "-d", "5", "http://127.0.0.1:1/"}, "duration"},
		{[]string{"-R", "100", "ftp://127.0.0.1:1/"}, `scheme "ftp"`},
		{[]string{"-R", "100", "127.0.0.1:8080/"}, "http://"},
		{[]string{"-R", "100", "-b", "@" + filepath.Join(dir, "missing"), "http://127.0.0.1:1/"}, "body file"},
		{[]string{"-R", "100", "--body-file", filepath.Join(dir, "missing"), "http://127.0.0.1:1/"}, "body file"},
		{[]string{"-R", "100", "-H", "NoColon", "http://127.0.0.1:1/"}, "Name: value"},
		{[]string{"-R", "100", "-H", "Content-Length: 3", "http://127.0.0.1:1/"}, "set by the generator"},
		{[]string{"-R", "100", "--insecure", "http://127.0.0.1:1/"}, "https:// only"},
		{[]string{"-R", "100", "--cacert", filepath.Join(dir, "missing"), "https://127.0.0.1:1/"}, "CA file"},
		{[]string{"-R", "100", "--bogus", "http://127.0.0.1:1/"}, "unknown flag"},
		{[]string{"-R", "100", "http://a/", "http://b/"}, "one URL"},
	} {
		_, _, err := runMain(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
	// More connections than requests is allowed.
	if _, _, err := parseArgs([]string{"-R", "1", "-c", "100", "-d", "1s", "http://127.0.0.1:1/"}, io.Discard); err != nil {
		t.Errorf("c > rate·d: %v, want it allowed", err)
	}
	var out bytes.Buffer
	if err := Main(context.Background(), []string{"--help"}, &out, io.Discard); err != nil || !strings.Contains(out.String(), "--rate") {
		t.Errorf("--help: %v\n%s", err, out.String())
	}
}

// TestRenderRequest: the bytes sent, rendered once.
func TestRenderRequest(t *testing.T) {
	c := Config{URL: "http://h:8080/baseline11?a=1&b=2", Rate: 1, Connections: 1, Duration: time.Second, Timeout: time.Second,
		Method: "POST", Headers: []string{"Host: arena", "X-A:  b "}, Body: []byte("hello")}
	tg, err := c.check()
	if err != nil {
		t.Fatal(err)
	}
	got := string(renderRequest(c, tg))
	want := "POST /baseline11?a=1&b=2 HTTP/1.1\r\nHost: arena\r\nUser-Agent: arenaload/" + "1.0.0" + "\r\nX-A: b\r\nContent-Length: 5\r\n\r\nhello"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	c = Config{URL: "https://[::1]/", Rate: 1, Connections: 1, Duration: time.Second, Timeout: time.Second}
	tg, err = c.check()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(renderRequest(c, tg)); !strings.HasPrefix(got, "GET / HTTP/1.1\r\nHost: [::1]\r\n") || tg.addr != "[::1]:443" {
		t.Errorf("got %q, addr %s", got, tg.addr)
	}
}

// TestLimit: a generator that cannot keep up says so and why; a slow server does not.
func TestLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	res, err := Run(context.Background(), Config{URL: srv.URL, Rate: 2_000_000, Connections: 4, Duration: time.Second, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	logResult(t, "2M req/s", res)
	if !strings.Contains(res.Limit, "generator") || !strings.Contains(res.Limit, "cores") {
		t.Errorf("Limit %q at 2,000,000 req/s over 4 connections, want one naming the generator's CPU", res.Limit)
	}
	if res.RateRatio > 0.5 {
		t.Errorf("rate ratio %.3f at 2M req/s on loopback", res.RateRatio)
	}

	// A light run (4 connections at 50 req/s each, 20 ms apart) is not limited. Another
	// process's burst on this shared machine can make one run wake late (and then its
	// verdict is right), so the light run has three tries, and beside each a probe of this
	// process's own timer lateness: a "woke late" that the probe saw too (a stall of its
	// timers longer than the 20 ms interval) is a right verdict, not a failure; one the
	// probe did not see, in all three tries, fails. The probe's longest lateness, not its
	// p99, is what to compare: one stall of 30 ms delays every connection due in it, 4 of
	// the run's 200 wake-ups (past its p99), but one of the probe's thousand 1 ms sleeps
	// (.ci/flaky: the run's p99 27.5 ms, the probe's 7.8 ms).
	for try := 1; ; try++ {
		probe := startLagProbe()
		res, err = Run(context.Background(), Config{URL: srv.URL, Rate: 200, Connections: 4, Duration: time.Second, Timeout: time.Second})
		stall := probe()
		if err != nil {
			t.Fatal(err)
		}
		logResult(t, "200 req/s", res)
		if strings.Contains(res.Limit, "cores") {
			t.Errorf("a light run: Limit %q; want no CPU verdict", res.Limit)
		}
		if res.Limit == "" {
			if res.RateRatio < 0.99 {
				t.Errorf("a light run met %.3f of its rate without a Limit", res.RateRatio)
			}
			break
		}
		if stall > 20*time.Millisecond {
			t.Logf("try %d: Limit %q, and this process's own timers were up to %v late: the machine was starved, the verdict right", try, res.Limit, stall)
		}
		if try == 3 {
			if stall <= 20*time.Millisecond {
				t.Errorf("a light run has Limit %q in each of 3 tries, the last while this process's timers were at most %v late; want none", res.Limit, stall)
			}
			break
		}
	}

	for _, tc := range []struct {
		name string
		in   limitInput
		want string
	}{
		{"slow server", limitInput{cpu: 50 * time.Millisecond, elapsed: 5 * time.Second, cores: 2, attempts: 10_000, rate: 10_000, wakeP99: 200 * time.Microsecond, interval: 100 * time.Millisecond}, ""},
		{"cpu saturated", limitInput{cpu: 9500 * time.Millisecond, elapsed: 5 * time.Second, cores: 2, attempts: 10_000_000, rate: 2_000_000, wakeP99: 200 * time.Microsecond, interval: time.Millisecond}, "1.90 of 2 cores"},
		{"too costly", limitInput{cpu: 2 * time.Second, elapsed: 5 * time.Second, cores: 8, attempts: 100_000, rate: 1_000_000, wakeP99: 0, interval: time.Millisecond}, "needs 20.0 cores"},
		{"woke late", limitInput{cpu: 100 * time.Millisecond, elapsed: 5 * time.Second, cores: 2, attempts: 10_000, rate: 2_000, wakeP99: 12 * time.Millisecond, interval: 10 * time.Millisecond}, "wake-up lag p99 12.00 ms"},
		{"late but within the interval", limitInput{cpu: 100 * time.Millisecond, elapsed: 5 * time.Second, cores: 2, attempts: 10_000, rate: 2_000, wakeP99: 8 * time.Millisecond, interval: 10 * time.Millisecond}, ""},
	} {
		got := limit(tc.in)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: Limit %q, want %q", tc.name, got, tc.want)
		}
	}
	if n := arenaload.UsableCores(); n < 1 {
		t.Errorf("usable cores %d", n)
	}
}

// TestCancel: a cancelled context ends the run early with the part that ran.
func TestCancel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, Config{URL: srv.URL, Rate: 100, Connections: 2, Duration: 10 * time.Second, Timeout: time.Second})
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("err %v after %v, want interrupted within a second", err, time.Since(start))
	}
	// The partial result is the window that ran: its requests over its own half second, not
	// over the 10 s asked for (which would read a ratio near 0.05). How close the schedule
	// kept to the rate is TestScheduleAccuracy's to judge, with the machine's lag measured
	// beside it; under .ci/flaky's load this half second met 0.72 of it.
	if res.Requests < 10 || res.Duration > 1 || res.RateRatio < 0.4 {
		t.Errorf("partial result: %d requests over %.2f s, ratio %.2f", res.Requests, res.Duration, res.RateRatio)
	}
	if want := float64(res.Requests) / res.Duration / 100; math.Abs(res.RateRatio-want) > 1e-9 {
		t.Errorf("ratio %.4f, want the window's %d requests over %.3f s at 100/s = %.4f", res.RateRatio, res.Requests, res.Duration, want)
	}
}

// startLagProbe measures, until the returned function is called, how late this process's
// 1 ms sleeps wake, and that function returns the longest lateness: the longest stall the
// machine put on every timer of the process meanwhile, the generator's included.
func startLagProbe() func() time.Duration {
	var lags []time.Duration
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			start := time.Now()
			time.Sleep(time.Millisecond)
			lags = append(lags, time.Since(start)-time.Millisecond)
		}
	}()
	return func() time.Duration {
		close(stop)
		<-done
		if len(lags) == 0 {
			return 0
		}
		return slices.Max(lags)
	}
}
