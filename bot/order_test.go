package bot

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/hook"
	"github.com/arenabot/arenabot/queue"
)

// TestOutOfOrderReplay: a request by a contributor, a collaborator's /benchmark-approve
// and the contributor's /benchmark-cancel, missed while the bot was down, are listed by
// GitHub newest first and recovered into an inbox that four workers pop; they are applied
// in the order they were sent (all three in the same second, so by delivery id), one at a
// time for the pull request (the request's first GitHub read is slowed, so a worker that
// popped the approve or the cancel would overtake it), and end as they do when delivered live: approved by bob,
// cancelled by alice, with no reply saying there was nothing to approve or cancel. When
// GitHub sent the approve before the request it answers, the comments are still applied
// in the order they were written. Each inbox kind (memory, Redis, bbolt) is run.
func TestOutOfOrderReplay(t *testing.T) {
	type mode struct {
		name         string
		live         bool
		approveFirst bool // the approve's delivery is sent before the request's, a second earlier
	}
	modes := []mode{
		{name: "live", live: true},
		{name: "recovered"},
		{name: "recovered, sent out of written order", approveFirst: true},
	}
	for _, k := range inboxKinds {
		for _, m := range modes {
			if m.live && k.name != "Memory" {
				continue // the reference: the inbox kind does not change it
			}
			t.Run(k.name+"/"+m.name, func(t *testing.T) {
				e := setup(t)
				e.gh.SetClock(e.clock)
				in, _ := k.open(t)
				e.rebuild(func(c *Config) { c.InboxStore = in })
				e.run()
				live := httptest.NewServer(e.hook)
				t.Cleanup(live.Close)
				url := "http://127.0.0.1:1/webhook" // nothing listens there: the bot is down
				if m.live {
					url = live.URL
				}
				deliver := func(guid string, id int64, user, body string) {
					e.gh.Deliver(url, []byte(secret), "issue_comment", guid, commentPayload(t, id, user, "User", body))
					if m.live {
						e.wait()
					}
				}
				const request, approve, cancel = "/benchmark -f nethttp -t baseline", "/benchmark-approve", "/benchmark-cancel"
				req := e.gh.AddComment(repo, prNum, "alice", request)
				if m.approveFirst {
					app := e.gh.AddComment(repo, prNum, "bob", approve)
					deliver("g-approve", app, "bob", approve)
					e.advance(time.Second)
					deliver("g-request", req, "alice", request)
				} else {
					deliver("g-request", req, "alice", request)
					deliver("g-approve", e.gh.AddComment(repo, prNum, "bob", approve), "bob", approve)
				}
				deliver("g-cancel", e.gh.AddComment(repo, prNum, "alice", cancel), "alice", cancel)
				if !m.live {
					if ds := e.gh.Deliveries(); len(ds) != 3 || ds[0].StatusCode != 0 {
						t.Fatalf("deliveries = %+v; want three that failed", ds)
					}
					// The request's read of the PR is slow: a worker that took the approve or
					// the cancel meanwhile must wait for it.
					e.gh.SlowNext("GET", "/repos/octo/arena/pulls/42", 1, 200*time.Millisecond)
					n, err := NewRecovery(e.bot.Intake, appClient(t, e)).Recover(t.Context(), time.Hour)
					if err != nil || n != 3 {
						t.Fatalf("Recover = %d, %v; want the 3 missed comments", n, err)
					}
					e.wait()
				}
				rs := e.records()
				if len(rs) != 1 {
					t.Fatalf("records = %s; want the one request", jobLines(rs))
				}
				if j := rs[0]; j.ID != requestID(req) || j.State != queue.Cancelled || j.Approver != "bob" || j.CancelledBy != "alice" || j.SHA != sha1 {
					t.Errorf("request = %s %s, approved by %q, cancelled by %q at %s; want cancelled by alice after bob approved it at %s",
						j.ID, j.State, j.Approver, j.CancelledBy, j.SHA, sha1)
				}
				for _, c := range e.botComments() {
					if strings.Contains(c.Body, "**Problem:**") {
						t.Errorf("a command was applied before the request it answers; the bot replied:\n%s", c.Body)
					}
				}
				e.oneEnding(requestID(req), "alice", "cancelled")
			})
		}
	}
}

