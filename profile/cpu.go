package profile

// CPU profiling modes: which rows of a job get a profiling run after their measured runs
// (a CPU profile of the server, recorded with perf, unrecorded in the numbers).
const (
	CPUProfileNone  = ""      // no row
	CPUProfileFirst = "first" // each entry × test at its first connection count
	CPUProfileAll   = "all"   // every row
)

// CPUProfileMode resolves a --profile flag into a mode: flag is "" when the flag was not
// given, "on" for a bare --profile, or "all" or "none". A job that measures one entry
// (/benchmark) is profiled by default (oneEntry); several entries (/benchmark-multiple,
// /benchmark-test) or a local bench only when asked. This is the one place the default
// is decided.
func CPUProfileMode(flag string, oneEntry bool) string {
	switch flag {
	case "all":
		return CPUProfileAll
	case "none":
		return CPUProfileNone
	case "on":
		return CPUProfileFirst
	}
	if oneEntry {
		return CPUProfileFirst
	}
	return CPUProfileNone
}

// CPUProfiled reports whether a row is profiled under mode, given the connection counts
// its entry × test is measured at, in order.
func CPUProfiled(mode string, conns int, counts []int) bool {
	switch mode {
	case CPUProfileAll:
		return true
	case CPUProfileFirst:
		return len(counts) > 0 && counts[0] == conns
	}
	return false
}
