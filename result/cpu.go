package result

import "fmt"

// PprofFileName and FlameFileName are the files a profiled row saves beside its result
// file: the CPU profile in pprof format ("go tool pprof" opens it) and its flame graph.
func PprofFileName(profile string, conns int) string {
	return fmt.Sprintf("%s-%d.cpu.pb.gz", profile, conns)
}

// FlameFileName is the flame graph's file name beside the result file.
func FlameFileName(profile string, conns int) string {
	return fmt.Sprintf("%s-%d.cpu.svg", profile, conns)
}

// A CPUProfile is what the profiling run of a row found: one more run of the row's load
// after its measured runs, not counted in the numbers, during which perf sampled the
// server's CPUs (kept: the container's processes only). Shares are percentages of the CPU
// time sampled.
type CPUProfile struct {
	Samples   int     `json:"samples"`
	CPUNs     uint64  `json:"cpu_ns"`
	DurationS float64 `json:"duration_s"`
	Frequency int     `json:"frequency_hz"`
	Kernel    float64 `json:"kernel_pct"` // leaf frame in the kernel
	GC        float64 `json:"gc_pct"`     // a garbage collector frame in the stack (Go, .NET, JVM)
	Own       float64 `json:"own_pct"`    // leaf frame in the entry's own code
	// TopSelf and TopCum are the functions with the largest self and cumulative shares.
	TopSelf []FuncShare `json:"top_self,omitempty"`
	TopCum  []FuncShare `json:"top_cum,omitempty"`
	// RPS is the profiled run's figure, and RPSRatio that figure ÷ the mean of the row's
	// measured runs: what profiling cost the server, as near as one run can say.
	RPS      float64 `json:"rps,omitempty"`
	RPSRatio float64 `json:"rps_ratio,omitempty"`
	// CPURatio is the profiled run's server CPU per 2xx response ÷ the measured runs' mean:
	// on a loaded host a steadier measure of the cost than RPS.
	CPURatio float64 `json:"cpu_per_request_ratio,omitempty"`
	// Pprof and Flame are the file names saved beside the result file, when saved.
	Pprof string `json:"pprof,omitempty"` // "baseline-512.cpu.pb.gz"
	Flame string `json:"flame,omitempty"` // "baseline-512.cpu.svg"
	// Base is the base side's profile on a row measured against a base in the job (its
	// Err, when set, says why the base has none), and Diff how the head moved from it.
	Base *CPUProfile `json:"base,omitempty"`
	Diff *CPUDiff    `json:"diff,omitempty"`
	// Err, when set, says why the row has no profile (perf missing or not permitted, the
	// recording failed); the row's numbers stand.
	Err string `json:"err,omitempty"`
}

// A FuncShare is one function's part of a profile: Self where it is the leaf, Cum where it
// is anywhere in the stack.
type FuncShare struct {
	Name string  `json:"name"`
	Self float64 `json:"self_pct"`
	Cum  float64 `json:"cum_pct"`
}

// A CPUDiff is how a profile moved from its base, in percentage points.
type CPUDiff struct {
	Kernel float64 `json:"kernel_pts"`
	GC     float64 `json:"gc_pts"`
	Own    float64 `json:"own_pts"`
	// The half-widths of their 95% intervals, in points (sampling error of the shares).
	KernelMargin float64 `json:"kernel_margin_pts,omitempty"`
	GCMargin     float64 `json:"gc_margin_pts,omitempty"`
	OwnMargin    float64 `json:"own_margin_pts,omitempty"`
	// The functions whose share moved by more than its margin, largest change first.
	Self []CPUChange `json:"self,omitempty"`
	Cum  []CPUChange `json:"cum,omitempty"`
	// Committed marks a difference from the profile committed on the base branch (its
	// .cpu.pb.gz), recorded at another time, when no base was profiled in the job.
	Committed bool `json:"committed,omitempty"`
}

// A CPUChange is one function's share in the base and in the head.
type CPUChange struct {
	Name   string  `json:"name"`
	Before float64 `json:"before_pct"`
	After  float64 `json:"after_pct"`
	Delta  float64 `json:"delta_pts"`
	Margin float64 `json:"margin_pts,omitempty"` // half-width of the change's 95% interval
}

// String is how a reply shows the change: "+8.2 pts (±1.3) runtime.mallocgc", or without
// the interval for a result recorded before there was one.
func (c CPUChange) String() string {
	if c.Margin == 0 {
		return fmt.Sprintf("%+.1f pts %s", c.Delta, c.Name)
	}
	return fmt.Sprintf("%+.1f pts (±%.1f) %s", c.Delta, c.Margin, c.Name)
}
