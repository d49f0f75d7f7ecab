package loadgen

import (
	"testing"
)

// The fuzzers start from the captured outputs and check that a parser never panics and that
// whatever it returns keeps a Measurement's invariants (checkMeasurement): no negative count
// or duration, RPS finite, Status2xx within Requests, the status classes adding up.

func FuzzParseWrk(f *testing.F) {
	fuzzParse(f, Wrk{})
}

func FuzzParseH2load(f *testing.F) {
	fuzzParse(f, H2load{})
}

func fuzzParse(f *testing.F, tool Tool) {
	for _, tt := range parseTests {
		if tt.tool.Name() == tool.Name() {
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
