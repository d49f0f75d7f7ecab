package bot

// Security tests: deliveries and reactions that must have no effect. They extend, and do
// not repeat, the cases of bot_test.go:
//
//   - TestWebhook: unsigned and wrong-secret deliveries (401, no call, no job), a
//     replayed delivery id of a collaborator's command (200 "duplicate", no call), and a
//     bot's comment and a fenced command through the webhook.
//   - TestIgnoredComments: bot author, plain issue, edited, fenced, quoted comments handed
//     to HandleComment directly (no call, no job).
//   - TestThumbsUpWithoutPermissionDoesNothing: 👍 by a read user, by the requester
//     without permission and by the bot itself (no job, still pending, no edit).
//   - TestSynchronizeKeepsAckedSHA: after a synchronize, a bare /benchmark-approve does
//     not approve, /benchmark-approve <acked sha> does and measures the acked SHA.
//   - TestApproveCommandWithoutPermission: /benchmark-approve by a read user.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/bot/hook"
)

const secCommand = "/benchmark -f nethttp -t baseline"

// secRebuild replaces e's bot by one built with cfg (secret and clock filled in), on the
// same GitHub client and queue.
func secRebuild(e *env, cfg Config) {
	cfg.WebhookSecret = []byte(secret)
	cfg.Now = e.clock
	e.bot = New(cfg, e.bot.Intake.gh, e.q, nil)
	e.hook = e.bot.Webhook()
}

