package loadgen

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/result"
	"github.com/google/go-cmp/cmp"
)

// The expectations are the numbers printed in each captured file (testdata/, written by
// TestRecord), copied by hand: the ARENA block where the file has one, else wrk's or
// h2load's own text. Rounded text figures are converted with their unit written out
// ("5.11MB" is 5.11 × 2^20 bytes).

const (
	us = time.Microsecond
	ms = time.Millisecond
)

// mb and kb convert a byte figure wrk printed with two decimals.
func mb(v float64) int64 { return int64(math.Round(v * (1 << 20))) }
func kb(v float64) int64 { return int64(math.Round(v * (1 << 10))) }

var parseTests = []struct {
	file    string
	tool    Tool
	want    Measurement
	wantErr error // errors.Is target; nil for success
}{
	// arenaload paced (its stderr note first): 8 connections at 2,000 requests/s for 1 s.
	{file: "arenaload-paced.txt", tool: Arenaload(), want: Measurement{
		Requests: 2000, Duration: time.Second, Bytes: 236000, Status2xx: 2000,
		Latency:   result.Latency{Mean: 756.7950000000006, P50: 709, P90: 1283, P99: 2695, P999: 5507, Max: 6267},
		Generator: &Generator{CPU: 231348 * us, TargetRate: 2000, MaxScheduleLag: 5000800 * time.Nanosecond},
	}},
	// wrk with arena.lua: the ARENA block.
	{file: "wrk-baseline.txt", tool: Wrk(), want: Measurement{
		Requests: 41797, Duration: 1035814 * us, Bytes: 4305091, Status2xx: 41797,
		Latency: result.Latency{Mean: 2455.753, P50: 67, P90: 2987, P99: 59764, P999: 82559, Max: 88202},
	}},
	{file: "wrk-non2xx.txt", tool: Wrk(), want: Measurement{
		Requests: 46395, Duration: 1099857 * us, Bytes: 6726404, Status2xx: 46395 - 23198, NonSuccess: 23198,
		Latency: result.Latency{Mean: 221.898, P50: 78, P90: 477, P99: 3108, P999: 6822, Max: 12274},
	}},
	{file: "wrk-timeout.txt", tool: Wrk(), want: Measurement{
		Requests: 8, Duration: 3048539 * us, Bytes: 960, Status2xx: 8,
		Errors: result.SocketErrors{Timeout: 8},
	}},
	{file: "wrk-closed-port.txt", tool: Wrk(), wantErr: ErrNoResult},
	{file: "wrk-server-gone.txt", tool: Wrk(), want: Measurement{
		Requests: 23107, Duration: 1109710 * us, Bytes: 2380021, Status2xx: 23107,
		Latency: result.Latency{Mean: 406.414, P50: 52, P90: 396, P99: 9428, P999: 18023, Max: 19198},
		Errors:  result.SocketErrors{Read: 4, Write: 27233},
	}},
	{file: "wrk-reset.txt", tool: Wrk(), want: Measurement{
		Duration: 1099770 * us,
		Errors:   result.SocketErrors{Read: 17734},
	}},
	{file: "wrk-pipelined.txt", tool: Wrk(), want: Measurement{
		Requests: 77206, Duration: 1099767 * us, Bytes: 7952218, Status2xx: 77206,
		Latency: result.Latency{Mean: 1621.269, P50: 657, P90: 2613, P99: 23333, P999: 41205, Max: 45760},
	}},
	{file: "wrk-limited-conn.txt", tool: Wrk(), want: Measurement{
		Requests: 36463, Duration: 1099989 * us, Bytes: 3824963, Status2xx: 36463,
		Latency: result.Latency{Mean: 194.459, P50: 83, P90: 433, P99: 2037, P999: 5126, Max: 8036},
	}},

	// plain wrk: its own rounded text; percentiles only with --latency, never p99.9.
	{file: "wrk-plain-baseline.txt", tool: Wrk(), want: Measurement{
		Requests: 51982, Duration: 1100 * ms, Bytes: mb(5.11), Status2xx: 51982,
		Latency: result.Latency{Mean: 249.63, P50: 66, P90: 608, P99: 3230, Max: 6850},
	}},
	{file: "wrk-plain-non2xx.txt", tool: Wrk(), want: Measurement{
		Requests: 49164, Duration: 1100 * ms, Bytes: mb(7.30), Status2xx: 49164 - 24582, NonSuccess: 24582,
		Latency: result.Latency{Mean: 161.48, Max: 5820},
	}},
	{file: "wrk-plain-timeout.txt", tool: Wrk(), want: Measurement{
		Requests: 8, Duration: 3000 * ms, Bytes: kb(0.94), Status2xx: 8,
		Errors: result.SocketErrors{Timeout: 8},
	}},
	{file: "wrk-plain-closed-port.txt", tool: Wrk(), wantErr: ErrNoResult},
	{file: "wrk-plain-server-gone.txt", tool: Wrk(), want: Measurement{
		Requests: 28002, Duration: 1070 * ms, Bytes: mb(2.75), Status2xx: 28002,
		Latency: result.Latency{Mean: 251.75, Max: 14860},
		Errors:  result.SocketErrors{Read: 4, Write: 19201},
	}},
	{file: "wrk-plain-reset.txt", tool: Wrk(), want: Measurement{
		Duration: 1120 * ms,
		Errors:   result.SocketErrors{Read: 17788},
	}},

	// h2load: no percentiles; Mean and Max from "time for request".
	{file: "h2load-h2c.txt", tool: H2load(), want: Measurement{
		Requests: 29249, Duration: time.Second, Bytes: 702191, Status2xx: 29249,
		Latency: result.Latency{Mean: 1360, Max: 25010},
	}},
	{file: "h2load-h1.txt", tool: H2load(), want: Measurement{
		Requests: 40723, Duration: time.Second, Bytes: 4194469, Status2xx: 40723,
		Latency: result.Latency{Mean: 98, Max: 45940},
	}},
	{file: "h2load-non2xx.txt", tool: H2load(), want: Measurement{
		Requests: 7957 + 7957 + 7957 + 7956, Duration: time.Second, Bytes: 1122641,
		Status2xx: 7957, Status3xx: 7957, Status4xx: 7957, Status5xx: 7956,
		Latency: result.Latency{Mean: 1250, Max: 13600},
	}},
	{file: "h2load-closed-port.txt", tool: H2load(), want: Measurement{
		Duration: time.Second,
		Errors:   result.SocketErrors{Connect: 2 + 2}, // "spawning thread #N: 2 total client(s)", twice
	}},
	{file: "h2load-h1-reset.txt", tool: H2load(), want: Measurement{
		// h2load counts nothing for connections the server resets: 4 started, 0 done.
		Duration: time.Second,
	}},
	{file: "h2load-h2.txt", tool: H2load(), want: Measurement{
		Requests: 30039, Duration: time.Second, Bytes: 721393, Status2xx: 30039,
		Latency: result.Latency{Mean: 1300, Max: 56690},
	}},
	// The runs with a request log (testdata/<case>.log; TestRequestLogCaptured): the summary
	// alone, as Parse reads it.
	{file: "h2load-h2c-log.txt", tool: H2load(), want: Measurement{
		Requests: 1375, Duration: time.Second, Bytes: 33468, Status2xx: 1375,
		Latency: result.Latency{Mean: 5800, Max: 30170},
	}},
	{file: "h2load-h2-log-reset.txt", tool: H2load(), want: Measurement{
		// Every fourth stream reset by the server: 339 errored, no response.
		Requests: 1018, Duration: time.Second, Bytes: 29351, Status2xx: 1018,
		Latency: result.Latency{Mean: 5810, Max: 18910},
		Errors:  result.SocketErrors{Read: 339},
	}},
	{file: "h2load-h2c-log-non2xx.txt", tool: H2load(), want: Measurement{
		Requests: 676, Duration: time.Second, Bytes: 24561,
		Status2xx: 169, Status3xx: 169, Status4xx: 169, Status5xx: 169,
		Latency: result.Latency{Mean: 5890, Max: 24410},
	}},
	// wrk over TLS (https, no ALPN): the same ARENA block.
	{file: "wrk-tls.txt", tool: Wrk(), want: Measurement{
		Requests: 56331, Duration: 1099247 * us, Bytes: 5802093, Status2xx: 56331,
		Latency: result.Latency{Mean: 175.854, P50: 59, P90: 347, P99: 2455, P999: 4660, Max: 6127},
	}},
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseCaptured(t *testing.T) {
	for _, tt := range parseTests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := tt.tool.Parse(readTestdata(t, tt.file))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("%s Parse(%s) error = %v, want %v", tt.tool.Name, tt.file, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s Parse(%s): %v", tt.tool.Name, tt.file, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s Parse(%s) mismatch (-want +got):\n%s", tt.tool.Name, tt.file, diff)
			}
			checkMeasurement(t, got)
		})
	}
}

