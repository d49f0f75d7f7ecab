package bot

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/queue"
)

// The tests of this file drive the bot as users do: signed webhook deliveries of real
// comment payloads to the running intake, reactions on the fake GitHub, the poller, and
// the reporter handling the queue's events.

// say posts body as user on the fake GitHub, delivers it through the signed webhook and
// waits until the intake and the reporter handled it.
func (e *env) say(user, body string) int64 {
	e.t.Helper()
	id := e.gh.AddComment(repo, prNum, user, body)
	p := secComment(e.t, "created", prNum, true, id, user, "User", body)
	if w := e.secSigned("issue_comment", fmt.Sprintf("d-%d", id), p); w.Code != http.StatusAccepted {
		e.t.Fatalf("delivery of %q: %d %s", body, w.Code, w.Body)
	}
	e.wait()
	return id
}

// statusOf returns the status comment of the request made by comment id.
func (e *env) statusOf(id int64) githubtest.Comment {
	e.t.Helper()
	j, err := e.q.Get(e.t.Context(), requestID(id))
	if err != nil {
		e.t.Fatalf("record of comment %d: %v", id, err)
	}
	for _, c := range e.gh.Comments(repo, prNum) {
		if c.ID == j.StatusCommentID && j.StatusCommentID != 0 {
			return c
		}
	}
	e.t.Fatalf("request %s has no status comment (record %+v)", j.ID, j)
	return githubtest.Comment{}
}

// finalReplies returns the bot's comments that end request id: its results or its ending.
func (e *env) finalReplies(id string) []githubtest.Comment {
	var out []githubtest.Comment
	for _, c := range e.botComments() {
		if strings.Contains(c.Body, "<!-- arenabot:results "+id+" part=1 -->") || strings.Contains(c.Body, report.EndingMarker(id)) {
			out = append(out, c)
		}
	}
	return out
}

var internalID = regexp.MustCompile(`\br\d{2,}\b`)

// oneEnding fails unless request id got exactly one final reply, which mentions login on
// its first line, says want, is not titled "Benchmark Results" and shows no internal id.
func (e *env) oneEnding(id, login, want string) githubtest.Comment {
	e.t.Helper()
	rs := e.finalReplies(id)
	if len(rs) != 1 {
		e.t.Fatalf("final replies of %s = %d, want 1: %+v", id, len(rs), rs)
	}
	body := rs[0].Body
	first, _, _ := strings.Cut(body, "\n")
	if !strings.Contains(first, "@"+login) {
		e.t.Errorf("the final reply of %s does not mention @%s on its first line:\n%s", id, login, body)
	}
	if !strings.Contains(strings.ToLower(body), want) {
		e.t.Errorf("the final reply of %s does not say %q:\n%s", id, want, body)
	}
	if strings.Contains(body, "Benchmark Results") {
		e.t.Errorf("a reply without results is titled Benchmark Results:\n%s", body)
	}
	if visible := hiddenComment.ReplaceAllString(body, ""); internalID.MatchString(visible) {
		e.t.Errorf("the final reply of %s shows an internal id:\n%s", id, body)
	}
	return rs[0]
}

var hiddenComment = regexp.MustCompile(`(?s)<!--.*?-->`)

// A 👍 whose author's permission could not be read is read again at the next poll (the
// ETag of that read is not kept), and approves then.
func TestLifecyclePermissionErrorLookedAtAgain(t *testing.T) {
	e := setup(t)
	e.run()
	cmd := e.say("alice", secCommand)
	st := e.statusOf(cmd)
	e.gh.React(repo, st.ID, "bob", "+1")
	e.gh.FailNext("GET", "/repos/octo/arena/collaborators/bob/permission", 1, http.StatusBadGateway)
	e.poll()
	if len(e.jobs()) != 0 {
		t.Fatal("approved although the permission could not be read")
	}
	e.poll()
	js := e.jobs()
	if len(js) != 1 || js[0].Approver != "bob" {
		t.Fatalf("the 👍 was not looked at again: jobs %+v, pending %+v", js, e.pending())
	}
	if got := e.statusOf(cmd); !strings.Contains(got.Body, "Benchmark queued") {
		t.Errorf("status = %s", got.Body)
	}
}

