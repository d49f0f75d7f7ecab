package loadgen

import (
	_ "embed"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/arenabot/arenabot/profile"
)

// arenaLua is the one wrk script every wrk run uses (arena.lua beside this file).
//
//go:embed arena.lua
var arenaLua []byte

// WrkScript is the name of the script wrk's WriteFiles writes into Spec.ScriptDir.
const WrkScript = "arena.lua"

// Wrk is wrk 4.1.0 (Debian's wrk package, 4.1.0-3+b2 in bookworm): HTTP/1.1, plain
// ("http") or over TLS ("https").
//
// Every run uses WrkScript, which sends the profile's raw request files (Profile.Requests
// in the data directory's requests/) in rotation, adds Profile.Headers after the request line
// of each, writes Profile.Pipeline requests at once when it is above 1, and makes every
// RequestsPerConn-th request ask for "Connection: close". It replaces the placeholders of
// templated request files in every request ({RAND:min:max}, a random number; {SEQ:start}, a
// sequence no two threads share; both zero-padded to a fixed width, so the file's
// Content-Length holds); files without placeholders cost nothing extra. It prints the run's
// figures in an ARENA block, which Parse prefers to wrk's rounded text.
//
// What wrk cannot tell, and how the Measurement reflects it:
//   - Status classes: wrk counts responses with a status above 399 (its errors.status, the
//     "Non-2xx or 3xx responses" line) and nothing else without a per-response Lua callback,
//     which would slow it down. So Status2xx = Requests − errors.status and NonSuccess =
//     errors.status; 1xx and 3xx responses count as 2xx, and Status3xx/4xx/5xx stay 0.
//   - Requests per connection: the count runs per wrk thread, not per connection, so a
//     connection sends R requests on average (a thread's requests are spread over its
//     connections as they answer). Reconnects on "Connection: close" are not errors in wrk.
//     With pipelining, the close goes on the last request of a batch, so no pipelined
//     request is lost; a connection then sends about R, in whole batches (at least one).
//   - Latency: for P = 1 the figures are wrk's own (the ARENA line says source=wrk), which
//     include wrk's correction for coordinated omission. With pipelining wrk records one
//     latency per batch (from the write of P requests to the last response) but corrects
//     with the interval between responses, P times too short: its synthetic samples swamp
//     the recorded ones and its own p90 and above read 0. arena.lua then reads wrk's
//     histogram, undoes that correction and redoes it with the interval between batches
//     (source=batches, recorded=<batches timed>); latencies of a pipelined run are per batch.
//     Should that fail, only Max is reported (source=max-only).
//   - Socket errors: wrk exits at once ("unable to connect ...", no summary, so Parse
//     returns ErrNoResult) when nothing listens at the start. A connection the server
//     closes without an answer is a read error; a reconnect refused after the server went
//     away shows as a write error (wrk does not check the outcome of its non-blocking
//     connect), so Errors.Connect stays 0 in practice.
//   - Timeouts: errors.timeout counts responses slower than Spec.Timeout, which are also
//     left out of the latency statistics (testdata/wrk-timeout.txt: 8 responses after 1.5 s
//     with --timeout 1s, timeout 8). A request never answered counts nothing, and wrk
//     closes nothing on a timeout.
func Wrk() Tool {
	return Tool{
		Name:          profile.ToolWrk,
		Binary:        "wrk",
		PinnedVersion: "4.1.0",
		Install:       Install{Debian: "wrk"},
		VersionArgs:   []string{"-v"}, // wrk prints its version and usage, and exits with status 1
		Adapter:       wrkAdapter{},
	}
}

// wrkAdapter is Wrk's Adapter.
type wrkAdapter struct{}

var wrkVersionRE = regexp.MustCompile(`(?m)^wrk (\S+)`)

// ParseVersion reads "wrk debian/4.1.0-3+b2 [epoll] Copyright ..." (full
// "debian/4.1.0-3+b2", upstream "4.1.0"); an upstream build prints "wrk 4.1.0 [epoll]".
func (wrkAdapter) ParseVersion(out string) (full, upstream string, err error) {
	return packagedVersion(wrkVersionRE, "wrk -v", out)
}

