package bot

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/queuetest"
)

// The tests of this file follow the line of approved requests across pull requests, as the
// arena's queue is one deep per pull request: requests of different pull requests wait in
// the order they were approved and never displace each other; a pull request's newer
// approved request takes the place of its waiting one; each status comment shows its place
// in line and the request ahead, and follows the line as it moves; a restart keeps it.

// redisBot is a bot on a real redis-server, as serve runs with ARENA_REDIS_URL: the queue
// and the webhook inbox in Redis. restart stops the bot, kills redis-server and starts it
// again (its append-only file fsynced on every write), and starts a new bot on a new client.
type redisBot struct {
	*env
	srv    *queuetest.Server
	prefix string
	stop   func()
}

func setupRedis(t *testing.T) *redisBot {
	t.Helper()
	r := &redisBot{env: setup(t), srv: queuetest.StartRedis(t)}
	r.prefix = queuetest.Prefix(t, r.srv.Client(t))
	r.open()
	t.Cleanup(func() { r.stop() })
	return r
}

func (r *redisBot) open() {
	r.t.Helper()
	rdb := r.srv.Client(r.t)
	q := queue.NewRedis(rdb, queue.Options{Prefix: r.prefix, Now: r.clock})
	c, err := ghapi.New(ghapi.Config{BaseURL: r.gh.URL, Token: "t", BotLogin: githubtest.BotLogin, WriteSpacing: -1, MaxRetries: -1, PermissionTTL: -1})
	if err != nil {
		r.t.Fatal(err)
	}
	r.q = q
	r.bot = New(Config{WebhookSecret: []byte(secret), Now: r.clock, InboxStore: NewRedisInbox(rdb, r.prefix)}, c, q, nil)
	r.hook = r.bot.Webhook()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.bot.Run(ctx)
	}()
	r.stop = func() { cancel(); <-done }
}

func (r *redisBot) restart() {
	r.t.Helper()
	r.stop()
	r.srv.Kill()
	r.srv.Restart()
	r.open()
}

// sayOn posts body as user on pull request pr of the fake GitHub, delivers the
// issue_comment webhook signed, and waits until the intake and the reporter handled it.
func (e *env) sayOn(pr int, user, body string) int64 {
	e.t.Helper()
	id := e.gh.AddComment(repo, pr, user, body)
	p := secComment(e.t, "created", pr, true, id, user, "User", body)
	if w := e.secSigned("issue_comment", fmt.Sprintf("d-%d", id), p); w.Code != http.StatusAccepted {
		e.t.Fatalf("delivery of %q on #%d: %d %s", body, pr, w.Code, w.Body)
	}
	e.wait()
	return id
}

// record returns the queue's record of the request made by comment id.
func (e *env) record(id int64) queue.Job {
	e.t.Helper()
	j, err := e.q.Get(e.t.Context(), requestID(id))
	if err != nil {
		e.t.Fatalf("record of comment %d: %v", id, err)
	}
	return j
}

// statusOn returns the body of the status comment of the request made by comment id, on
// whichever pull request it was made.
func (e *env) statusOn(id int64) string {
	e.t.Helper()
	j := e.record(id)
	for _, c := range e.gh.Comments(repo, j.PR) {
		if c.ID == j.StatusCommentID && j.StatusCommentID != 0 {
			return c.Body
		}
	}
	e.t.Fatalf("request %s has no status comment (record %+v)", j.ID, j)
	return ""
}

// repliesOn returns the bot's final replies to the request made by comment id on pull
// request pr.
func (e *env) repliesOn(pr int, id int64) []string {
	var out []string
	rid := requestID(id)
	for _, c := range e.gh.Comments(repo, pr) {
		if c.User == githubtest.BotLogin &&
			(strings.Contains(c.Body, "<!-- arenabot:results "+rid+" part=1 -->") || strings.Contains(c.Body, report.EndingMarker(rid))) {
			out = append(out, c.Body)
		}
	}
	return out
}

// claimLine claims the next job of the default pool, as the runner does.
func (e *env) claimLine(want int64) queue.Lease {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.t.Context(), 5*time.Second)
	defer cancel()
	l, err := e.q.Claim(ctx, queue.DefaultPool)
	if err != nil {
		e.t.Fatalf("claim: %v", err)
	}
	if l.Job.ID != requestID(want) {
		e.t.Fatalf("claimed %s (PR %d), want %s", l.Job.ID, l.Job.PR, requestID(want))
	}
	e.settle()
	return l
}

// finishLine ends a claimed job with results, as the runner does.
func (e *env) finishLine(l queue.Lease) {
	e.t.Helper()
	rep := nethttpOnly()
	if _, err := e.q.Finish(e.t.Context(), l, outcomeOf(e.t, queue.Done, &rep)); err != nil {
		e.t.Fatalf("finish %s: %v", l.Job.ID, err)
	}
	e.settle()
}

// wantPlace fails unless the status comment of request id shows want as its place in line.
func (e *env) wantPlace(id int64, want string) {
	e.t.Helper()
	body := e.statusOn(id)
	if !strings.Contains(body, "Benchmark queued") || !strings.Contains(body, "\n"+want+" · ") && !strings.Contains(body, "\n"+want+".\n") {
		e.t.Errorf("status of the request of comment %d does not show %q:\n%s", id, want, body)
	}
}

// wantLine fails unless the default pool's line holds the requests of comments ids in order.
func (e *env) wantLine(ids ...int64) {
	e.t.Helper()
	lines, err := e.q.Status(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	var got, want []string
	for _, l := range lines {
		for _, p := range l.Places {
			got = append(got, fmt.Sprintf("%s (PR %d, %s)", p.Job.ID, p.Job.PR, p.Job.State))
		}
	}
	for _, id := range ids {
		j := e.record(id)
		want = append(want, fmt.Sprintf("%s (PR %d, %s)", j.ID, j.PR, j.State))
	}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		e.t.Errorf("line = %s\nwant %s", strings.Join(got, "; "), strings.Join(want, "; "))
	}
}

