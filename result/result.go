// Package result is the result model and its file formats: data only.
//
// A Result is one framework × profile × connection count. It holds the arena's leaderboard
// fields plus what this harness adds: every run, latency percentiles in microseconds, CPU per
// request, achieved and target rate, socket errors, the load tool and its version, the
// commit, the host and its facts, the time, and on a row measured against a base the base's
// runs and the interval rule.
//
// Results are kept in today's arena layout (site.go): one file per framework,
// site/data/results/<slug(display_name)>.json, whose rows keyed "<profile>-<conns>" are
// Results, beside site/data/frameworks.json and site/data/current.json. The April layout, one
// file per framework, profile and connection count inside the entry
// (frameworks/<name>/results/<profile>-<conns>.json, Write and Read), is still read, for an
// arena that has not moved; CPU profiles and flame graphs stay beside it in the entry.
package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Dir is the directory inside an entry that holds its result files.
const Dir = "results"

// FileName is the name of the result file for a profile and connection count.
func FileName(profile string, conns int) string {
	return fmt.Sprintf("%s-%d.json", profile, conns)
}

// Latency is a set of latency statistics in microseconds.
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
}

// SocketErrors counts connection-level failures.
type SocketErrors struct {
	Connect int64 `json:"connect"`
	Read    int64 `json:"read"`
	Write   int64 `json:"write"`
	Timeout int64 `json:"timeout"`
}

// Total is the sum of all socket errors.
func (s SocketErrors) Total() int64 { return s.Connect + s.Read + s.Write + s.Timeout }

// A Run is one run of the load tool against one container.
type Run struct {
	RPS        float64      `json:"rps"`      // 2xx responses per second
	Requests   int64        `json:"requests"` // responses, any status
	Status2xx  int64        `json:"status_2xx"`
	NonSuccess int64        `json:"non_2xx"` // responses that were not 2xx
	DurationS  float64      `json:"duration_s"`
	Bytes      int64        `json:"bytes"`
	LatencyUS  Latency      `json:"latency_us"`
	Errors     SocketErrors `json:"socket_errors"`
	CPUCores   float64      `json:"cpu_cores"` // server CPU over the window; 1.0 = one CPU
	MemoryPeak int64        `json:"memory_peak_bytes"`

	// What a generator that reports on itself (arenaload) says about the run.
	Reconnects     int64   `json:"reconnects,omitempty"`          // connections opened after the first ones
	ToolCPUS       float64 `json:"tool_cpu_s,omitempty"`          // the generator's own CPU time
	MaxScheduleLag float64 `json:"max_schedule_lag_us,omitempty"` // fixed rate: the largest lag behind schedule
	// ToolLimit, when set, says that the generator, not the server, limited the run.
	ToolLimit string `json:"tool_limit,omitempty"`
	// Parts are the counts of each load of a run of several at once (production-stack).
	Parts []Part `json:"parts,omitempty"`
}

