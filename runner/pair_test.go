package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/runnertest"
	"github.com/arenabot/arenabot/stats"
)

// withEntry adds name to main, a copy of nethttp changed by onMain, pushed as main, and on
// top of it the PR's change, onPR, pushed as the PR's head (replacing the PR). The entry's
// name is the test's own: base images are kept per entry between jobs, and another test
// building a base of the same entry at another commit (a loop test in cmd/arenabot, in CI at
// the same time) would replace this one's.
func (a *arenaRemote) withEntry(t *testing.T, name string, onMain, onPR func(dir string)) {
	t.Helper()
	gitT(t, a.work, "checkout", "-q", "-B", "main", a.Main)
	dir := filepath.Join(a.work, "frameworks", name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(a.work, "frameworks", "nethttp"))); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "results"))
	onMain(dir)
	gitT(t, a.work, "add", "-A")
	gitT(t, a.work, "commit", "-q", "-m", "add "+name)
	a.Main = gitT(t, a.work, "rev-parse", "HEAD")
	gitT(t, a.work, "push", "-q", "--force", a.URL, "HEAD:refs/heads/main")
	onPR(dir)
	gitT(t, a.work, "add", "-A")
	gitT(t, a.work, "commit", "-q", "-m", "change "+name)
	a.PR = gitT(t, a.work, "rev-parse", "HEAD")
	gitT(t, a.work, "push", "-q", "--force", a.URL, "HEAD:refs/pull/7/head")
}

