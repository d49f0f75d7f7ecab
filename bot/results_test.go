package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/internal/arenagen"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/result"
)

// evEnv is setup plus what the event tests need: a Bot built with their Config, a
// runner's side of the queue, and the replies' timings.
type evEnv struct {
	*env
	cfg     Config
	mu      sync.Mutex
	timings []ReplyTiming
}

// setupEvents returns setup's fake GitHub and queue with a Bot configured by mod.
func setupEvents(t *testing.T, mod func(*Config)) *evEnv {
	t.Helper()
	e := &evEnv{env: setup(t)}
	e.cfg = Config{WebhookSecret: []byte(secret), Now: e.clock, OnReply: e.record}
	if mod != nil {
		mod(&e.cfg)
	}
	e.restart(nil)
	return e
}

// restart replaces the Bot by a new one with the same configuration, GitHub and queue (or
// q when not nil), as a restarted process would have.
func (e *evEnv) restart(q queue.Queue) *Bot {
	e.t.Helper()
	c, err := ghapi.New(ghapi.Config{
		BaseURL: e.gh.URL, Token: "t", BotLogin: githubtest.BotLogin, WriteSpacing: -1, MaxRetries: -1,
		PermissionTTL: -1, Logger: slog.New(slog.NewTextHandler(e.t.Output(), nil)),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	if q == nil {
		q = e.q
	}
	cfg := e.cfg
	cfg.Checks = ghapi.NewChecks(c)
	e.bot = New(cfg, c, q, slog.New(slog.NewTextHandler(e.t.Output(), nil)))
	return e.bot
}

func (e *evEnv) record(tm ReplyTiming) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.timings = append(e.timings, tm)
	e.t.Logf("reply timing: %+v", tm)
}

func (e *evEnv) replyTimings() []ReplyTiming {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.timings)
}

// drain handles events through consumer "test" until a pass handles none.
func (e *evEnv) drain() int {
	e.t.Helper()
	total := 0
	for {
		n, err := e.bot.HandleEvents(e.t.Context(), "test", 0)
		if err != nil {
			e.t.Fatalf("HandleEvents: %v", err)
		}
		if n == 0 {
			return total
		}
		total += n
	}
}

// request comments cmd as bob (a collaborator, approved at once) and returns the job.
func (e *evEnv) request(cmd string) queue.Job {
	e.t.Helper()
	id := e.comment("bob", cmd)
	j, err := e.q.Get(e.t.Context(), requestID(id))
	if err != nil {
		e.t.Fatalf("job of %q: %v", cmd, err)
	}
	return j
}

// claim takes the next job as a runner does (the queue publishes "started").
func (e *evEnv) claim() queue.Lease {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.t.Context(), 5*time.Second)
	defer cancel()
	l, err := e.q.Claim(ctx, queue.DefaultPool)
	if err != nil {
		e.t.Fatalf("claim: %v", err)
	}
	return l
}

// publish sends a runner event.
func (e *evEnv) publish(job, kind string, v any) {
	e.t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.q.Publish(e.t.Context(), queue.Event{Job: job, Kind: kind, Data: data, Time: time.Now()}); err != nil {
		e.t.Fatal(err)
	}
}

// runRows publishes a progress and a row event per row of rep, as the runner does.
func (e *evEnv) runRows(job string, rep result.Report) {
	for i, r := range rep.Rows {
		e.publish(job, queue.EventProgress, result.Progress{Entry: r.Entry, Profile: r.Profile, Conns: r.Conns,
			Row: i + 1, Rows: len(rep.Rows), Done: i})
		e.publish(job, queue.EventRow, r)
	}
}

// finish ends a claimed job with rep as its result.
func (e *evEnv) finish(l queue.Lease, state queue.State, reason string, rep *result.Report) queue.Job {
	e.t.Helper()
	o := queue.Outcome{State: state, Reason: reason}
	if rep != nil {
		b, err := json.Marshal(rep)
		if err != nil {
			e.t.Fatal(err)
		}
		o.Result = b
	}
	j, err := e.q.Finish(e.t.Context(), l, o)
	if err != nil {
		e.t.Fatalf("finish: %v", err)
	}
	return j
}

// replies returns the bot's comments holding a results marker of job id, or its ending's.
func (e *evEnv) replies(id string) []githubtest.Comment {
	var out []githubtest.Comment
	prefix := strings.TrimSuffix(report.ResultsMarker(id, 1), "part=1 -->")
	for _, c := range e.botComments() {
		if strings.Contains(c.Body, prefix) || strings.Contains(c.Body, report.EndingMarker(id)) {
			out = append(out, c)
		}
	}
	return out
}