// secComment is an issue_comment payload with every field the tests vary.
func secComment(t testing.TB, action string, number int, isPR bool, id int64, user, userType, body string) []byte {
	t.Helper()
	issue := map[string]any{"number": number, "user": map[string]any{"login": "alice", "type": "User"}}
	if isPR {
		issue["pull_request"] = map[string]any{"url": fmt.Sprintf("https://api.github.com/repos/%s/pulls/%d", repo, number)}
	}
	p := map[string]any{
		"action": action,
		"issue":  issue,
		"comment": map[string]any{
			"id": id, "body": body, "user": map[string]any{"login": user, "type": userType},
			"author_association": "NONE",
		},
		"repository": map[string]any{"full_name": repo, "name": "arena", "owner": map[string]any{"login": "octo"}},
		"sender":     map[string]any{"login": user, "type": userType},
	}
	if action == "edited" {
		p["changes"] = map[string]any{"body": map[string]any{"from": "looks good"}}
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// secSigned delivers payload signed with the test secret.
func (e *env) secSigned(event, delivery string, payload []byte) *httptest.ResponseRecorder {
	return e.deliver(event, delivery, payload, hook.Sign([]byte(secret), payload))
}

// secNoEffect fails unless the fake saw no call at all since mark, no job exists and
// nothing is pending.
func (e *env) secNoEffect(what string, mark int) {
	e.t.Helper()
	e.wait()
	if calls := e.gh.Calls(); len(calls) != mark {
		e.t.Errorf("%s: %d GitHub calls, want %d: %s", what, len(calls), mark, secCalls(calls[min(mark, len(calls)):]))
	}
	if js := e.jobs(); len(js) != 0 {
		e.t.Errorf("%s: jobs = %+v", what, js)
	}
	if p := e.pending(); len(p) != 0 {
		e.t.Errorf("%s: pending = %+v", what, p)
	}
}

// secCalls renders calls as "METHOD path" lines.
func secCalls(calls []githubtest.Call) string {
	var sb strings.Builder
	for _, c := range calls {
		fmt.Fprintf(&sb, "\n\t%s %s -> %d", c.Method, c.Path, c.Status)
	}
	return sb.String()
}

// secWrites returns the calls since mark that change something on GitHub.
func (e *env) secWrites(mark int) []githubtest.Call {
	var out []githubtest.Call
	for _, c := range e.gh.Calls()[mark:] {
		if c.Method != http.MethodGet && c.Method != http.MethodHead {
			out = append(out, c)
		}
	}
	return out
}

// TestSecurityRefusedSignatures: every badly signed delivery of a collaborator's command
// is refused with 401, has no effect and does not burn its delivery id (the genuine
// delivery with the same id is processed afterwards). TestWebhook covers the unsigned
// and wrong-secret cases once; this adds the forged-body and malformed-header cases.
func TestSecurityRefusedSignatures(t *testing.T) {
	e := setup(t)
	e.run()
	id := e.gh.AddComment(repo, prNum, "bob", secCommand)
	genuine := secComment(t, "created", prNum, true, id, "bob", "User", secCommand)
	// The attacker's variant: same comment id, a non-collaborator's harmless comment
	// turned into a command by someone who holds a signature of another body.
	other := secComment(t, "created", prNum, true, id, "bob", "User", "looks good")
	good := hook.Sign([]byte(secret), genuine)
	sha1Mac := "sha1=" + strings.Repeat("0", 40)
	for _, tc := range []struct {
		name string
		body []byte
		sig  string
		sha1 bool // send only the legacy X-Hub-Signature header
	}{
		{"unsigned", genuine, "", false},
		{"sha1 header only", genuine, "", true},
		{"wrong secret", genuine, hook.Sign([]byte("not-the-secret"), genuine), false},
		{"signature over a different body", genuine, hook.Sign([]byte(secret), other), false},
		{"body with a byte appended", append(append([]byte{}, genuine...), ' '), good, false},
		{"body truncated", genuine[:len(genuine)-1], good, false},
		{"truncated signature", genuine, good[:len(good)-2], false},
		{"no sha256 prefix", genuine, strings.TrimPrefix(good, "sha256="), false},
		{"empty secret signature", genuine, hook.Sign(nil, genuine), false},
	} {
		r := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(tc.body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set(hook.EventHeader, "issue_comment")
		r.Header.Set(hook.DeliveryHeader, "d-sig")
		if tc.sig != "" {
			r.Header.Set(hook.SignatureHeader, tc.sig)
		}
		if tc.sha1 {
			r.Header.Set("X-Hub-Signature", sha1Mac)
		}
		w := httptest.NewRecorder()
		e.hook.ServeHTTP(w, r)
		if w.Code != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", tc.name, w.Code)
		}
		e.secNoEffect(tc.name, 0)
	}
	// The refusals did not record the delivery id: the genuine delivery is not a "duplicate".
	if w := e.deliver("issue_comment", "d-sig", genuine, good); w.Code != http.StatusAccepted {
		t.Fatalf("genuine delivery after refusals: %d %s", w.Code, w.Body)
	}
	e.wait()
	if js := e.jobs(); len(js) != 1 || js[0].SHA != sha1 || js[0].Requester != "bob" {
		t.Fatalf("jobs = %+v", js)
	}
}

// TestSecurityOversizedBody: a correctly signed delivery over Config.MaxBody answers 413
// with no effect, with and without a Content-Length, and does not burn its delivery id;
// a body of exactly MaxBody is accepted.
func TestSecurityOversizedBody(t *testing.T) {
	e := setup(t)
	const limit = 2048
	secRebuild(e, Config{MaxBody: limit})
	e.run()
	id := e.gh.AddComment(repo, prNum, "bob", secCommand)
	base := secComment(t, "created", prNum, true, id, "bob", "User", secCommand)
	if len(base) >= limit {
		t.Fatalf("payload of %d bytes is already over the limit", len(base))
	}
	// Trailing white space keeps the JSON valid.
	pad := func(n int) []byte {
		return append(append([]byte{}, base...), bytes.Repeat([]byte(" "), n-len(base))...)
	}
	over := pad(limit + 1)
	for _, chunked := range []bool{false, true} {
		var body io.Reader = bytes.NewReader(over)
		if chunked {
			body = io.MultiReader(bytes.NewReader(over)) // hides the length
		}
		r := httptest.NewRequest(http.MethodPost, "/webhook", body)
		if chunked {
			r.ContentLength = -1
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set(hook.EventHeader, "issue_comment")
		r.Header.Set(hook.DeliveryHeader, "d-big")
		r.Header.Set(hook.SignatureHeader, hook.Sign([]byte(secret), over))
		w := httptest.NewRecorder()
		e.hook.ServeHTTP(w, r)
		if w.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("chunked=%v: status %d, want 413", chunked, w.Code)
		}
		e.secNoEffect(fmt.Sprintf("oversized chunked=%v", chunked), 0)
	}
	exact := pad(limit)
	if w := e.secSigned("issue_comment", "d-big", exact); w.Code != http.StatusAccepted {
		t.Fatalf("body of exactly MaxBody: %d %s", w.Code, w.Body)
	}
	e.wait()
	if js := e.jobs(); len(js) != 1 {
		t.Fatalf("jobs = %+v", js)
	}
}

// TestSecurityReplayedDelivery extends TestWebhook's sequential replay of a
// collaborator's command: a non-collaborator's request delivered many times at once is
// processed once (one 👀, one status comment, one pending request), and a later replay,
// even with a re-signed different body under the same id, has no effect at all.
func TestSecurityReplayedDelivery(t *testing.T) {
	e := setup(t)
	e.run()
	id := e.gh.AddComment(repo, prNum, "alice", secCommand)
	payload := secComment(t, "created", prNum, true, id, "alice", "User", secCommand)
	const n = 16
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { codes[i] = e.secSigned("issue_comment", "d-replay", payload).Code })
	}
	wg.Wait()
	e.wait()
	accepted := 0
	for _, c := range codes {
		switch c {
		case http.StatusAccepted:
			accepted++
		case http.StatusOK:
		default:
			t.Errorf("status %d", c)
		}
	}
	if accepted != 1 {
		t.Errorf("accepted %d of %d concurrent copies, want 1 (%v)", accepted, n, codes)
	}
	if rs := e.gh.Reactions(repo, id); len(rs) != 1 {
		t.Errorf("reactions = %+v", rs)
	}
	st := e.onlyStatus()
	if p := e.pending(); len(p) != 1 || p[0].StatusCommentID != st.ID {
		t.Fatalf("pending = %+v", p)
	}

	mark := len(e.gh.Calls())
	// A replay under the same id whose body now names a collaborator and another comment.
	forged := secComment(t, "created", prNum, true, id+1, "bob", "User", secCommand)
	for _, p := range [][]byte{payload, forged} {
		if w := e.secSigned("issue_comment", "d-replay", p); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "duplicate") {
			t.Errorf("replay: %d %s", w.Code, w.Body)
		}
	}
	e.wait()
	if calls := e.gh.Calls(); len(calls) != mark {
		t.Errorf("replays made %d calls: %s", len(calls)-mark, secCalls(calls[mark:]))
	}
	if len(e.jobs()) != 0 || len(e.pending()) != 1 || e.onlyStatus().Edits != 0 {
		t.Errorf("replays had effects: jobs %+v, pending %+v", e.jobs(), e.pending())
	}
}

