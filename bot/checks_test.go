package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/result"
)

// checkCalls is the sequence of the bot's check-run writes, as the fake GitHub recorded them:
// "POST queued", "PATCH in_progress", "PATCH completed success".
func checkCalls(gh *githubtest.Server) []string {
	var out []string
	for _, c := range gh.Calls() {
		if !strings.Contains(c.Path, "/check-runs") || c.Status >= 300 {
			continue
		}
		var in struct {
			Status     string `json:"status"`
			Conclusion string `json:"conclusion"`
		}
		json.Unmarshal(c.Body, &in)
		out = append(out, strings.TrimSpace(c.Method+" "+in.Status+" "+in.Conclusion))
	}
	return out
}

// pairedReport is nethttp's two baseline rows, each measured against its base in the job,
// the head's RPS the base's times factor (1: an A/A comparison).
func pairedReport(factor float64) result.Report {
	rep := testReport(false)
	rep.Rows, rep.Frameworks = rep.Rows[:2], []string{"nethttp"}
	rep.MergeBase = "8888888888888888888888888888888888888888"
	for i, conns := range []int{512, 4096} {
		base := measuredRow("nethttp", "baseline", conns, 200000).Result
		head := measuredRow("nethttp", "baseline", conns, 200000*factor)
		head.Result.Base = &result.Side{Entry: "nethttp", Ref: "main", Commit: rep.MergeBase, Runs: base.Runs, Order: "BHHBBH"}
		rep.Rows[i] = head
	}
	return rep
}

