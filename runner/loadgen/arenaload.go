package loadgen

import (
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
)

// Arenaload is this module's own generator, cmd/arenaload, which runs the
// profiles no pinned tool runs faithfully. The profile picks the mode:
//
//	paced (a profile with a Rate): arenaload paced -c C -R <rate> -d <secs>s --timeout T
//	    [-m POST -b @<data>/requests/<Body>] [-H h]... [--insecure] http(s)://host:port<Path>
//	ws (scheme ws):  arenaload ws -c C -p <Pipeline> -r <RequestsPerConn> -d <secs>s ws://host:port<Path>
//	h3 (scheme h3):  arenaload h3 -c C -m <Streams> -D <secs>s [-i <data>/requests/<file>]
//	    [-H h]... --insecure https://host:port<Path>
//
// Its output is one JSON object (arenaload.Result) that already counts what the harness
// needs: Status2xx is its OK count (2xx responses; WebSocket: echoes equal to the frame
// sent), Requests every response or echo, Errors its connect, read, write and timeout
// counts (a wrong echo or handshake counts as a read error), the latency percentiles come
// from its HDR histogram (paced: from each request's scheduled send time), and Generator
// carries its own CPU time, the offered rate, its largest schedule lag and the Limit it
// reports when it, not the server, was the bottleneck.
//
// Its version is the module's generator version (arenaload.Version, which ArenaloadVersion
// must equal; a test holds them together); the binary comes from this checkout (go build
// ./cmd/arenaload), natively and in the load-generator image. The adapter reads the
// generator's output as it reads any tool's, without importing it (arenaloadJSON mirrors
// arenaload.Result field for field; a test decodes the generator's own encoding).
func Arenaload() Tool {
	return Tool{
		Name:          profile.ToolArenaload,
		Binary:        "arenaload",
		PinnedVersion: ArenaloadVersion,
		Install:       Install{Module: "./cmd/arenaload"},
		VersionArgs:   []string{"--version"},
		Adapter:       arenaloadAdapter{},
	}
}

// ArenaloadVersion is the generator version the harness is pinned to.
const ArenaloadVersion = "1.0.0"

// arenaloadAdapter is Arenaload's Adapter.
type arenaloadAdapter struct{}

var arenaloadVersionRE = regexp.MustCompile(`(?m)^arenaload (([0-9]+\.[0-9]+\.[0-9]+)\b.*?)\s*$`)

// ParseVersion reads "arenaload 1.0.0 (vcs 1a2b3c4d5e6f)" (full "1.0.0 (vcs 1a2b3c4d5e6f)",
// upstream "1.0.0").
func (arenaloadAdapter) ParseVersion(out string) (full, upstream string, err error) {
	m := arenaloadVersionRE.FindStringSubmatch(out)
	if m == nil {
		return "", "", fmt.Errorf("no %q line in arenaload --version output %s", "arenaload <version>", excerpt([]byte(out)))
	}
	return m[1], m[2], nil
}

// WriteFiles writes nothing: the request files arenaload reads are the arena data's.
func (arenaloadAdapter) WriteFiles(Spec) error { return nil }

// arenaloadMode returns the generator mode that runs profile p ("paced", "ws", "h3"), or an
// error.
func arenaloadMode(p profile.Profile) (string, error) {
	switch {
	case p.Scheme == profile.SchemeWS:
		return "ws", nil
	case p.Scheme == profile.SchemeH3:
		return "h3", nil
	case p.TargetRate > 0 && (p.Scheme == profile.SchemeHTTP || p.Scheme == profile.SchemeHTTPS):
		return "paced", nil
	}
	return "", fmt.Errorf("arenaload runs fixed-rate HTTP/1.1, WebSocket and HTTP/3 profiles; %s is %s without a rate", p.Name, p.Scheme)
}

// Args returns the command line for the profile's mode (see Arenaload).
func (arenaloadAdapter) Args(spec Spec) ([]string, error) {
	p := spec.Profile
	_, secs, err := specBasics("arenaload", spec)
	if err != nil {
		return nil, err
	}
	mode, err := arenaloadMode(p)
	if err != nil {
		return nil, err
	}
	hostPort := net.JoinHostPort(edgeHost(spec), strconv.Itoa(p.Port))
	d := strconv.FormatInt(secs, 10) + "s"
	conns := strconv.Itoa(spec.Conns)
	timeout := spec.timeout().String()
	headers := func(args []string) []string {
		for _, h := range p.Headers {
			args = append(args, "-H", h)
		}
		return args
	}
	switch mode {
	case "paced":
		if spec.Rate <= 0 {
			return nil, fmt.Errorf("arenaload args for %s: no offered rate (Spec.Rate)", p.Name)
		}
		args := []string{"paced", "-c", conns, "-R", strconv.Itoa(spec.Rate), "-d", d, "--timeout", timeout}
		if p.Body != "" {
			args = append(args, "-m", "POST", "-b", "@"+filepath.Join(spec.DataDir, "requests", p.Body))
		}
		args = headers(args)
		scheme := "http"
		if p.Scheme == profile.SchemeHTTPS {
			scheme = "https"
			args = append(args, "--insecure") // the arena's self-signed pair, as wrk does not verify either
		}
		return append(args, scheme+"://"+hostPort+p.Path), nil
	case "ws":
		return []string{"ws", "-c", conns, "-p", strconv.Itoa(max(p.Pipeline, 1)), "-r", strconv.Itoa(p.RequestsPerConn),
			"-d", d, "--timeout", timeout, "ws://" + hostPort + p.Path}, nil
	default: // h3
		args := []string{"h3", "-c", conns, "-m", strconv.Itoa(max(p.Streams, 1)), "-D", d, "--timeout", timeout}
		path := p.Path
		if len(p.Requests) == 1 {
			args = append(args, "-i", filepath.Join(spec.DataDir, "requests", p.Requests[0]))
			path = ""
		}
		args = append(headers(args), "--insecure")
		return append(args, "https://"+hostPort+path), nil
	}
}