// oneReply fails unless the request of comment id on pull request pr got exactly one final
// reply, containing want.
func (e *env) oneReply(pr int, id int64, want string) {
	e.t.Helper()
	rs := e.repliesOn(pr, id)
	if len(rs) != 1 {
		e.t.Errorf("final replies of the request of comment %d = %d, want 1:\n%s", id, len(rs), strings.Join(rs, "\n----\n"))
		return
	}
	if !strings.Contains(rs[0], want) {
		e.t.Errorf("the final reply of the request of comment %d does not say %q:\n%s", id, want, rs[0])
	}
}

// lineScenario drives three pull requests' requests through the line (see the file's
// comment); restart restarts the bot and its store at three points.
func lineScenario(t *testing.T, e *env, restart func()) {
	for _, pr := range []int{7, 43} {
		e.gh.AddPR(repo, githubtest.PR{Number: pr, HeadSHA: sha1, HeadRef: fmt.Sprintf("feature-%d", pr), User: "alice", Files: []string{"frameworks/nethttp/main.go"}})
	}
	// PR 7's request runs.
	c7 := e.sayOn(7, "bob", "/benchmark -f nethttp -t baseline")
	l7 := e.claimLine(c7)

	// PR 42's request (a maintainer's, approved at once) and PR 43's (approved by a
	// maintainer's /benchmark-approve) wait behind it, in that order; neither displaces
	// the other and the running job goes on.
	c42 := e.sayOn(prNum, "bob", "/benchmark -f nethttp -t baseline")
	e.wantPlace(c42, "**2nd** in line, behind `octo/arena` PR 7's running job")
	c43 := e.sayOn(43, "carol", "/benchmark -f nethttp -t json")
	if j := e.record(c43); j.State != queue.AwaitingApproval {
		t.Fatalf("carol's request: %s, want awaiting approval", j.State)
	}
	e.sayOn(43, "bob", "/benchmark-approve")
	e.wantLine(c7, c42, c43)
	e.wantPlace(c42, "**2nd** in line, behind `octo/arena` PR 7's running job")
	e.wantPlace(c43, "**3rd** in line, behind `octo/arena` PR 42's job")
	for _, c := range []struct {
		pr int
		id int64
	}{{7, c7}, {prNum, c42}, {43, c43}} {
		if rs := e.repliesOn(c.pr, c.id); len(rs) != 0 {
			t.Errorf("the request of comment %d on PR %d got a final reply while in line:\n%s", c.id, c.pr, rs[0])
		}
	}

	restart() // the line is kept, in order, with each request's pull request
	e.wantLine(c7, c42, c43)

	// PR 42's newer request takes the place of its waiting one, which is told so, once.
	c42b := e.sayOn(prNum, "bob", "/benchmark -f nethttp -t json")
	if j := e.record(c42); j.State != queue.Superseded || j.SupersededBy != requestID(c42b) {
		t.Fatalf("PR 42's first request: %s superseded by %q, want superseded by %s", j.State, j.SupersededBy, requestID(c42b))
	}
	e.oneReply(prNum, c42, "A newer approved request on this pull request took its place in line")
	if body := e.statusOn(c42); !strings.Contains(body, "Benchmark superseded") || !strings.Contains(body, "took its place in line") {
		t.Errorf("status of the superseded request:\n%s", body)
	}
	e.wantLine(c7, c42b, c43)
	e.wantPlace(c42b, "**2nd** in line, behind `octo/arena` PR 7's running job")
	e.wantPlace(c43, "**3rd** in line, behind `octo/arena` PR 42's job")
	if j := e.record(c43); j.State != queue.Queued {
		t.Errorf("PR 43's request after PR 42's newer one: %s, want queued", j.State)
	}

	// PR 7's job ends; the line moves up and the status comments follow it.
	e.finishLine(l7)
	e.oneReply(7, c7, "Benchmark Results")
	e.wantPlace(c42b, "**Next** in line")
	e.wantPlace(c43, "**2nd** in line, behind `octo/arena` PR 42's job")
	l42 := e.claimLine(c42b)
	e.wantPlace(c43, "**2nd** in line, behind `octo/arena` PR 42's running job")

	restart() // while PR 42's job runs
	e.wantLine(c42b, c43)
	e.finishLine(l42)
	e.wantPlace(c43, "**Next** in line")
	l43 := e.claimLine(c43)
	e.finishLine(l43)

	restart() // once everything ran: nothing is replied twice
	e.settle()
	e.oneReply(7, c7, "Benchmark Results")
	e.oneReply(prNum, c42, "Benchmark request superseded")
	e.oneReply(prNum, c42b, "Benchmark Results")
	e.oneReply(43, c43, "Benchmark Results")
	e.wantLine()
	for _, id := range []int64{c7, c42, c42b, c43} {
		if body := e.statusOn(id); strings.Contains(body, "octo/arena#") || strings.Contains(body, "@octo") {
			t.Errorf("status comment of the request of comment %d shows a raw # or @:\n%s", id, body)
		}
	}
}

// TestLineAcrossPRsRedis runs the line scenario on a real Redis, restarting redis-server
// and the bot.
func TestLineAcrossPRsRedis(t *testing.T) {
	r := setupRedis(t)
	lineScenario(t, r.env, r.restart)
}

// TestLineAcrossPRsDisk runs the line scenario on the embedded store, reopening its file.
func TestLineAcrossPRsDisk(t *testing.T) {
	d := setupDisk(t)
	lineScenario(t, d.env, d.restart)
}