// TestCapturedFilesHaveCases keeps every captured file under test.
func TestCapturedFilesHaveCases(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*-*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, tt := range parseTests {
		have[tt.file] = true
	}
	for _, f := range files {
		if !have[filepath.Base(f)] {
			t.Errorf("%s has no case in parseTests", f)
		}
	}
}

// TestWrkArenaMatchesText checks that the ARENA block and wrk's own text of the same run
// agree, so plain wrk runs compare with arena.lua runs.
func TestWrkArenaMatchesText(t *testing.T) {
	for _, tt := range parseTests {
		out := readTestdata(t, tt.file)
		if tt.tool.Name != "wrk" || tt.wantErr != nil || !strings.Contains(string(out), "\nARENA ") {
			continue
		}
		t.Run(tt.file, func(t *testing.T) {
			arena, err := Wrk().Parse(out)
			if err != nil {
				t.Fatal(err)
			}
			text, err := parseWrkText(out)
			if err != nil {
				t.Fatal(err)
			}
			if arena.Requests != text.Requests || arena.NonSuccess != text.NonSuccess || arena.Errors != text.Errors {
				t.Errorf("ARENA block %d requests, %d non-success, %+v; text %d, %d, %+v",
					arena.Requests, arena.NonSuccess, arena.Errors, text.Requests, text.NonSuccess, text.Errors)
			}
			if d := arena.Duration - text.Duration; d < -5*ms || d > 5*ms {
				t.Errorf("ARENA duration %v, text %v: more than the text's rounding apart", arena.Duration, text.Duration)
			}
			if d := math.Abs(float64(arena.Bytes - text.Bytes)); d > 0.005*float64(arena.Bytes)+6 {
				t.Errorf("ARENA bytes %d, text %d: more than the text's rounding apart", arena.Bytes, text.Bytes)
			}
		})
	}
}

