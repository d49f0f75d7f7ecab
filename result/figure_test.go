package result

import "testing"

// TestValue: each figure from a run, and none where the run cannot give it.
func TestValue(t *testing.T) {
	r := Run{RPS: 1000, Status2xx: 5000, DurationS: 5, Bytes: 10_000_000, CPUCores: 0.5, LatencyUS: Latency{P99: 900}}
	for name, want := range map[string]float64{ValueRPS: 1000, ValueEchoes: 1000, ValueBandwidth: 2_000_000, ValueCPUPerReq: 500, ValueP99: 900} {
		if got, ok := r.Value(name); !ok || got != want {
			t.Errorf("%s = %v, %v; want %v", name, got, ok, want)
		}
	}
	empty := Run{RPS: 0, DurationS: 5}
	for _, name := range []string{ValueCPUPerReq, ValueP99, "nonsense"} {
		if v, ok := empty.Value(name); ok {
			t.Errorf("%s of a run without it = %v, want none", name, v)
		}
	}
	if got := Values([]Run{r, empty, r}, ValueCPUPerReq); len(got) != 2 || got[0] != 500 {
		t.Errorf("Values = %v, want the two runs with CPU per request", got)
	}
}

// TestBestsLower: each figure's lowest over the results that have a CPU per request.
func TestBestsLower(t *testing.T) {
	var b Bests
	b.Lower(Result{CPUPerRequest: 30, LatencyUS: Latency{P99: 700, Mean: 0}})
	b.Lower(Result{CPUPerRequest: 0, LatencyUS: Latency{P99: 1, Mean: 1}}) // cannot be scored
	b.Lower(Result{CPUPerRequest: 40, LatencyUS: Latency{P99: 900, Mean: 250}})
	if want := (Bests{CPUPerRequest: 30, P99: 700, Mean: 250, Results: 2}); b != want {
		t.Errorf("Bests = %+v, want %+v", b, want)
	}
}
