package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/result"
)

// statusEdits counts the PATCHes of a comment.
func (e *evEnv) statusEdits(id int64) int {
	return len(e.gh.CallsTo("PATCH", fmt.Sprintf("/repos/octo/arena/issues/comments/%d", id)))
}

// enqueue adds an approved job on pull request pr with a status comment, as approve does.
func (e *evEnv) enqueue(pr int) queue.Job {
	e.t.Helper()
	id := fmt.Sprintf("r%d", 5000+pr)
	st := e.gh.AddComment(repo, pr, githubtest.BotLogin, "📋 **Benchmark queued**\n\n"+report.Marker(id))
	j := queue.Job{ID: id, Repo: repo, PR: pr, Requester: "bob", Command: "/benchmark -f nethttp -t baseline",
		Kind: queue.Benchmark, Frameworks: []string{"nethttp"}, Tests: []string{"baseline"}, SHA: sha1, StatusCommentID: st}
	stored, _, err := e.q.Enqueue(e.t.Context(), j)
	if err != nil {
		e.t.Fatal(err)
	}
	return stored
}

// repliesOn returns the bot's results comments of job id on pull request pr.
func (e *evEnv) repliesOn(pr int, id string) []githubtest.Comment {
	var out []githubtest.Comment
	for _, c := range e.gh.Comments(repo, pr) {
		if c.User == githubtest.BotLogin && strings.Contains(c.Body, "<!-- arenabot:results "+id+" ") {
			out = append(out, c)
		}
	}
	return out
}

func nethttpOnly() result.Report {
	rep := testReport(false)
	rep.Rows, rep.Frameworks = rep.Rows[:2], []string{"nethttp"}
	return rep
}

func TestProgressFloodFewEdits(t *testing.T) {
	for _, read := range []string{"while running", "with the outcome"} {
		t.Run(read, func(t *testing.T) {
			e := setupEvents(t, nil)
			j := e.request("/benchmark -f nethttp -t baseline")
			before := e.statusEdits(j.StatusCommentID)
			l := e.claim()
			for i := 1; i <= 100; i++ {
				e.publish(j.ID, queue.EventProgress, result.Progress{Entry: "nethttp", Profile: "baseline", Conns: 4096, Row: i, Rows: 100, Done: i - 1})
			}
			if read == "while running" {
				e.drain()
				if st := e.commentByID(j.StatusCommentID); !strings.Contains(st.Body, "Benchmark running") {
					t.Errorf("status while running = %s", st.Body)
				}
			}
			rep := nethttpOnly()
			e.finish(l, queue.Done, "", &rep)
			e.drain()
			// Read while running: started and final; read after the outcome: the final
			// edit only (the job had ended, so no running edit is made).
			edits := e.statusEdits(j.StatusCommentID) - before
			if edits < 1 || edits > 3 {
				t.Errorf("status edits for started + 100 progress + outcome = %d, want 1 to 3", edits)
			}
			if st := e.commentByID(j.StatusCommentID); !strings.Contains(st.Body, "Benchmark done") {
				t.Errorf("status after the flood = %s", st.Body)
			}
			if n := len(e.replies(j.ID)); n != 1 {
				t.Errorf("replies = %d", n)
			}
		})
	}
}

func TestProgressThrottledAndFlushed(t *testing.T) {
	e := setupEvents(t, nil)
	j := e.request("/benchmark -f nethttp -t baseline")
	l := e.claim()
	e.drain()
	st := e.commentByID(j.StatusCommentID)
	if !strings.Contains(st.Body, "Benchmark running") || !strings.Contains(st.Body, "Preparing the run") {
		t.Fatalf("status after started = %s", st.Body)
	}
	edits := e.statusEdits(j.StatusCommentID)
	progress := func(row int) {
		e.publish(j.ID, queue.EventProgress, result.Progress{Entry: "nethttp", Profile: "baseline", Conns: 4096, Row: row, Rows: 24, Done: row - 1})
	}
	progress(2)
	progress(3)
	e.publish(j.ID, queue.EventRow, measuredRow("nethttp", "baseline", 4096, 170000))
	e.drain()
	if n := e.statusEdits(j.StatusCommentID); n != edits {
		t.Errorf("progress within %s of the last edit was shown (%d edits, want %d)", DefaultProgressEvery, n, edits)
	}
	// The interval passes with no new event: the latest progress is shown.
	e.advance(DefaultProgressEvery)
	if _, err := e.bot.HandleEvents(t.Context(), "test", 0); err != nil {
		t.Fatal(err)
	}
	st = e.commentByID(j.StatusCommentID)
	if e.statusEdits(j.StatusCommentID) != edits+1 || !strings.Contains(st.Body, "baseline 4096c — 3 of 24") || !strings.Contains(st.Body, "3/24") {
		t.Errorf("status after the interval (%d edits) = %s", e.statusEdits(j.StatusCommentID)-edits, st.Body)
	}
	// Progress not shown yet when the job ends is dropped: the final edit is the last.
	progress(4)
	e.drain()
	rep := nethttpOnly()
	e.finish(l, queue.Done, "", &rep)
	e.drain()
	final := e.statusEdits(j.StatusCommentID)
	e.advance(time.Minute)
	progress(5) // a late or redelivered event
	e.drain()
	e.advance(time.Minute)
	e.drain()
	if n := e.statusEdits(j.StatusCommentID); n != final {
		t.Errorf("%d edits after the final one", n-final)
	}
	if st := e.commentByID(j.StatusCommentID); !strings.Contains(st.Body, "Benchmark done") {
		t.Errorf("status = %s", st.Body)
	}
}