// Synthetic outputs: what a crash, a cut-off run or another tool leave behind.
func TestParseBroken(t *testing.T) {
	wrkHead := "Running 1s test @ http://127.0.0.1:8080\n  2 threads and 4 connections\n"
	arena := "ARENA summary requests=10 duration_us=1000000 bytes=100\n" +
		"ARENA errors connect=0 read=0 write=0 timeout=0 status=20\n" +
		"ARENA latency_us mean=1.5 p50=1 p90=2 p99=3 p99.9=4 max=5 source=wrk\n"
	tests := []struct {
		name      string
		tool      Tool
		out       string
		noResult  bool // the error wraps ErrNoResult
		wantErr   bool
		wantCheck func(Measurement) bool
	}{
		{name: "wrk empty", tool: Wrk(), out: "", noResult: true, wantErr: true},
		{name: "wrk killed before summary", tool: Wrk(), out: wrkHead, noResult: true, wantErr: true},
		{name: "wrk lua error", tool: Wrk(), out: "/tmp/arena.lua: arena.lua: no request files\n", noResult: true, wantErr: true},
		{name: "wrk ARENA cut short", tool: Wrk(), out: wrkHead + "ARENA summary requests=10 duration_us=1000000 bytes=100\n", wantErr: true},
		{name: "wrk ARENA negative", tool: Wrk(), out: strings.Replace(arena, "bytes=100", "bytes=-1", 1), wantErr: true},
		{name: "wrk ARENA NaN", tool: Wrk(), out: strings.Replace(arena, "mean=1.5", "mean=nan", 1), wantErr: true},
		{name: "wrk ARENA not key=value", tool: Wrk(), out: strings.Replace(arena, "bytes=100", "bytes", 1), wantErr: true},
		{name: "wrk more non-2xx than responses", tool: Wrk(), out: arena, wantCheck: func(m Measurement) bool {
			return m.Requests == 10 && m.NonSuccess == 10 && m.Status2xx == 0 && m.Latency.Mean == 1.5
		}},
		{name: "h2load empty", tool: H2load(), out: "", noResult: true, wantErr: true},
		{name: "h2load usage error", tool: H2load(), out: "-c, -t: the number of clients must be greater than or equal to the number of threads.\n", noResult: true, wantErr: true},
		{name: "h2load no status line", tool: H2load(), out: "finished in 1.00s, 10.00 req/s, 1B/s\nrequests: 10 total, 10 started, 10 done, 10 succeeded, 0 failed, 0 errored, 0 timeout\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.tool.Parse([]byte(tt.out))
			if (err != nil) != tt.wantErr || errors.Is(err, ErrNoResult) != tt.noResult {
				t.Fatalf("Parse(%q) = %+v, %v; want error %v, ErrNoResult %v", tt.out, got, err, tt.wantErr, tt.noResult)
			}
			if tt.wantCheck != nil && !tt.wantCheck(got) {
				t.Errorf("Parse(%q) = %+v", tt.out, got)
			}
		})
	}
}