// comment returns the current state of comment id.
func (e *evEnv) commentByID(id int64) githubtest.Comment {
	e.t.Helper()
	for _, c := range e.gh.Comments(repo, prNum) {
		if c.ID == id {
			return c
		}
	}
	e.t.Fatalf("comment %d not found", id)
	return githubtest.Comment{}
}

// measuredRow is a row as the runner reports it: three runs, the best one summarised.
func measuredRow(entry, profile string, conns int, rps float64) result.Row {
	r := &result.Result{
		Framework: entry, Language: "Go", Entry: entry, Profile: profile, Connections: conns, Threads: 4,
		Duration: "5s", Tool: "wrk", ToolVersion: "4.2.0", Commit: sha1, Host: "bench-1",
		Time: time.Date(2026, 1, 6, 10, 30, 0, 0, time.UTC),
	}
	var runs []result.Run
	for _, f := range []float64{0.97, 1, 0.99} {
		runs = append(runs, result.Run{
			RPS: rps * f, Requests: int64(rps * f * 5), Status2xx: int64(rps * f * 5), DurationS: 5,
			Bytes: int64(rps * f * 5 * 130), CPUCores: 3.6, MemoryPeak: 24 << 20,
			LatencyUS: result.Latency{Mean: 900, P50: 700, P90: 1500, P99: 4200, P999: 9800, Max: 21000},
		})
	}
	r.FromRuns(runs)
	return result.Row{Entry: entry, Display: entry, Profile: profile, Conns: conns, Result: r}
}

// testReport is a runner's report for nethttp and gin on baseline, with gin's 4096c row
// failed when failGin is set.
func testReport(failGin bool) result.Report {
	rows := []result.Row{
		measuredRow("nethttp", "baseline", 512, 180000),
		measuredRow("nethttp", "baseline", 4096, 171000),
		measuredRow("gin", "baseline", 512, 165000),
		measuredRow("gin", "baseline", 4096, 158000),
	}
	if failGin {
		rows[3] = result.Row{Entry: "gin", Display: "gin", Profile: "baseline", Conns: 4096, Err: "server did not answer the probe within 30s"}
	}
	base := *measuredRow("nethttp", "baseline", 512, 175000).Result
	return result.Report{
		Commit: sha1, BaseRef: "main", BaseCommit: "9999999999999999999999999999999999999999", Host: "bench-1",
		Mode: "server CPUs 0-3, load CPUs 4-7", Runs: 3, Frameworks: []string{"nethttp", "gin"},
		Tests: []string{"baseline"}, Rows: rows,
		Baselines: []result.Baseline{
			{Entry: "nethttp", Present: true, Tests: []string{"baseline", "json"}, Results: []result.Result{base}},
			{Entry: "gin", Present: true, Tests: []string{"baseline", "json"}},
		},
		FrameworksFile: map[string]result.FrameworkGroup{
			"nethttp": {FrameworkInfo: result.FrameworkInfo{Dir: "nethttp", Description: "Go net/http", Repo: "https://go.dev", Type: "production", Engine: "net/http"}},
			"gin":     {FrameworkInfo: result.FrameworkInfo{Dir: "gin", Description: "Gin", Repo: "https://gin-gonic.com", Type: "production", Engine: "net/http"}},
		},
		Current: &result.HostFacts{CPU: "AMD EPYC 7763 64-Core Processor", Cores: "64", Threads: "128", ThreadsPerCore: "2", RAM: "251Gi",
			OS: "Debian GNU/Linux 12 (bookworm)", Kernel: "6.1.0-18-amd64", Docker: "29.3.0", DockerRuntime: "runc", Governor: "performance"},
		Log: []string{"checkout 1111111 ok", "build nethttp ok", "build gin ok", "done in 2m10s"},
	}
}