// note changes an entry as its image does not notice: a line added to its README, which the
// entry's .dockerignore (nethttp's, copied) keeps out of the build context, so head and base
// build from the context of nethttp's own image and the build cache serves both.
func note(dir string) {
	f, err := os.OpenFile(filepath.Join(dir, "README.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	f.WriteString("\nTuned in this pull request.\n")
}

// TestWorkerMeasuresAgainstTheMergeBase: a PR that changes nethttp has each of its rows
// measured against nethttp built at the merge base with main, in the same job, interleaved
// base, head, head, base on fresh servers; the base image is tagged by the merge base's
// commit and kept for the next job, which finds it built. An entry new in the PR has no
// base, and --baseline committed measures the changed entry once.
func TestWorkerMeasuresAgainstTheMergeBase(t *testing.T) {
	eng, data := runnertest.Engine(t, "")
	q := redisQueue(t)
	a := newArenaRemote(t)
	// twin (nethttp's copy) on main, broken added again with it; the PR changes twin.
	a.withEntry(t, "twin", func(dir string) {}, func(dir string) {
		note(dir)
		broken := filepath.Join(filepath.Dir(dir), "broken")
		os.MkdirAll(broken, 0o755)
		os.WriteFile(filepath.Join(broken, "meta.json"), []byte(`{"display_name":"broken","language":"Go","type":"engine","engine":"none","enabled":true,"tests":["baseline"]}`), 0o644)
		os.WriteFile(filepath.Join(broken, "Dockerfile"), []byte("FROM scratch\nCOPY missing-file /missing\n"), 0o644)
	})
	head := a.PR
	w := testWorker(t, q, eng, a.clone(t), data)
	// Two runs a side, an interval never narrow enough and a budget spent at once: every
	// row stops after its minimum, for the budget. The job's repository's settings file
	// sets them (queue.Tuning) over the runner's own rule, whose minimum effect stays.
	w.cfg.Bench.Rule = stats.Rule{MinEffect: 0.05, Target: 0.02, MinRuns: 3, MaxRuns: 10}
	w.cfg.Bench.Budget = time.Hour
	// 2 s runs: 512 connections on a machine busy with the whole suite can take most of a
	// 1 s run to connect.
	w.cfg.Bench.Duration = 2 * time.Second
	tag := build.CommitImageTag("twin", a.Main)
	t.Cleanup(func() { eng.RemoveImage(context.WithoutCancel(t.Context()), tag) })

	j := prJob(a, queue.BenchmarkMultiple, "twin", "broken")
	j.Rows = []profile.Row{{Entry: "twin", Test: "baseline", Conns: 512}, {Entry: "broken", Test: "baseline", Conns: 512}}
	j.Tuning = &queue.Tuning{Target: new(1e-9), MinRuns: new(2), MaxRuns: new(3), Budget: new(time.Nanosecond)}
	done, err := w.RunJob(t.Context(), claim(t, q, j))
	if err != nil {
		t.Fatal(err)
	}
	r := report(t, done)
	if r.MergeBase != a.Main || r.Rule == nil || r.Rule.MinRuns != 2 || r.Rule.MaxRuns != 3 || r.Rule.MinEffect != 0.05 || r.AgainstCommitted {
		t.Errorf("report: merge base %s (want main's %s), rule %+v, against committed %v", r.MergeBase, a.Main, r.Rule, r.AgainstCommitted)
	}
	if len(r.Rows) != 2 || r.Rows[0].Result == nil || r.Rows[1].Result != nil {
		t.Fatalf("rows %+v; want twin baseline 512 measured and broken failed", r.Rows)
	}
	res := r.Rows[0].Result
	if res.Commit != head || len(res.Runs) != 2 {
		t.Errorf("head: commit %s (want %s), %d runs (want 2)", res.Commit, head, len(res.Runs))
	}
	b := res.Base
	if b == nil {
		t.Fatal("the row has no base")
	}
	if b.Entry != "twin" || b.Ref != "main" || b.Commit != a.Main || b.Image != tag || b.Err != "" {
		t.Errorf("base %+v; want twin at main's %s as %s", b, a.Main, tag)
	}
	if len(b.Runs) != 2 || b.Order != "BHHB" || b.Stop != stats.StopBudget {
		t.Errorf("base: %d runs, order %q, stop %q; want 2, BHHB, %q", len(b.Runs), b.Order, b.Stop, stats.StopBudget)
	}
	for i, run := range append(b.Runs, res.Runs...) {
		if run.RPS <= 0 || run.CPUCores <= 0 {
			t.Errorf("run %d: %+v; want requests and server CPU (each run its own server's cgroup)", i, run)
		}
	}
	if _, err := stats.Compare(stats.Sample{b.Runs[0].RPS, b.Runs[1].RPS}, stats.Sample{res.Runs[0].RPS, res.Runs[1].RPS}); err != nil {
		t.Errorf("the saved runs do not give an interval: %v", err)
	}
	logText := strings.Join(r.Log, "\n")
	for _, want := range []string{"broken is new since the merge base", "building the base " + tag, "twin: building " + build.CommitImageTag("twin", head)} {
		if !strings.Contains(logText, want) {
			t.Errorf("the log lacks %q:\n%s", want, logText)
		}
	}
	noLeftovers(t, eng, w, done.ID)
	if ok, err := eng.ImageExists(t.Context(), tag); !ok || err != nil {
		t.Fatalf("the base image %s went with the job (%v); it is kept for the next one", tag, err)
	}

	// The next job on the same base finds the image built.
	done, err = w.RunJob(t.Context(), claim(t, q, j))
	if err != nil {
		t.Fatal(err)
	}
	r = report(t, done)
	if !strings.Contains(strings.Join(r.Log, "\n"), "the base image "+tag+" is already built") {
		t.Errorf("the second job built the base again:\n%s", strings.Join(r.Log, "\n"))
	}
	if len(r.Rows) != 2 || r.Rows[0].Result == nil || r.Rows[0].Result.Base == nil || len(r.Rows[0].Result.Base.Runs) != 2 {
		t.Errorf("second job rows %+v; want the row against its base", r.Rows)
	}

	// --baseline committed: measured once, against the committed results.
	j.Baseline = queue.BaselineCommitted
	done, err = w.RunJob(t.Context(), claim(t, q, j))
	if err != nil {
		t.Fatal(err)
	}
	r = report(t, done)
	if !r.AgainstCommitted || r.MergeBase != "" || r.Rule != nil || len(r.Rows) != 2 || r.Rows[0].Result == nil || r.Rows[0].Result.Base != nil || len(r.Rows[0].Result.Runs) != 1 {
		t.Errorf("--baseline committed: report %+v; want the row measured once (1 run), no base", r)
	}
}

// TestWorkerBaseFails: an entry whose Dockerfile does not build on main and that the PR
// fixes is measured alone, its row's base saying why it failed, with no runs.
func TestWorkerBaseFails(t *testing.T) {
	eng, data := runnertest.Engine(t, "")
	q := redisQueue(t)
	a := newArenaRemote(t)
	// main gains flip, nethttp's source with a Dockerfile that fails; the PR gives it
	// nethttp's Dockerfile.
	var dockerfile []byte
	a.withEntry(t, "flip", func(dir string) {
		dockerfile, _ = os.ReadFile(filepath.Join(dir, "Dockerfile"))
		os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nCOPY missing-file /missing\n"), 0o644)
	}, func(dir string) {
		os.WriteFile(filepath.Join(dir, "Dockerfile"), dockerfile, 0o644)
	})

	w := testWorker(t, q, eng, a.clone(t), data)
	j := prJob(a, queue.Benchmark, "flip")
	j.Rows = []profile.Row{{Entry: "flip", Test: "baseline", Conns: 512}}
	done, err := w.RunJob(t.Context(), claim(t, q, j))
	if err != nil {
		t.Fatal(err)
	}
	r := report(t, done)
	if len(r.Rows) != 1 || r.Rows[0].Result == nil {
		t.Fatalf("rows %+v; want flip measured", r.Rows)
	}
	res := r.Rows[0].Result
	if b := res.Base; b == nil || !strings.Contains(b.Err, "build of flip") || len(b.Runs) != 0 || b.Commit != a.Main || len(res.Runs) != 1 {
		t.Errorf("base %+v, %d head runs; want main's build failure, no base runs, the head's 1 run", b, len(res.Runs))
	}
	noLeftovers(t, eng, w, done.ID)
}

// TestWorkerBaseLacksTheTest: a test the PR subscribes its entry to has no base to measure
// against (the entry at the merge base does not run it): that row is measured alone, with
// no base side, while the entry's other rows are interleaved with the base.
func TestWorkerBaseLacksTheTest(t *testing.T) {
	eng, data := runnertest.Engine(t, "")
	q := redisQueue(t)
	a := newArenaRemote(t)
	setTests := func(dir string, tests string) {
		meta := filepath.Join(dir, "meta.json")
		b, _ := os.ReadFile(meta)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		m["tests"] = strings.Split(tests, ",")
		b, _ = json.Marshal(m)
		os.WriteFile(meta, b, 0o644)
	}
	a.withEntry(t, "grow", func(dir string) { setTests(dir, "baseline") }, func(dir string) { setTests(dir, "baseline,json") })
	t.Cleanup(func() { eng.RemoveImage(context.WithoutCancel(t.Context()), build.CommitImageTag("grow", a.Main)) })
	w := testWorker(t, q, eng, a.clone(t), data)
	w.cfg.Bench.Rule = stats.Rule{MinEffect: 0.02, Target: 1e-9, MinRuns: 2, MaxRuns: 2}
	w.cfg.Bench.Duration = 2 * time.Second
	j := prJob(a, queue.Benchmark, "grow")
	j.Tests = []string{"baseline", "json"}
	j.Rows = []profile.Row{{Entry: "grow", Test: "baseline", Conns: 512}, {Entry: "grow", Test: "json", Conns: 4096}}
	done, err := w.RunJob(t.Context(), claim(t, q, j))
	if err != nil {
		t.Fatal(err)
	}
	r := report(t, done)
	if len(r.Rows) != 2 || r.Rows[0].Result == nil || r.Rows[1].Result == nil {
		t.Fatalf("rows %+v; want both measured", r.Rows)
	}
	if b := r.Rows[0].Result.Base; b == nil || len(b.Runs) != 2 || b.Err != "" {
		t.Errorf("baseline: base %+v; want 2 interleaved runs", b)
	}
	if b := r.Rows[1].Result.Base; b != nil || len(r.Rows[1].Result.Runs) != 1 {
		t.Errorf("json: base %+v, %d runs; want none and the row's 1 run alone", b, len(r.Rows[1].Result.Runs))
	}
}

// TestTuned: a job's tuning overrides the runner's rule and budget field by field, from the
// default rule when the runner set none, and a max_runs below the min_runs in force is
// raised to it.
func TestTuned(t *testing.T) {
	rule, budget := tuned(stats.Rule{}, time.Hour, nil)
	if rule != (stats.Rule{}) || budget != time.Hour {
		t.Errorf("no tuning: %+v %v, want the runner's own", rule, budget)
	}
	rule, budget = tuned(stats.Rule{}, time.Hour, &queue.Tuning{MinEffect: new(0.05), Budget: new(time.Duration(0))})
	if want := (stats.Rule{MinEffect: 0.05, Target: stats.DefaultRule.Target, MinRuns: stats.DefaultRule.MinRuns, MaxRuns: stats.DefaultRule.MaxRuns}); rule != want || budget != 0 {
		t.Errorf("min effect and no budget: %+v %v, want %+v and 0", rule, budget, want)
	}
	rule, _ = tuned(stats.Rule{MinEffect: 0.02, Target: 0.02, MinRuns: 3, MaxRuns: 10}, 0, &queue.Tuning{MinRuns: new(12)})
	if rule.MinRuns != 12 || rule.MaxRuns != 12 {
		t.Errorf("min runs 12 over max 10: %d–%d, want 12–12", rule.MinRuns, rule.MaxRuns)
	}
}