// TestRecoverSentOrder: the deliveries to recover are ordered by their first attempt (a
// GUID that failed twice counts from the first time), by delivered_at and, within one
// second, by id; those answered 2xx at some attempt and events the bot ignores are left.
func TestRecoverSentOrder(t *testing.T) {
	at := time.Date(2026, 1, 6, 10, 0, 0, 0, time.UTC)
	d := func(id int64, guid string, sec, code int) ghapi.HookDelivery {
		return ghapi.HookDelivery{ID: id, GUID: guid, Event: "issue_comment", Action: "created", StatusCode: code, DeliveredAt: at.Add(time.Duration(sec) * time.Second)}
	}
	// Newest first, as GitHub lists them.
	ds := []ghapi.HookDelivery{
		d(9, "cancel", 5, 0),
		d(8, "approve", 5, 502), // a redelivery of a GUID first sent at second 1
		d(7, "done", 4, 202),
		d(6, "request", 3, 0),
		d(5, "approve", 1, 0),
		d(4, "done", 1, 0), // delivered again later with success
		d(3, "second", 0, 0),
		d(2, "first", 0, 0),
		{ID: 1, GUID: "check", Event: "check_run", DeliveredAt: at},
	}
	var got []string
	for _, m := range sentOrder(ds) {
		got = append(got, m.d.GUID)
	}
	if want := "first second approve request cancel"; strings.Join(got, " ") != want {
		t.Errorf("sent order = %v; want %s", got, want)
	}
}

// TestThumbsUpAfterForcePush: the PR's head moves after the ack and GitHub's synchronize
// delivery never arrives. A collaborator's 👍 then approves nothing: the poller reads the
// PR's head before approving, records the move, and the status comment says that a 👍 no
// longer approves and which command does; the next poll of the unchanged reactions reads
// nothing. A bare /benchmark-approve and one naming the new head are refused with replies
// naming the commits; /benchmark-approve naming the acked commit approves measuring it.
func TestThumbsUpAfterForcePush(t *testing.T) {
	e := setup(t)
	cmd := e.comment("alice", "/benchmark -f nethttp -t baseline")
	st := e.statusOf(cmd)
	e.gh.SetHead(repo, prNum, sha2) // a force-push; its delivery is lost
	e.gh.React(repo, st.ID, "bob", "+1")
	e.poll()
	if js := e.jobs(); len(js) != 0 {
		t.Fatalf("a 👍 approved the acked %s after the head moved to %s: %s", sha1[:7], sha2[:7], jobLines(js))
	}
	p := e.pending()
	if len(p) != 1 || p[0].HeadMoved != sha2 {
		t.Fatalf("pending = %s; want one whose head moved to %s", jobLines(p), sha2)
	}
	body := e.statusOf(cmd).Body
	for _, want := range []string{
		"moved from `" + sha1[:12] + "` to `" + sha2[:12] + "`",
		"a 👍 on this comment no longer approves it",
		"`/benchmark-approve " + sha1[:12] + "`",
		"make a new request",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the status comment does not say %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "reacting 👍") {
		t.Errorf("the status comment still offers 👍 to approve:\n%s", body)
	}
	pulls := len(e.gh.CallsTo("GET", "/repos/octo/arena/pulls/42"))
	e.poll()
	if n := len(e.gh.CallsTo("GET", "/repos/octo/arena/pulls/42")); n != pulls || len(e.jobs()) != 0 {
		t.Errorf("the poll of unchanged reactions read the PR again (%d reads, was %d) or approved (%d jobs)", n, pulls, len(e.jobs()))
	}

	reply := func(id int64) string {
		t.Helper()
		for _, c := range e.botComments() {
			if strings.Contains(c.Body, replyMarker(id)) {
				return c.Body
			}
		}
		t.Fatalf("no reply to comment %d", id)
		return ""
	}
	bare := e.comment("bob", "/benchmark-approve")
	if got := reply(bare); len(e.jobs()) != 0 || !strings.Contains(got, "moved from `"+sha1[:12]+"` to `"+sha2[:12]+"`") ||
		!strings.Contains(got, "`/benchmark-approve "+sha1[:12]+"`") {
		t.Errorf("bare /benchmark-approve: jobs %s, reply:\n%s", jobLines(e.jobs()), got)
	}
	wrong := e.comment("bob", "/benchmark-approve "+sha2[:7])
	if got := reply(wrong); len(e.jobs()) != 0 || !strings.Contains(got, "`"+sha2[:7]+"` is not the commit") ||
		!strings.Contains(got, "it measures `"+sha1[:12]+"`") || !strings.Contains(got, "`/benchmark-approve "+sha1[:12]+"`") {
		t.Errorf("/benchmark-approve of the new head: jobs %s, reply:\n%s", jobLines(e.jobs()), got)
	}
	denied := e.comment("carol", "/benchmark-approve "+sha1[:7])
	if got := reply(denied); len(e.jobs()) != 0 || !strings.Contains(got, "write") {
		t.Errorf("/benchmark-approve by a reader: jobs %s, reply:\n%s", jobLines(e.jobs()), got)
	}
	ok := e.comment("bob", "/benchmark-approve "+sha1[:7])
	js := e.jobs()
	if len(js) != 1 || js[0].SHA != sha1 || js[0].Approver != "bob" {
		t.Fatalf("/benchmark-approve %s: jobs = %s; want one measuring %s approved by bob", sha1[:7], jobLines(js), sha1)
	}
	if rs := e.gh.Reactions(repo, ok); len(rs) != 1 || rs[0].Content != "+1" {
		t.Errorf("reactions on the approving comment = %+v", rs)
	}
	for _, c := range e.botComments() {
		if strings.Contains(c.Body, replyMarker(ok)) {
			t.Errorf("the approving comment got a reply:\n%s", c.Body)
		}
	}
}