// Parse reads the generator's JSON result from its output (the last line that starts a
// JSON object onward; anything before it is the generator's notes on stderr).
func (arenaloadAdapter) Parse(out []byte) (Measurement, error) {
	r, err := parseArenaload(out)
	if err != nil {
		return Measurement{}, err
	}
	m := Measurement{
		Requests:   r.Requests,
		Duration:   time.Duration(r.Duration * float64(time.Second)),
		Bytes:      r.Bytes,
		Status2xx:  r.OK,
		Status3xx:  r.Status.S3xx,
		Status4xx:  r.Status.S4xx,
		Status5xx:  r.Status.S5xx,
		NonSuccess: r.Requests - r.OK - r.Status.S3xx - r.Status.S4xx - r.Status.S5xx,
		Latency:    r.Latency,
		Errors: result.SocketErrors{
			Connect: r.Errors.Connect,
			Read:    r.Errors.Read + r.Errors.Mismatch,
			Write:   r.Errors.Write,
			Timeout: r.Errors.Timeout,
		},
		Generator: &Generator{
			CPU:            time.Duration(r.CPU * float64(time.Second)),
			Limit:          r.Limit,
			TargetRate:     r.TargetRate,
			MaxScheduleLag: usDuration(r.MaxScheduleLag),
			Reconnects:     r.Reconnects,
		},
	}
	if m.NonSuccess < 0 {
		m.NonSuccess = 0
	}
	return m, nil
}

// arenaloadJSON is arenaload.Result as the generator encodes it.
type arenaloadJSON struct {
	Tool        string  `json:"tool"`
	Version     string  `json:"version"`
	Mode        string  `json:"mode"`
	Target      string  `json:"target"`
	Connections int     `json:"connections"`
	Duration    float64 `json:"duration_s"`
	Requests    int64   `json:"requests"`
	OK          int64   `json:"ok"`
	Status      struct {
		S2xx int64 `json:"2xx"`
		S3xx int64 `json:"3xx"`
		S4xx int64 `json:"4xx"`
		S5xx int64 `json:"5xx"`
	} `json:"status"`
	Bytes          int64          `json:"bytes"`
	TargetRate     float64        `json:"target_rate"`
	AchievedRate   float64        `json:"achieved_rate"`
	RateRatio      float64        `json:"rate_ratio"`
	MaxScheduleLag float64        `json:"max_schedule_lag_us"`
	Reconnects     int64          `json:"reconnects"`
	Latency        result.Latency `json:"latency_us"`
	Errors         struct {
		Connect  int64 `json:"connect"`
		Read     int64 `json:"read"`
		Write    int64 `json:"write"`
		Timeout  int64 `json:"timeout"`
		Mismatch int64 `json:"mismatch"`
	} `json:"errors"`
	CPU           float64 `json:"cpu_s"`
	CPUPerRequest float64 `json:"cpu_per_request_us"`
	Limit         string  `json:"limit"`
}

// parseArenaload decodes arenaload's result from its output.
func parseArenaload(out []byte) (arenaloadJSON, error) {
	s := string(out)
	i := strings.LastIndex(s, "\n{")
	switch {
	case strings.HasPrefix(s, "{"):
		i = 0
	case i >= 0:
		i++
	default:
		return arenaloadJSON{}, fmt.Errorf("%w: no JSON result in arenaload output %s", ErrNoResult, excerpt(out))
	}
	var r arenaloadJSON
	dec := json.NewDecoder(strings.NewReader(s[i:]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("arenaload result: %v in %s", err, excerpt(out))
	}
	if r.Tool != "arenaload" || r.Mode == "" || r.Duration <= 0 {
		return r, fmt.Errorf("%w: arenaload result with tool %q, mode %q, duration %vs", ErrNoResult, r.Tool, r.Mode, r.Duration)
	}
	if r.OK < 0 || r.Requests < r.OK || r.Bytes < 0 {
		return r, fmt.Errorf("arenaload result: %d ok of %d requests, %d bytes: inconsistent", r.OK, r.Requests, r.Bytes)
	}
	return r, nil
}

func usDuration(us float64) time.Duration { return time.Duration(us * float64(time.Microsecond)) }
