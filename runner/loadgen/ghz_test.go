package loadgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/validate/validatetest"
)

var (
	streamProfile = profile.Profile{Name: "stream-grpc", Tool: profile.ToolGhz, Pipeline: 1, Streams: 4,
		Scheme: "grpc", Port: profile.PortH1, Path: "/benchmark.BenchmarkService/StreamSum"}
	streamTLSProfile = profile.Profile{Name: "stream-grpc-tls", Tool: profile.ToolGhz, Pipeline: 1, Streams: 4,
		Scheme: "grpcs", Port: profile.PortTLS, Path: "/benchmark.BenchmarkService/StreamSum"}
)

func TestGhzArgs(t *testing.T) {
	s := Spec{Profile: streamProfile, Host: "127.0.0.1", Conns: 64, Threads: 2, Duration: 5 * time.Second, DataDir: "/d", ScriptDir: "/s"}
	want := []string{"--insecure", "--proto", "/s/benchmark.proto", "--call", "benchmark.BenchmarkService/StreamSum",
		"-d", `{"a":1,"b":2,"count":5000}`, "--connections", "64", "-c", "256", "-z", "5s", "-O", "json", "127.0.0.1:8080"}
	got, err := Ghz().Args(s)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Args(stream-grpc 64c) = %q, %v\nwant %q", got, err, want)
	}
	s.OutDir = "/o"
	got, _ = Ghz().Args(s)
	if want := append(slices.Clone(want[:len(want)-1]), "-o", "/o/ghz-report.json", "127.0.0.1:8080"); !slices.Equal(got, want) {
		t.Errorf("Args with an OutDir = %q\nwant %q", got, want)
	}
	s.OutDir = ""
	s.Profile = streamTLSProfile
	got, _ = Ghz().Args(s)
	if got[0] != "--skipTLS" || got[len(got)-1] != "127.0.0.1:8443" {
		t.Errorf("Args(stream-grpc-tls) = %q, want --skipTLS … 127.0.0.1:8443", got)
	}
	for name, mod := range map[string]func(*Spec){
		"scheme h2c":     func(s *Spec) { s.Profile.Scheme = "h2c" },
		"unknown method": func(s *Spec) { s.Profile.Path = "/benchmark.BenchmarkService/CollectSum" },
		"no scripts":     func(s *Spec) { s.ScriptDir = "" },
		"no conns":       func(s *Spec) { s.Conns = 0 },
		"half second":    func(s *Spec) { s.Duration = 1500 * time.Millisecond },
	} {
		bad := s
		mod(&bad)
		if args, err := Ghz().Args(bad); err == nil {
			t.Errorf("%s: Args = %q, want an error", name, args)
		}
	}
}