// TestThumbsUpHeadUnchanged: while the PR's head is the acked commit, a 👍 approves as
// before, after one read of the PR; a 👎 declines without reading it.
func TestThumbsUpHeadUnchanged(t *testing.T) {
	for _, content := range []string{"+1", "-1"} {
		t.Run(content, func(t *testing.T) {
			e := setup(t)
			cmd := e.comment("alice", "/benchmark -f nethttp -t baseline")
			pulls := len(e.gh.CallsTo("GET", "/repos/octo/arena/pulls/42"))
			e.gh.React(repo, e.statusOf(cmd).ID, "bob", content)
			e.poll()
			reads := len(e.gh.CallsTo("GET", "/repos/octo/arena/pulls/42")) - pulls
			j, err := e.q.Get(t.Context(), requestID(cmd))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case content == "+1" && (j.State != queue.Queued || j.Approver != "bob" || reads != 1):
				t.Errorf("👍: %s approved by %q after %d reads of the PR; want queued by bob after one", j.State, j.Approver, reads)
			case content == "-1" && (j.State != queue.Rejected || reads != 0):
				t.Errorf("👎: %s after %d reads of the PR; want rejected after none", j.State, reads)
			}
		})
	}
}

// TestThumbsUpAfterForcePushBack: the head moves away (the synchronize delivered: the
// status comment warns) and is force-pushed back to the acked commit (that delivery lost):
// the 👍 approves, since the head a reviewer sees is the acked commit again, and the
// queued status comment no longer warns of a moved head.
func TestThumbsUpAfterForcePushBack(t *testing.T) {
	e := setup(t)
	cmd := e.comment("alice", "/benchmark -f nethttp -t baseline")
	e.gh.SetHead(repo, prNum, sha2)
	if err := e.bot.HandlePullRequest(t.Context(), hook.PullRequest{Action: "synchronize", Repo: repo, Number: prNum, Before: sha1, After: sha2, HeadSHA: sha2}); err != nil {
		t.Fatal(err)
	}
	e.settle()
	if body := e.statusOf(cmd).Body; !strings.Contains(body, "no longer approves") {
		t.Fatalf("the status comment does not warn of the move:\n%s", body)
	}
	e.gh.SetHead(repo, prNum, sha1)
	e.gh.React(repo, e.statusOf(cmd).ID, "bob", "+1")
	e.poll()
	js := e.jobs()
	if len(js) != 1 || js[0].SHA != sha1 || js[0].Approver != "bob" || js[0].HeadMoved != "" {
		t.Fatalf("jobs = %s; want one at %s approved by bob, its head not moved", jobLines(js), sha1[:7])
	}
	if body := e.statusOf(cmd).Body; strings.Contains(body, "[!WARNING]") {
		t.Errorf("the status comment still warns of a moved head:\n%s", body)
	}
}

// TestLanes: a delivery for a pull request another worker handles waits in its lane and
// is handed, in order, to that worker; another pull request is claimed at once; an empty
// lane frees its pull request.
func TestLanes(t *testing.T) {
	var l lanes
	p := func(id string) popped { return popped{d: hook.Delivery{ID: id}} }
	if !l.enter("o/r#1", p("a1")) || l.enter("o/r#1", p("a2")) || l.enter("o/r#1", p("a3")) || !l.enter("o/r#2", p("b1")) {
		t.Fatal("enter: want the first delivery of each pull request claimed and the others queued")
	}
	var got []string
	for {
		n, ok := l.next("o/r#1")
		if !ok {
			break
		}
		got = append(got, n.d.ID)
	}
	if strings.Join(got, " ") != "a2 a3" {
		t.Errorf("lane of o/r#1 = %v; want a2 a3", got)
	}
	if _, ok := l.next("o/r#2"); ok || !l.enter("o/r#1", p("a4")) || !l.enter("o/r#2", p("b2")) {
		t.Error("an emptied lane did not free its pull request")
	}
}

// jobLines renders records briefly for a failure message.
func jobLines(js []queue.Job) string {
	var b strings.Builder
	b.WriteString("[")
	for i, j := range js {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s %s at %.7s approved by %q head moved to %.7s", j.ID, j.State, j.SHA, j.Approver, j.HeadMoved)
	}
	return b.String() + "]"
}
