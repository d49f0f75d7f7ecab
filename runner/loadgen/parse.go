package loadgen

import (
	"errors"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Helpers shared by the adapters: the units the tools print, bounded number conversion, and
// the checks on a Spec every adapter makes.

// maxCount bounds every count a parser accepts. It is far above anything a run produces and
// small enough that sums of a few counts cannot overflow and floats hold it exactly.
const maxCount = 1 << 53

// maxDuration bounds every duration a parser accepts (about 146 years).
const maxDuration = time.Duration(1 << 62)

// errRange is returned for numbers in a tool's output that are out of range.
var errRange = errors.New("number out of range")

// timeUnits are the units wrk (us, ms, s, m, h) and h2load (us, ms, s) print durations in.
var timeUnits = map[string]time.Duration{
	"ns": time.Nanosecond,
	"us": time.Microsecond,
	"ms": time.Millisecond,
	"s":  time.Second,
	"m":  time.Minute,
	"h":  time.Hour,
}

// byteUnits are the 1024-based units both tools print byte counts in ("6.50MB").
var byteUnits = map[string]float64{
	"B":  1,
	"KB": 1 << 10,
	"MB": 1 << 20,
	"GB": 1 << 30,
	"TB": 1 << 40,
	"PB": 1 << 50,
	"EB": 1 << 60,
}

// count parses a decimal count.
func count(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > maxCount {
		return 0, fmt.Errorf("count %q: %w", s, errRange)
	}
	return n, nil
}

// floatCount converts a count printed as a float ("57795" from Lua's %.0f).
func floatCount(v float64) (int64, error) {
	if math.IsNaN(v) || v < 0 || v > maxCount {
		return 0, fmt.Errorf("count %v: %w", v, errRange)
	}
	return int64(math.Round(v)), nil
}

// scaled returns v units as a Duration.
func scaled(v float64, unit time.Duration) (time.Duration, error) {
	ns := v * float64(unit)
	if math.IsNaN(ns) || ns < 0 || ns > float64(maxDuration) {
		return 0, fmt.Errorf("duration %v×%v: %w", v, unit, errRange)
	}
	return time.Duration(math.Round(ns)), nil
}

// durationUnit parses a number and a unit as printed by the tools ("635.91", "us").
func durationUnit(num, unit string) (time.Duration, error) {
	u, ok := timeUnits[unit]
	if !ok {
		return 0, fmt.Errorf("unknown time unit %q", unit)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("duration %q: %w", num+unit, errRange)
	}
	return scaled(v, u)
}

// durationText parses a whole duration as printed by the tools ("1.10s", "511us").
func durationText(s string) (time.Duration, error) {
	m := durationRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("duration %q: not a number with a unit", s)
	}
	return durationUnit(m[1], m[2])
}

var durationRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)(ns|us|ms|s|m|h)$`)

// bytesUnit parses a byte count with a 1024-based unit ("6.50", "MB"); the result is as
// precise as the printed figure.
func bytesUnit(num, unit string) (int64, error) {
	u, ok := byteUnits[unit]
	if !ok {
		return 0, fmt.Errorf("unknown byte unit %q", unit)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("bytes %q: %w", num+unit, errRange)
	}
	return floatCount(v * u)
}

// excerpt is the first non-blank line of out, shortened, for error messages.
func excerpt(out []byte) string {
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if len(line) > 160 {
			line = line[:160] + "…"
		}
		return strconv.Quote(line)
	}
	return "empty output"
}

// sane makes the invariants every Measurement keeps true: no negative count, Status2xx and
// NonSuccess within Requests.
func sane(m *Measurement) {
	for _, p := range []*int64{&m.Requests, &m.Bytes, &m.Status2xx, &m.Status3xx, &m.Status4xx, &m.Status5xx, &m.NonSuccess,
		&m.Errors.Connect, &m.Errors.Read, &m.Errors.Write, &m.Errors.Timeout} {
		*p = max(*p, 0)
	}
	m.Status2xx = min(m.Status2xx, m.Requests)
	m.NonSuccess = min(m.NonSuccess, m.Requests-m.Status2xx)
	m.Duration = max(m.Duration, 0)
}

// specBasics checks what every adapter needs from a Spec and returns the thread count to
// use (never more than the connections: both tools refuse that) and the run's length in
// whole seconds (wrk takes nothing finer).
func specBasics(tool string, spec Spec) (threads int, secs int64, err error) {
	p := spec.Profile
	switch {
	case spec.Conns < 1:
		return 0, 0, fmt.Errorf("%s args for %s: %d connections; need at least 1", tool, p.Name, spec.Conns)
	case spec.Threads < 1:
		return 0, 0, fmt.Errorf("%s args for %s: %d threads; need at least 1", tool, p.Name, spec.Threads)
	case spec.Host == "":
		return 0, 0, fmt.Errorf("%s args for %s: no host", tool, p.Name)
	case p.Port < 1 || p.Port > 65535:
		return 0, 0, fmt.Errorf("%s args for %s: port %d out of range", tool, p.Name, p.Port)
	}
	secs, err = wholeSeconds(spec.Duration)
	if err != nil {
		return 0, 0, fmt.Errorf("%s args for %s: duration %w", tool, p.Name, err)
	}
	return min(spec.Threads, spec.Conns), secs, nil
}

// wholeSeconds returns d in seconds, which must be whole and at least one.
func wholeSeconds(d time.Duration) (int64, error) {
	if d < time.Second || d%time.Second != 0 {
		return 0, fmt.Errorf("%v is not a whole number of seconds (at least 1s)", d)
	}
	return int64(d / time.Second), nil
}

// baseURL is scheme://host:port, the host named as edgeHost says.
func baseURL(scheme string, spec Spec) string {
	return scheme + "://" + net.JoinHostPort(edgeHost(spec), strconv.Itoa(spec.Profile.Port))
}

// edgeHost is the host name the load gives the server: spec.Host, except that a compose
// stack's edge on 127.0.0.1 is named localhost, as the arena's harness and its URI files
// name it (https://localhost:8443). The edges run the stacks' own proxy configurations, and
// a caddy site address https://localhost:8443 answers that name only: a TLS handshake
// without SNI localhost fails, and a request for 127.0.0.1:8443 gets an empty 200. The
// tools still reach 127.0.0.1: h2load connects there (connectTo), and arenaload resolves
// localhost to its IPv4 address first (net.ResolveUDPAddr prefers IPv4).
func edgeHost(spec Spec) string {
	if spec.Profile.Compose && spec.Host == "127.0.0.1" {
		return "localhost"
	}
	return spec.Host
}

// connectTo is h2load's --connect-to for a run whose URLs name the edge localhost
// (edgeHost): the address it connects to instead; nil otherwise.
func connectTo(spec Spec) []string {
	if edgeHost(spec) == spec.Host {
		return nil
	}
	return []string{"--connect-to", net.JoinHostPort(spec.Host, strconv.Itoa(spec.Profile.Port))}
}

// requestPath is the absolute path of a file in the data directory's requests/.
func requestPath(spec Spec, name string) (string, error) {
	if spec.DataDir == "" {
		return "", fmt.Errorf("request file %s: no data directory", name)
	}
	if name == "" || filepath.IsAbs(name) || !filepath.IsLocal(name) {
		return "", fmt.Errorf("request file %q: not a file name inside requests/", name)
	}
	return filepath.Join(spec.DataDir, "requests", name), nil
}