// savedFiles are the files a results commit of rep writes on a head that holds existing.
func savedFiles(t *testing.T, rep result.Report, existing map[string][]byte) map[string][]byte {
	t.Helper()
	files, err := rep.Saved("frameworks", func(p string) ([]byte, error) {
		if b, ok := existing[p]; ok {
			return b, nil
		}
		return nil, fs.ErrNotExist
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// headFiles returns the files of the fake's head commit as AddFile stored them.
func (e *evEnv) headFiles(sha string) map[string][]byte {
	files := map[string][]byte{}
	for _, fw := range []string{"nethttp", "gin"} {
		for _, name := range []string{"meta.json", "go.mod", "main.go"} {
			p := "frameworks/" + fw + "/" + name
			c, err := e.bot.Intake.gh.File(e.t.Context(), 0, repo, sha, p)
			if err != nil {
				e.t.Fatal(err)
			}
			files[p] = c
		}
	}
	return files
}

func TestDoneWithSaveCommitsOnceAndReplies(t *testing.T) {
	e := setupEvents(t, nil)
	j := e.request("/benchmark-multiple -f nethttp,gin -t baseline --save")
	l := e.claim()
	rep := testReport(false)
	e.runRows(j.ID, rep)
	done := e.finish(l, queue.Done, "", &rep)
	e.drain()

	// One commit on the PR head branch holding exactly the head's files and the results.
	commits := e.gh.Commits(repo)
	if len(commits) != 1 {
		t.Fatalf("commits = %d, want 1", len(commits))
	}
	c := commits[0]
	want := savedFiles(t, rep, nil)
	if got := slices.Sorted(maps.Keys(want)); !slices.Equal(got, []string{result.CurrentPath, result.FrameworksPath, "site/data/results/gin.json", "site/data/results/nethttp.json"}) {
		t.Fatalf("saved files = %v, want the two results files, frameworks.json and current.json", got)
	}
	wantTree := e.headFiles(sha1)
	maps.Copy(wantTree, want)
	if !maps.EqualFunc(c.Files, wantTree, bytesEqual) {
		t.Errorf("commit files = %v, want the head's files plus %v", slices.Sorted(maps.Keys(c.Files)), slices.Sorted(maps.Keys(want)))
	}
	if !slices.Equal(c.Parents, []string{sha1}) || e.gh.Ref(repo, "feature") != c.SHA {
		t.Errorf("commit parents %v, branch at %s; want on %s and the branch moved to %s", c.Parents, e.gh.Ref(repo, "feature"), sha1, c.SHA)
	}
	subject, body, _ := strings.Cut(c.Message, "\n\n")
	if subject != "Benchmark results: nethttp, gin (baseline)" || !strings.Contains(body, j.ID) || !strings.Contains(body, "Measured commit: "+sha1) {
		t.Errorf("commit message = %q", c.Message)
	}

	// One reply, with its marker, linking the commit.
	rs := e.replies(j.ID)
	if len(rs) != 1 {
		t.Fatalf("results comments = %d, want 1", len(rs))
	}
	if !strings.HasSuffix(rs[0].Body, report.ResultsMarker(j.ID, 1)) || !strings.Contains(rs[0].Body, "## Benchmark Results") ||
		!strings.Contains(rs[0].Body, "/commit/"+c.SHA) {
		t.Errorf("reply = %s", rs[0].Body)
	}
	// The status comment says done and links the reply and the commit.
	st := e.commentByID(done.StatusCommentID)
	for _, s := range []string{"Benchmark done", fmt.Sprintf("#issuecomment-%d", rs[0].ID), "https://github.com/octo/arena/commit/" + c.SHA} {
		if !strings.Contains(st.Body, s) {
			t.Errorf("status comment lacks %q:\n%s", s, st.Body)
		}
	}
	tms := e.replyTimings()
	if len(tms) != 1 || tms[0].Job != j.ID || tms[0].CommitSHA != c.SHA || tms[0].Commit <= 0 || tms[0].Reply < tms[0].Commit ||
		tms[0].Total < tms[0].Reply || tms[0].Parts != 1 || tms[0].Attempt != 1 {
		t.Errorf("timings = %+v", tms)
	}

	// The same outcome event again (delivered twice): nothing new is posted or committed.
	edits := st.Edits
	e.publish(j.ID, queue.EventOutcome, done)
	e.drain()
	if n := len(e.gh.Commits(repo)); n != 1 {
		t.Errorf("commits after a second delivery = %d, want 1", n)
	}
	if rs := e.replies(j.ID); len(rs) != 1 || rs[0].Edits != 0 {
		t.Errorf("results comments after a second delivery = %+v, want the one, unedited", rs)
	}
	if st := e.commentByID(done.StatusCommentID); !strings.Contains(st.Body, "/commit/"+c.SHA) || st.Edits > edits+1 {
		t.Errorf("status after a second delivery (edits %d, was %d): %s", st.Edits, edits, st.Body)
	}
}

// TestRepliesSayHowEachDeltaWasObtained: a job measured against the merge base replies with
// the base in its header and interval cells; one asked for --baseline committed says so even
// when its runner's report does not.
func TestRepliesSayHowEachDeltaWasObtained(t *testing.T) {
	e := setupEvents(t, nil)
	j := e.request("/benchmark -f nethttp -t baseline")
	l := e.claim()
	rep := testReport(false)
	rep.Rows, rep.Frameworks = rep.Rows[:2], []string{"nethttp"}
	rep.MergeBase = "8888888888888888888888888888888888888888"
	for i := range rep.Rows {
		base := measuredRow("nethttp", "baseline", rep.Rows[i].Conns, 200000).Result
		rep.Rows[i].Result.Base = &result.Side{Entry: "nethttp", Ref: "main", Commit: rep.MergeBase, Runs: base.Runs, Order: "BHHBBH"}
	}
	e.runRows(j.ID, rep)
	e.finish(l, queue.Done, "", &rep)
	e.drain()
	rs := e.replies(j.ID)
	if len(rs) != 1 {
		t.Fatalf("results comments = %d, want 1", len(rs))
	}
	for _, w := range []string{
		"Δ of each changed entry against itself at `888888888888` (merge base with `main`), measured in this job, interleaved run by run",
		"| baseline | 512 | 180.0K |", "| -10.0% ±", "3 runs each;",
	} {
		if !strings.Contains(rs[0].Body, w) {
			t.Errorf("reply lacks %q:\n%s", w, rs[0].Body)
		}
	}

	j = e.request("/benchmark -f nethttp -t baseline --baseline committed")
	if j.Baseline != "committed" {
		t.Fatalf("job Baseline = %q, want committed", j.Baseline)
	}
	l = e.claim()
	rep = testReport(false) // a runner that does not write AgainstCommitted
	e.runRows(j.ID, rep)
	e.finish(l, queue.Done, "", &rep)
	e.drain()
	rs = e.replies(j.ID)
	if len(rs) != 1 || !strings.Contains(rs[0].Body, "measured at another time, not in this job (`--baseline committed`)") {
		t.Errorf("reply of a --baseline committed job:\n%+v", rs)
	}
}

func TestResultsPostRetriedAfter502(t *testing.T) {
	e := setupEvents(t, nil)
	j := e.request("/benchmark -f nethttp -t baseline")
	l := e.claim()
	rep := testReport(false)
	rep.Rows, rep.Frameworks = rep.Rows[:2], []string{"nethttp"}
	e.drain()
	e.finish(l, queue.Done, "", &rep)
	e.gh.FailNext("POST", "/repos/octo/arena/issues/42/comments", 1, http.StatusBadGateway)
	e.drain()
	if rs := e.replies(j.ID); len(rs) != 0 {
		t.Fatalf("reply posted despite the 502: %+v", rs)
	}
	// Not acknowledged: retried once FinalRetry has passed, not before.
	e.advance(DefaultFinalRetry / 2)
	if n := e.drain(); n != 0 {
		t.Errorf("handled %d before the retry was due", n)
	}
	e.advance(DefaultFinalRetry)
	e.drain()
	if rs := e.replies(j.ID); len(rs) != 1 {
		t.Fatalf("results comments = %d, want 1", len(rs))
	}
	if n := len(e.gh.CallsTo("POST", "/repos/octo/arena/issues/42/comments")); n != 3 { // status, 502, reply
		t.Errorf("comment POSTs = %d, want 3", n)
	}
	if tms := e.replyTimings(); len(tms) != 1 || tms[0].Attempt != 2 {
		t.Errorf("timings = %+v", tms)
	}
	e.advance(time.Hour)
	e.drain()
	if rs := e.replies(j.ID); len(rs) != 1 {
		t.Errorf("results comments after more passes = %d", len(rs))
	}
}

// lostAnswer carries out the first matching request and answers 502, as when GitHub
// creates a comment and the answer is lost on the way back.
type lostAnswer struct {
	method, path string
	mu           sync.Mutex
	done         bool
}

func (l *lostAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	l.mu.Lock()
	hit := !l.done && req.Method == l.method && strings.HasSuffix(req.URL.Path, l.path)
	l.done = l.done || hit
	l.mu.Unlock()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if hit && err == nil {
		resp.Body.Close()
		resp.StatusCode, resp.Status, resp.Body = http.StatusBadGateway, "502 Bad Gateway", http.NoBody
	}
	return resp, err
}

func TestResultsPostLostAnswerPostsOnce(t *testing.T) {
	for _, retries := range []int{-1, 3} {
		t.Run(fmt.Sprintf("ghapi retries %d", retries), func(t *testing.T) {
			e := setupEvents(t, nil)
			j := e.request("/benchmark -f nethttp -t baseline")
			l := e.claim()
			rep := testReport(false)
			rep.Rows, rep.Frameworks = rep.Rows[:2], []string{"nethttp"}
			e.finish(l, queue.Done, "", &rep)
			lost := &lostAnswer{method: "POST", path: "/repos/octo/arena/issues/42/comments"}
			c, err := ghapi.New(ghapi.Config{BaseURL: e.gh.URL, Token: "t", BotLogin: githubtest.BotLogin, WriteSpacing: -1,
				MaxRetries: retries, Transport: lost, Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }})
			if err != nil {
				t.Fatal(err)
			}
			e.bot = New(e.cfg, c, e.q, nil)
			e.drain()
			e.advance(time.Minute)
			e.drain()
			if rs := e.replies(j.ID); len(rs) != 1 {
				t.Fatalf("results comments = %d, want 1", len(rs))
			}
		})
	}
}

func TestCommitLandsOnMovedHead(t *testing.T) {
	e := setupEvents(t, nil)
	j := e.request("/benchmark-multiple -f nethttp,gin -t baseline --save")
	l := e.claim()
	e.drain()
	// The author pushes while the job runs.
	e.gh.SetHead(repo, prNum, sha2)
	rep := testReport(false)
	e.finish(l, queue.Done, "", &rep)
	e.drain()
	commits := e.gh.Commits(repo)
	if len(commits) != 1 || !slices.Equal(commits[0].Parents, []string{sha2}) || e.gh.Ref(repo, "feature") != commits[0].SHA {
		t.Fatalf("commits = %+v, want one on the new head %s", commits, sha2)
	}
	if !strings.Contains(commits[0].Message, "Measured commit: "+sha1) {
		t.Errorf("commit message does not name the measured commit: %q", commits[0].Message)
	}
	if rs := e.replies(j.ID); len(rs) != 1 || !strings.Contains(rs[0].Body, commits[0].SHA[:7]) {
		t.Errorf("replies = %+v", rs)
	}
}

// diffs returns the diffs of a reply's results patch.
func diffs(body string) []string {
	var out []string
	for _, chunk := range strings.Split(body, "```diff\n")[1:] {
		d, _, _ := strings.Cut(chunk, "\n```\n")
		out = append(out, d+"\n")
	}
	return out
}

func TestPushDeniedRepliesWithPatch(t *testing.T) {
	e := setupEvents(t, nil)
	existing := "site/data/results/nethttp.json"
	old := []byte("{\n  \"framework\": \"nethttp\",\n  \"results\": {\n    \"json-4096\": {\"framework\": \"nethttp\", \"rps\": 100000}\n  }\n}\n")
	e.gh.AddFile(repo, sha1, existing, old)
	j := e.request("/benchmark-multiple -f nethttp,gin -t baseline --save")
	l := e.claim()
	rep := testReport(true)
	e.finish(l, queue.Done, "", &rep)
	e.gh.DenyPush(repo)
	e.drain()
	if n := len(e.gh.Commits(repo)); n != 0 {
		t.Fatalf("commits = %d despite the refusal", n)
	}
	rs := e.replies(j.ID)
	if len(rs) != 1 {
		t.Fatalf("results comments = %d, want 1", len(rs))
	}
	if !strings.Contains(rs[0].Body, "GitHub refused the push") || !strings.Contains(rs[0].Body, "octo/arena:feature") {
		t.Errorf("reply does not say the push was refused:\n%s", rs[0].Body)
	}
	patches := diffs(rs[0].Body)
	want := savedFiles(t, rep, map[string][]byte{existing: old})
	if !strings.Contains(string(want[existing]), `"json-4096": {`) {
		t.Errorf("the patch's results file lost the key the head had:\n%s", want[existing])
	}
	if len(patches) != len(want) {
		t.Fatalf("reply has %d diffs, want %d:\n%s", len(patches), len(want), rs[0].Body)
	}
	before := e.headFiles(sha1)
	before[existing] = old
	after := gitApply(t, before, patches)
	for p, c := range want {
		if !bytesEqual(after[p], c) {
			t.Errorf("%s after git apply = %q, want %q", p, after[p], c)
		}
	}
	st := e.commentByID(j.StatusCommentID)
	if !strings.Contains(st.Body, "Benchmark done") || strings.Contains(st.Body, "/commit/") {
		t.Errorf("status = %s", st.Body)
	}
}

func TestForkWithoutMaintainerEditsGetsPatch(t *testing.T) {
	e := setupEvents(t, nil)
	e.gh.AddPR(repo, githubtest.PR{Number: prNum, HeadSHA: sha1, HeadRef: "patch-1", HeadRepo: "alice/arena", User: "alice"})
	j := e.request("/benchmark -f nethttp -t baseline --save")
	l := e.claim()
	rep := testReport(false)
	rep.Rows, rep.Frameworks = rep.Rows[:2], []string{"nethttp"}
	e.finish(l, queue.Done, "", &rep)
	e.drain()
	if calls := e.gh.CallsTo("POST", "/repos/alice/arena/git/*"); len(calls) != 0 || len(e.gh.Commits("alice/arena")) != 0 {
		t.Errorf("tried to push to the fork: %d calls", len(calls))
	}
	rs := e.replies(j.ID)
	if len(rs) != 1 || !strings.Contains(rs[0].Body, "does not allow edits by maintainers") || len(diffs(rs[0].Body)) != 3 {
		t.Fatalf("replies = %+v", rs)
	}
	after := gitApply(t, map[string][]byte{"README.md": []byte("x\n")}, diffs(rs[0].Body))
	for p, c := range savedFiles(t, rep, nil) {
		if !bytesEqual(after[p], c) {
			t.Errorf("%s after git apply = %q", p, after[p])
		}
	}
}

func TestCommitFailureStillReplies(t *testing.T) {
	e := setupEvents(t, nil)
	j := e.request("/benchmark -f nethttp -t baseline --save")
	l := e.claim()
	rep := testReport(false)
	rep.Rows, rep.Frameworks = rep.Rows[:2], []string{"nethttp"}
	e.finish(l, queue.Done, "", &rep)
	e.gh.FailNext("POST", "/repos/octo/arena/git/trees", 1, http.StatusInternalServerError)
	e.drain()
	rs := e.replies(j.ID)
	if len(rs) != 1 || !strings.Contains(rs[0].Body, "The results commit failed") || len(diffs(rs[0].Body)) != 3 {
		t.Fatalf("replies = %+v", rs)
	}
	if n := len(e.gh.Commits(repo)); n != 0 {
		t.Errorf("commits = %d", n)
	}
}

func TestSaveOfFailedAndCancelledJobs(t *testing.T) {
	t.Run("failed", func(t *testing.T) {
		e := setupEvents(t, nil)
		j := e.request("/benchmark -f nethttp -t baseline --save")
		l := e.claim()
		rep := result.Report{Commit: sha1, Error: "checkout of 1111111 failed: reference is not a tree", Log: []string{"git fetch", "fatal: bad object"}}
		e.finish(l, queue.Failed, "the checkout failed", &rep)
		e.drain()
		rs := e.replies(j.ID)
		if len(rs) != 1 || !strings.Contains(rs[0].Body, "Benchmark failed") || !strings.Contains(rs[0].Body, "the checkout failed") {
			t.Fatalf("replies = %+v", rs)
		}
		if n := len(e.gh.Commits(repo)); n != 0 {
			t.Errorf("commits = %d", n)
		}
		if st := e.commentByID(j.StatusCommentID); !strings.Contains(st.Body, "Benchmark failed") {
			t.Errorf("status = %s", st.Body)
		}
	})
	t.Run("cancelled with rows", func(t *testing.T) {
		e := setupEvents(t, nil)
		j := e.request("/benchmark-multiple -f nethttp,gin -t baseline --save")
		l := e.claim()
		rep := testReport(false)
		rep.Rows = rep.Rows[:3]
		if _, err := e.q.Cancel(t.Context(), j.ID, "bob"); err != nil {
			t.Fatal(err)
		}
		e.finish(l, queue.Cancelled, "", &rep)
		e.drain()
		commits := e.gh.Commits(repo)
		if len(commits) != 1 || len(commits[0].Files) != len(e.headFiles(sha1))+4 {
			t.Fatalf("%d commits, want one with the head's files, two results files, frameworks.json and current.json", len(commits))
		}
		keys := 0
		for _, p := range []string{"site/data/results/nethttp.json", "site/data/results/gin.json"} {
			f, err := result.DecodeSite(commits[0].Files[p])
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			keys += len(f.Results)
		}
		if keys != 3 {
			t.Errorf("the results files hold %d rows, want the 3 measured", keys)
		}
		if rs := e.replies(j.ID); len(rs) != 1 || !strings.Contains(rs[0].Body, "Benchmark cancelled") {
			t.Fatalf("replies = %+v", rs)
		}
		if st := e.commentByID(j.StatusCommentID); !strings.Contains(st.Body, "Benchmark cancelled") || !strings.Contains(st.Body, "Cancelled by @bob") {
			t.Errorf("status = %s", st.Body)
		}
	})
}

func TestSupersededCancelledLostReplyOnce(t *testing.T) {
	t.Run("superseded", func(t *testing.T) {
		e := setupEvents(t, nil)
		e.request("/benchmark -f nethttp -t baseline")
		e.claim()
		waiting := e.request("/benchmark -f gin -t baseline")
		newer := e.request("/benchmark -f nethttp -t json")
		e.drain()
		e.drain()
		rs := e.replies(waiting.ID)
		link := func(body string) bool {
			return strings.Contains(body, fmt.Sprintf("#issuecomment-%d", newer.StatusCommentID)) ||
				strings.Contains(body, fmt.Sprintf("#issuecomment-%d", newer.CommentID))
		}
		if len(rs) != 1 || !strings.Contains(rs[0].Body, "superseded") || !link(rs[0].Body) || strings.Contains(rs[0].Body, newer.ID) {
			t.Fatalf("replies to the superseded job = %+v", rs)
		}
		st := e.commentByID(waiting.StatusCommentID)
		if !strings.Contains(st.Body, "superseded") || !link(st.Body) {
			t.Errorf("status = %s", st.Body)
		}
		if n := len(e.replies(newer.ID)); n != 0 {
			t.Errorf("the newer job got %d replies", n)
		}
	})
	t.Run("cancelled while waiting", func(t *testing.T) {
		e := setupEvents(t, nil)
		j := e.request("/benchmark -f nethttp -t baseline --save")
		e.comment("bob", "/benchmark-cancel")
		edits := e.statusEdits(j.StatusCommentID)
		e.drain()
		e.drain()
		rs := e.replies(j.ID)
		if len(rs) != 1 || !strings.Contains(rs[0].Body, "cancelled by @bob") || strings.Contains(rs[0].Body, "Benchmark Results") {
			t.Fatalf("replies = %+v", rs)
		}
		if st := e.commentByID(j.StatusCommentID); !strings.Contains(st.Body, "Benchmark cancelled") || e.statusEdits(j.StatusCommentID) != edits {
			t.Errorf("status (%d more edits) = %s", e.statusEdits(j.StatusCommentID)-edits, st.Body)
		}
	})
	t.Run("lost", func(t *testing.T) {
		e := setupEvents(t, nil)
		e.q = queue.NewMemory(queue.Options{LeaseTTL: 10 * time.Millisecond, Now: e.clock})
		e.restart(nil)
		j := e.request("/benchmark -f nethttp -t baseline")
		for attempt := 1; attempt <= queue.MaxAttempts; attempt++ {
			e.claim()
			time.Sleep(20 * time.Millisecond)
			if _, err := e.q.Reap(t.Context()); err != nil {
				t.Fatal(err)
			}
			e.drain()
			st := e.commentByID(j.StatusCommentID)
			if attempt == 1 && !strings.Contains(st.Body, "the runner stopped responding") {
				t.Errorf("status after the first loss = %s", st.Body)
			}
		}
		e.drain()
		rs := e.replies(j.ID)
		if len(rs) != 1 || !strings.Contains(rs[0].Body, "Benchmark lost") {
			t.Fatalf("replies = %+v", rs)
		}
		if st := e.commentByID(j.StatusCommentID); !strings.Contains(st.Body, "Benchmark failed") || !strings.Contains(st.Body, "stopped responding twice") {
			t.Errorf("status = %s", st.Body)
		}
	})
}

func TestFinalReplyToMissingPRIsDropped(t *testing.T) {
	e := setupEvents(t, nil)
	// The repository was deleted (or the app uninstalled) while the job waited.
	j := queue.Job{ID: "r77", Repo: "octo/gone", PR: 77, Requester: "bob", Command: "/benchmark -f nethttp", Kind: queue.Benchmark,
		Frameworks: []string{"nethttp"}, SHA: sha1, StatusCommentID: 5}
	if _, _, err := e.q.Enqueue(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	if _, err := e.q.Cancel(t.Context(), j.ID, "bob"); err != nil {
		t.Fatal(err)
	}
	e.drain()
	// A 404 cannot be mended by retrying: acknowledged, not retried.
	calls := len(e.gh.Calls())
	e.advance(time.Hour)
	e.drain()
	if n := len(e.gh.Calls()); n != calls {
		t.Errorf("%d more GitHub calls after the 404", n-calls)
	}
}

// TestSaveMergesIntoTheHeadsResultsFile: the results commit merges the job's rows into each
// framework's results file as the PR head holds it (a row replaces its key even when slower;
// the file's other keys stay as they were), writes frameworks.json and the runner's
// current.json beside them, and the arena's generator reads the committed site/data.
func TestSaveMergesIntoTheHeadsResultsFile(t *testing.T) {
	e := setupEvents(t, nil)
	const path = "site/data/results/nethttp.json"
	arenaRow := `{"framework": "nethttp", "language": "Go", "rps": 999999, "avg_latency": "1.00ms", "p99_latency": "2.00ms", "cpu": "100.0%", "memory": "10MiB", "connections": 4096, "threads": 64, "duration": "5s", "pipeline": 1, "bandwidth": "1.00MB/s", "reconnects": 0, "status_2xx": 5, "status_3xx": 0, "status_4xx": 0, "status_5xx": 0, "tpl_static": 3}`
	e.gh.AddFile(repo, sha1, path, []byte(`{"framework": "nethttp", "results": {"json-4096": `+arenaRow+`, "baseline-512": `+arenaRow+`}}`))
	j := e.request("/benchmark -f nethttp -t baseline --save")
	l := e.claim()
	rep := testReport(false)
	rep.Rows, rep.Frameworks = rep.Rows[:2], []string{"nethttp"}
	e.finish(l, queue.Done, "", &rep)
	e.drain()
	commits := e.gh.Commits(repo)
	if len(commits) != 1 {
		t.Fatalf("commits = %d, want 1", len(commits))
	}
	tree := commits[0].Files
	f, err := result.DecodeSite(tree[path])
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(f.Results)); !slices.Equal(got, []string{"baseline-4096", "baseline-512", "json-4096"}) {
		t.Errorf("keys = %v, want the head's json-4096 kept and the job's two rows", got)
	}
	rows, err := f.Rows()
	if err != nil {
		t.Fatal(err)
	}
	if rows[1].RPS != 180000 || rows[1].Entry != "nethttp" || len(rows[1].Runs) != 3 || rows[2].RPS != 999999 {
		t.Errorf("rows = %+v, want baseline-512 replaced by the job's (slower) row and json-4096 as it was", rows)
	}
	for _, p := range []string{result.FrameworksPath, result.CurrentPath} {
		if len(tree[p]) == 0 {
			t.Errorf("the commit has no %s", p)
		}
	}
	if !strings.Contains(commits[0].Message, path) {
		t.Errorf("the commit message does not list %s:\n%s", path, commits[0].Message)
	}

	dir := t.TempDir()
	for p, b := range tree {
		if rel, ok := strings.CutPrefix(p, result.SiteDataDir+"/"); ok {
			full := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	board, problems := arenagen.Read(dir)
	if len(problems) > 0 {
		t.Fatalf("the arena's generator would misread the committed site/data:\n%s", strings.Join(problems, "\n"))
	}
	if got := board.Results["baseline-4096"]; len(got) != 1 || got[0]["rps"] != json.Number("171000") {
		t.Errorf("the board's baseline-4096 = %v", got)
	}
	if board.Current["cpu"] != "AMD EPYC 7763 64-Core Processor" || board.Meta["nethttp"].Dir != "nethttp" {
		t.Errorf("the board's current %v, meta %v", board.Current, board.Meta)
	}
	if rs := e.replies(j.ID); len(rs) != 1 || !strings.Contains(rs[0].Body, "/commit/"+commits[0].SHA) {
		t.Errorf("replies = %+v", rs)
	}
}

// TestSaveWhenTheResultsFileCannotBeRead: a results file the bot cannot read from the head is
// not overwritten (its other keys would be lost): nothing is committed and the reply says why.
func TestSaveWhenTheResultsFileCannotBeRead(t *testing.T) {
	e := setupEvents(t, nil)
	j := e.request("/benchmark -f nethttp -t baseline --save")
	l := e.claim()
	rep := testReport(false)
	rep.Rows, rep.Frameworks = rep.Rows[:2], []string{"nethttp"}
	e.finish(l, queue.Done, "", &rep)
	e.gh.FailNext("GET", "/repos/octo/arena/contents/site/data/results/*", 1, http.StatusInternalServerError)
	e.drain()
	if n := len(e.gh.Commits(repo)); n != 0 {
		t.Errorf("commits = %d, want none", n)
	}
	rs := e.replies(j.ID)
	if len(rs) != 1 || !strings.Contains(rs[0].Body, "nothing was committed: the results file could not be read from GitHub") {
		t.Fatalf("replies = %+v", rs)
	}
}
