// Package arenaload holds what the arena's own load generators share: the one JSON result
// they all print, the latency histogram, the generator's own CPU time and its version.
//
// The generators exist where no pinned tool does what an arena profile needs (an open-loop
// HTTP/1.1 generator that corrects for coordinated omission, a WebSocket echo generator, an
// HTTP/3 generator); each is its own package (arenaload/paced, arenaload/ws, arenaload/h3)
// and a mode of the command cmd/arenaload. The runner runs that command like any other load
// tool (runner/loadgen has its adapter) and parses the Result it prints.
package arenaload

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"github.com/arenabot/arenabot/result"
)

// Version is the generators' version, the one the runner is pinned to. Change it with every
// change to what a generator sends, how it paces or what it counts, so results say which
// behaviour measured them.
const Version = "1.0.0"

// Module is this module's path; its build information is recorded in FullVersion.
const Module = "github.com/arenabot/arenabot"

// FullVersion is Version with the build's VCS revision when the binary has one
// ("1.0.0 (vcs 1a2b3c4d5e6f)", "1.0.0 (vcs 1a2b3c4d5e6f, modified)").
func FullVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return Version
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if rev == "" {
		return Version
	}
	return fmt.Sprintf("%s (vcs %.12s%s)", Version, rev, modified)
}

// Latency is a latency summary in microseconds: the result files' own type, so a
// generator's summary goes into a result as it is.
type Latency = result.Latency

// Errors counts what went wrong in a run.
type Errors struct {
	Connect int64 `json:"connect"` // dials (and TLS or WebSocket handshakes) that failed
	Read    int64 `json:"read"`    // reads that failed or a response that did not parse
	Write   int64 `json:"write"`   // writes that failed
	Timeout int64 `json:"timeout"` // responses not received within the timeout
	// Mismatch counts answers that arrived but were wrong (a WebSocket echo that is not the
	// frame sent, a bad Sec-WebSocket-Accept).
	Mismatch int64 `json:"mismatch"`
}

// Total is the number of errors of every kind.
func (e Errors) Total() int64 { return e.Connect + e.Read + e.Write + e.Timeout + e.Mismatch }

// Status counts HTTP responses by class.
type Status struct {
	S2xx int64 `json:"2xx"`
	S3xx int64 `json:"3xx"`
	S4xx int64 `json:"4xx"`
	S5xx int64 `json:"5xx"`
}

// Add counts one response with the HTTP status code.
func (s *Status) Add(code int) {
	switch code / 100 {
	case 2:
		s.S2xx++
	case 3:
		s.S3xx++
	case 4:
		s.S4xx++
	default:
		s.S5xx++
	}
}

// A Result is what a generator prints when a run ends: one JSON object on stdout.
type Result struct {
	Tool    string `json:"tool"`    // "arenaload"
	Version string `json:"version"` // FullVersion
	Mode    string `json:"mode"`    // "paced", "ws", "h3"
	Target  string `json:"target"`  // the URL loaded

	Connections int     `json:"connections"`
	Duration    float64 `json:"duration_s"` // the measured window, seconds

	// Requests is the number of responses (WebSocket: echoes) received in the window; OK the
	// number of them that succeeded (2xx, or an echo equal to the frame sent).
	Requests int64  `json:"requests"`
	OK       int64  `json:"ok"`
	Status   Status `json:"status"`
	Bytes    int64  `json:"bytes"` // response bytes read (bodies and headers; frames)

	// TargetRate is the offered rate in requests per second (paced mode; 0 otherwise),
	// AchievedRate the rate received (paced: responses to requests scheduled in the window;
	// ws and h3: OK per second), and RateRatio AchievedRate ÷ TargetRate.
	TargetRate   float64 `json:"target_rate,omitempty"`
	AchievedRate float64 `json:"achieved_rate"`
	RateRatio    float64 `json:"rate_ratio,omitempty"`
	// MaxScheduleLag is the largest delay, in microseconds, between a request's scheduled
	// send time and the moment it was written (paced mode).
	MaxScheduleLag float64 `json:"max_schedule_lag_us,omitempty"`

	// Reconnects counts connections opened during the window after the first ones
	// (WebSocket: upgrades of replacement connections, -r).
	Reconnects int64 `json:"reconnects,omitempty"`

	Latency Latency `json:"latency_us"`
	Errors  Errors  `json:"errors"`

	// CPU is the generator's own CPU time over the run (user + system), seconds, and
	// CPUPerRequest that per response received, microseconds.
	CPU           float64 `json:"cpu_s"`
	CPUPerRequest float64 `json:"cpu_per_request_us"`
	// Limit, when set, says that the generator, not the server, limited the run and why
	// ("generator CPU saturated: 1.98 of 2 cores", "schedule lag 12.3 ms").
	Limit string `json:"limit,omitempty"`
}

// Write prints r as indented JSON.
func (r Result) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Histogram bounds: 1 µs to 100 s, three significant figures.
const (
	histMin = 1
	histMax = 100_000_000
	histSig = 3
)

// NewHistogram returns a latency histogram recording microseconds from 1 µs to 100 s.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histMin, histMax, histSig)
}

// Record adds one latency to h, clamped to the histogram's range.
func Record(h *hdrhistogram.Histogram, d time.Duration) {
	us := d.Microseconds()
	us = max(histMin, min(us, histMax))
	_ = h.RecordValue(us) // in range by the clamp
}

// Summarize returns h's latency summary.
func Summarize(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		Mean: h.Mean(),
		P50:  float64(h.ValueAtPercentile(50)),
		P90:  float64(h.ValueAtPercentile(90)),
		P99:  float64(h.ValueAtPercentile(99)),
		P999: float64(h.ValueAtPercentile(99.9)),
		Max:  float64(h.Max()),
	}
}

// CPUTime returns the process's CPU time so far (user + system, all threads).
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// SaturatedShare is the share of its usable cores at which a generator's CPU time over a
// run counts as saturated: the generator, not the server, was the limit.
const SaturatedShare = 0.90

// UsableCores is the number of cores the process may run on: its CPU affinity, capped by
// GOMAXPROCS (which also follows a cgroup CPU limit).
func UsableCores() int {
	n := runtime.NumCPU()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err == nil && set.Count() > 0 {
		n = set.Count()
	}
	return max(1, min(n, runtime.GOMAXPROCS(0)))
}

// CPUSaturated returns the Limit sentence for a run whose CPU time over elapsed used at
// least SaturatedShare of cores ("generator CPU saturated: 1.95 of 2 cores (98%) over the
// run"), or "".
func CPUSaturated(cpu, elapsed time.Duration, cores int) string {
	if elapsed <= 0 || cores <= 0 {
		return ""
	}
	used := cpu.Seconds() / elapsed.Seconds()
	if used < SaturatedShare*float64(cores) {
		return ""
	}
	return fmt.Sprintf("generator CPU saturated: %.2f of %d cores (%.0f%%) over the run", used, cores, 100*used/float64(cores))
}
