package report

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// renderCheck is a check run as its golden holds it.
func renderCheck(c Check) string {
	return "status: " + c.Status + "\nconclusion: " + c.Conclusion + "\ntitle: " + c.Title + "\n\n" + c.Summary
}

// TestCheckGolden: the check run of a request measured interleaved against its base (its
// verdict and tables), of one done without a base to judge against, and of one awaiting
// approval.
func TestCheckGolden(t *testing.T) {
	const record = "https://github.com/o/r/pull/42#issuecomment-1002"
	inter, single := interleavedResults(), doneResults()
	for name, c := range map[string]Check{
		"interleaved": CheckOf(Status{Phase: PhaseDone, Command: inter.Command}, &inter, record),
		"single":      CheckOf(Status{Phase: PhaseDone, Command: single.Command}, &single, record),
		"awaiting":    CheckOf(baseStatus(PhaseAwaitingApproval), nil, record),
		"running":     CheckOf(baseStatus(PhaseRunning), nil, record),
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
	v := Judge(tables)
	if v.Compared == 0 {
		t.Fatalf("verdict %+v: nothing compared in a job measured against its base", v)
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
