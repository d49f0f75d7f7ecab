package bot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/settings"
)

const (
	baseSHA1 = "b111111111111111111111111111111111111111"
	baseSHA2 = "b222222222222222222222222222222222222222"
)

// strictSettings is the arena's settings file on its default branch in TestSettingsFile.
const strictSettings = `# the arena's gate
rule:
  min_effect: 5%
  min_runs: 4
gate: [baseline]
budget: 20m
queue_depth: 2
pools: [bench-b]
trusted: [carol]
`

// TestSettingsFile: the settings file on the pull request's base branch decides a request,
// and the pull request's own edit of it (a looser gate, another trusted user) does not:
// carol, trusted by the base's file, is approved at once; her job carries the file's rule,
// budget and depth for the runner and goes to its pool; a regression of a gated profile
// fails the check although the head's file gates nothing; mallory, trusted by the head's
// file only, waits for approval. Then a broken edit of the file on the base branch: the
// last valid file stays in force and the status comment and /benchmark-help say so; a
// restarted bot, which never saw a valid file, applies its defaults and says that.
func TestSettingsFile(t *testing.T) {
	e := setupEvents(t, func(c *Config) { c.Pools = []string{queue.DefaultPool, "bench-b"} })
	e.gh.AddFile(repo, baseSHA1, settings.FileName, []byte(strictSettings))
	e.gh.SetRef(repo, githubtest.DefaultBranch, baseSHA1)
	e.gh.AddFile(repo, sha1, settings.FileName, []byte("gate: []\ntrusted: [carol, mallory]\nqueue_depth: 10\n"))

	id := e.comment("carol", "/benchmark -f nethttp -t baseline")
	j, err := e.q.Get(t.Context(), requestID(id))
	if err != nil {
		t.Fatal(err)
	}
	tu := j.Tuning
	if j.State != queue.Queued || j.Approver != "carol" || j.Pool != "bench-b" || j.Depth != 2 || tu == nil ||
		*tu.MinEffect != 0.05 || *tu.MinRuns != 4 || tu.MaxRuns != nil || tu.Target != nil || *tu.Budget != 20*time.Minute {
		t.Fatalf("carol's job: %s approved by %q, pool %q, depth %d, tuning %+v; want queued at once on bench-b with the base file's settings", j.State, j.Approver, j.Pool, j.Depth, tu)
	}
	if p := payloadOf(j); len(p.Gate) != 1 || p.Gate["baseline"] != profile.FigureRPS || p.SettingsWarning != "" {
		t.Errorf("payload gate %v, warning %q; want baseline on rps and none", p.Gate, p.SettingsWarning)
	}
	status := e.commentByID(j.StatusCommentID).Body
	if want := "- **Settings:** `.arenabot.yml` on `main`: a change is at least `5%`, at least 4 runs a side, gated on `baseline`, job budget `20m`, 2 requests waiting per pull request, pools `bench-b`, 1 user approved at once\n"; !strings.Contains(status, want) {
		t.Errorf("the ack lacks the settings line %q:\n%s", want, status)
	}

	// The runner's report: baseline 10% slower, which the base's gate fails on.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	l, err := e.q.Claim(ctx, "bench-b")
	if err != nil {
		t.Fatal(err)
	}
	rep := pairedReport(0.9)
	e.runRows(j.ID, rep)
	e.finish(l, queue.Done, "", &rep)
	e.drain()
	var check githubtest.CheckRun
	for _, c := range e.gh.CheckRuns(repo) {
		if c.ExternalID == j.ID {
			check = c
		}
	}
	if check.Conclusion != "failure" || !strings.HasPrefix(check.Title, "nethttp baseline ") {
		t.Errorf("check run %s %q; want failure on baseline, the base's gate", check.Conclusion, check.Title)
	}

	mid := e.comment("mallory", "/benchmark -f nethttp -t baseline")
	if m, err := e.q.Get(t.Context(), requestID(mid)); err != nil || m.State != queue.AwaitingApproval {
		t.Errorf("mallory's request: %s (%v); want it awaiting approval: the head's file trusts nobody", m.State, err)
	}

	// A broken edit of the file on the base branch.
	e.gh.AddFile(repo, baseSHA2, settings.FileName, []byte("rule:\n  min_effect: lots\n"))
	e.gh.SetRef(repo, githubtest.DefaultBranch, baseSHA2)
	bid := e.comment("bob", "/benchmark -f nethttp -t baseline")
	b, err := e.q.Get(t.Context(), requestID(bid))
	if err != nil {
		t.Fatal(err)
	}
	if b.Pool != "bench-b" || b.Tuning == nil || *b.Tuning.MinEffect != 0.05 {
		t.Errorf("bob's job under a broken file: pool %q, tuning %+v; want the last valid file's", b.Pool, b.Tuning)
	}
	status = e.commentByID(b.StatusCommentID).Body
	warning := "> `.arenabot.yml` on `main` is not valid: line 2: rule.min\\_effect: \"lots\" is not a percentage from 0 to 50; give one such as 2%. The last valid file's settings apply until it is fixed."
	for _, want := range []string{warning, "- **Settings:** `.arenabot.yml` on `main` as last read valid, at 2026-01-06 10:00 UTC: a change is at least `5%`"} {
		if !strings.Contains(status, want) {
			t.Errorf("the ack under a broken file lacks %q:\n%s", want, status)
		}
	}
	t.Logf("the ack under a broken file:\n%s", status)

	hid := e.comment("dave", "/benchmark-help")
	help := e.reply(hid)
	for _, want := range []string{"### Settings in force", "**Gated:** `baseline` on `rps`", "**Job budget:** `20m`", "**Queue depth:** 2 requests waiting per pull request",
		"**Approved at once:** requests of collaborators with write access and `carol`", warning} {
		if !strings.Contains(help, want) {
			t.Errorf("/benchmark-help lacks %q:\n%s", want, help)
		}
	}

	// A restarted bot has no last valid file: the bot's defaults, said so.
	e.restart(nil)
	rid := e.comment("bob", "/benchmark -f gin -t baseline")
	r, err := e.q.Get(t.Context(), requestID(rid))
	if err != nil {
		t.Fatal(err)
	}
	status = e.commentByID(r.StatusCommentID).Body
	if r.Tuning != nil || r.Depth != 0 || r.Pool != queue.DefaultPool || !strings.Contains(status, "The bot's defaults apply until it is fixed.") || strings.Contains(status, "**Settings:**") {
		t.Errorf("after a restart under a broken file: tuning %+v, depth %d, pool %q; want the defaults, said so:\n%s", r.Tuning, r.Depth, r.Pool, status)
	}
}