// packagedVersion reads the version of a tool that prints "<name> <version>" at the start of
// a line, as re (with the version its group) finds it after running cmd: full is the version
// as printed, upstream its release number (upstreamVersion).
func packagedVersion(re *regexp.Regexp, cmd, out string) (full, upstream string, err error) {
	name, _, _ := strings.Cut(cmd, " ")
	m := re.FindStringSubmatch(out)
	if m == nil {
		return "", "", fmt.Errorf("no %q line in %s output %s", name+" <version>", cmd, excerpt([]byte(out)))
	}
	full = m[1]
	upstream = upstreamVersion(full)
	if upstream == "" {
		return full, "", fmt.Errorf("%s version %q has no release number", name, full)
	}
	return full, upstream, nil
}

var upstreamRE = regexp.MustCompile(`^(?:[A-Za-z0-9._+~-]*/)?v?([0-9]+(?:\.[0-9]+)+)`)

// upstreamVersion strips a packager's prefix and revision: "debian/4.1.0-3+b2" → "4.1.0",
// "nghttp2/1.52.0" → "1.52.0".
func upstreamVersion(full string) string {
	m := upstreamRE.FindStringSubmatch(full)
	if m == nil {
		return ""
	}
	return m[1]
}

// WriteFiles writes WrkScript into spec.ScriptDir.
func (wrkAdapter) WriteFiles(spec Spec) error {
	if spec.ScriptDir == "" {
		return fmt.Errorf("write %s: no script directory", WrkScript)
	}
	if err := os.WriteFile(filepath.Join(spec.ScriptDir, WrkScript), arenaLua, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", WrkScript, err)
	}
	return nil
}

// Args returns
//
//	-t T -c C -d <secs>s --timeout <secs>s -s <ScriptDir>/arena.lua <scheme>://<Host>:<Port> --
//	<DataDir>/requests/<file>... connections=C threads=T pipeline=P requests_per_conn=R [header=<Name: value>...]
//
// Threads are capped at the connection count; durations must be whole seconds.
func (wrkAdapter) Args(spec Spec) ([]string, error) {
	p := spec.Profile
	threads, secs, err := specBasics("wrk", spec)
	if err != nil {
		return nil, err
	}
	tsecs, err := wholeSeconds(spec.timeout())
	if err != nil {
		return nil, fmt.Errorf("wrk args for %s: timeout %w", p.Name, err)
	}
	if p.Scheme != "http" && p.Scheme != "https" {
		return nil, fmt.Errorf("wrk args for %s: wrk speaks HTTP/1.1 over http or https, not %q", p.Name, p.Scheme)
	}
	if spec.ScriptDir == "" {
		return nil, fmt.Errorf("wrk args for %s: no script directory", p.Name)
	}
	if len(p.Requests) == 0 {
		return nil, fmt.Errorf("wrk args for %s: the profile names no request files", p.Name)
	}
	if p.Pipeline < 0 || p.RequestsPerConn < 0 {
		return nil, fmt.Errorf("wrk args for %s: negative pipeline %d or requests per connection %d", p.Name, p.Pipeline, p.RequestsPerConn)
	}
	args := []string{
		"-t", strconv.Itoa(threads),
		"-c", strconv.Itoa(spec.Conns),
		"-d", strconv.FormatInt(secs, 10) + "s",
		"--timeout", strconv.FormatInt(tsecs, 10) + "s",
		"-s", filepath.Join(spec.ScriptDir, WrkScript),
		baseURL(p.Scheme, spec),
		"--",
	}
	for _, name := range p.Requests {
		path, err := requestPath(spec, name)
		if err != nil {
			return nil, fmt.Errorf("wrk args for %s: %w", p.Name, err)
		}
		args = append(args, path)
	}
	args = append(args,
		"connections="+strconv.Itoa(spec.Conns),
		"threads="+strconv.Itoa(threads),
		"pipeline="+strconv.Itoa(max(p.Pipeline, 1)),
		"requests_per_conn="+strconv.Itoa(p.RequestsPerConn))
	for _, h := range p.Headers {
		if strings.ContainsAny(h, "\r\n") || !strings.Contains(h, ":") {
			return nil, fmt.Errorf("wrk args for %s: header %q is not one \"Name: value\" line", p.Name, h)
		}
		args = append(args, "header="+h)
	}
	return args, nil
}