// TestSecurityThumbsUpWithoutPermission extends TestThumbsUpWithoutPermissionDoesNothing
// (read user, requester, bot): a triage user, a user the repository does not know, any
// user when the permission cannot be read, a 👍 on the command comment instead of the
// status comment, other reaction kinds by a collaborator, and the requester's own
// /benchmark-approve. Polling may read (reactions, permissions) but writes nothing.
func TestSecurityThumbsUpWithoutPermission(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(e *env, status, command int64)
	}{
		{"triage user", func(e *env, st, _ int64) {
			e.gh.SetPermission(repo, "dave", "triage")
			e.gh.React(repo, st, "dave", "+1")
		}},
		{"unknown user", func(e *env, st, _ int64) { e.gh.React(repo, st, "mallory", "+1") }},
		{"requester with triage", func(e *env, st, _ int64) {
			e.gh.SetPermission(repo, "alice", "triage")
			e.gh.React(repo, st, "alice", "+1")
		}},
		{"permission unreadable", func(e *env, st, _ int64) {
			e.gh.DenyPermissionRead(repo)
			e.gh.React(repo, st, "bob", "+1")
		}},
		{"collaborator 👍 on the command comment", func(e *env, _, cmd int64) { e.gh.React(repo, cmd, "bob", "+1") }},
		{"collaborator other reactions", func(e *env, st, _ int64) {
			for _, r := range []string{"heart", "hooray", "rocket", "laugh", "eyes", "confused"} {
				e.gh.React(repo, st, "bob", r)
			}
		}},
		{"bot user with write", func(e *env, st, _ int64) {
			e.gh.SetPermission(repo, "ci[bot]", "admin")
			e.gh.React(repo, st, "ci[bot]", "+1")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t)
			cmd := e.comment("alice", secCommand)
			st := e.onlyStatus()
			tc.setup(e, st.ID, cmd)
			mark := len(e.gh.Calls())
			e.poll()
			e.poll()
			if w := e.secWrites(mark); len(w) != 0 {
				t.Errorf("poll wrote: %s", secCalls(w))
			}
			if len(e.jobs()) != 0 || len(e.pending()) != 1 {
				t.Errorf("jobs %+v, pending %+v", e.jobs(), e.pending())
			}
			if got := e.onlyStatus(); got.Edits != 0 {
				t.Errorf("status edited: %s", got.Body)
			}
		})
	}

	t.Run("requester /benchmark-approve", func(t *testing.T) {
		e := setup(t)
		e.comment("alice", secCommand)
		e.comment("alice", "/benchmark-approve")
		if len(e.jobs()) != 0 || len(e.pending()) != 1 {
			t.Fatalf("jobs %+v, pending %+v", e.jobs(), e.pending())
		}
		// The one side effect: a reply telling who may approve.
		if cs := e.botComments(); len(cs) != 2 || !strings.Contains(cs[1].Body, "write") || cs[0].Edits != 0 {
			t.Errorf("comments = %+v", cs)
		}
	})
}