// A Result is the content of one result file.
type Result struct {
	// The arena's leaderboard fields, unchanged in name and meaning.
	Framework   string `json:"framework"` // meta.json display_name
	Language    string `json:"language"`
	RPS         int64  `json:"rps"`
	AvgLatency  string `json:"avg_latency"` // "173us", "4.90ms"
	P99Latency  string `json:"p99_latency"`
	CPU         string `json:"cpu"`    // "123.4%" (100% = one CPU)
	Memory      string `json:"memory"` // "76MiB", "2.4GiB"
	Connections int    `json:"connections"`
	Threads     int    `json:"threads"`
	Duration    string `json:"duration"` // "5s"
	Pipeline    int    `json:"pipeline"`
	Bandwidth   string `json:"bandwidth"` // "12.34MB/s"
	Reconnects  int64  `json:"reconnects"`
	Status2xx   int64  `json:"status_2xx"`
	Status3xx   int64  `json:"status_3xx"`
	Status4xx   int64  `json:"status_4xx"`
	Status5xx   int64  `json:"status_5xx"`

	// What this harness adds.
	Entry         string  `json:"entry"`   // directory name
	Profile       string  `json:"profile"` // profile name
	Lite          bool    `json:"lite,omitempty"`
	Requests      int64   `json:"requests"` // responses of the best run, any status
	NonSuccess    int64   `json:"non_2xx"`  // of the best run
	LatencyUS     Latency `json:"latency_us"`
	CPUPerRequest float64 `json:"cpu_per_request_us"` // server CPU µs per 2xx response
	CPUCores      float64 `json:"cpu_cores"`
	MemoryPeak    int64   `json:"memory_peak_bytes"`
	AchievedRate  float64 `json:"achieved_rps"`
	// TargetRate is the offered rate of a fixed-rate profile (the arena's target_rate; files
	// written before it had that name call it target_rps, which Unmarshal reads).
	TargetRate int `json:"target_rate,omitempty"`
	// RateRatio is AchievedRate ÷ TargetRate for a fixed-rate profile (the arena's
	// rate_ratio; below 0.98 the row did not get the load it was meant to).
	RateRatio float64 `json:"rate_ratio,omitempty"`
	// The arena's other fixed-rate fields, on a fixed-rate row only (TargetRate set), from
	// the best run: the server's CPU time over the run in µs (the cgroup's delta; nil
	// without a reading), that ÷ its 2xx responses to 4 places (nil without either), and
	// the 99.9th-percentile latency as a latency string.
	CPUUsec     *int64   `json:"cpu_usec,omitempty"`
	CPUPerReqUS *float64 `json:"cpu_per_req_us,omitempty"`
	P999Latency string   `json:"p99_9_latency,omitempty"`
	// BytesPerSec and CPUPerGB, for the bandwidth profiles: response bytes per second and
	// server CPU seconds per GB (10^9 bytes) sent.
	BytesPerSec float64 `json:"bytes_per_s,omitempty"`
	CPUPerGB    float64 `json:"cpu_s_per_gb,omitempty"`
	// ToolLimit is the best run's: the generator, not the server, was the limit, and why.
	ToolLimit    string       `json:"tool_limit,omitempty"`
	SocketErrors SocketErrors `json:"socket_errors"`
	Runs         []Run        `json:"runs"`
	BestRun      int          `json:"best_run"`   // index into Runs
	SpreadPct    float64      `json:"spread_pct"` // (max-min)/best RPS of the runs, in percent
	Tool         string       `json:"tool"`
	ToolVersion  string       `json:"tool_version"`
	Sidecars     []string     `json:"sidecars,omitempty"` // beside the server: "postgres 15.18 (arenabot/postgres:local)"
	// Limits are what the server container ran under; files written before they were
	// recorded have none.
	Limits *Limits `json:"limits,omitempty"`
	Commit string  `json:"commit,omitempty"`
	Host   string  `json:"host,omitempty"`
	// HostFacts are the machine the row was measured on (what site/data/current.json says
	// of the benchmark host, kept in every row since that file holds only the last save's);
	// nil in files written before they were recorded.
	HostFacts *HostFacts `json:"host_facts,omitempty"`
	Time      time.Time  `json:"time"`

	// Base, on a row measured against a base in the same job, is the other side: its runs
	// were interleaved with this result's Runs (base, head, head, base, …) on the same host
	// with the same container settings, so a reader can recompute every Δ from the two.
	Base *Side `json:"base,omitempty"`

	// CPUProfile, on a profiled row, is what its profiling run found; nil when the row was
	// not profiled (and in files written before rows were).
	CPUProfile *CPUProfile `json:"cpu_profile,omitempty"`
}

// Limits are the confinement of a server container: its memory (swap included), pids and
// nofile limits, and the capabilities it kept after dropping all of them.
type Limits struct {
	MemoryBytes     int64    `json:"memory_bytes,omitempty"`
	Pids            int64    `json:"pids,omitempty"`
	Nofile          int64    `json:"nofile,omitempty"`
	CapAdd          []string `json:"cap_add"` // [] when it kept none
	NoNewPrivileges bool     `json:"no_new_privileges"`
}

// A Side is what a row was compared with in its own job: the same entry built at the PR's
// base, or the --compare entry.
type Side struct {
	Entry  string `json:"entry"`            // the entry measured as the base
	Ref    string `json:"ref,omitempty"`    // the base branch ("main"), "" for --compare
	Commit string `json:"commit,omitempty"` // the commit its image was built from
	Image  string `json:"image,omitempty"`  // "arenabot-nethttp:0123456789ab"
	Runs   []Run  `json:"runs,omitempty"`
	// Order is the sides in the order their runs ran: "BHHBBH…" (B base, H head).
	Order string `json:"order,omitempty"`
	// Stop says why the row stopped measuring (stats.Rule.Enough: the interval was narrow
	// enough, the run limit, the job's time budget).
	Stop string `json:"stop,omitempty"`
	// Err, when the base could not be built or run, says why; the row's own runs stand and
	// its Δ cells say "base failed".
	Err string `json:"err,omitempty"`
	// Rule is the rule the interleaved runs followed (the minimum effect, the interval
	// half-width the row stopped at, the runs per side): with Runs and the head's runs, what
	// a reader needs to recompute the row's Δ intervals. nil in files written before it.
	Rule *Rule `json:"rule,omitempty"`
}

