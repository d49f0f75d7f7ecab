package loadgen

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arenabot/arenabot/profile"
)

// GhzProto is the file ghz's WriteFiles writes into Spec.ScriptDir: the arena's
// benchmark.proto (package benchmark, service BenchmarkService), which ghz compiles to
// build its calls. It is the same file as frameworks/grpc-go/benchmark.proto.
const GhzProto = "benchmark.proto"

//go:embed benchmark.proto
var benchmarkProto []byte

// ghzData is the request each call sends, by method: the arena's ghz data.
var ghzData = map[string]string{
	"/benchmark.BenchmarkService/StreamSum": `{"a":1,"b":2,"count":5000}`,
	"/benchmark.BenchmarkService/GetSum":    `{"a":1,"b":2}`,
}

// Ghz is ghz v0.121.0 (the arena's GHZ_VERSION), the arena's gRPC load tool, run as the
// arena runs it:
//
//	ghz --insecure|--skipTLS --proto benchmark.proto --call benchmark.BenchmarkService/StreamSum
//	    -d '{"a":1,"b":2,"count":5000}' --connections C -c <Streams×C> -z D -O json host:port
//
// with JSON output, whose every field this parser reads. The arena counted a stream profile's
// rate in messages: each StreamSum call that ends OK delivered count replies (validation
// proves the entry sends exactly count), so a Measurement counts replies:
//   - Status2xx is the OK calls × count (count from the report's options.data; 1 for a
//     unary call), so RPS is replies per second, the arena's OK ÷ duration × 5000.
//   - NonSuccess is the calls that ended with another status × count; Status3xx…5xx stay 0
//     (gRPC statuses are not HTTP classes). The statuses themselves are in GhzReport.
//   - Calls in flight when the run ends are cut off by ghz itself (Canceled: "the client
//     connection is closing"; Unavailable: "use of closed network connection") and count
//     as neither, like the unfinished requests of the other tools.
//   - Errors: Connect is the calls that could not dial, Timeout those that ended
//     DeadlineExceeded, Read the other Unavailable calls (a transport that failed).
//   - Latency is per call (a whole stream of count replies): Mean is ghz's average, P50, P90
//     and P99 its latency distribution, P999 computed from the per-call details with ghz's
//     own rank rule (when the details hold every call, up to ghz's 1,000,000), Max its
//     slowest. They cover the OK calls, as ghz's do.
//   - Bytes stays 0: ghz does not count them.
//
// With a Spec.OutDir, ghz writes its report into the run log (Tool.LogFile: -o) rather than
// on stdout, and its ReadLog reads it: in the load-generator container, an output line this
// long (every call's details) can lose its end on the way through Docker's log stream when
// ghz exits right after writing it. Parse then sees no output and leaves the Measurement to
// ReadLog; ReadLog fails when the file is not there.
//
// It is installed with go install from the Go module proxy at the pinned version, by exact
// version: the proxy's version list shows only v0.93.0, so @latest would downgrade. Its
// --version then prints "dev"; CheckBinaryVersion reads the version from the binary's Go
// build information instead. The load-generator image's build stamps the version
// (-X main.version), so --version prints it there.
func Ghz() Tool {
	return Tool{
		Name:          profile.ToolGhz,
		Binary:        "ghz",
		PinnedVersion: "0.121.0",
		Install:       Install{GoPackage: "github.com/bojand/ghz/cmd/ghz", GoModule: "github.com/bojand/ghz", GoLDFlags: "-X main.version=v{version}"},
		VersionArgs:   []string{"--version"},
		Log:           &RunLog{File: GhzReportFile, Read: readGhzReport},
		Adapter:       ghzAdapter{},
	}
}

// ghzAdapter is Ghz's Adapter.
type ghzAdapter struct{}

var ghzVersionRE = regexp.MustCompile(`(?m)^v?([0-9]+\.[0-9]+\.[0-9]+)\s*$`)

// ParseVersion reads a stamped "v0.121.0" (full "v0.121.0", upstream "0.121.0"). An
// unstamped build prints "dev", which says nothing: that is an error naming the build
// information, which CheckBinaryVersion reads.
func (ghzAdapter) ParseVersion(out string) (full, upstream string, err error) {
	if strings.TrimSpace(out) == "dev" {
		return "", "", fmt.Errorf("ghz --version says %q (built with go install, which does not stamp a version): read its build information (go version -m)", "dev")
	}
	m := ghzVersionRE.FindStringSubmatch(out)
	if m == nil {
		return "", "", fmt.Errorf("no version in ghz --version output %s", excerpt([]byte(out)))
	}
	return "v" + m[1], m[1], nil
}

// WriteFiles writes GhzProto into spec.ScriptDir.
func (ghzAdapter) WriteFiles(spec Spec) error {
	if spec.ScriptDir == "" {
		return fmt.Errorf("write %s: no script directory", GhzProto)
	}
	if err := os.WriteFile(filepath.Join(spec.ScriptDir, GhzProto), benchmarkProto, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", GhzProto, err)
	}
	return nil
}