// Parse reads wrk's output. It prefers the ARENA block arena.lua prints (exact counts, the
// duration in microseconds, latency percentiles); without one (a plain wrk run) it reads
// wrk's own text, whose duration and byte count are rounded to what wrk prints and whose
// percentiles come from the "Latency Distribution" block (--latency) when there is one,
// with no p99.9. "Requests/sec" is not used: it counts failed responses too.
func (wrkAdapter) Parse(out []byte) (Measurement, error) {
	if arena, ok, err := parseArenaBlock(out); ok || err != nil {
		return arena, err
	}
	return parseWrkText(out)
}

// The ARENA block: "ARENA <section> key=value ...", as arena.lua's done() prints it.
var arenaKeys = []string{
	"summary.requests", "summary.duration_us", "summary.bytes",
	"errors.connect", "errors.read", "errors.write", "errors.timeout", "errors.status",
	"latency_us.mean", "latency_us.p50", "latency_us.p90", "latency_us.p99", "latency_us.p99.9", "latency_us.max",
}

// parseArenaBlock reads the ARENA block; ok is false when out has no ARENA line. Keys it
// does not know (source=...) are skipped.
func parseArenaBlock(out []byte) (m Measurement, ok bool, err error) {
	raw := map[string]string{}
	for line := range strings.Lines(string(out)) {
		rest, found := strings.CutPrefix(line, "ARENA ")
		if !found {
			continue
		}
		ok = true
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		for _, kv := range fields[1:] {
			k, v, found := strings.Cut(kv, "=")
			if !found {
				return m, true, fmt.Errorf("wrk ARENA block: field %q is not key=value", kv)
			}
			raw[fields[0]+"."+k] = v
		}
	}
	if !ok {
		return m, false, nil
	}
	vals := map[string]float64{}
	for _, k := range arenaKeys {
		v, found := raw[k]
		if !found {
			return m, true, fmt.Errorf("wrk ARENA block lacks %s (output cut short?)", k)
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return m, true, fmt.Errorf("wrk ARENA block: %s=%q: %w", k, v, errRange)
		}
		vals[k] = f
	}
	counts := map[string]*int64{
		"summary.requests": &m.Requests,
		"summary.bytes":    &m.Bytes,
		"errors.connect":   &m.Errors.Connect,
		"errors.read":      &m.Errors.Read,
		"errors.write":     &m.Errors.Write,
		"errors.timeout":   &m.Errors.Timeout,
		"errors.status":    &m.NonSuccess,
	}
	for k, p := range counts {
		if *p, err = floatCount(vals[k]); err != nil {
			return Measurement{}, true, fmt.Errorf("wrk ARENA block: %s: %w", k, err)
		}
	}
	durs := map[string]*time.Duration{
		"summary.duration_us": &m.Duration,
	}
	for k, p := range durs {
		if *p, err = scaled(vals[k], time.Microsecond); err != nil {
			return Measurement{}, true, fmt.Errorf("wrk ARENA block: %s: %w", k, err)
		}
	}
	lats := map[string]*float64{
		"latency_us.mean":  &m.Latency.Mean,
		"latency_us.p50":   &m.Latency.P50,
		"latency_us.p90":   &m.Latency.P90,
		"latency_us.p99":   &m.Latency.P99,
		"latency_us.p99.9": &m.Latency.P999,
		"latency_us.max":   &m.Latency.Max,
	}
	for k, p := range lats {
		d, err := scaled(vals[k], time.Microsecond)
		if err != nil {
			return Measurement{}, true, fmt.Errorf("wrk ARENA block: %s: %w", k, err)
		}
		*p = micros(d)
	}
	wrkStatus(&m)
	return m, true, nil
}