// TestSecurityThumbsUpBeforeSynchronize: a collaborator's 👍 given while the ack showed
// sha1, then a push (synchronize delivered through the webhook), then the poll: the 👍
// approves nothing, since the head a reviewer now sees is sha2, and the status comment
// says so; the same holds for a 👍 given after the push. /benchmark-approve naming sha1
// then approves, bound to sha1, never to the pushed sha2. TestThumbsUpAfterForcePush
// covers a push whose synchronize delivery never arrived.
func TestSecurityThumbsUpBeforeSynchronize(t *testing.T) {
	for _, after := range []bool{false, true} {
		t.Run(fmt.Sprintf("thumbs up after push=%v", after), func(t *testing.T) {
			e := setup(t)
			e.run()
			e.comment("alice", secCommand)
			st := e.onlyStatus()
			if !after {
				e.gh.React(repo, st.ID, "bob", "+1")
			}
			e.gh.SetHead(repo, prNum, sha2)
			push := []byte(fmt.Sprintf(`{"action":"synchronize","number":%d,"before":%q,"after":%q,`+
				`"pull_request":{"number":%d,"head":{"sha":%q}},"repository":{"full_name":%q}}`,
				prNum, sha1, sha2, prNum, sha2, repo))
			if w := e.secSigned("pull_request", "d-sync", push); w.Code != http.StatusAccepted {
				t.Fatalf("synchronize: %d %s", w.Code, w.Body)
			}
			e.wait()
			if p := e.pending(); len(p) != 1 || p[0].SHA != sha1 || p[0].HeadMoved != sha2 {
				t.Fatalf("pending after push = %+v", p)
			}
			if len(e.jobs()) != 0 {
				t.Fatal("the push enqueued a job")
			}
			if after {
				e.gh.React(repo, st.ID, "bob", "+1")
			}
			e.poll()
			if js := e.jobs(); len(js) != 0 {
				t.Fatalf("a 👍 approved after the push: jobs = %+v", js)
			}
			if got := e.onlyStatus(); !strings.Contains(got.Body, "no longer approves") || !strings.Contains(got.Body, "`/benchmark-approve "+sha1[:12]+"`") {
				t.Errorf("status = %s", got.Body)
			}
			e.comment("bob", "/benchmark-approve "+sha1)
			js := e.jobs()
			if len(js) != 1 || js[0].SHA != sha1 || js[0].Approver != "bob" {
				t.Fatalf("jobs = %+v, want one at the acked %s", js, sha1)
			}
			if got := e.onlyStatus(); !strings.Contains(got.Body, sha1[:12]) {
				t.Errorf("status = %s", got.Body)
			}
		})
	}
}

// TestSecurityIgnoredDeliveries sends, through the signed webhook with the workers
// running, comments that must be ignored without a single GitHub call, by a collaborator
// (who would get a job) and by a non-collaborator (who would get a pending request).
// TestIgnoredComments covers several of these at the HandleComment level and TestWebhook
// covers a bot comment and a ``` fence through the webhook; this adds the decoded-payload
// path for all of them and more variants.
func TestSecurityIgnoredDeliveries(t *testing.T) {
	type delivery struct {
		name, action    string
		isPR            bool
		login, userType string
		body            string
	}
	for _, user := range []string{"bob", "alice"} {
		t.Run(user, func(t *testing.T) {
			e := setup(t)
			e.run()
			cases := []delivery{
				{"``` fence", "created", true, user, "User", "try:\n```\n" + secCommand + "\n```\n"},
				{"~~~ fence", "created", true, user, "User", "~~~sh\n" + secCommand + "\n~~~"},
				{"unclosed fence", "created", true, user, "User", "````\n" + secCommand},
				{"indented code", "created", true, user, "User", "    " + secCommand},
				{"quote", "created", true, user, "User", "> " + secCommand},
				{"nested quote", "created", true, user, "User", "> > " + secCommand + "\r\n\r\nagreed"},
				{"html comment", "created", true, user, "User", "<!--\n" + secCommand + "\n-->"},
				{"inline code", "created", true, user, "User", "run `" + secCommand + "` please"},
				{"bot type", "created", true, "renovate", "Bot", secCommand},
				{"[bot] login", "created", true, "ci[bot]", "User", secCommand},
				{"arenabot itself", "created", true, githubtest.BotLogin, "Bot", secCommand},
				{"edited to add a command", "edited", true, user, "User", "looks good\n\n" + secCommand},
				{"deleted", "deleted", true, user, "User", secCommand},
				{"plain issue", "created", false, user, "User", secCommand},
			}
			for i, c := range cases {
				number := prNum
				if !c.isPR {
					number = 7
				}
				p := secComment(t, c.action, number, c.isPR, int64(500+i), c.login, c.userType, c.body)
				if w := e.secSigned("issue_comment", fmt.Sprintf("d-ign-%d", i), p); w.Code != http.StatusAccepted {
					t.Errorf("%s: status %d", c.name, w.Code)
				}
				e.secNoEffect(c.name, 0)
			}
		})
	}
}
