package bot

import (
	"strings"
	"testing"

	"github.com/arenabot/arenabot/queue"
)

// TestJobPastItsLimitRepliesOnce: a job the runner stopped at its time limit (failed, with
// the rows measured before it) gets exactly one final reply, which gives the limit, how it
// was derived and where the job was, above the rows; the status comment says it failed.
func TestJobPastItsLimitRepliesOnce(t *testing.T) {
	e := setupEvents(t, nil)
	j := e.request("/benchmark-multiple -f nethttp,gin -t baseline")
	l := e.claim()
	// The runner's reason, as runner.JobLimitError words it.
	reason := "the job ran past its 24m21s limit (3 × its estimate 1m27s, plus the 20m build limit) and was stopped, its containers removed, while measuring row 3 of 4 (gin baseline, 512 connections)"
	rep := testReport(false)
	rep.Rows, rep.Error = rep.Rows[:2], reason
	e.finish(l, queue.Failed, reason, &rep)
	e.drain()
	e.drain()
	rs := e.replies(j.ID)
	if len(rs) != 1 {
		t.Fatalf("%d replies, want one: %+v", len(rs), rs)
	}
	body := rs[0].Body
	if !strings.Contains(body, "Benchmark failed") || !strings.Contains(body, reason) || !strings.Contains(body, "The tables show the rows measured before it failed") {
		t.Errorf("reply does not give the limit and where the job was:\n%s", body)
	}
	if st := e.commentByID(j.StatusCommentID); !strings.Contains(st.Body, "Benchmark failed") || !strings.Contains(st.Body, "ran past its 24m21s limit") {
		t.Errorf("status = %s", st.Body)
	}
}