// Figure is the number a run is judged by: requests per second, or, for a bandwidth row,
// bytes per second (0 without a duration).
func Figure(bandwidth bool) func(Run) float64 {
	if bandwidth {
		return func(r Run) float64 {
			if r.DurationS <= 0 {
				return 0
			}
			return float64(r.Bytes) / r.DurationS
		}
	}
	return func(r Run) float64 { return r.RPS }
}

// Sample returns one figure of each run, in order: f(run) for every run.
func Sample(runs []Run, f func(Run) float64) []float64 {
	out := make([]float64, len(runs))
	for i, r := range runs {
		out[i] = f(r)
	}
	return out
}

// FromRuns fills the summary fields of r from its runs: the best run by RPS (the arena's
// rule) is reported, with the runs' spread beside it. It leaves identity fields alone.
func (r *Result) FromRuns(runs []Run) {
	r.Runs = runs
	if len(runs) == 0 {
		return
	}
	best := 0
	lo, hi := runs[0].RPS, runs[0].RPS
	for i, run := range runs {
		if run.RPS > runs[best].RPS {
			best = i
		}
		lo, hi = min(lo, run.RPS), max(hi, run.RPS)
	}
	b := runs[best]
	r.BestRun = best
	if b.RPS > 0 {
		r.SpreadPct = round((hi-lo)/b.RPS*100, 2)
	}
	r.RPS = int64(b.RPS)
	r.AchievedRate = round(b.RPS, 1)
	r.Requests = b.Requests
	r.NonSuccess = b.NonSuccess
	r.Status2xx = b.Status2xx
	r.LatencyUS = b.LatencyUS
	r.AvgLatency = FormatLatency(b.LatencyUS.Mean)
	r.P99Latency = FormatLatency(b.LatencyUS.P99)
	r.CPUCores = round(b.CPUCores, 3)
	r.CPU = fmt.Sprintf("%.1f%%", b.CPUCores*100)
	r.MemoryPeak = b.MemoryPeak
	r.Memory = FormatMemory(b.MemoryPeak)
	r.SocketErrors = b.Errors
	if b.DurationS > 0 {
		r.Bandwidth = FormatBandwidth(float64(b.Bytes) / b.DurationS)
		r.BytesPerSec = round(float64(b.Bytes)/b.DurationS, 0)
	}
	if b.Bytes > 0 {
		r.CPUPerGB = round(b.CPUCores*b.DurationS/(float64(b.Bytes)/1e9), 4)
	}
	r.Reconnects = b.Reconnects
	r.ToolLimit = b.ToolLimit
	if r.TargetRate > 0 {
		r.RateRatio = round(b.RPS/float64(r.TargetRate), 4)
	}
	if b.Status2xx > 0 && b.DurationS > 0 {
		r.CPUPerRequest = round(b.CPUCores*b.DurationS*1e6/float64(b.Status2xx), 3)
	}
	r.CPUUsec, r.CPUPerReqUS, r.P999Latency = nil, nil, ""
	r.fillFixedRate()
}

// fillFixedRate sets the arena's fixed-rate fields of a fixed-rate row from its best run,
// where they are not set yet (a file written before they were recorded).
func (r *Result) fillFixedRate() {
	if r.TargetRate <= 0 || r.BestRun < 0 || r.BestRun >= len(r.Runs) {
		return
	}
	b := r.Runs[r.BestRun]
	if r.CPUUsec == nil && b.CPUCores > 0 && b.DurationS > 0 {
		usec := int64(math.Round(b.CPUCores * b.DurationS * 1e6))
		r.CPUUsec = &usec
	}
	if r.CPUPerReqUS == nil && r.CPUUsec != nil && b.Status2xx > 0 {
		per := round(float64(*r.CPUUsec)/float64(b.Status2xx), 4)
		r.CPUPerReqUS = &per
	}
	if r.P999Latency == "" && b.LatencyUS.P999 > 0 {
		r.P999Latency = FormatLatency(b.LatencyUS.P999)
	}
}

// Spread returns the noise band of the result's runs as a fraction of the best RPS.
func (r Result) Spread() float64 { return r.SpreadPct / 100 }

// FormatLatency renders a duration given in microseconds, for the result files' latency
// strings and the replies' latency and CPU cells alike: 6.18us, 850us, 1.25ms, 2.10s; zero
// (nothing measured) is "0us", which a table shows as "—".
func FormatLatency(us float64) string {
	switch {
	case us <= 0:
		return "0us"
	case us < 10:
		return fmt.Sprintf("%.2fus", us)
	case us < 1000:
		return fmt.Sprintf("%.0fus", us)
	case us < 1e6:
		return fmt.Sprintf("%.2fms", us/1000)
	default:
		return fmt.Sprintf("%.2fs", us/1e6)
	}
}

