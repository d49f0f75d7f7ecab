package report

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/profile"
)

// renderCheck is a check run as its golden holds it.
func renderCheck(c Check) string {
	return "status: " + c.Status + "\nconclusion: " + c.Conclusion + "\ntitle: " + c.Title + "\n\n" + c.Summary
}

// TestCheckGolden: the check run of a request measured interleaved against its base (its
// verdict and tables), the same gated by a settings file, of one done without a base to
// judge against, and of one awaiting approval.
func TestCheckGolden(t *testing.T) {
	const record = "https://github.com/o/r/pull/42#issuecomment-1002"
	inter, single := interleavedResults(), doneResults()
	for name, c := range map[string]Check{
		"interleaved": CheckOf(Status{Phase: PhaseDone, Command: inter.Command}, &inter, record),
		"single":      CheckOf(Status{Phase: PhaseDone, Command: single.Command}, &single, record),
		// The arena's settings file gates json on its p99 and baseline on its RPS.
		"gated":    CheckOf(Status{Phase: PhaseDone, Command: inter.Command, Gate: profile.Gate{"json": profile.FigureP99, "baseline": profile.FigureRPS}}, &inter, record),
		"awaiting": CheckOf(baseStatus(PhaseAwaitingApproval), nil, record),
		"running":  CheckOf(baseStatus(PhaseRunning), nil, record),
	} {
		t.Run(name, func(t *testing.T) {
			checkGolden(t, filepath.Join("testdata", "check-"+name+".golden"), renderCheck(c))
		})
	}
}

// TestJudge: a row is judged on its primary figure with an interval; a change beyond the
// rule in the bad direction fails the verdict, the largest first.
func TestJudge(t *testing.T) {
	inter := interleavedResults()
	_, tables, _ := resultsTables(inter)
	v := Judge(tables, nil)
	if v.Compared == 0 {
		t.Fatalf("verdict %+v: nothing compared in a job measured against its base", v)
	}
	// The default gate is the profiles the arena's board scores: json is not one.
	if v.Ungated == 0 || slices.ContainsFunc(v.Worse, func(j Judged) bool { return j.Profile == "json" }) {
		t.Errorf("default gate: %+v; want the json rows left out", v)
	}
	// A settings file's gate: json alone, on its p99.
	only := Judge(tables, profile.Gate{"json": profile.FigureP99})
	if only.Compared == 0 || only.Compared >= v.Compared+only.Compared || only.Ungated <= v.Ungated {
		t.Errorf("json alone: %+v (default %+v); want json compared and the rest ungated", only, v)
	}
	for _, w := range only.Worse {
		if w.Profile != "json" || w.Figure != "p99" {
			t.Errorf("json alone: %+v judged", w)
		}
	}
	if none := Judge(tables, profile.Gate{}); none.Compared != 0 || len(none.Worse) != 0 {
		t.Errorf("an empty gate judged %+v", none)
	}
	for i := 1; i < len(v.Worse); i++ {
		if math.Abs(v.Worse[i].Rel) > math.Abs(v.Worse[i-1].Rel) {
			t.Errorf("worse rows not largest first: %+v", v.Worse)
		}
	}
	for _, w := range v.Worse {
		if !strings.HasSuffix(w.Cell, " worse") {
			t.Errorf("a worse row's cell %q does not say worse", w.Cell)
		}
	}
}
