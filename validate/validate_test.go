package validate_test

import (
	"testing"
	"time"

	"github.com/arenabot/arenabot/validate"
	"github.com/arenabot/arenabot/validate/validatetest"
)

// TestCorrectServerPasses runs every profile against the fixture with no mode: every
// check passes. It logs how long the whole Run took.
func TestCorrectServerPasses(t *testing.T) {
	s := validatetest.Start(t, data(t), "")
	start := time.Now()
	out := validate.Run(t.Context(), target(t, s), runnable)
	took := time.Since(start)
	for _, o := range out {
		if o.Status != validate.Pass {
			t.Errorf("%s", o)
		}
	}
	_, _, _, line := validate.Summary(out)
	t.Logf("one Run of all seven profiles against the correct fixture: %s in %v", line, took.Round(time.Millisecond))
}

// BenchmarkRun times one Run of all seven profiles against the correct fixture.
func BenchmarkRun(b *testing.B) {
	s := validatetest.Start(b, data(b), "")
	tg := target(b, s)
	for b.Loop() {
		out := validate.Run(b.Context(), tg, runnable)
		if _, fail, _, line := validate.Summary(out); fail > 0 {
			b.Fatal(line)
		}
	}
}