// Args returns
//
//	--insecure|--skipTLS --proto <ScriptDir>/benchmark.proto --call <service>/<method> -d <data>
//	--connections C -c <Streams×C> -z <secs>s -O json <Host>:<Port>
//
// The method is Profile.Path; the data the arena's for it (ghzData). Profile.Streams is
// ghz's concurrent calls per connection (the arena's -c 4C), at least 1.
func (ghzAdapter) Args(spec Spec) ([]string, error) {
	p := spec.Profile
	_, secs, err := specBasics("ghz", spec)
	if err != nil {
		return nil, err
	}
	if spec.ScriptDir == "" {
		return nil, fmt.Errorf("ghz args for %s: no script directory for %s", p.Name, GhzProto)
	}
	var tlsFlag string
	switch p.Scheme {
	case "grpc":
		tlsFlag = "--insecure"
	case "grpcs":
		tlsFlag = "--skipTLS"
	default:
		return nil, fmt.Errorf("ghz args for %s: scheme %q is not grpc or grpcs", p.Name, p.Scheme)
	}
	data, ok := ghzData[p.Path]
	if !ok {
		return nil, fmt.Errorf("ghz args for %s: no request for method %q (have %s)", p.Name, p.Path, strings.Join(slices.Sorted(maps.Keys(ghzData)), ", "))
	}
	if p.Streams < 0 {
		return nil, fmt.Errorf("ghz args for %s: negative streams %d", p.Name, p.Streams)
	}
	args := []string{
		tlsFlag,
		"--proto", filepath.Join(spec.ScriptDir, GhzProto),
		"--call", strings.TrimPrefix(p.Path, "/"),
		"-d", data,
		"--connections", strconv.Itoa(spec.Conns),
		"-c", strconv.Itoa(spec.Conns * max(p.Streams, 1)),
		"-z", strconv.FormatInt(secs, 10) + "s",
		"-O", "json",
	}
	if f := logPath(spec, GhzReportFile); f != "" {
		args = append(args, "-o", f)
	}
	return append(args, net.JoinHostPort(spec.Host, strconv.Itoa(p.Port))), nil
}

// GhzReportFile is the name of the report ghz writes into Spec.OutDir.
const GhzReportFile = "ghz-report.json"

// maxGhzReport bounds the report readGhzReport reads: ghz keeps at most 1,000,000 call details
// of about 130 bytes each.
const maxGhzReport = 256 << 20

// readGhzReport reads the report a run wrote at path (its run log) and sets m from it.
func readGhzReport(path string, m *Measurement) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("ghz report: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxGhzReport))
	if err != nil {
		return fmt.Errorf("ghz report: %w", err)
	}
	r, err := ParseGhz(b)
	if err != nil {
		return err
	}
	*m = r.Measurement
	return nil
}

// A GhzReport is what ParseGhz reads from ghz's JSON report.
type GhzReport struct {
	EndReason string           // "timeout" (-z ran out), "normal", "cancel"
	Calls     int64            // calls ghz made
	Messages  int64            // replies an OK call delivers: options.data.count, else 1
	Statuses  map[string]int64 // calls by final status ("OK", "Unavailable"), cut-off ones included
	CutOff    int64            // calls ghz itself cut off at the end of the run
	// Errors are the calls by error text, cut-off ones included.
	Errors map[string]int64
	// Measurement is the report as one Measurement (see Ghz).
	Measurement Measurement
}

// ghzJSON is the part of ghz's report (runner.Report, v0.121.0) the parser reads.
type ghzJSON struct {
	EndReason string `json:"endReason"`
	Options   struct {
		Data json.RawMessage `json:"data"`
	} `json:"options"`
	Count          *int64           `json:"count"`
	Total          *int64           `json:"total"` // ns
	Average        int64            `json:"average"`
	Slowest        int64            `json:"slowest"`
	ErrorDist      map[string]int64 `json:"errorDistribution"`
	StatusCodeDist map[string]int64 `json:"statusCodeDistribution"`
	LatencyDist    []struct {
		Percentage int   `json:"percentage"`
		Latency    int64 `json:"latency"`
	} `json:"latencyDistribution"`
	Details []struct {
		Latency int64  `json:"latency"`
		Error   string `json:"error"`
		Status  string `json:"status"`
	} `json:"details"`
}

// ghzCutOff are the errors of calls that ghz cut off itself when the run ended.
var ghzCutOff = []string{"grpc: the client connection is closing", "use of closed network connection"}

// Parse reads ghz's JSON report (see Ghz) from its output. Output that is empty (blank) is
// a run that wrote its report into its run log: Parse returns a zero Measurement for ReadLog
// to fill.
func (ghzAdapter) Parse(out []byte) (Measurement, error) {
	if len(bytes.TrimSpace(out)) == 0 {
		return Measurement{}, nil
	}
	r, err := ParseGhz(out)
	return r.Measurement, err
}