// TestSettingsHelpDefaults: without a settings file, the ack says the bot's defaults apply,
// and /benchmark-help names them.
func TestSettingsHelpDefaults(t *testing.T) {
	e := setupEvents(t, func(c *Config) { c.QueueDepth = 3 })
	j := e.request("/benchmark -f nethttp -t baseline")
	if status := e.commentByID(j.StatusCommentID).Body; !strings.Contains(status, "- **Settings:** the bot's defaults (`/benchmark-help` lists them)\n") {
		t.Errorf("the ack does not say the defaults apply:\n%s", status)
	}
	help := e.reply(e.comment("dave", "/benchmark-help"))
	for _, want := range []string{"The bot's defaults: this repository has no `.arenabot.yml` on the pull request's base branch.",
		"**Gated:** the 22 profiles the arena's board scores", "**Queue depth:** 3 requests waiting per pull request", "**Pools:** `default`"} {
		if !strings.Contains(help, want) {
			t.Errorf("/benchmark-help lacks %q:\n%s", want, help)
		}
	}
}

// reply is the body of the bot's one reply to comment id.
func (e *evEnv) reply(id int64) string {
	e.t.Helper()
	for _, c := range e.gh.Comments(repo, prNum) {
		if strings.Contains(c.Body, replyMarker(id)) {
			return c.Body
		}
	}
	e.t.Fatalf("no reply to comment %d", id)
	return ""
}