// A status edit that fails is retried until it lands: the comment converges on the
// record, and the approval is not lost.
func TestLifecycleFailedEditConverges(t *testing.T) {
	e := setup(t)
	e.run()
	cmd := e.say("alice", secCommand)
	e.gh.FailNext("PATCH", "/repos/octo/arena/issues/comments/*", 3, http.StatusBadGateway)
	e.say("bob", "/benchmark-approve")
	if js := e.jobs(); len(js) != 1 {
		t.Fatalf("jobs = %+v", js)
	}
	for range 6 {
		e.advance(time.Minute)
		e.settle()
	}
	if got := e.statusOf(cmd); !strings.Contains(got.Body, "Benchmark queued") || strings.Contains(got.Body, "approves by reacting") {
		t.Fatalf("the status comment did not converge on the queued record:\n%s", got.Body)
	}
}

// Every way a request ends gets exactly one final reply, mentioning the requester,
// titled by the outcome; none of them is "Benchmark Results".
func TestLifecycleEveryEndingReplies(t *testing.T) {
	for _, tc := range []struct {
		name, requester, want string
		run                   func(e *env) (ended int64)
	}{
		{"declined", "alice", "declined", func(e *env) int64 {
			cmd := e.say("alice", secCommand)
			e.gh.React(repo, e.statusOf(cmd).ID, "bob", "-1")
			e.poll()
			return cmd
		}},
		{"expired", "alice", "expired", func(e *env) int64 {
			cmd := e.say("alice", secCommand)
			e.advance(DefaultApprovalTTL + time.Minute)
			e.poll()
			return cmd
		}},
		{"pending, cancelled by the requester", "alice", "cancelled", func(e *env) int64 {
			cmd := e.say("alice", secCommand)
			e.say("alice", "/benchmark-cancel")
			return cmd
		}},
		{"pending, replaced by the requester's newer request", "alice", "superseded", func(e *env) int64 {
			cmd := e.say("alice", secCommand)
			e.say("alice", "/benchmark -f nethttp -t json")
			return cmd
		}},
		{"queued, cancelled", "bob", "cancelled", func(e *env) int64 {
			cmd := e.say("bob", secCommand)
			e.say("bob", "/benchmark-cancel")
			return cmd
		}},
		{"queued, displaced by a newer approved request", "bob", "superseded", func(e *env) int64 {
			e.say("bob", "/benchmark -f gin -t baseline")
			if _, err := e.q.Claim(e.t.Context(), queue.DefaultPool); err != nil {
				e.t.Fatal(err)
			}
			waiting := e.say("bob", secCommand)
			e.say("bob", "/benchmark -f nethttp -t json")
			return waiting
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t)
			e.run()
			cmd := tc.run(e)
			e.settle()
			e.oneEnding(requestID(cmd), tc.requester, tc.want)
			st := e.statusOf(cmd)
			if !strings.Contains(strings.ToLower(st.Body), tc.want) {
				t.Errorf("status comment does not say %q:\n%s", tc.want, st.Body)
			}
			// Nothing more happens to it however often the loops run.
			ended := func() int {
				n := len(e.finalReplies(requestID(cmd)))
				return n + len(e.gh.CallsTo("PATCH", fmt.Sprintf("/repos/octo/arena/issues/comments/%d", st.ID)))
			}
			before := ended()
			for range 3 {
				e.advance(time.Minute)
				e.poll()
			}
			if n := ended(); n != before {
				t.Errorf("%d more writes to the ended request", n-before)
			}
		})
	}
}

// The link of a superseded request leads to the request that took its place.
func TestLifecycleSupersededLinks(t *testing.T) {
	e := setup(t)
	e.run()
	older := e.say("alice", secCommand)
	newer := e.say("alice", "/benchmark -f nethttp -t json")
	reply := e.oneEnding(requestID(older), "alice", "superseded")
	nj, err := e.q.Get(t.Context(), requestID(newer))
	if err != nil {
		t.Fatal(err)
	}
	links := regexp.MustCompile(`#issuecomment-(\d+)`).FindAllStringSubmatch(reply.Body+e.statusOf(older).Body, -1)
	ok := false
	for _, m := range links {
		if m[1] == fmt.Sprint(nj.StatusCommentID) || m[1] == fmt.Sprint(newer) {
			ok = true
		}
	}
	if !ok {
		t.Errorf("no link to the newer request (comment %d, status %d):\n%s\n%s", newer, nj.StatusCommentID, reply.Body, e.statusOf(older).Body)
	}
}