func TestRunEventsLoop(t *testing.T) {
	e := setupEvents(t, func(c *Config) {
		c.Now = time.Now
		c.ProgressEvery = 100 * time.Millisecond
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.bot.RunEvents(ctx, "arenabot") }()

	j := e.request("/benchmark -f nethttp -t baseline")
	l := e.claim()
	start := time.Now()
	for i := 1; i <= 100; i++ {
		e.publish(j.ID, queue.EventProgress, result.Progress{Entry: "nethttp", Profile: "baseline", Conns: 512, Row: i, Rows: 100, Done: i - 1})
	}
	// The last progress is shown once the interval passed, without a further event.
	waitFor(t, func() bool { return strings.Contains(e.commentByID(j.StatusCommentID).Body, "100 of 100") })
	if n, most := e.statusEdits(j.StatusCommentID), 2+int(time.Since(start)/(100*time.Millisecond))+1; n > most {
		t.Errorf("status edits = %d, want at most %d", n, most)
	}
	rep := nethttpOnly()
	e.finish(l, queue.Done, "", &rep)
	waitFor(t, func() bool { return len(e.replies(j.ID)) == 1 })
	waitFor(t, func() bool { return strings.Contains(e.commentByID(j.StatusCommentID).Body, "Benchmark done") })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("RunEvents = %v, want context.Canceled", err)
	}
	if err := e.bot.RunEvents(t.Context(), ""); err == nil {
		t.Error("RunEvents with no consumer name: no error")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// failingAck is a queue whose Ack fails, as when Redis goes away after the reply.
type failingAck struct{ queue.Queue }

func (failingAck) Ack(context.Context, string, ...string) error {
	return errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")
}

func TestRestartHandlesUnackedOnce(t *testing.T) {
	t.Run("reply failed", func(t *testing.T) {
		e := setupEvents(t, nil)
		j := e.request("/benchmark -f nethttp -t baseline --save")
		l := e.claim()
		rep := nethttpOnly()
		e.finish(l, queue.Done, "", &rep)
		e.gh.FailNext("POST", "/repos/octo/arena/issues/42/comments", 1, http.StatusBadGateway)
		e.drain()
		if n := len(e.replies(j.ID)); n != 0 {
			t.Fatalf("replies = %d", n)
		}
		// A new process with the same consumer name handles the pending delivery at once.
		e.restart(nil)
		e.drain()
		if n := len(e.replies(j.ID)); n != 1 {
			t.Errorf("replies after the restart = %d, want 1", n)
		}
		if n := len(e.gh.Commits(repo)); n != 1 {
			t.Errorf("commits = %d, want 1", n)
		}
		e.restart(nil)
		e.drain()
		if n := len(e.replies(j.ID)); n != 1 {
			t.Errorf("replies after a second restart = %d, want 1", n)
		}
	})
	t.Run("ack failed", func(t *testing.T) {
		e := setupEvents(t, nil)
		j := e.request("/benchmark -f nethttp -t baseline --save")
		l := e.claim()
		e.drain() // started
		rep := nethttpOnly()
		done := e.finish(l, queue.Done, "", &rep)
		// The reply is posted and committed, then the queue cannot be reached to ack.
		e.restart(failingAck{e.q})
		if _, err := e.bot.HandleEvents(t.Context(), "test", 0); err == nil {
			t.Fatal("HandleEvents with a failing Ack: no error")
		}
		if n, c := len(e.replies(j.ID)), len(e.gh.Commits(repo)); n != 1 || c != 1 {
			t.Fatalf("first process: %d replies, %d commits; want 1, 1", n, c)
		}
		calls := len(e.gh.Calls())
		e.restart(nil)
		e.drain()
		if n := len(e.replies(j.ID)); n != 1 {
			t.Errorf("replies = %d, want 1", n)
		}
		if n := len(e.gh.Commits(repo)); n != 1 {
			t.Errorf("commits = %d, want 1", n)
		}
		if n := len(e.gh.CallsTo("POST", "/repos/octo/arena/issues/42/comments")); n != 2 { // status, reply
			t.Errorf("comment POSTs = %d, want 2", n)
		}
		if st := e.commentByID(done.StatusCommentID); !strings.Contains(st.Body, "Benchmark done") {
			t.Errorf("status = %s", st.Body)
		}
		if tms := e.replyTimings(); len(tms) != 2 {
			t.Errorf("timings = %+v, want the reply and its idempotent repetition", tms)
		}
		t.Logf("the redelivered outcome made %d GitHub calls", len(e.gh.Calls())-calls)
		e.drain()
		if tms := e.replyTimings(); len(tms) != 2 {
			t.Errorf("handled again after the ack: %+v", tms)
		}
	})
}

func TestFailedFinalDoesNotBlockOthers(t *testing.T) {
	e := setupEvents(t, nil)
	// Every final reply on PRs 50-59 fails until four POSTs have been refused.
	e.gh.FailNext("POST", "/repos/octo/arena/issues/5?/comments", EventLanes, http.StatusServiceUnavailable)
	var jobs []queue.Job
	for i := range EventLanes + 1 {
		j := e.enqueue(50 + i)
		l := e.claim()
		e.publish(j.ID, queue.EventProgress, result.Progress{Entry: "nethttp", Profile: "baseline", Conns: 512, Row: 1, Rows: 2})
		rep := nethttpOnly()
		e.finish(l, queue.Done, "", &rep)
		jobs = append(jobs, j)
		e.drain()
	}
	for i, j := range jobs[:EventLanes] {
		if n := len(e.repliesOn(j.PR, j.ID)); n != 0 {
			t.Errorf("job %d: %d replies while GitHub refused them", i, n)
		}
	}
	// With every lane holding a failed final event, the last job's events wait.
	last := jobs[EventLanes]
	if n := len(e.repliesOn(last.PR, last.ID)); n != 0 {
		t.Errorf("last job replied while every lane was held: %d", n)
	}
	// Meanwhile a job on another PR whose reply works is not held back once a lane frees.
	e.advance(DefaultFinalRetry)
	e.drain()
	for i, j := range jobs {
		if n := len(e.repliesOn(j.PR, j.ID)); n != 1 {
			t.Errorf("job %d: %d replies, want 1", i, n)
		}
	}
	if n := len(e.gh.CallsTo("POST", "/repos/octo/arena/issues/5?/comments")); n != 2*EventLanes+1 {
		t.Errorf("comment POSTs = %d, want %d", n, 2*EventLanes+1)
	}
}

func TestFailedFinalLeavesNewEventsFlowing(t *testing.T) {
	e := setupEvents(t, nil)
	e.gh.FailNext("POST", "/repos/octo/arena/issues/60/comments", 2, http.StatusBadGateway)
	a := e.enqueue(60)
	l := e.claim()
	rep := nethttpOnly()
	e.finish(l, queue.Done, "", &rep)
	e.drain()
	b := e.enqueue(61)
	l = e.claim()
	e.finish(l, queue.Done, "", &rep)
	e.drain()
	if len(e.repliesOn(a.PR, a.ID)) != 0 || len(e.repliesOn(b.PR, b.ID)) != 1 {
		t.Fatalf("replies: a %d (failing), b %d", len(e.repliesOn(a.PR, a.ID)), len(e.repliesOn(b.PR, b.ID)))
	}
	e.advance(DefaultFinalRetry)
	e.drain() // fails again: the wait doubles
	e.advance(DefaultFinalRetry)
	if e.drain(); len(e.repliesOn(a.PR, a.ID)) != 0 {
		t.Error("retried before the doubled wait")
	}
	e.advance(DefaultFinalRetry)
	e.drain()
	if n := len(e.repliesOn(a.PR, a.ID)); n != 1 {
		t.Errorf("a: %d replies, want 1", n)
	}
}

func TestFinalRetryGivesUp(t *testing.T) {
	e := setupEvents(t, func(c *Config) { c.FinalRetryFor = time.Hour })
	e.gh.FailNext("POST", "/repos/octo/arena/issues/70/comments", 1000, http.StatusBadGateway)
	e.enqueue(70)
	rep := nethttpOnly()
	e.finish(e.claim(), queue.Done, "", &rep)
	e.drain()
	for range 30 {
		e.advance(MaxFinalRetry)
		e.drain()
	}
	posts := len(e.gh.CallsTo("POST", "/repos/octo/arena/issues/70/comments"))
	e.advance(MaxFinalRetry)
	e.drain()
	if n := len(e.gh.CallsTo("POST", "/repos/octo/arena/issues/70/comments")); n != posts || posts < 3 {
		t.Errorf("POSTs %d then %d: want retries that stop after FinalRetryFor", posts, n)
	}
}

func TestProgressText(t *testing.T) {
	one := queue.Job{Frameworks: []string{"nethttp"}}
	multi := queue.Job{Frameworks: []string{"nethttp", "gin"}}
	for _, tt := range []struct {
		j    queue.Job
		p    result.Progress
		want string
	}{
		{one, result.Progress{Entry: "nethttp", Profile: "baseline", Conns: 4096, Row: 3, Rows: 24}, "baseline 4096c — 3 of 24"},
		{multi, result.Progress{Entry: "gin", Profile: "json", Conns: 512, Row: 7, Rows: 24, Failed: 1}, "gin · json 512c — 7 of 24 (1 failed)"},
		{one, result.Progress{Entry: "nethttp", Note: "building the image"}, "building the image"},
	} {
		if got := progressText(len(tt.j.Frameworks), tt.p); got != tt.want {
			t.Errorf("progressText(%+v) = %q, want %q", tt.p, got, tt.want)
		}
	}
}

// TestSplitJobOnHosts: a job split into shares over two hosts: the shares' own events
// (queued, started, outcome) post nothing; their progress, sent as the job's with each
// host named, shows in the job's status comment added up over the hosts; the job's one
// reply names each row's host.
func TestSplitJobOnHosts(t *testing.T) {
	e := setupEvents(t, nil)
	j := e.request("/benchmark -f nethttp -t baseline")
	l := e.claim()
	e.drain()
	comments := len(e.botComments())
	var shares []queue.Lease
	for n, host := range []string{"bench-a", "bench-b"} {
		s := queue.Job{ID: queue.ShareID(j.ID, n+1), Parent: j.ID, Repo: j.Repo, PR: j.PR, Requester: j.Requester,
			Command: "share of " + j.Command, Kind: j.Kind, SHA: j.SHA, Pool: j.Pool}
		if _, _, err := e.q.Enqueue(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		sl, err := e.q.ClaimShare(t.Context(), j.Pool, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		shares = append(shares, sl)
		e.publish(j.ID, queue.EventProgress, result.Progress{Entry: "nethttp", Profile: "baseline", Conns: 512 * (n + 1), Row: 2, Rows: 2, Done: 1, Host: host})
	}
	e.advance(DefaultProgressEvery)
	e.drain()
	st := e.commentByID(j.StatusCommentID)
	for _, want := range []string{"on 2 hosts", "bench-a: baseline 512c — 2 of 2", "bench-b: baseline 1024c — 2 of 2", "2/4", "done on 2 hosts"} {
		if !strings.Contains(st.Body, want) {
			t.Errorf("status comment of the split job lacks %q:\n%s", want, st.Body)
		}
	}
	rep := nethttpOnly()
	for i, sl := range shares {
		rep.Rows[i].Host = []string{"bench-a", "bench-b"}[i]
		e.finish(sl, queue.Done, "", nil)
	}
	e.drain()
	if n := len(e.botComments()); n != comments {
		t.Fatalf("the shares' events posted %d comments", n-comments)
	}
	e.finish(l, queue.Done, "", &rep)
	e.drain()
	replies := e.replies(j.ID)
	if len(replies) != 1 {
		t.Fatalf("replies = %d, want 1", len(replies))
	}
	if !strings.Contains(replies[0].Body, "Measured on `bench-a`: baseline 512; on `bench-b`: baseline 4096.") {
		t.Errorf("the reply does not name each row's host:\n%s", replies[0].Body)
	}
	for _, sl := range shares {
		if n := len(e.replies(sl.Job.ID)); n != 0 {
			t.Errorf("share %s got %d replies", sl.Job.ID, n)
		}
	}
}

// TestLinksFollowTheGitHub: with the bot on a GitHub Enterprise Server (Config.WebURL), the
// reply's links point at it, never at github.com.
func TestLinksFollowTheGitHub(t *testing.T) {
	e := setupEvents(t, func(c *Config) { c.WebURL = "https://ghe.example.com" })
	j := e.request("/benchmark -f nethttp -t baseline")
	l := e.claim()
	rep := nethttpOnly()
	e.finish(l, queue.Done, "", &rep)
	e.drain()
	replies := e.replies(j.ID)
	if len(replies) != 1 {
		t.Fatalf("replies = %d, want 1", len(replies))
	}
	want := fmt.Sprintf("https://ghe.example.com/%s/pull/%d#issuecomment-%d", j.Repo, j.PR, j.StatusCommentID)
	if body := replies[0].Body; !strings.Contains(body, want) || strings.Contains(body, "https://github.com/") {
		t.Errorf("the reply does not link %s only:\n%s", want, body)
	}
}
