package result

// The names of the figures Value reads from a run; the profile table's figures
// (profile.Figure) use the same names.
const (
	ValueRPS       = "rps"     // 2xx responses per second
	ValueBandwidth = "mb/s"    // response bytes per second
	ValueEchoes    = "msg/s"   // WebSocket echoes per second (the run's RPS)
	ValueCPUPerReq = "cpu/req" // server CPU µs per 2xx response
	ValueP99       = "p99"     // 99th-percentile latency, µs
	ValueMem       = "mem"     // the server's peak memory, bytes
)

// Value returns the named figure of a run, and false when the run has none (an unknown
// name, a run without a 2xx response or a measured window for CPU per request, a run
// without a latency percentile).
func (r Run) Value(name string) (float64, bool) {
	switch name {
	case ValueRPS, ValueEchoes:
		return r.RPS, true
	case ValueBandwidth:
		if r.DurationS <= 0 {
			return 0, false
		}
		return float64(r.Bytes) / r.DurationS, true
	case ValueCPUPerReq:
		if r.Status2xx <= 0 || r.DurationS <= 0 || r.CPUCores <= 0 {
			return 0, false
		}
		return r.CPUCores * r.DurationS * 1e6 / float64(r.Status2xx), true
	case ValueP99:
		return r.LatencyUS.P99, r.LatencyUS.P99 > 0
	case ValueMem:
		return float64(r.MemoryPeak), r.MemoryPeak > 0
	}
	return 0, false
}

// Values returns the named figure of every run that has it, in order.
func Values(runs []Run, name string) []float64 {
	out := make([]float64, 0, len(runs))
	for _, r := range runs {
		if v, ok := r.Value(name); ok {
			out = append(out, v)
		}
	}
	return out
}