// ParseGhz reads ghz's JSON report from out, which may hold other output before it.
func ParseGhz(out []byte) (GhzReport, error) {
	var j ghzJSON
	start := bytes.Index(out, []byte(`{"date"`))
	if start < 0 {
		start = bytes.IndexByte(out, '{')
	}
	if start < 0 {
		return GhzReport{}, fmt.Errorf("ghz: %w: %s", ErrNoResult, excerpt(out))
	}
	if err := json.NewDecoder(bytes.NewReader(out[start:])).Decode(&j); err != nil {
		return GhzReport{}, fmt.Errorf("ghz: %w: the JSON report does not parse: %v", ErrNoResult, err)
	}
	if j.Count == nil || j.Total == nil {
		return GhzReport{}, fmt.Errorf("ghz: %w: the JSON report has no count or total", ErrNoResult)
	}
	r := GhzReport{EndReason: j.EndReason, Calls: *j.Count, Messages: 1, Statuses: map[string]int64{}, Errors: map[string]int64{}}
	if len(j.Options.Data) > 0 {
		var d struct {
			Count *int64 `json:"count"`
		}
		if err := json.Unmarshal(j.Options.Data, &d); err == nil && d.Count != nil {
			r.Messages = *d.Count
		}
	}
	if r.Calls < 0 || r.Calls > maxCount || r.Messages < 0 || r.Messages > maxCount {
		return GhzReport{}, fmt.Errorf("ghz: %d calls of %d messages: %w", r.Calls, r.Messages, errRange)
	}
	for k, v := range j.StatusCodeDist {
		if v < 0 || v > maxCount {
			return GhzReport{}, fmt.Errorf("ghz status %s: %d calls: %w", k, v, errRange)
		}
		r.Statuses[k] = v
	}
	var dialFailed, unavailable int64
	for k, v := range j.ErrorDist {
		if v < 0 || v > maxCount {
			return GhzReport{}, fmt.Errorf("ghz error %q: %d calls: %w", k, v, errRange)
		}
		r.Errors[k] = v
		switch {
		case j.EndReason == "timeout" && slices.ContainsFunc(ghzCutOff, func(s string) bool { return strings.Contains(k, s) }):
			r.CutOff += v
		case strings.Contains(k, "code = Unavailable") && strings.Contains(k, "while dialing"):
			dialFailed += v
		case strings.Contains(k, "code = Unavailable"):
			unavailable += v
		}
	}
	m := &r.Measurement
	var err error
	if m.Duration, err = scaled(float64(*j.Total), time.Nanosecond); err != nil {
		return GhzReport{}, fmt.Errorf("ghz total: %w", err)
	}
	ok := min(r.Statuses["OK"], r.Calls)
	failedCalls := max(r.Calls-ok-r.CutOff, 0)
	m.Status2xx = satMul(ok, r.Messages)
	m.NonSuccess = satMul(failedCalls, r.Messages)
	m.Requests = min(m.Status2xx+m.NonSuccess, maxCount)
	m.Errors.Connect = dialFailed
	m.Errors.Read = unavailable
	m.Errors.Timeout = r.Statuses["DeadlineExceeded"]

	lat := func(ns int64) float64 { return micros(time.Duration(max(ns, 0))) }
	m.Latency.Mean, m.Latency.Max = lat(j.Average), lat(j.Slowest)
	for _, d := range j.LatencyDist {
		switch d.Percentage {
		case 50:
			m.Latency.P50 = lat(d.Latency)
		case 90:
			m.Latency.P90 = lat(d.Latency)
		case 99:
			m.Latency.P99 = lat(d.Latency)
		}
	}
	if int64(len(j.Details)) == r.Calls {
		var okLats []int64
		for _, d := range j.Details {
			if d.Error == "" {
				okLats = append(okLats, d.Latency)
			}
		}
		if len(okLats) > 0 {
			slices.Sort(okLats)
			m.Latency.P999 = lat(okLats[ghzRank(999, 1000, len(okLats))])
			// ghz's "slowest" and its per-call details are two roundings of the same times
			// (seen 1 ns apart): the maximum is at least every call's latency.
			m.Latency.Max = max(m.Latency.Max, lat(okLats[len(okLats)-1]))
		}
	}
	sane(m)
	return r, nil
}

// ghzRank is the index of the num/den quantile of n sorted values by ghz's rule (the
// 0-based rank ⌊q·n⌋, one less when q·n is whole).
func ghzRank(num, den, n int) int {
	ip := float64(num) / float64(den) * float64(n)
	i := int(ip)
	if ip == float64(i) {
		i--
	}
	return min(max(i, 0), n-1)
}

// satMul is a×b, at most maxCount.
func satMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > maxCount/b {
		return maxCount
	}
	return a * b
}