var (
	wrkSummaryRE = regexp.MustCompile(`(?m)^\s*([0-9]+) requests in ([0-9.]+)(us|ms|s|m|h), ([0-9.]+)([KMGTPE]?B) read\s*$`)
	wrkSocketRE  = regexp.MustCompile(`(?m)^\s*Socket errors: connect ([0-9]+), read ([0-9]+), write ([0-9]+), timeout ([0-9]+)\s*$`)
	wrkStatusRE  = regexp.MustCompile(`(?m)^\s*Non-2xx or 3xx responses: ([0-9]+)\s*$`)
	// Thread Stats   Avg      Stdev     Max   +/- Stdev
	//   Latency   635.91us    0.89ms  12.56ms   93.88%
	wrkLatencyRE = regexp.MustCompile(`(?m)^\s*Latency\s+([0-9.]+)(us|ms|s|m|h)\s+\S+\s+([0-9.]+)(us|ms|s|m|h)\s+\S+\s*$`)
	// Latency Distribution (with --latency): "     50%   67.00us"
	wrkPercentileRE = regexp.MustCompile(`(?m)^\s*(50|90|99)%\s+([0-9.]+)(us|ms|s|m|h)\s*$`)
)

// parseWrkText reads wrk's own summary text.
func parseWrkText(out []byte) (Measurement, error) {
	var m Measurement
	s := wrkSummaryRE.FindSubmatch(out)
	if s == nil {
		return m, fmt.Errorf("wrk: %w: %s", ErrNoResult, excerpt(out))
	}
	var err error
	if m.Requests, err = count(string(s[1])); err != nil {
		return Measurement{}, fmt.Errorf("wrk requests: %w", err)
	}
	if m.Duration, err = durationUnit(string(s[2]), string(s[3])); err != nil {
		return Measurement{}, fmt.Errorf("wrk duration: %w", err)
	}
	if m.Bytes, err = bytesUnit(string(s[4]), string(s[5])); err != nil {
		return Measurement{}, fmt.Errorf("wrk bytes read: %w", err)
	}
	if e := wrkSocketRE.FindSubmatch(out); e != nil {
		for i, p := range []*int64{&m.Errors.Connect, &m.Errors.Read, &m.Errors.Write, &m.Errors.Timeout} {
			if *p, err = count(string(e[i+1])); err != nil {
				return Measurement{}, fmt.Errorf("wrk socket errors: %w", err)
			}
		}
	}
	if st := wrkStatusRE.FindSubmatch(out); st != nil {
		if m.NonSuccess, err = count(string(st[1])); err != nil {
			return Measurement{}, fmt.Errorf("wrk non-2xx responses: %w", err)
		}
	}
	if l := wrkLatencyRE.FindSubmatch(out); l != nil {
		mean, err := durationUnit(string(l[1]), string(l[2]))
		if err != nil {
			return Measurement{}, fmt.Errorf("wrk latency: %w", err)
		}
		maxLat, err := durationUnit(string(l[3]), string(l[4]))
		if err != nil {
			return Measurement{}, fmt.Errorf("wrk latency: %w", err)
		}
		m.Latency.Mean, m.Latency.Max = micros(mean), micros(maxLat)
	}
	for _, pc := range wrkPercentileRE.FindAllSubmatch(out, -1) {
		d, err := durationUnit(string(pc[2]), string(pc[3]))
		if err != nil {
			return Measurement{}, fmt.Errorf("wrk latency distribution: %w", err)
		}
		switch string(pc[1]) {
		case "50":
			m.Latency.P50 = micros(d)
		case "90":
			m.Latency.P90 = micros(d)
		case "99":
			m.Latency.P99 = micros(d)
		}
	}
	wrkStatus(&m)
	return m, nil
}

// wrkStatus splits Requests into Status2xx and NonSuccess (errors.status), the only split
// wrk makes.
func wrkStatus(m *Measurement) {
	m.NonSuccess = min(m.NonSuccess, m.Requests)
	m.Status2xx = m.Requests - m.NonSuccess
	sane(m)
}