// A user without write access has one pending request per PR and never replaces or
// cancels another user's.
func TestLifecycleOthersRequestsUntouched(t *testing.T) {
	e := setup(t)
	e.run()
	carol := e.say("carol", secCommand)
	before := e.statusOf(carol)
	dave := e.say("dave", "/benchmark -f nethttp -t json")
	if p := e.pending(); len(p) != 2 {
		t.Fatalf("pending = %+v, want carol's and dave's", p)
	}
	e.say("dave", "/benchmark-cancel")
	if j, _ := e.q.Get(t.Context(), requestID(carol)); j.State != queue.AwaitingApproval {
		t.Errorf("dave's cancel ended carol's request: %s", j.State)
	}
	if j, _ := e.q.Get(t.Context(), requestID(dave)); j.State != queue.Cancelled {
		t.Errorf("dave's own request: %s, want cancelled", j.State)
	}
	if after := e.statusOf(carol); after.Body != before.Body || after.Edits != before.Edits {
		t.Errorf("carol's status comment changed:\n%s", after.Body)
	}
	if n := len(e.finalReplies(requestID(carol))); n != 0 {
		t.Errorf("carol's request got %d final replies", n)
	}
}

// gate blocks the permission reads of one user until it is opened.
type gate struct {
	next    http.RoundTripper
	user    string
	open    chan struct{}
	waiting chan struct{}
	once    sync.Once
}

func (g *gate) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/collaborators/"+g.user+"/permission") {
		g.once.Do(func() { close(g.waiting) })
		<-g.open
	}
	return g.next.RoundTrip(r)
}

