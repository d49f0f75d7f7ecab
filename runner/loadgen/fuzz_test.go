package loadgen

import (
	"bytes"
	"testing"

	"github.com/arenabot/arenabot/result"
)

// The fuzzers start from the captured outputs and check that a parser never panics and that
// whatever it returns keeps a Measurement's invariants (checkMeasurement): no negative count
// or duration, RPS finite, Status2xx within Requests, the status classes adding up.

func FuzzParseWrk(f *testing.F) {
	fuzzParse(f, Wrk())
}

func FuzzParseH2load(f *testing.F) {
	fuzzParse(f, H2load())
}

func fuzzParse(f *testing.F, tool Tool) {
	for _, tt := range parseTests {
		if tt.tool.Name == tool.Name {
			f.Add(readTestdata(f, tt.file))
		}
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		m, err := tool.Parse(out)
		if err != nil {
			return
		}
		checkMeasurement(t, m)
	})
}

// FuzzParseRequestLog: a request log never panics the parser, and what it returns is in
// order: 0 ≤ p50 ≤ p90 ≤ p99 ≤ p99.9 ≤ max, counts not negative, no percentiles without a
// response.
func FuzzParseRequestLog(f *testing.F) {
	for _, tt := range requestLogTests {
		f.Add(readTestdata(f, tt.file))
	}
	f.Add([]byte("1\t200\t5\n1\t-1\t7\n2\t500\t18446744073709551615\n"))
	f.Fuzz(func(t *testing.T, log []byte) {
		rl, err := ParseRequestLog(bytes.NewReader(log))
		if err != nil {
			return
		}
		l := rl.Latency
		if rl.Responses < 0 || rl.Failed < 0 || l.P50 < 0 || l.P50 > l.P90 || l.P90 > l.P99 || l.P99 > l.P999 || l.P999 > l.Max {
			t.Fatalf("ParseRequestLog = %+v: counts or percentiles out of order", rl)
		}
		if rl.Responses == 0 && l != (result.Latency{}) {
			t.Fatalf("ParseRequestLog = %+v: percentiles without a response", rl)
		}
	})
}
