package main

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/internal/arenagen"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/text"
)

// resultsCommit returns the one commit the bot made on top of parent, failing unless there
// is exactly one.
func (l *loop) resultsCommit(parent string) githubtest.Commit {
	l.t.Helper()
	var found []githubtest.Commit
	for _, c := range l.gh.Commits(loopRepo) {
		if len(c.Parents) == 1 && c.Parents[0] == parent {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		l.t.Fatalf("want exactly one commit on top of %s, got %d: %+v", parent, len(found), found)
	}
	return found[0]
}

// changedFiles lists the paths a commit adds or changes against the PR head's files (the
// fake GitHub gives a moved head the files of the head before it).
func (l *loop) changedFiles(c githubtest.Commit) map[string][]byte {
	out := map[string][]byte{}
	for path, b := range c.Files {
		if old, ok := l.headFiles[path]; !ok || string(old) != string(b) {
			out[path] = b
		}
	}
	for path := range l.headFiles {
		if _, ok := c.Files[path]; !ok {
			l.t.Errorf("the results commit deletes %s", path)
		}
	}
	return out
}

// TestLoopMultiSave is the mission end to end: a contributor's signed
// `/benchmark-multiple -f nethttp,fasthttp -t baseline --save`, a collaborator's 👍, the
// runner measuring both real entries, and one results comment whose two tables hold exactly
// the numbers of the one commit the bot made on the PR head.
func TestLoopMultiSave(t *testing.T) {
	// main already holds nethttp's results file in today's layout, with a row of the arena's
	// own that this job does not measure: the commit must keep it.
	const arenaRow = `{"framework": "go-nethttp", "language": "Go", "rps": 4242, "avg_latency": "1.00ms", "p99_latency": "2.00ms", "cpu": "100.0%", "memory": "10MiB", "connections": 4096, "threads": 64, "duration": "5s", "pipeline": 1, "bandwidth": "1.00MB/s", "reconnects": 0, "status_2xx": 5, "status_3xx": 0, "status_4xx": 0, "status_5xx": 0}`
	l := newLoop(t, []string{"nethttp", "fasthttp"}, func(work string) {
		p := filepath.Join(work, "site", "data", "results", "go-nethttp.json")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(`{"framework": "go-nethttp", "results": {"json-4096": `+arenaRow+`}}`), 0o644)
	})
	l.startServe()
	l.startWork()
	cmdID := l.comment("carol", "/benchmark-multiple -f nethttp,fasthttp -t baseline --save")
	l.approve()
	final := l.waitComment("arenabot:results", 5*time.Minute)
	time.Sleep(time.Second) // a second reply would come now
	if n := len(l.results()); n != 1 {
		t.Fatalf("%d results comments, want 1:\n%s", n, l.dumpComments())
	}
	t.Logf("results comment:\n%s", final.Body)

	commit := l.resultsCommit(l.head)
	if got := l.gh.Ref(loopRepo, loopBranch); got != commit.SHA {
		t.Errorf("%s points at %s, want the results commit %s", loopBranch, got, commit.SHA)
	}
	// Today's layout: a results file per display name, frameworks.json and, from this
	// runner in full mode (the benchmark host), current.json.
	files := l.changedFiles(commit)
	wantFiles := []string{result.CurrentPath, result.FrameworksPath, "site/data/results/go-fasthttp.json", "site/data/results/go-nethttp.json"}
	if got := slices.Sorted(maps.Keys(files)); !slices.Equal(got, wantFiles) {
		t.Errorf("the commit changes %v, want %v", got, wantFiles)
	}
	saved := map[string]result.Result{}
	for _, p := range wantFiles[2:] {
		f, err := result.DecodeSite(files[p])
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		rows, err := f.Rows()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, r := range rows {
			saved[fmt.Sprintf("%s/%s/%d", text.Or(r.Entry, "arena"), r.Profile, r.Connections)] = r
		}
	}
	if r, ok := saved["arena/json/4096"]; !ok || r.RPS != 4242 {
		t.Errorf("the head's row the job did not measure was not kept: %+v", saved["arena/json/4096"])
	}
	rows := tableRows(final.Body)
	want := []string{"nethttp/baseline/512", "nethttp/baseline/4096", "fasthttp/baseline/512", "fasthttp/baseline/4096"}
	if len(saved) != len(want)+1 || len(rows) != len(want) {
		t.Errorf("the commit holds %d rows and the reply %d, want %d and %d", len(saved), len(rows), len(want)+1, len(want))
	}
	for _, w := range want {
		r, ok := saved[w]
		if !ok {
			t.Errorf("the commit lacks %s", w)
			continue
		}
		if r.RPS <= 0 || r.Commit != l.head || r.Status2xx != r.Requests || r.HostFacts == nil {
			t.Errorf("%s: rps %d, commit %q, %d of %d 2xx, host facts %v; want a measurement of %s", w, r.RPS, r.Commit, r.Status2xx, r.Requests, r.HostFacts, l.head)
		}
		cells := rows[w]
		if cells == nil {
			t.Errorf("no table row for %s", w)
			continue
		}
		if cells[2] != report.FormatCount(float64(r.RPS)) || cells[8] != report.FormatBytes(r.MemoryPeak) {
			t.Errorf("%s: table says RPS %s, Mem %s; the committed file says %s, %s", w, cells[2], cells[8],
				report.FormatCount(float64(r.RPS)), report.FormatBytes(r.MemoryPeak))
		}
		// The PR changes both entries: each row was measured against the entry at the
		// merge base, interleaved, two runs a side, and the saved file keeps both sides and
		// the rule their interval follows.
		if !intervalCell.MatchString(cells[9]) {
			t.Errorf("%s: Δ RPS %q, want an interval against the merge base", w, cells[9])
		}
		if b := r.Base; b == nil || b.Commit != l.base || b.Ref != "main" || len(b.Runs) != 2 || len(r.Runs) != 2 || b.Order != "BHHB" || b.Rule == nil || b.Rule.MinRuns != 2 {
			t.Errorf("%s: saved base %+v, %d runs; want main's merge base %s, 2 runs a side, BHHB, the rule", w, b, len(r.Runs), l.base)
		}
	}
	// The arena's generator reads the committed site/data.
	dir := t.TempDir()
	for p, b := range commit.Files {
		if rel, ok := strings.CutPrefix(p, result.SiteDataDir+"/"); ok {
			os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755)
			os.WriteFile(filepath.Join(dir, rel), b, 0o644)
		}
	}
	board, problems := arenagen.Read(dir)
	if len(problems) > 0 {
		t.Errorf("the arena's generator would misread the committed site/data:\n%s", strings.Join(problems, "\n"))
	}
	if len(board.Results["baseline-512"]) != 2 || board.Current["kernel"] == nil {
		t.Errorf("the board's baseline-512 %v, current %v", board.Results["baseline-512"], board.Current)
	}
	if !strings.Contains(final.Body, commit.SHA[:7]) {
		t.Errorf("the reply does not link the results commit %s", commit.SHA)
	}
	if !strings.Contains(final.Body, "```mermaid") || !strings.Contains(final.Body, "<details>") {
		t.Errorf("the reply lacks the chart or the log")
	}
	// The final status edit follows the reply (writes are spaced a second apart).
	l.waitFor("the status comment to link the results", 30*time.Second, func() bool {
		return strings.Contains(l.waitComment("arenabot:status", time.Second).Body, "#issuecomment-")
	})
	if rs := l.gh.Reactions(loopRepo, cmdID); len(rs) == 0 || rs[0].Content != "eyes" {
		t.Errorf("the command got reactions %+v, want 👀", rs)
	}
	// The reporter counts a final reply once its writes have returned, which can be a moment
	// after the fake GitHub has them on a busy machine: /metrics is read until it shows them.
	wants := []string{`arena_final_replies_total{state="done"} 1`, `arena_final_reply_seconds_count{step="commit"} 1`, `arena_final_reply_seconds_count{step="reply"} 1`, "arena_webhook_recovering 0"}
	var metrics string
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(l.botURL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		metrics = string(b)
		if containsAll(metrics, wants) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, want := range wants {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// brokenEntry adds an entry whose Dockerfile fails to build.
func brokenEntry(dir string) {
	d := filepath.Join(dir, "frameworks", "broken")
	os.MkdirAll(d, 0o755)
	os.WriteFile(filepath.Join(d, "meta.json"), []byte(`{"display_name":"broken","language":"Go","type":"production","engine":"none","description":"fails to build","repo":"","enabled":true,"tests":["baseline"],"maintainers":[]}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(d, "Dockerfile"), []byte("ARG GO_IMAGE=golang:1.26-bookworm\nFROM ${GO_IMAGE}\nRUN echo 'compiling the broken server' && echo 'error: undefined: handler' >&2 && exit 3\n"), 0o644)
}

// TestLoopBuildFailureAndGitHub5xx: one framework's build fails (its rows are ❌ with the
// build log, the other framework is still measured), and GitHub answers the results POST
// with a 502 once: the reply is posted exactly once. The bot and the runner run --lite
// (ARENA_LITE): one connection count is enough to show the measured entry beside the
// failed one.
func TestLoopBuildFailureAndGitHub5xx(t *testing.T) {
	l := newLoop(t, []string{"nethttp"}, brokenEntry)
	l.envOver = map[string]string{"ARENA_LITE": "true"}
	l.startServe()
	l.startWork()
	l.comment("maintainer", "/benchmark-multiple -f nethttp,broken -t baseline")
	l.waitFor("the job to run", lockWait, func() bool {
		return strings.Contains(l.waitComment("arenabot:status", 30*time.Second).Body, "unning")
	})
	l.gh.FailNext(http.MethodPost, "/repos/octo/arena/issues/1/comments", 1, http.StatusBadGateway)
	final := l.waitComment("arenabot:results", 5*time.Minute)
	time.Sleep(time.Second)
	if n := len(l.results()); n != 1 {
		t.Fatalf("%d results comments, want 1:\n%s", n, l.dumpComments())
	}
	t.Logf("results comment:\n%s", final.Body)
	rows := tableRows(final.Body)
	if cells := rows["nethttp/baseline/512"]; cells == nil || strings.HasPrefix(cells[2], "❌") || rows["nethttp/baseline/4096"] != nil {
		t.Errorf("nethttp baseline: %v; want 512 measured, and no 4096 in --lite", rows)
	}
	if !strings.Contains(final.Body, "### ❌ `broken`") || !strings.Contains(final.Body, "undefined: handler") {
		t.Errorf("the reply does not show broken's failed build with its log")
	}
	bad := 0
	for _, c := range l.gh.CallsTo(http.MethodPost, "/repos/octo/arena/issues/1/comments") {
		if c.Status == http.StatusBadGateway {
			bad++
		}
	}
	if bad != 1 {
		t.Errorf("%d POSTs met the injected 502, want 1", bad)
	}
	if len(l.gh.Commits(loopRepo)) > 0 {
		for _, c := range l.gh.Commits(loopRepo) {
			if len(c.Parents) == 1 && c.Parents[0] == l.head {
				t.Errorf("a job without --save committed %s", c.SHA)
			}
		}
	}
}

// TestLoopCancelWhileRunning: /benchmark-cancel while the runner measures stops it within
// seconds, removes its containers, and ends with one final reply saying it was cancelled.
func TestLoopCancelWhileRunning(t *testing.T) {
	l := newLoop(t, []string{"nethttp"}, nil)
	l.startServe()
	l.startWork("--duration", "3s")
	cmdID := l.comment("maintainer", "/benchmark -f nethttp -t baseline --save")
	l.waitFor("a row to be measured", lockWait, func() bool {
		return strings.Contains(l.waitComment("arenabot:status", 30*time.Second).Body, "⏳")
	})
	asked := time.Now()
	l.comment("maintainer", "/benchmark-cancel")
	final := l.waitFinal(time.Minute)
	t.Logf("cancelled %s after asking; reply:\n%s", time.Since(asked).Round(time.Millisecond), final.Body)
	if !strings.Contains(strings.ToLower(final.Body), "cancel") {
		t.Errorf("the final reply does not say the job was cancelled")
	}
	time.Sleep(time.Second)
	if n := len(l.results()); n != 1 {
		t.Fatalf("%d results comments, want 1", n)
	}
	if n := jobContainers(t, fmt.Sprintf("r%d", cmdID)); n != 0 {
		t.Errorf("%d containers of the runner are left after the cancel", n)
	}
	for _, c := range l.gh.Commits(loopRepo) {
		if len(c.Parents) == 1 && c.Parents[0] == l.head {
			t.Errorf("a cancelled job committed %s", c.SHA)
		}
	}
}

// TestLoopHeadMovesDuringRun: the PR gets a new commit while the runner measures the
// approved one; the results are still committed, on the new head.
func TestLoopHeadMovesDuringRun(t *testing.T) {
	l := newLoop(t, []string{"nethttp"}, nil)
	l.startServe()
	l.startWork()
	l.comment("maintainer", "/benchmark -f nethttp -t baseline --save")
	l.waitFor("the job to run", lockWait, func() bool {
		return strings.Contains(l.waitComment("arenabot:status", 30*time.Second).Body, "⏳")
	})
	const newHead = "feedfacefeedfacefeedfacefeedfacefeedface"
	l.gh.SetHead(loopRepo, loopPR, newHead)
	final := l.waitComment("arenabot:results", 5*time.Minute)
	commit := l.resultsCommit(newHead)
	if got := l.gh.Ref(loopRepo, loopBranch); got != commit.SHA {
		t.Errorf("%s points at %s, want the results commit %s", loopBranch, got, commit.SHA)
	}
	files := l.changedFiles(commit)
	f, err := result.DecodeSite(files["site/data/results/go-nethttp.json"])
	if err != nil {
		t.Fatalf("the commit's results file: %v; it changes %v", err, keys(files))
	}
	for _, c := range []string{"512", "4096"} {
		r, err := result.Unmarshal(f.Results["baseline-"+c])
		if err != nil {
			t.Errorf("baseline-%s: %v", c, err)
			continue
		}
		if r.Commit != l.head {
			t.Errorf("baseline-%s records commit %s, want the measured (approved) %s", c, r.Commit, l.head)
		}
	}
	if !strings.Contains(final.Body, l.head[:7]) {
		t.Errorf("the reply does not name the measured commit %s", l.head[:7])
	}
}

// jobContainers counts the containers the runner made for a job.
func jobContainers(t *testing.T, job string) int {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=arenabot.job="+job).CombinedOutput()
	if err != nil {
		t.Fatalf("docker ps: %v\n%s", err, out)
	}
	return len(strings.Fields(string(out)))
}

// TestLoopServeRunner is the single-machine mode: `arenabot serve --runner` with no Redis
// runs the bot, the embedded queue and the runner in one process. The command compares
// with another entry that was not run: its committed results on main are the baseline.
func TestLoopServeRunner(t *testing.T) {
	l := newLoop(t, []string{"nethttp", "fasthttp"}, nil)
	l.redisURL = "" // the embedded queue
	args := append([]string{"--runner"}, l.workArgs()...)
	l.startServe(args...)
	l.comment("maintainer", "/benchmark -f fasthttp -t baseline --compare nethttp")
	final := l.waitComment("arenabot:results", 5*time.Minute)
	t.Logf("results comment:\n%s", final.Body)
	rows := tableRows(final.Body)
	for _, c := range []string{"512", "4096"} {
		if cells := rows["fasthttp/baseline/"+c]; cells == nil || strings.HasPrefix(cells[2], "❌") {
			t.Errorf("fasthttp baseline %s: %v, want measured", c, cells)
		}
	}
	// nethttp was measured beside each row, interleaved (main's committed 1000 rps and its
	// missing 4096 result play no part).
	for _, c := range []string{"512", "4096"} {
		if cells := rows["fasthttp/baseline/"+c]; cells != nil && !intervalCell.MatchString(cells[9]) {
			t.Errorf("fasthttp baseline %s: Δ RPS %q, want an interval against nethttp measured in the job", c, cells[9])
		}
	}
	if !strings.Contains(final.Body, "Δ against `nethttp`, measured in this job") {
		t.Errorf("the reply does not say the deltas are against nethttp")
	}
	if !strings.Contains(l.logs.String(), `"runner":true`) {
		t.Errorf("serve did not say it runs the runner")
	}
	l.planIsMeasured(rows, "fasthttp/baseline/512", "fasthttp/baseline/4096")
}

// TestLoopServeRunnerLite is the single-machine mode on a laptop, serve --runner --lite:
// the ack's plan lists the --lite connection counts, and they are what the results show
// (issue 13: the ack listed the full host's while the runner measured the lite ones).
func TestLoopServeRunnerLite(t *testing.T) {
	l := newLoop(t, []string{"nethttp", "fasthttp"}, nil)
	l.redisURL = "" // the embedded queue
	args := append([]string{"--runner", "--lite"}, l.workArgs()...)
	l.startServe(args...)
	l.comment("maintainer", "/benchmark -f fasthttp -t baseline")
	final := l.waitComment("arenabot:results", 5*time.Minute)
	t.Logf("results comment:\n%s", final.Body)
	rows := tableRows(final.Body)
	if cells := rows["fasthttp/baseline/512"]; cells == nil || strings.HasPrefix(cells[2], "❌") {
		t.Errorf("fasthttp baseline 512: %v, want measured", cells)
	}
	l.planIsMeasured(rows, "fasthttp/baseline/512")
	// Links follow the GitHub serve is configured for (ARENA_GITHUB_WEB_URL), not github.com.
	web := loopWebURL + loopRepo + "/pull/" + strconv.Itoa(loopPR)
	if !strings.Contains(final.Body, web+"#issuecomment-") || strings.Contains(final.Body, "https://github.com/") {
		t.Errorf("the reply's links do not all point at %s:\n%s", loopWebURL, final.Body)
	}
	resp, err := http.Get(l.botURL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), `href="`+web) || strings.Contains(string(page), "https://github.com/") {
		t.Errorf("the status page's links do not point at %s", loopWebURL)
	}
}

// planIsMeasured waits for the status comment to say the job is done and checks that its
// plan lists exactly the rows of the results (entry/test/conns keys of tableRows) and
// those want.
func (l *loop) planIsMeasured(results map[string][]string, want ...string) {
	l.t.Helper()
	var status githubtest.Comment
	l.waitFor("the status comment to say done", time.Minute, func() bool {
		for _, c := range l.gh.Comments(loopRepo, loopPR) {
			if strings.Contains(c.Body, "arenabot:status") && strings.Contains(c.Body, "Benchmark done") {
				status = c
				return true
			}
		}
		return false
	})
	plan := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| ([^|]+) \\| ([0-9, ]+) \\|$")
	var planned []string
	for _, m := range plan.FindAllStringSubmatch(status.Body, -1) {
		for _, n := range strings.Split(m[3], ", ") {
			planned = append(planned, m[1]+"/"+strings.TrimSpace(m[2])+"/"+strings.TrimSpace(n))
		}
	}
	slices.Sort(planned)
	measured := slices.Sorted(maps.Keys(results))
	if !slices.Equal(planned, measured) || !slices.Equal(planned, slices.Sorted(slices.Values(want))) {
		l.t.Errorf("the status comment plans %v, the results show %v; want both %v\nstatus comment:\n%s", planned, measured, want, status.Body)
	}
}