// One slow permission lookup holds nobody else: while it hangs, another user's request on
// another PR is queued and acknowledged.
func TestLifecycleSlowPermissionHoldsNobody(t *testing.T) {
	e := setup(t)
	g := &gate{next: http.DefaultTransport, user: "slow", open: make(chan struct{}), waiting: make(chan struct{})}
	c, err := ghapi.New(ghapi.Config{BaseURL: e.gh.URL, Token: "t", BotLogin: githubtest.BotLogin, WriteSpacing: -1, MaxRetries: -1, PermissionTTL: -1, Transport: g})
	if err != nil {
		t.Fatal(err)
	}
	e.bot = New(Config{WebhookSecret: []byte(secret), Now: e.clock}, c, e.q, nil)
	e.hook = e.bot.Webhook()
	e.run()
	e.gh.AddPR(repo, githubtest.PR{Number: 43, HeadSHA: sha1, HeadRef: "other", User: "bob", Files: []string{"frameworks/nethttp/main.go"}})

	slow := e.gh.AddComment(repo, prNum, "slow", secCommand)
	p := secComment(t, "created", prNum, true, slow, "slow", "User", secCommand)
	if w := e.secSigned("issue_comment", "d-slow", p); w.Code != http.StatusAccepted {
		t.Fatalf("slow: %d", w.Code)
	}
	<-g.waiting
	fast := e.gh.AddComment(repo, 43, "bob", secCommand)
	p = secComment(t, "created", 43, true, fast, "bob", "User", secCommand)
	if w := e.secSigned("issue_comment", "d-fast", p); w.Code != http.StatusAccepted {
		t.Fatalf("fast: %d", w.Code)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if j, err := e.q.Get(t.Context(), requestID(fast)); err == nil && j.State == queue.Queued {
			break
		}
		if time.Now().After(deadline) {
			close(g.open)
			t.Fatal("bob's request waited for another user's permission lookup")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(g.open)
	e.wait()
	if js := e.pending(); len(js) != 1 || js[0].Requester != "slow" {
		t.Errorf("pending = %+v", js)
	}
}

// No status comment is written twice with the same body (displaced and cancelled jobs
// used to be edited twice).
func TestLifecycleNoRepeatedEdit(t *testing.T) {
	e := setup(t)
	e.run()
	e.say("bob", "/benchmark -f gin -t baseline")
	if _, err := e.q.Claim(t.Context(), queue.DefaultPool); err != nil {
		t.Fatal(err)
	}
	e.say("bob", secCommand)
	e.say("bob", "/benchmark -f nethttp -t json") // displaces the one above
	e.say("carol", secCommand)
	e.say("carol", "/benchmark-cancel")
	for range 3 {
		e.advance(time.Minute)
		e.poll()
	}
	last := map[string]string{}
	for _, c := range e.gh.CallsTo("PATCH", "/repos/octo/arena/issues/comments/*") {
		if last[c.Path] == string(c.Body) {
			t.Errorf("%s edited twice with the same body:\n%s", c.Path, c.Body)
		}
		last[c.Path] = string(c.Body)
	}
}

// A GitHub failure while a request is taken in is retried: a blip leaves no trace, a
// lasting failure gets one reply that says what failed.
func TestLifecycleIntakeRetries(t *testing.T) {
	old := handleRetry
	t.Cleanup(func() { handleRetry = old }) // last: after the intake's workers stopped
	handleRetry = time.Millisecond

	e := setup(t)
	e.run()
	e.gh.FailNext("GET", "/repos/octo/arena/pulls/42", 1, http.StatusBadGateway)
	cmd := e.say("alice", secCommand)
	if p := e.pending(); len(p) != 1 || p[0].ID != requestID(cmd) {
		t.Fatalf("the request was not retried: pending %+v", p)
	}
	if cs := e.botComments(); len(cs) != 1 || !strings.Contains(cs[0].Body, "awaiting approval") {
		t.Errorf("bot comments = %+v, want the status comment alone", cs)
	}

	e.gh.FailNext("GET", "/repos/octo/arena/pulls/42", handleAttempts, http.StatusBadGateway)
	e.say("carol", secCommand)
	cs := e.botComments()
	if len(cs) != 2 || !strings.Contains(cs[1].Body, "could not read the pull request") || !strings.HasPrefix(cs[1].Body, "@carol\n") {
		t.Errorf("bot comments = %+v, want one failure reply to carol", cs)
	}
	if p := e.pending(); len(p) != 1 {
		t.Errorf("pending = %+v", p)
	}
}

// A maintainer's own request is approved at once, and its first post says so: it never
// asks for approval.
func TestLifecycleMaintainerFirstPost(t *testing.T) {
	e := setup(t)
	e.run()
	cmd := e.say("bob", secCommand)
	posts := e.gh.CallsTo("POST", "/repos/octo/arena/issues/42/comments")
	if len(posts) != 1 {
		t.Fatalf("posts = %d, want the status comment alone", len(posts))
	}
	first := string(posts[0].Body)
	if !strings.Contains(first, "Benchmark queued") || strings.Contains(first, "awaiting approval") || strings.Contains(first, "approves by reacting") {
		t.Errorf("first post of a maintainer's request:\n%s", first)
	}
	if st := e.statusOf(cmd); st.Edits != 0 {
		t.Errorf("status edited %d times, want 0: %s", st.Edits, st.Body)
	}
}

// An argument that would mention a team or link an issue is echoed inside code only.
func TestLifecycleHostileArgument(t *testing.T) {
	e := setup(t)
	e.run()
	e.say("alice", "/benchmark -f gin @org/team #1")
	cs := e.botComments()
	if len(cs) != 1 {
		t.Fatalf("bot comments = %+v", cs)
	}
	body := cs[0].Body
	if !strings.HasPrefix(body, "@alice\n") {
		t.Errorf("the reply does not mention its requester alone on the first line:\n%s", body)
	}
	live := regexp.MustCompile("`+[^`]*`+").ReplaceAllString(hiddenComment.ReplaceAllString(body, ""), "")
	live = strings.TrimPrefix(live, "@alice")
	if strings.Contains(live, "@") || regexp.MustCompile(`#\d`).MatchString(live) {
		t.Errorf("user input outside code in:\n%s", body)
	}
}

// An approval that comes after the expiry, before the poller saw it, does not revive the
// request: it ends as expired, and the approver is told nothing waits.
func TestLifecycleApprovalAfterExpiry(t *testing.T) {
	e := setup(t)
	e.run()
	cmd := e.say("alice", secCommand)
	e.advance(DefaultApprovalTTL + time.Minute)
	e.say("bob", "/benchmark-approve")
	if j, _ := e.q.Get(t.Context(), requestID(cmd)); j.State != queue.Expired {
		t.Fatalf("request after a late approval: %s, want expired", j.State)
	}
	e.oneEnding(requestID(cmd), "alice", "expired")
	if cs := e.botComments(); !strings.Contains(cs[len(cs)-1].Body, "no request waiting") && !strings.Contains(cs[len(cs)-2].Body, "no request waiting") {
		t.Errorf("the approver was not told nothing waits: %+v", cs)
	}
}

// The queue's states and the status comment's phases are one vocabulary.
func TestOneVocabulary(t *testing.T) {
	for _, s := range []queue.State{queue.AwaitingApproval, queue.Queued, queue.Running, queue.Done, queue.Failed,
		queue.Cancelled, queue.Superseded, queue.Expired, queue.Rejected} {
		p := phaseOf(s)
		if !slices.Contains(report.Phases, p) || p.Final() != s.Terminal() {
			t.Errorf("state %s has no phase of its own (%q, final %v)", s, p, p.Final())
		}
	}
}