// checkMeasurement checks what holds for every Measurement a parser returns.
func checkMeasurement(t testing.TB, m Measurement) {
	t.Helper()
	for name, v := range map[string]int64{
		"Requests": m.Requests, "Bytes": m.Bytes, "Status2xx": m.Status2xx, "Status3xx": m.Status3xx,
		"Status4xx": m.Status4xx, "Status5xx": m.Status5xx, "NonSuccess": m.NonSuccess,
		"Connect": m.Errors.Connect, "Read": m.Errors.Read, "Write": m.Errors.Write, "Timeout": m.Errors.Timeout,
	} {
		if v < 0 {
			t.Errorf("%s = %d < 0 in %+v", name, v, m)
		}
	}
	if m.Duration < 0 {
		t.Errorf("Duration = %v < 0 in %+v", m.Duration, m)
	}
	for name, us := range map[string]float64{
		"Mean": m.Latency.Mean, "P50": m.Latency.P50, "P90": m.Latency.P90,
		"P99": m.Latency.P99, "P999": m.Latency.P999, "Max": m.Latency.Max,
	} {
		if us < 0 || math.IsNaN(us) || math.IsInf(us, 0) {
			t.Errorf("%s = %v µs in %+v", name, us, m)
		}
	}
	if rps := m.RPS(); math.IsNaN(rps) || math.IsInf(rps, 0) || rps < 0 {
		t.Errorf("RPS() = %v for %+v", rps, m)
	}
	if m.Status2xx > m.Requests {
		t.Errorf("Status2xx %d > Requests %d", m.Status2xx, m.Requests)
	}
	if sum := m.Status2xx + m.Status3xx + m.Status4xx + m.Status5xx + m.NonSuccess; sum != m.Requests {
		t.Errorf("status classes add up to %d, Requests is %d: %+v", sum, m.Requests, m)
	}
	if m.Errors.Total() < 0 {
		t.Errorf("Errors.Total() = %d", m.Errors.Total())
	}
}