// ParseLatency reads a latency string ("112.0us", "4.90ms", "1.07s") into microseconds.
func ParseLatency(s string) (float64, error) {
	s = strings.TrimSpace(s)
	for _, u := range []struct {
		suffix string
		mul    float64
	}{{"us", 1}, {"ms", 1e3}, {"s", 1e6}} {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				break
			}
			return v * u.mul, nil
		}
	}
	return 0, fmt.Errorf("latency %q: not a number with us, ms or s", s)
}

// FormatMemory renders bytes as the arena does: "76MiB", or "2.4GiB" from 1 GiB up.
func FormatMemory(b int64) string {
	mib := float64(b) / (1 << 20)
	if mib >= 1024 {
		return fmt.Sprintf("%.1fGiB", mib/1024)
	}
	return fmt.Sprintf("%.0fMiB", mib)
}

// FormatBandwidth renders bytes per second with 1024-based units.
func FormatBandwidth(bps float64) string {
	switch {
	case bps >= 1<<30:
		return fmt.Sprintf("%.2fGB/s", bps/(1<<30))
	case bps >= 1<<20:
		return fmt.Sprintf("%.2fMB/s", bps/(1<<20))
	case bps >= 1<<10:
		return fmt.Sprintf("%.2fKB/s", bps/(1<<10))
	default:
		return fmt.Sprintf("%.0fB/s", bps)
	}
}

// ParseMemory reads an arena memory string ("76MiB", "2.4GiB", "512KiB") into bytes.
func ParseMemory(s string) (int64, error) {
	units := []struct {
		suffix string
		mul    float64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(strings.TrimSpace(s), u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil || v < 0 || math.IsInf(v, 0) {
				return 0, fmt.Errorf("memory %q: not a size", s)
			}
			return int64(v * u.mul), nil
		}
	}
	return 0, fmt.Errorf("memory %q: no unit", s)
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// Marshal encodes a result file: indented, with a trailing newline, fields in a fixed order.
func Marshal(r Result) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Unmarshal decodes a result file or row. It accepts the arena's own rows, which hold only
// the leaderboard fields, and this harness's older files.
func Unmarshal(b []byte) (Result, error) {
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return Result{}, err
	}
	if r.TargetRate == 0 {
		var old struct {
			TargetRate int `json:"target_rps"`
		}
		if json.Unmarshal(b, &old) == nil {
			r.TargetRate = old.TargetRate
		}
	}
	if r.MemoryPeak == 0 && r.Memory != "" {
		r.MemoryPeak, _ = ParseMemory(r.Memory)
	}
	// The arena's rows carry their figures as strings and under its own names only.
	for _, f := range []struct {
		us  *float64
		str string
	}{{&r.LatencyUS.Mean, r.AvgLatency}, {&r.LatencyUS.P99, r.P99Latency}, {&r.LatencyUS.P999, r.P999Latency}} {
		if *f.us == 0 && f.str != "" {
			*f.us, _ = ParseLatency(f.str)
		}
	}
	if r.CPUPerRequest == 0 && r.CPUPerReqUS != nil {
		r.CPUPerRequest = *r.CPUPerReqUS
	}
	if pct, ok := strings.CutSuffix(r.CPU, "%"); ok && r.CPUCores == 0 {
		if v, err := strconv.ParseFloat(pct, 64); err == nil && v >= 0 {
			r.CPUCores = v / 100
		}
	}
	if r.AchievedRate == 0 {
		r.AchievedRate = float64(r.RPS)
	}
	return r, nil
}

// Write writes r into entryDir/results/<profile>-<conns>.json atomically and returns the path.
func Write(entryDir string, r Result) (string, error) {
	b, err := Marshal(r)
	if err != nil {
		return "", err
	}
	return WriteFile(entryDir, FileName(r.Profile, r.Connections), b)
}

// WriteFile writes a file named name (a result file, or a profile or flame graph beside
// one) into entryDir/results atomically and returns the path.
func WriteFile(entryDir, name string, b []byte) (string, error) {
	dir := filepath.Join(entryDir, Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	tmp, err := os.CreateTemp(dir, ".result-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return "", err
	}
	return path, os.Rename(tmp.Name(), path)
}

// Read reads one result file of an entry. A missing file wraps fs.ErrNotExist.
func Read(entryDir, profile string, conns int) (Result, error) {
	path := filepath.Join(entryDir, Dir, FileName(profile, conns))
	b, err := os.ReadFile(path)
	if err != nil {
		return Result{}, err
	}
	r, err := Unmarshal(b)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// ReadAll reads every result file of an entry, sorted by file name. An entry without a
// results directory has none.
func ReadAll(entryDir string) ([]Result, error) {
	dir := filepath.Join(entryDir, Dir)
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []Result
	for _, name := range names {
		b, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		r, err := Unmarshal(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, r)
	}
	return out, nil
}