// TestGhzProtoIsTheEntrys: the proto ghz compiles is the one the grpc-go entry serves.
func TestGhzProtoIsTheEntrys(t *testing.T) {
	entry, err := os.ReadFile(filepath.Join("..", "..", "frameworks", "grpc-go", "benchmark.proto"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(entry, benchmarkProto) {
		t.Error("runner/loadgen/benchmark.proto differs from frameworks/grpc-go/benchmark.proto; keep them the same")
	}
	dir := t.TempDir()
	if err := Ghz().WriteFiles(Spec{ScriptDir: dir}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, GhzProto)); err != nil || !bytes.Equal(b, benchmarkProto) {
		t.Errorf("WriteFiles wrote %d bytes, %v; want benchmark.proto", len(b), err)
	}
}

func TestGhzVersion(t *testing.T) {
	for _, tt := range []struct {
		out, full string
		wantErr   bool
	}{
		{out: "v0.121.0\n", full: "v0.121.0"},
		{out: "0.121.0\n", full: "v0.121.0"},
		{out: "dev\n", wantErr: true},
		{out: "ghz: error: unknown flag\n", wantErr: true},
	} {
		full, upstream, err := Ghz().ParseVersion(tt.out)
		if (err != nil) != tt.wantErr || full != tt.full || (!tt.wantErr && upstream != "0.121.0") {
			t.Errorf("ParseVersion(%q) = %q, %q, %v; want %q, error %v", tt.out, full, upstream, err, tt.full, tt.wantErr)
		}
	}
	if _, _, err := Ghz().binaryVersion(os.Args[0]); err == nil {
		t.Error("binaryVersion(the test binary) succeeded; want an error naming the module")
	}
	path := needTool(t, "ghz")
	full, upstream, err := Ghz().binaryVersion(path)
	if err != nil || upstream != Ghz().PinnedVersion {
		t.Fatalf("binaryVersion(%s) = %q, %q, %v; want version %s (go install github.com/bojand/ghz/cmd/ghz@v0.121.0)", path, full, upstream, err, Ghz().PinnedVersion)
	}
	t.Logf("%s: ghz %s", path, full)
}

// ghzTests are the captured reports (testdata/ghz-*.json, written by TestGhzRecord) with
// the numbers they hold, copied by hand.
var ghzTests = []struct {
	file     string
	want     Measurement
	statuses map[string]int64
	cutOff   int64
}{
	// 2 connections × 4 calls of StreamSum count 5000 for 1 s against the gRPC fixture: 70
	// OK calls of 5000 replies; 8 cut off when the run ended (Canceled: the client connection
	// is closing). P99.9 is the 69th of the 70 OK latencies (from 0), here the slowest.
	{file: "ghz-stream-h2c.json", want: Measurement{Requests: 350000, Duration: 1019714859, Status2xx: 350000,
		Latency: result.Latency{Mean: 101961.654, P50: 100213.6, P90: 180745.687, P99: 209626.544, P999: 209626.544, Max: 209626.544}},
		statuses: map[string]int64{"Canceled": 8, "OK": 70}, cutOff: 8},
	// The same over TLS: 78 OK; 8 cut off (6 Canceled, 2 Unavailable on the connection ghz
	// closed).
	{file: "ghz-stream-tls.json", want: Measurement{Requests: 390000, Duration: 1006581874, Status2xx: 390000,
		Latency: result.Latency{Mean: 92021.136, P50: 91747.545, P90: 139376.891, P99: 203958.349, P999: 203958.349, Max: 203958.349}},
		statuses: map[string]int64{"Canceled": 6, "OK": 78, "Unavailable": 2}, cutOff: 8},
	// 200 GetSum calls (-n 200), each answered HTTP 200 with grpc-status 13: no reply
	// succeeded. ghz's average covers every call; its percentiles only the OK ones.
	{file: "ghz-unary-status-13.json", want: Measurement{Requests: 200, Duration: 45772015, NonSuccess: 200,
		Latency: result.Latency{Mean: 829.777}},
		statuses: map[string]int64{"Internal": 200}},
	// 50 StreamSum calls (-n 50) to a closed port: every one failed to dial.
	{file: "ghz-closed-port.json", want: Measurement{Requests: 250000, Duration: 4817988, NonSuccess: 250000,
		Latency: result.Latency{Mean: 180.941}, Errors: result.SocketErrors{Connect: 50}},
		statuses: map[string]int64{"Unavailable": 50}},
}

func TestParseGhzCaptured(t *testing.T) {
	for _, tt := range ghzTests {
		t.Run(tt.file, func(t *testing.T) {
			r, err := ParseGhz(readTestdata(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, r.Measurement); diff != "" {
				t.Errorf("Measurement (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.statuses, r.Statuses); diff != "" {
				t.Errorf("Statuses (-want +got):\n%s", diff)
			}
			if r.CutOff != tt.cutOff {
				t.Errorf("CutOff = %d, want %d", r.CutOff, tt.cutOff)
			}
			checkMeasurement(t, r.Measurement)
		})
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "ghz-*.json"))
	for _, f := range files {
		if !slices.ContainsFunc(ghzTests, func(tt struct {
			file     string
			want     Measurement
			statuses map[string]int64
			cutOff   int64
		}) bool {
			return tt.file == filepath.Base(f)
		}) {
			t.Errorf("%s has no case in ghzTests", f)
		}
	}
}

func TestParseGhzBroken(t *testing.T) {
	for name, out := range map[string]string{
		"text output": "Summary:\n  Count:\t1\n",
		"not json":    "{date",
		"no count":    `{"date":"2026-12-01T12:00:00Z","total":1000}`,
		"negative":    `{"date":"x","count":-1,"total":1000}`,
	} {
		if _, err := Ghz().Parse([]byte(out)); err == nil {
			t.Errorf("%s: Parse succeeded", name)
		} else if name != "negative" && !errors.Is(err, ErrNoResult) {
			t.Errorf("%s: %v does not wrap ErrNoResult", name, err)
		}
	}
	// No output: the report went to a file (-o), for ReadLog.
	if m, err := Ghz().Parse([]byte(" \n")); err != nil || m != (Measurement{}) {
		t.Errorf("Parse(blank) = %+v, %v; want a zero Measurement for ReadLog", m, err)
	}
	if _, err := ParseGhz(nil); !errors.Is(err, ErrNoResult) {
		t.Errorf("ParseGhz(nil) = %v, want ErrNoResult", err)
	}
	// Output before the report (a warning on stderr) is skipped.
	m, err := Ghz().Parse([]byte("warning: something\n" + `{"date":"x","count":2,"total":2000000000,"statusCodeDistribution":{"OK":2},"options":{"data":{"count":10}}}`))
	if err != nil || m.Status2xx != 20 || m.RPS() != 10 {
		t.Errorf("Parse after a warning = %+v, %v; want 20 replies, 10/s", m, err)
	}
}

// FuzzParseGhz starts from the captured reports with their per-call details cut to three
// (the fuzzer crawls through inputs of tens of kilobytes).
func FuzzParseGhz(f *testing.F) {
	for _, tt := range ghzTests {
		var report map[string]any
		if err := json.Unmarshal(readTestdata(f, tt.file), &report); err != nil {
			f.Fatal(err)
		}
		if d, ok := report["details"].([]any); ok {
			report["details"] = d[:min(3, len(d))]
		}
		b, err := json.Marshal(report)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		m, err := Ghz().Parse(out)
		if err != nil {
			return
		}
		checkMeasurement(t, m)
	})
}

// ghzDataDir returns an arena data directory (its certificate serves the fixture's TLS).
func ghzDataDir(t *testing.T) string {
	t.Helper()
	dir, err := arenadata.Ensure(filepath.Join(os.TempDir(), "arenabot-test-cache"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// runGhz runs the real ghz with the adapter's arguments against a gRPC fixture port, with
// conns connections for d; extra replaces -z (for runs bounded by a call count).
func runGhz(t *testing.T, ghz string, p profile.Profile, port, conns int, d time.Duration, extra ...string) []byte {
	t.Helper()
	p.Port = port
	spec := Spec{Profile: p, Host: "127.0.0.1", Conns: conns, Threads: 1, Duration: d, ScriptDir: t.TempDir()}
	if err := Ghz().WriteFiles(spec); err != nil {
		t.Fatal(err)
	}
	args, err := Ghz().Args(spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(extra) > 0 {
		i := slices.Index(args, "-z")
		args = slices.Replace(args, i, i+2, extra...)
	}
	out, code := runTool(t, 30*time.Second, ghz, args...)
	if code != 0 {
		t.Fatalf("ghz %s exited %d:\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// TestGhzAgainstFixture runs the real ghz against the gRPC fixture: streams over h2c and
// TLS count OK replies; GetSum calls answered HTTP 200 with grpc-status 13 count as
// non-success, not as replies.
func TestGhzAgainstFixture(t *testing.T) {
	ghz := needTool(t, "ghz")
	dir := ghzDataDir(t)
	ok := validatetest.StartGRPC(t, dir, "")
	for _, tt := range []struct {
		p    profile.Profile
		port int
	}{{streamProfile, ok.H2CPort}, {streamTLSProfile, ok.TLSPort}} {
		// One call at a time for 2 s, so that calls of 5000 replies finish under -race too.
		p := tt.p
		p.Streams = 1
		r, err := ParseGhz(runGhz(t, ghz, p, tt.port, 1, 2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		m := r.Measurement
		if r.Messages != 5000 || m.Status2xx == 0 || m.Status2xx%5000 != 0 || m.NonSuccess != 0 || m.Errors.Total() != 0 ||
			m.Latency.P50 == 0 || m.Latency.P999 < m.Latency.P99 || m.Latency.Max < m.Latency.P999 {
			t.Errorf("%s: %+v (statuses %v, cut off %d); want OK calls of 5000 replies, nothing else", tt.p.Name, m, r.Statuses, r.CutOff)
		}
		t.Logf("%s: %.0f replies/s, p50 %v p99.9 %v per call; statuses %v", tt.p.Name, m.RPS(), m.Latency.P50, m.Latency.P999, r.Statuses)
	}
	// With an OutDir the report goes to a file: nothing on stdout, ReadLog reads it.
	spec := Spec{Profile: streamProfile, Host: "127.0.0.1", Conns: 1, Threads: 1, Duration: 2 * time.Second, ScriptDir: t.TempDir(), OutDir: t.TempDir()}
	spec.Profile.Port, spec.Profile.Streams = ok.H2CPort, 1
	if err := Ghz().WriteFiles(spec); err != nil {
		t.Fatal(err)
	}
	args, err := Ghz().Args(spec)
	if err != nil {
		t.Fatal(err)
	}
	out, code := runTool(t, 30*time.Second, ghz, args...)
	m, err := Ghz().Parse(out)
	if code != 0 || err != nil || m != (Measurement{}) {
		t.Fatalf("ghz -o: exit %d, Parse = %+v, %v; want no output and a zero Measurement:\n%s", code, m, err, out)
	}
	if err := Ghz().ReadLog(spec, &m); err != nil || m.Status2xx == 0 || m.Status2xx%5000 != 0 {
		t.Errorf("ReadLog = %v, %+v; want OK calls of 5000 replies", err, m)
	}
	if err := Ghz().ReadLog(Spec{OutDir: t.TempDir()}, &m); err == nil {
		t.Error("ReadLog without a report succeeded")
	}

	bad := validatetest.StartGRPC(t, dir, "unary-grpc.status-13")
	unary := streamProfile
	unary.Path = "/benchmark.BenchmarkService/GetSum"
	r, err := ParseGhz(runGhz(t, ghz, unary, bad.H2CPort, 2, time.Second, "-n", "50"))
	if err != nil {
		t.Fatal(err)
	}
	if m := r.Measurement; m.Status2xx != 0 || m.NonSuccess != 50 || r.Statuses["Internal"] != 50 {
		t.Errorf("status 13: %+v, statuses %v; want 50 non-success Internal calls", m, r.Statuses)
	}
}

// TestGhzRecord is the recorder of testdata/ghz-*.json (go test -run TestGhzRecord -record
// ./runner/loadgen): the real ghz against the gRPC fixture.
func TestGhzRecord(t *testing.T) {
	if !*record {
		t.Skip("recorder: pass -record to rewrite testdata from the real tools")
	}
	ghz := needTool(t, "ghz")
	dir := ghzDataDir(t)
	ok := validatetest.StartGRPC(t, dir, "")
	bad := validatetest.StartGRPC(t, dir, "unary-grpc.status-13")
	unary := streamProfile
	unary.Path = "/benchmark.BenchmarkService/GetSum"
	write := func(name string, out []byte) {
		if err := os.WriteFile(filepath.Join("testdata", name), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ghz-stream-h2c.json", runGhz(t, ghz, streamProfile, ok.H2CPort, 2, time.Second))
	write("ghz-stream-tls.json", runGhz(t, ghz, streamTLSProfile, ok.TLSPort, 2, time.Second))
	write("ghz-unary-status-13.json", runGhz(t, ghz, unary, bad.H2CPort, 2, time.Second, "-n", "200"))
	write("ghz-closed-port.json", runGhz(t, ghz, streamProfile, closedPort(t), 2, time.Second, "-n", "50"))
}

// TestGhzMaxHoldsEveryCall: ghz's "slowest" and its per-call details can disagree by a
// rounding (seen 1 ns apart under load); the maximum is never below a call's latency, so
// p99.9 (from the details) never exceeds it.
func TestGhzMaxHoldsEveryCall(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "ghz-stream-h2c.json"))
	if err != nil {
		t.Fatal(err)
	}
	slowest := regexp.MustCompile(`"slowest":[0-9]+`)
	if !slowest.Match(raw) {
		t.Fatal("testdata/ghz-stream-h2c.json has no slowest")
	}
	r, err := ParseGhz(slowest.ReplaceAll(raw, []byte(`"slowest":1`)))
	if err != nil {
		t.Fatal(err)
	}
	if l := r.Measurement.Latency; l.Max < l.P999 || l.Max <= 0.001 {
		t.Errorf("max %v, p99.9 %v: want the max at least every call's latency", l.Max, l.P999)
	}
}
