// Package loadgen holds the load-tool adapters: for each tool, the command line for a
// profile and a parser that turns the tool's output into one Measurement.
//
// Adapters are pure: they neither start processes nor containers. The runner runs the
// command natively (pinned with taskset) or in the pinned load-generator image.
package loadgen

import (
	"errors"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
)

// ErrNoResult is wrapped by parse errors when the output holds no summary at all (the tool
// crashed, was killed, or is not the tool we think).
var ErrNoResult = errors.New("no result in load tool output")

// A Spec is one run of a load tool against a server.
type Spec struct {
	Profile  profile.Profile
	Host     string // "127.0.0.1"
	Conns    int
	Threads  int
	Duration time.Duration
	// DataDir is the arena data directory (it holds requests/ and static/) as the tool sees
	// it: the same absolute path natively and inside the load-generator container.
	DataDir string
	// ScriptDir is a directory the adapter may write helper files into (Lua scripts) with
	// WriteFiles; the same absolute path natively and in the container.
	ScriptDir string
	// OutDir is a directory the tool may write into during a run (h2load's request log, see
	// Tool.Log); the same absolute path natively and in the container, where it is mounted
	// writable. "" means none: the adapter asks for no such file.
	OutDir string
	// Timeout is how long the tool waits for a response before it counts a timeout; 0 means
	// the profile's Timeout, else DefaultTimeout. wrk and arenaload take one (h2load has no
	// per-request timeout).
	Timeout time.Duration
	// Rate is the offered rate, requests per second, of a fixed-rate profile
	// (Profile.Rate for the mode); 0 for a closed-loop one.
	Rate int
}

// timeout is the per-request timeout of the run.
func (s Spec) timeout() time.Duration {
	switch {
	case s.Timeout > 0:
		return s.Timeout
	case s.Profile.Timeout > 0:
		return s.Profile.Timeout
	default:
		return DefaultTimeout
	}
}

// DefaultTimeout is wrk's own default timeout, which the old arena ran with.
const DefaultTimeout = 2 * time.Second

// micros is d in microseconds, the unit of result.Latency.
func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// A Measurement is what one run of a load tool reports.
type Measurement struct {
	Requests int64         // responses received, whatever their status
	Duration time.Duration // the tool's measured duration
	Bytes    int64         // response bytes read

	// Status counts responses by class. Tools that cannot tell some classes apart leave
	// them in NonSuccess instead (wrk cannot split 3xx, 4xx and 5xx without a per-response
	// Lua callback, which would slow it down).
	Status2xx, Status3xx, Status4xx, Status5xx int64
	// NonSuccess counts responses known not to be 2xx whose class the tool did not report.
	NonSuccess int64

	Latency result.Latency // microseconds, as the result file keeps them
	Errors  result.SocketErrors

	// Generator is what a generator that reports on itself says (arenaload); nil for tools
	// that do not.
	Generator *Generator
}

// Generator is a load generator's account of its own run.
type Generator struct {
	CPU time.Duration // its own CPU time (user + system) over the run
	// Limit, when set, says that the generator, not the server, limited the run, and why.
	Limit string
	// TargetRate and MaxScheduleLag: the offered rate (requests/s) of a fixed-rate run and
	// the largest delay of a request behind its schedule.
	TargetRate     float64
	MaxScheduleLag time.Duration
	// Reconnects is the connections opened during the run after the first ones (WebSocket:
	// upgrades after a connection retired).
	Reconnects int64
}

// RPS is successful (2xx) responses per second, the arena's figure of merit.
func (m Measurement) RPS() float64 {
	if m.Duration <= 0 {
		return 0
	}
	return float64(m.Status2xx) / m.Duration.Seconds()
}

// A Tool is one load tool: the facts the harness pins, installs and checks it by, the
// run log it may leave, and the Adapter that speaks its command line and output. All
// returns one of each; Wrk, H2load, Ghz and Arenaload say what each is.
type Tool struct {
	// Name is the tool's name, one of the profile.Tool* constants.
	Name string
	// Binary is the executable to run ("wrk").
	Binary string
	// PinnedVersion is the exact upstream version the harness is pinned to ("4.1.0").
	PinnedVersion string
	// Install says where that version comes from (a Debian package, a Go module or this
	// module) and so how the load-generator image and .ci/setup get and check it
	// (install.go).
	Install Install
	// VersionArgs are the arguments that make the tool print its version.
	VersionArgs []string
	// Log, when set, is the file a run leaves in Spec.OutDir beside its output, which
	// completes the Measurement (LogFile, ReadLog); nil for a tool that leaves none.
	Log *RunLog

	Adapter
}

// An Adapter is what differs from tool to tool beyond the facts of its Tool: reading its
// version, the command line of a run and the reading of its output. Adapters are pure.
type Adapter interface {
	// ParseVersion extracts the version from the output of VersionArgs; the full string is
	// recorded in results, the upstream part is compared with PinnedVersion.
	ParseVersion(out string) (full, upstream string, err error)
	// WriteFiles writes the helper files Args refers to (Lua scripts) into spec.ScriptDir.
	WriteFiles(spec Spec) error
	// Args is the argument list (without the binary) for one run.
	Args(spec Spec) ([]string, error)
	// Parse turns the tool's combined output into a Measurement.
	Parse(out []byte) (Measurement, error)
}
