package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/bot/hook"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
)

const (
	repo   = "octo/arena"
	prNum  = 42
	sha1   = "1111111111111111111111111111111111111111"
	sha2   = "2222222222222222222222222222222222222222"
	secret = "s3cret"
)

type env struct {
	t    *testing.T
	gh   *githubtest.Server
	q    queue.Queue
	bot  *Bot
	mu   sync.Mutex
	now  time.Time
	hook http.Handler
}

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = e.now.Add(d)
}

func setup(t *testing.T) *env {
	t.Helper()
	return setupWith(t, nil)
}

// setupWith is setup with the bot's configuration changed by mod.
func setupWith(t *testing.T, mod func(*Config)) *env {
	t.Helper()
	e := &env{t: t, gh: githubtest.New(t), now: time.Date(2026, 1, 6, 10, 0, 0, 0, time.UTC)}
	e.q = queue.NewMemory(queue.Options{Now: e.clock}) // the bot's clock: expiry follows it
	e.gh.AddRepo("octo", "arena")
	e.gh.AddPR(repo, githubtest.PR{Number: prNum, HeadSHA: sha1, HeadRef: "feature", User: "alice", Files: []string{"frameworks/nethttp/main.go"}})
	for _, fw := range []string{"nethttp", "gin"} {
		meta, err := os.ReadFile("../frameworks/" + fw + "/meta.json")
		if err != nil {
			t.Fatal(err)
		}
		e.gh.AddFile(repo, sha1, "frameworks/"+fw+"/meta.json", meta)
		e.gh.AddFile(repo, sha1, "frameworks/"+fw+"/go.mod", []byte("module example.com/"+fw+"\n"))
		e.gh.AddFile(repo, sha1, "frameworks/"+fw+"/main.go", []byte("package main\n"))
	}
	e.gh.SetPermission(repo, "bob", "write")
	e.gh.SetPermission(repo, "carol", "read")
	c, err := ghapi.New(ghapi.Config{BaseURL: e.gh.URL, Token: "t", BotLogin: githubtest.BotLogin, WriteSpacing: -1, MaxRetries: -1, PermissionTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{WebhookSecret: []byte(secret), Now: e.clock, Checks: ghapi.NewChecks(c)}
	if mod != nil {
		mod(&cfg)
	}
	e.bot = New(cfg, c, e.q, nil)
	e.hook = e.bot.Webhook()
	return e
}

// comment posts body as user on the fake, hands the event to the bot and lets the
// reporter handle what followed.
func (e *env) comment(user, body string) int64 {
	e.t.Helper()
	id := e.gh.AddComment(repo, prNum, user, body)
	c := hook.Comment{Action: "created", Repo: repo, Number: prNum, IsPR: true, CommentID: id, Body: body, Author: user, AuthorType: "User"}
	if err := e.bot.HandleComment(e.t.Context(), c); err != nil {
		e.t.Fatalf("HandleComment(%q): %v", body, err)
	}
	e.settle()
	return id
}

// settle has the reporter handle every event published so far, through consumer "test".
func (e *env) settle() {
	e.t.Helper()
	for {
		n, err := e.bot.HandleEvents(e.t.Context(), "test", 0)
		if err != nil {
			e.t.Fatalf("HandleEvents: %v", err)
		}
		if n == 0 {
			return
		}
	}
}

// records returns every record of the queue.
func (e *env) records() []queue.Job {
	e.t.Helper()
	js, err := e.q.List(e.t.Context(), queue.Filter{})
	if err != nil {
		e.t.Fatal(err)
	}
	return js
}

// jobs returns the records that were approved.
func (e *env) jobs() []queue.Job {
	e.t.Helper()
	var out []queue.Job
	for _, j := range e.records() {
		if !j.Approved.IsZero() {
			out = append(out, j)
		}
	}
	return out
}

// pending returns the records awaiting approval.
func (e *env) pending() []queue.Job {
	e.t.Helper()
	var out []queue.Job
	for _, j := range e.records() {
		if j.State == queue.AwaitingApproval {
			out = append(out, j)
		}
	}
	return out
}

// botComments returns the bot's comments on the PR.
func (e *env) botComments() []githubtest.Comment {
	var out []githubtest.Comment
	for _, c := range e.gh.Comments(repo, prNum) {
		if c.User == githubtest.BotLogin {
			out = append(out, c)
		}
	}
	return out
}

func (e *env) onlyStatus() githubtest.Comment {
	e.t.Helper()
	cs := e.botComments()
	if len(cs) != 1 {
		e.t.Fatalf("bot comments = %d, want 1: %+v", len(cs), cs)
	}
	return cs[0]
}

func (e *env) poll() {
	e.t.Helper()
	if err := e.bot.PollOnce(e.t.Context()); err != nil {
		e.t.Fatal(err)
	}
	e.settle()
}

func TestCollaboratorRequestIsQueued(t *testing.T) {
	e := setup(t)
	id := e.comment("bob", "/benchmark -f nethttp -t baseline")
	rs := e.gh.Reactions(repo, id)
	if len(rs) != 1 || rs[0].Content != "eyes" || rs[0].User != githubtest.BotLogin {
		t.Errorf("reactions = %+v, want one 👀 by the bot", rs)
	}
	st := e.onlyStatus()
	if !strings.Contains(st.Body, "Benchmark queued") || st.Edits != 0 {
		t.Errorf("status (edits %d) = %s", st.Edits, st.Body)
	}
	// Its first post already says it is approved: it never asks for approval.
	for _, c := range e.gh.CallsTo("POST", "/repos/octo/arena/issues/42/comments") {
		if strings.Contains(string(c.Body), "awaiting approval") || strings.Contains(string(c.Body), "approves by reacting") {
			t.Errorf("a maintainer's request was posted as awaiting approval: %s", c.Body)
		}
	}
	js := e.jobs()
	if len(js) != 1 {
		t.Fatalf("jobs = %+v", js)
	}
	j := js[0]
	if j.SHA != sha1 || j.Requester != "bob" || j.Repo != repo || j.PR != prNum || j.StatusCommentID != st.ID ||
		j.CommentID != id || j.Kind != queue.Benchmark || strings.Join(j.Frameworks, ",") != "nethttp" ||
		strings.Join(j.Tests, ",") != "baseline" || j.Estimate <= 0 || j.Command != "/benchmark -f nethttp -t baseline" {
		t.Errorf("job = %+v", j)
	}
	if len(e.pending()) != 0 {
		t.Error("a collaborator's request is pending")
	}
}

// TestCPUProfileModeIsCarried: the queued job says which rows the runner profiles, decided
// once from the command: a /benchmark of one framework by default, others when asked.
func TestCPUProfileModeIsCarried(t *testing.T) {
	e := setup(t)
	want := map[string]string{
		"/benchmark -f nethttp -t baseline":          profile.CPUProfileFirst,
		"/benchmark-multiple -f nethttp,gin -t json": profile.CPUProfileNone,
		"/benchmark-test -t json --profile=all":      profile.CPUProfileAll,
	}
	for cmd := range want {
		e.comment("bob", cmd)
	}
	js := e.jobs()
	if len(js) != len(want) {
		t.Fatalf("jobs = %+v", js)
	}
	for _, j := range js {
		if w, ok := want[j.Command]; !ok || j.CPUProfile != w {
			t.Errorf("%s: job CPUProfile = %q, want %q", j.Command, j.CPUProfile, w)
		}
	}
}

// TestBaselineCommittedIsCarried: --baseline committed reaches the queued job (the runner
// then skips the base) and the status comment echoes it with the command; without it the
// job's Baseline is "", measuring the base in the job.
func TestBaselineCommittedIsCarried(t *testing.T) {
	e := setup(t)
	e.comment("bob", "/benchmark --baseline committed -f nethttp -t baseline")
	e.comment("bob", "/benchmark-multiple -f nethttp,gin -t json")
	js := e.jobs()
	if len(js) != 2 {
		t.Fatalf("jobs = %+v", js)
	}
	for _, j := range js {
		want := ""
		if j.Kind == queue.Benchmark {
			want = "committed"
		}
		if j.Baseline != want {
			t.Errorf("%s: job Baseline = %q, want %q", j.Command, j.Baseline, want)
		}
	}
	var found bool
	for _, c := range e.botComments() {
		found = found || strings.Contains(c.Body, "`/benchmark --baseline committed -f nethttp -t baseline`")
	}
	if !found {
		t.Errorf("no status comment echoes the command with its --baseline: %+v", e.botComments())
	}
}

func TestNoFrameworkUsesTouched(t *testing.T) {
	e := setup(t)
	e.comment("bob", "/benchmark -t baseline")
	if js := e.jobs(); len(js) != 1 || strings.Join(js[0].Frameworks, ",") != "nethttp" {
		t.Fatalf("jobs = %+v", js)
	}
}

func TestNonCollaboratorIsPending(t *testing.T) {
	e := setup(t)
	e.comment("alice", "/benchmark -f nethttp -t baseline")
	st := e.onlyStatus()
	if !strings.Contains(st.Body, "awaiting approval") || !strings.Contains(st.Body, sha1[:12]) {
		t.Errorf("status = %s", st.Body)
	}
	if len(e.jobs()) != 0 {
		t.Error("job enqueued without approval")
	}
	p := e.pending()
	if len(p) != 1 || p[0].StatusCommentID != st.ID || p[0].SHA != sha1 {
		t.Fatalf("pending = %+v", p)
	}
}

func TestThumbsUpByCollaboratorApproves(t *testing.T) {
	e := setup(t)
	e.comment("alice", "/benchmark -f nethttp -t baseline")
	st := e.onlyStatus()
	e.poll() // nothing yet
	e.gh.React(repo, st.ID, "bob", "+1")
	e.poll()
	js := e.jobs()
	if len(js) != 1 || js[0].Approver != "bob" || js[0].Requester != "alice" || js[0].SHA != sha1 {
		t.Fatalf("jobs = %+v", js)
	}
	st = e.onlyStatus()
	if !strings.Contains(st.Body, "Benchmark queued") || !strings.Contains(st.Body, "bob") {
		t.Errorf("status = %s", st.Body)
	}
	if len(e.pending()) != 0 {
		t.Error("still pending")
	}
	e.poll()
	if len(e.jobs()) != 1 {
		t.Error("approved twice")
	}
}

func TestThumbsUpWithoutPermissionDoesNothing(t *testing.T) {
	for _, user := range []string{"carol", "alice", githubtest.BotLogin} {
		t.Run(user, func(t *testing.T) {
			e := setup(t)
			e.comment("alice", "/benchmark -f nethttp -t baseline")
			st := e.onlyStatus()
			e.gh.React(repo, st.ID, user, "+1")
			e.poll()
			e.poll() // the second read is a 304
			if len(e.jobs()) != 0 || len(e.pending()) != 1 {
				t.Errorf("jobs %+v, pending %+v", e.jobs(), e.pending())
			}
			if got := e.onlyStatus(); got.Edits != 0 {
				t.Errorf("status edited: %s", got.Body)
			}
		})
	}
}

func TestRequesterWithWriteMayApproveOwn(t *testing.T) {
	e := setup(t)
	e.comment("alice", "/benchmark -f nethttp -t baseline")
	st := e.onlyStatus()
	e.gh.SetPermission(repo, "alice", "write")
	e.gh.React(repo, st.ID, "alice", "+1")
	e.poll()
	if js := e.jobs(); len(js) != 1 || js[0].Approver != "alice" {
		t.Fatalf("jobs = %+v", js)
	}
}

func TestThumbsDownRejects(t *testing.T) {
	e := setup(t)
	cmd := e.comment("alice", "/benchmark -f nethttp -t baseline")
	st := e.onlyStatus()
	e.gh.React(repo, st.ID, "bob", "-1")
	e.poll()
	if len(e.jobs()) != 0 || len(e.pending()) != 0 {
		t.Fatalf("jobs %+v, pending %+v", e.jobs(), e.pending())
	}
	if got := e.statusOf(cmd); !strings.Contains(got.Body, "declined") {
		t.Errorf("status = %s", got.Body)
	}
	e.oneEnding(requestID(cmd), "alice", "declined")
}

func TestExpiry(t *testing.T) {
	e := setup(t)
	cmd := e.comment("alice", "/benchmark -f nethttp -t baseline")
	e.advance(DefaultApprovalTTL + time.Minute)
	e.poll()
	if len(e.jobs()) != 0 || len(e.pending()) != 0 {
		t.Fatalf("jobs %+v, pending %+v", e.jobs(), e.pending())
	}
	if got := e.statusOf(cmd); !strings.Contains(got.Body, "expired") {
		t.Errorf("status = %s", got.Body)
	}
	e.oneEnding(requestID(cmd), "alice", "expired")
}

// TestSynchronizeKeepsAckedSHA: after a push (synchronize delivered), a bare
// /benchmark-approve approves nothing and the reply names both commits; /benchmark-approve
// naming the acked commit (its first 7 hex digits) approves measuring it.
func TestSynchronizeKeepsAckedSHA(t *testing.T) {
	e := setup(t)
	e.comment("alice", "/benchmark -f nethttp -t baseline")
	e.gh.SetHead(repo, prNum, sha2)
	err := e.bot.HandlePullRequest(t.Context(), hook.PullRequest{Action: "synchronize", Repo: repo, Number: prNum, Before: sha1, After: sha2, HeadSHA: sha2})
	if err != nil {
		t.Fatal(err)
	}
	e.settle()
	if got := e.onlyStatus(); !strings.Contains(got.Body, sha2[:12]) || !strings.Contains(got.Body, sha1[:12]) {
		t.Errorf("status = %s", got.Body)
	}
	bare := e.comment("bob", "/benchmark-approve")
	if js := e.jobs(); len(js) != 0 || len(e.pending()) != 1 {
		t.Fatalf("a bare /benchmark-approve after the push approved: jobs = %+v", js)
	}
	if cs := e.botComments(); len(cs) != 2 || !strings.Contains(cs[1].Body, "moved from `"+sha1[:12]+"` to `"+sha2[:12]+"`") ||
		!strings.Contains(cs[1].Body, "`/benchmark-approve "+sha1[:12]+"`") {
		t.Errorf("reply to the bare approve = %+v", cs)
	}
	if rs := e.gh.Reactions(repo, bare); len(rs) != 0 {
		t.Errorf("the bare approve got reactions %+v", rs)
	}
	id := e.comment("bob", "/benchmark-approve "+sha1[:7])
	if js := e.jobs(); len(js) != 1 || js[0].SHA != sha1 || js[0].Approver != "bob" {
		t.Fatalf("jobs = %+v", js)
	}
	if rs := e.gh.Reactions(repo, id); len(rs) != 1 || rs[0].Content != "+1" {
		t.Errorf("approve comment reactions = %+v", rs)
	}
	if got := e.botComments()[0]; !strings.Contains(got.Body, "Benchmark queued") || !strings.Contains(got.Body, sha2[:12]) {
		t.Errorf("status = %s", got.Body)
	}
}

func TestApproveCommandWithoutPermission(t *testing.T) {
	e := setup(t)
	e.comment("alice", "/benchmark -f nethttp -t baseline")
	e.comment("carol", "/benchmark-approve")
	if len(e.jobs()) != 0 || len(e.pending()) != 1 {
		t.Fatalf("jobs %+v, pending %+v", e.jobs(), e.pending())
	}
	if cs := e.botComments(); len(cs) != 2 || !strings.Contains(cs[1].Body, "write") {
		t.Errorf("comments = %+v", cs)
	}
}

func TestCancel(t *testing.T) {
	e := setup(t)
	e.comment("alice", "/benchmark -f nethttp -t baseline")
	e.comment("carol", "/benchmark-cancel") // neither requester nor collaborator
	if len(e.pending()) != 1 {
		t.Fatal("cancelled by a stranger")
	}
	e.comment("alice", "/benchmark-cancel")
	if len(e.pending()) != 0 {
		t.Fatal("not cancelled")
	}
	if cs := e.botComments(); !strings.Contains(cs[0].Body, "Benchmark cancelled") {
		t.Errorf("status = %s", cs[0].Body)
	}

	e.comment("bob", "/benchmark -f gin -t baseline")
	if js := e.jobs(); len(js) != 1 || js[0].State != queue.Queued {
		t.Fatalf("jobs = %+v", js)
	}
	e.comment("bob", "/benchmark-cancel")
	js := e.jobs()
	if len(js) != 1 || js[0].State != queue.Cancelled {
		t.Fatalf("jobs = %+v", js)
	}
	st, err := e.q.Get(t.Context(), js[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range e.botComments() {
		if c.ID == st.StatusCommentID && !strings.Contains(c.Body, "Benchmark cancelled") {
			t.Errorf("status = %s", c.Body)
		}
	}
}

func TestUnknownFrameworkReply(t *testing.T) {
	e := setup(t)
	e.comment("bob", "/benchmark -f nethtp -t baseline")
	cs := e.botComments()
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "nethttp") || !strings.Contains(cs[0].Body, "nethtp") {
		t.Fatalf("comments = %+v", cs)
	}
	if len(e.jobs()) != 0 || len(e.pending()) != 0 {
		t.Error("request kept")
	}
	// The same event again (a retry) does not post twice.
	c := hook.Comment{Action: "created", Repo: repo, Number: prNum, IsPR: true, CommentID: e.gh.Comments(repo, prNum)[0].ID,
		Body: "/benchmark -f nethtp -t baseline", Author: "bob", AuthorType: "User"}
	if err := e.bot.HandleComment(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	if n := len(e.botComments()); n != 1 {
		t.Errorf("replies = %d after a retry", n)
	}
}

func TestUsageErrorAndHelp(t *testing.T) {
	e := setup(t)
	e.comment("alice", "/benchmark --frameworks nethttp")
	e.comment("alice", "/benchmark-help")
	cs := e.botComments()
	if len(cs) != 2 || !strings.Contains(cs[0].Body, "**Fix:**") || !strings.Contains(cs[1].Body, "/benchmark-test") {
		t.Fatalf("comments = %+v", cs)
	}
	// The help names every test that runs, in the table's order, and counts them.
	var runnable []string
	for _, p := range profile.All {
		if p.Runnable() {
			runnable = append(runnable, "`"+p.Name+"`")
		}
	}
	for _, want := range []string{"### Tests", fmt.Sprintf("%d tests run", len(runnable)), strings.Join(runnable, ", ") + "."} {
		if !strings.Contains(cs[1].Body, want) {
			t.Errorf("help lacks %q:\n%s", want, cs[1].Body)
		}
	}
	if strings.Contains(cs[1].Body, "Not run yet") {
		t.Errorf("help lists tests that do not run, though every test runs:\n%s", cs[1].Body)
	}
}

func TestIgnoredComments(t *testing.T) {
	e := setup(t)
	for _, c := range []hook.Comment{
		{Action: "created", Body: "/benchmark -f nethttp", Author: "dependabot[bot]", AuthorType: "Bot", IsPR: true},
		{Action: "created", Body: "/benchmark -f nethttp", Author: "bob", AuthorType: "User", IsPR: false},
		{Action: "edited", Body: "/benchmark -f nethttp", Author: "bob", AuthorType: "User", IsPR: true},
		{Action: "created", Body: "try this:\n```\n/benchmark -f nethttp\n```\n", Author: "bob", AuthorType: "User", IsPR: true},
		{Action: "created", Body: "> /benchmark -f nethttp", Author: "bob", AuthorType: "User", IsPR: true},
		{Action: "created", Body: "looks good", Author: "bob", AuthorType: "User", IsPR: true},
	} {
		c.Repo, c.Number, c.CommentID = repo, prNum, 99
		if err := e.bot.HandleComment(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	if calls := e.gh.Calls(); len(calls) != 0 {
		t.Errorf("calls = %+v", calls)
	}
	if len(e.jobs()) != 0 {
		t.Error("jobs enqueued")
	}
}

// commentPayload is an issue_comment payload in the shape of bot/hook/testdata.
func commentPayload(t *testing.T, id int64, user, userType, body string) []byte {
	t.Helper()
	p := map[string]any{
		"action": "created",
		"issue": map[string]any{
			"number": prNum, "user": map[string]any{"login": "alice", "type": "User"},
			"pull_request": map[string]any{"url": "https://api.github.com/repos/octo/arena/pulls/42"},
		},
		"comment": map[string]any{
			"id": id, "body": body, "user": map[string]any{"login": user, "type": userType},
			"author_association": "NONE", "html_url": "https://github.com/octo/arena/pull/42#issuecomment-1",
		},
		"repository": map[string]any{"full_name": repo, "name": "arena", "owner": map[string]any{"login": "octo"}},
		"sender":     map[string]any{"login": user, "type": userType},
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (e *env) deliver(event, delivery string, body []byte, sig string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(hook.EventHeader, event)
	r.Header.Set(hook.DeliveryHeader, delivery)
	if sig != "" {
		r.Header.Set(hook.SignatureHeader, sig)
	}
	w := httptest.NewRecorder()
	e.hook.ServeHTTP(w, r)
	return w
}

func (e *env) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = e.bot.Run(ctx)
	}()
	e.t.Cleanup(func() {
		cancel()
		<-done
	})
}

func TestWebhook(t *testing.T) {
	e := setup(t)
	e.run()
	body := "/benchmark -f nethttp -t baseline"
	id := e.gh.AddComment(repo, prNum, "bob", body)
	payload := commentPayload(t, id, "bob", "User", body)
	sig := hook.Sign([]byte(secret), payload)

	if w := e.deliver("issue_comment", "d1", payload, ""); w.Code != http.StatusUnauthorized {
		t.Errorf("unsigned: %d", w.Code)
	}
	if w := e.deliver("issue_comment", "d1", payload, hook.Sign([]byte("wrong"), payload)); w.Code != http.StatusUnauthorized {
		t.Errorf("bad signature: %d", w.Code)
	}
	e.wait()
	if calls := e.gh.Calls(); len(calls) != 0 || len(e.jobs()) != 0 {
		t.Fatalf("refused deliveries had effects: %+v", calls)
	}

	if w := e.deliver("issue_comment", "d1", payload, sig); w.Code != http.StatusAccepted {
		t.Fatalf("first delivery: %d %s", w.Code, w.Body)
	}
	e.wait()
	if js := e.jobs(); len(js) != 1 || js[0].SHA != sha1 {
		t.Fatalf("jobs = %+v", js)
	}
	calls := len(e.gh.Calls())
	w := e.deliver("issue_comment", "d1", payload, sig)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "duplicate") {
		t.Errorf("replay: %d %s", w.Code, w.Body)
	}
	e.wait()
	if n := len(e.gh.Calls()); n != calls || len(e.jobs()) != 1 {
		t.Errorf("replay had effects: %d calls (was %d), jobs %+v", n, calls, e.jobs())
	}

	// A comment by a bot, and a command inside a code block: accepted, no effect.
	calls = len(e.gh.Calls())
	for i, p := range [][]byte{
		commentPayload(t, 5, "ci[bot]", "Bot", body),
		commentPayload(t, 6, "bob", "User", "```\n"+body+"\n```"),
	} {
		if w := e.deliver("issue_comment", "dx"+string(rune('a'+i)), p, hook.Sign([]byte(secret), p)); w.Code != http.StatusAccepted {
			t.Errorf("payload %d: %d", i, w.Code)
		}
	}
	e.wait()
	if n := len(e.gh.Calls()); n != calls || len(e.jobs()) != 1 {
		t.Errorf("ignored comments had effects: %d calls (was %d)", n, calls)
	}

	ping := []byte(`{"zen":"Keep it logically awesome.","hook_id":1}`)
	if w := e.deliver("ping", "p1", ping, hook.Sign([]byte(secret), ping)); w.Code != http.StatusOK {
		t.Errorf("ping: %d", w.Code)
	}
	other := []byte(`{"action":"completed"}`)
	if w := e.deliver("check_run", "o1", other, hook.Sign([]byte(secret), other)); w.Code != http.StatusAccepted {
		t.Errorf("other: %d", w.Code)
	}
}

// wait waits until the deliveries pushed to the inbox are handled, then settles the
// reporter.
func (e *env) wait() {
	e.t.Helper()
	e.bot.Intake.inflight.Wait()
	e.settle()
}