// TestCheckRuns: each request has a check run on its commit that follows it, created at the
// ack and completed whatever ends the request, with the conclusion its ending calls for: an
// A/A comparison passes, a row 10% slower fails it (the title names the row and its Δ), a
// cancel cancels it, and an approval that never comes times it out after asking for one.
func TestCheckRuns(t *testing.T) {
	run := func(t *testing.T, rep result.Report) (*evEnv, queue.Job) {
		t.Helper()
		e := setupEvents(t, nil)
		j := e.request("/benchmark -f nethttp -t baseline")
		l := e.claim()
		e.drain()
		e.runRows(j.ID, rep)
		e.advance(DefaultProgressEvery)
		e.drain()
		e.finish(l, queue.Done, "", &rep)
		e.drain()
		return e, j
	}
	latest := func(t *testing.T, e *evEnv, id string) githubtest.CheckRun {
		t.Helper()
		var got *githubtest.CheckRun
		for _, c := range e.gh.CheckRuns(repo) {
			if c.ExternalID == id {
				got = &c
			}
		}
		if got == nil {
			t.Fatalf("no check run of %s", id)
		}
		return *got
	}

	t.Run("A/A passes", func(t *testing.T) {
		e, j := run(t, pairedReport(1))
		c := latest(t, e, j.ID)
		if c.Status != "completed" || c.Conclusion != "success" || c.Name != CheckName || c.HeadSHA != sha1 || !strings.HasPrefix(c.Title, "No row got worse: 2 compared") {
			t.Errorf("check run %+v, want completed success on %s", c, sha1)
		}
		if want := fmt.Sprintf("https://github.com/%s/pull/%d#issuecomment-%d", repo, prNum, j.StatusCommentID); c.DetailsURL != want || !strings.Contains(c.Summary, "| baseline | 512 |") {
			t.Errorf("check run details %q, summary:\n%s\nwant the status comment and the table", c.DetailsURL, c.Summary)
		}
		seq := strings.Join(checkCalls(e.gh), ", ")
		if !strings.HasPrefix(seq, "POST queued,") || !strings.Contains(seq, "PATCH in_progress") || !strings.HasSuffix(seq, "PATCH completed success") {
			t.Errorf("check run calls: %s", seq)
		}
		t.Logf("passing request: %s", seq)
	})
	t.Run("a regression fails it", func(t *testing.T) {
		e, j := run(t, pairedReport(0.9))
		c := latest(t, e, j.ID)
		if c.Conclusion != "failure" || !strings.HasPrefix(c.Title, "nethttp baseline ") || !strings.Contains(c.Title, "rps -10.0% ±") || !strings.Contains(c.Title, "worse (and 1 more)") {
			t.Errorf("check run %s %q, want failure naming the worst row", c.Conclusion, c.Title)
		}
		t.Logf("failing request: %s; title %q", strings.Join(checkCalls(e.gh), ", "), c.Title)
	})
	t.Run("nothing against a base is neutral", func(t *testing.T) {
		rep := testReport(false)
		rep.Rows, rep.Frameworks, rep.Baselines = rep.Rows[:2], []string{"nethttp"}, nil
		e, j := run(t, rep)
		if c := latest(t, e, j.ID); c.Conclusion != "neutral" {
			t.Errorf("check run %s %q, want neutral", c.Conclusion, c.Title)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		e := setupEvents(t, nil)
		j := e.request("/benchmark -f nethttp -t baseline")
		e.drain()
		e.comment("bob", "/benchmark-cancel")
		e.drain()
		c := latest(t, e, j.ID)
		if c.Status != "completed" || c.Conclusion != "cancelled" || c.Title != "Cancelled by bob" {
			t.Errorf("check run %+v, want cancelled by bob", c)
		}
		t.Logf("cancelled request: %s", strings.Join(checkCalls(e.gh), ", "))
	})
	t.Run("expired", func(t *testing.T) {
		e := setupEvents(t, nil)
		id := e.comment("carol", "/benchmark -f nethttp -t baseline")
		e.drain()
		c := latest(t, e, requestID(id))
		if c.Status != "completed" || c.Conclusion != "action_required" || !strings.Contains(c.Summary, "/benchmark-approve") {
			t.Errorf("check run while awaiting approval: %+v, want action_required with the approve instruction", c)
		}
		e.advance(DefaultApprovalTTL + time.Minute)
		e.poll()
		e.drain()
		c = latest(t, e, requestID(id))
		if c.Conclusion != "timed_out" {
			t.Errorf("check run after expiry: %s %q, want timed_out", c.Conclusion, c.Title)
		}
		t.Logf("expired request: %s", strings.Join(checkCalls(e.gh), ", "))
	})
	t.Run("a create whose answer was lost", func(t *testing.T) {
		// GitHub makes the run after approval but its answer is lost: the bot does not
		// make a second one, it finds that one and completes it.
		e := setupEvents(t, nil)
		id := e.comment("carol", "/benchmark -f nethttp -t baseline")
		e.drain()
		lossy := &losingChecks{CheckRuns: e.bot.Reporter.cfg.Checks, lose: 1}
		e.bot.Reporter.cfg.Checks = lossy // the core the bot's three parts share
		e.comment("bob", "/benchmark-approve")
		e.drain()
		l := e.claim()
		rep := pairedReport(1)
		e.finish(l, queue.Done, "", &rep)
		e.drain()
		var runs []githubtest.CheckRun
		for _, c := range e.gh.CheckRuns(repo) {
			if c.ExternalID == requestID(id) {
				runs = append(runs, c)
			}
		}
		if lossy.lost != 1 || len(runs) != 2 || runs[0].Conclusion != "action_required" || runs[1].Status != "completed" || runs[1].Conclusion != "success" {
			t.Errorf("%d creates lost; runs %+v; want the approval's run, once, completed success", lossy.lost, runs)
		}
		t.Logf("a lost create: %s", strings.Join(checkCalls(e.gh), ", "))
	})
	t.Run("approved after asking", func(t *testing.T) {
		e := setupEvents(t, nil)
		id := e.comment("carol", "/benchmark -f nethttp -t baseline")
		e.drain()
		e.comment("bob", "/benchmark-approve")
		e.drain()
		runs := 0
		for _, c := range e.gh.CheckRuns(repo) {
			if c.ExternalID == requestID(id) {
				runs++
			}
		}
		if c := latest(t, e, requestID(id)); runs != 2 || c.Status != "queued" {
			t.Errorf("%d check runs, the latest %s: want a new queued run after the completed action_required one", runs, c.Status)
		}
	})
}

// losingChecks makes its first lose creates on GitHub and then answers them with an error,
// as a create whose answer was lost.
type losingChecks struct {
	CheckRuns
	lose, lost int
}

func (l *losingChecks) CreateCheckRun(ctx context.Context, inst int64, repo string, r ghapi.CheckRun) (int64, error) {
	id, err := l.CheckRuns.CreateCheckRun(ctx, inst, repo, r)
	if err == nil && l.lost < l.lose {
		l.lost++
		return 0, errors.New("POST check-runs: 502 (the answer was lost)")
	}
	return id, err
}
