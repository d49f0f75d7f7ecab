package bot

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/bot/hook"
	"github.com/arenabot/arenabot/bot/report"
)

// TestSecurityPlantedMarker: markers planted by another user in their own comments (the
// status comment's of a request, and the reply marker of a /benchmark-help) neither
// suppress the bot's comments nor make it adopt and overwrite the planted comment. The
// client is built as serve builds it: no configured login, the login learnt from GitHub.
func TestSecurityPlantedMarker(t *testing.T) {
	e := setup(t)
	c, err := ghapi.New(ghapi.Config{BaseURL: e.gh.URL, Token: "t", WriteSpacing: -1, MaxRetries: -1, PermissionTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	if login, err := c.ResolveLogin(t.Context()); err != nil || login != githubtest.BotLogin {
		t.Fatalf("ResolveLogin = %q, %v", login, err)
	}
	e.bot = New(Config{WebhookSecret: []byte(secret), Now: e.clock, BotLogin: c.Login()}, c, e.q, nil)

	request := e.gh.AddComment(repo, prNum, "bob", secCommand)
	help := e.gh.AddComment(repo, prNum, "carol", "/benchmark-help")
	// The command ids are public as soon as the comments are: mallory plants both markers
	// before the bot got to them.
	planted := e.gh.AddComment(repo, prNum, "mallory", "nothing to see\n"+report.Marker(requestID(request))+"\n"+replyMarker(help))
	for _, cm := range []struct {
		id         int64
		user, body string
	}{{request, "bob", secCommand}, {help, "carol", "/benchmark-help"}} {
		ev := hook.Comment{Action: "created", Repo: repo, Number: prNum, IsPR: true, CommentID: cm.id, Body: cm.body, Author: cm.user, AuthorType: "User"}
		if err := e.bot.HandleComment(t.Context(), ev); err != nil {
			t.Fatal(err)
		}
	}
	e.settle()

	for _, cm := range e.gh.Comments(repo, prNum) {
		if cm.ID == planted && (cm.Edits != 0 || !strings.HasPrefix(cm.Body, "nothing to see")) {
			t.Errorf("the planted comment was changed (%d edits): %q", cm.Edits, cm.Body)
		}
	}
	var status, reply bool
	for _, cm := range e.botComments() {
		status = status || strings.Contains(cm.Body, report.Marker(requestID(request)))
		reply = reply || strings.Contains(cm.Body, replyMarker(help))
	}
	if !status {
		t.Errorf("the bot posted no status comment of its own for the request; its comments: %+v", e.botComments())
	}
	if !reply {
		t.Errorf("the bot posted no reply to /benchmark-help; its comments: %+v", e.botComments())
	}
	if j := e.jobs(); len(j) != 1 || j[0].StatusCommentID == planted {
		t.Errorf("%d jobs; want one whose status comment is the bot's, not the planted %d", len(j), planted)
	}
}

// TestSecurityForeignRepository: with Config.Repos set, a command and a push from another
// repository the App is installed on queue nothing, write nothing and call GitHub not at
// all, whether they come through the webhook or are handed over (as recovered deliveries
// are); they are counted; the served repository's command is still taken.
func TestSecurityForeignRepository(t *testing.T) {
	e := setup(t)
	secRebuild(e, Config{Repos: []string{"OCTO/arena"}}) // GitHub's names ignore case
	reg := prometheus.NewRegistry()
	IntakeMetrics(reg, e.bot.Intake)
	e.run()
	const foreign = "mallory/fork"
	e.gh.AddPR(foreign, githubtest.PR{Number: prNum, HeadSHA: sha1, HeadRef: "evil", User: "mallory"})
	e.gh.SetPermission(foreign, "mallory", "admin")

	var p map[string]any
	if err := json.Unmarshal(secComment(t, "created", prNum, true, 900, "mallory", "User", secCommand), &p); err != nil {
		t.Fatal(err)
	}
	p["repository"] = map[string]any{"full_name": foreign, "name": "fork", "owner": map[string]any{"login": "mallory"}}
	cmd, _ := json.Marshal(p)
	push := []byte(fmt.Sprintf(`{"action":"synchronize","number":%d,"before":%q,"after":%q,`+
		`"pull_request":{"number":%d,"head":{"sha":%q}},"repository":{"full_name":%q}}`,
		prNum, sha1, sha2, prNum, sha2, foreign))
	for _, d := range []struct {
		event string
		body  []byte
	}{{"issue_comment", cmd}, {"pull_request", push}} {
		w := e.secSigned(d.event, "d-foreign-"+d.event, d.body)
		if w.Code != http.StatusAccepted || strings.TrimSpace(w.Body.String()) != ignoredForeign {
			t.Errorf("%s from %s: %d %q; want 202 %q", d.event, foreign, w.Code, w.Body, ignoredForeign)
		}
		e.secNoEffect(d.event+" from "+foreign+" through the webhook", 0)
	}
	ev := hook.Comment{Action: "created", Repo: foreign, Number: prNum, IsPR: true, CommentID: 901, Body: secCommand, Author: "mallory", AuthorType: "User"}
	if err := e.bot.HandleComment(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	if err := e.bot.HandlePullRequest(t.Context(), hook.PullRequest{Action: "synchronize", Repo: foreign, Number: prNum, Before: sha1, After: sha2}); err != nil {
		t.Fatal(err)
	}
	e.secNoEffect("handed over from "+foreign, 0)
	if recs := e.records(); len(recs) != 0 {
		t.Errorf("records = %+v; want none", recs)
	}
	if n := counter(t, reg, "arena_webhook_foreign_total"); n != 4 {
		t.Errorf("arena_webhook_foreign_total = %v, want 4", n)
	}

	if w := e.secSigned("issue_comment", "d-served", secComment(t, "created", prNum, true, 902, "bob", "User", secCommand)); w.Code != http.StatusAccepted || strings.TrimSpace(w.Body.String()) != "accepted" {
		t.Fatalf("served repository's command: %d %q", w.Code, w.Body)
	}
	e.wait()
	if js := e.jobs(); len(js) != 1 || js[0].Repo != repo {
		t.Errorf("jobs = %+v; want bob's in %s", js, repo)
	}
}

// counter returns the value of the counter name gathered from reg.
func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no counter %s", name)
	return 0
}
