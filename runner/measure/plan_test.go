package measure

import (
	"testing"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/stats"
)

// TestPlanRuns: a row measured against a base counts the rule's minimum runs on both sides;
// one measured alone counts Runs.
func TestPlanRuns(t *testing.T) {
	baseline, _ := profile.Lookup("baseline")
	plan := Plan{Lite: true, Targets: []Target{
		{Entry: frameworks.Entry{Name: "a"}, Profiles: []profile.Profile{baseline}},
		{Entry: frameworks.Entry{Name: "b"}, Profiles: []profile.Profile{baseline}, Base: &Base{}},
	}}
	rows := len(baseline.ConnCounts(true))
	if got, want := plan.Runs(3, stats.Rule{MinRuns: 4}), rows*3+rows*8; got != want {
		t.Errorf("Runs = %d, want %d", got, want)
	}
}

// TestThroughput: a bandwidth row's rate is bytes per second, the others' requests.
func TestThroughput(t *testing.T) {
	run := result.Run{RPS: 10, Bytes: 3000, DurationS: 2}
	dl, _ := profile.Lookup("download")
	baseline, _ := profile.Lookup("baseline")
	if got := throughput(dl)(run); got != 1500 {
		t.Errorf("download figure %g, want 1500 bytes/s", got)
	}
	if got := throughput(baseline)(run); got != 10 {
		t.Errorf("baseline figure %g, want 10 rps", got)
	}
	if got := throughput(dl)(result.Run{Bytes: 5}); got != 0 {
		t.Errorf("a run without a duration: %g, want 0", got)
	}
}
