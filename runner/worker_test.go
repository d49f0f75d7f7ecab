package runner

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/profile/selection"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/queuetest"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/runner/measure"
	"github.com/arenabot/arenabot/runner/runnertest"
)

// redisQueue is a queue on a private redis-server.
func redisQueue(t *testing.T) *queue.Redis {
	t.Helper()
	rdb := queuetest.StartRedis(t).Client(t)
	return queue.NewRedis(rdb, queue.Options{Prefix: queuetest.Prefix(t, rdb)})
}

// testWorker is a worker on the remote's clone, measuring 1 run of 1 s per row. A data
// directory outside the shared cache (an empty one, for the fake engine, whose jobs mount
// nothing) is not verified before the jobs.
func testWorker(t *testing.T, q WorkQueue, eng Engine, repoDir, dataDir string) *Worker {
	t.Helper()
	var check func(string) ([]arenadata.Problem, error)
	if !strings.HasPrefix(dataDir, runnertest.CacheDir+string(filepath.Separator)) {
		check = func(string) ([]arenadata.Problem, error) { return nil, nil }
	}
	return NewWorker(q, eng, WorkerConfig{
		RepoDir:   repoDir,
		WorkDir:   filepath.Join(t.TempDir(), "work"),
		Heartbeat: 200 * time.Millisecond,
		Bench:     measure.Config{DataDir: dataDir, Runs: 1, Duration: time.Second, ReadyTimeout: 20 * time.Second},
		CheckData: check,
		Log:       slog.New(slog.NewTextHandler(t.Output(), nil)),
	})
}

// claim enqueues a job and claims it.
func claim(t *testing.T, q interface {
	Enqueue(context.Context, queue.Job) (queue.Job, *queue.Job, error)
	Claim(context.Context, string) (queue.Lease, error)
}, j queue.Job) queue.Lease {
	t.Helper()
	if _, _, err := q.Enqueue(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	l, err := q.Claim(t.Context(), queue.DefaultPool)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func prJob(a *arenaRemote, kind queue.Kind, fws ...string) queue.Job {
	return queue.Job{Repo: "octo/arena", PR: 7, Requester: "alice", Kind: kind, Frameworks: fws, Tests: []string{"baseline"}, SHA: a.PR}
}

// report decodes a finished job's report.
func report(t *testing.T, j queue.Job) result.Report {
	t.Helper()
	var r result.Report
	if err := json.Unmarshal(j.Result, &r); err != nil {
		t.Fatalf("job result %q: %v", j.Result, err)
	}
	return r
}

// events returns the events of a job on the stream, oldest first.
func events(t *testing.T, q *queue.Redis, id string) []queue.Event {
	t.Helper()
	var out []queue.Event
	group := fmt.Sprintf("test-%d", time.Now().UnixNano())
	for {
		ds, err := q.Events(t.Context(), group, "c", 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 0 {
			return out
		}
		var ids []string
		for _, d := range ds {
			ids = append(ids, d.ID)
			if d.Job == id {
				out = append(out, d.Event)
			}
		}
		q.Ack(t.Context(), group, ids...)
	}
}

// noLeftovers checks that nothing the job created is left on the engine.
func noLeftovers(t *testing.T, eng Engine, w *Worker, id string) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	if n, err := eng.RemoveLabeled(ctx, LabelJob, id); n != 0 || err != nil {
		t.Errorf("%d containers of job %s were left (%v)", n, id, err)
	}
	if n, err := eng.RemoveImagesLabeled(ctx, LabelJob, id); n != 0 || err != nil {
		t.Errorf("%d images of job %s were left (%v)", n, id, err)
	}
	if out, err := exec.Command("docker", "images", "--all", "--quiet", "--filter", "label="+LabelJob+"="+id).Output(); err == nil && len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("images (intermediate ones included) of job %s were left: %s", id, out)
	}
	if des, _ := os.ReadDir(w.cfg.WorkDir); len(des) > 0 {
		t.Errorf("workspaces were left in %s: %v", w.cfg.WorkDir, des)
	}
}

// TestWorkerMeasuresAndReports runs a /benchmark-multiple of the real nethttp entry, an
// entry whose Dockerfile does not build and one with a bad meta.json, on the real engine,
// Redis and git, and checks the report, the events and the cleanup.
func TestWorkerMeasuresAndReports(t *testing.T) {
	eng, data := runnertest.Engine(t, "")
	q := redisQueue(t)
	a := newArenaRemote(t)
	w := testWorker(t, q, eng, a.clone(t), data)
	l := claim(t, q, prJob(a, queue.BenchmarkMultiple, "broken", "nethttp", "badmeta"))

	start := time.Now()
	done, err := w.RunJob(t.Context(), l)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("job took %s", time.Since(start).Round(time.Millisecond))
	if done.State != queue.Done || done.Reason != "3 of 5 rows failed" {
		t.Errorf("job ended %s (%q), want done (\"3 of 5 rows failed\")", done.State, done.Reason)
	}
	r := report(t, done)
	if r.Commit != a.PR || r.BaseRef != "main" || r.BaseCommit != a.Main || r.Host == "" || r.Runs != 1 || !strings.HasPrefix(r.Mode, "server CPUs ") {
		t.Errorf("report header: commit %s base %s@%s host %q runs %d mode %q", r.Commit, r.BaseRef, r.BaseCommit, r.Host, r.Runs, r.Mode)
	}
	if want := []string{"broken", "nethttp", "badmeta"}; !slices.Equal(r.Frameworks, want) || !slices.Equal(r.Tests, []string{"baseline"}) {
		t.Errorf("report frameworks %v tests %v, want %v and [baseline]", r.Frameworks, r.Tests, want)
	}
	var got []string
	for _, row := range r.Rows {
		got = append(got, fmt.Sprintf("%s/%s/%d", row.Entry, row.Profile, row.Conns))
	}
	if want := []string{"broken/baseline/512", "broken/baseline/4096", "nethttp/baseline/512", "nethttp/baseline/4096", "badmeta//0"}; !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	for i, row := range r.Rows {
		switch row.Entry {
		case "nethttp":
			if row.Result == nil || row.Result.RPS <= 0 || row.Result.Commit != a.PR || row.Err != "" || row.Display != "go-nethttp" {
				t.Errorf("nethttp row %d: result %+v err %q display %q; want measured", i, row.Result, row.Err, row.Display)
			} else {
				t.Logf("nethttp baseline %dc: %d rps", row.Conns, row.Result.RPS)
			}
		case "broken":
			if row.Result != nil || !strings.HasPrefix(row.Err, "build failed: ") || !strings.Contains(row.Err, "build log") || strings.Contains(row.Err, ".log") {
				t.Errorf("broken row %d: err %q, want the build failure pointing at the log tail (the log file goes with the workspace)", i, row.Err)
			}
			if first := i == 0; first != (len(row.BuildLog) > 0) {
				t.Errorf("broken row %d: build log %q; want it on the entry's first row only", i, row.BuildLog)
			}
			if i == 0 && !strings.Contains(strings.Join(row.BuildLog, "\n"), "missing-file") {
				t.Errorf("build log tail does not show the failing step: %q", row.BuildLog)
			}
		case "badmeta":
			if !strings.HasPrefix(row.Err, "bad input: frameworks/badmeta/meta.json:") || !strings.Contains(row.Err, `"enabled"`) || !strings.Contains(row.Err, "fix") {
				t.Errorf("badmeta row: err %q, want the file, the field and the fix", row.Err)
			}
		}
	}
	// A runner in full mode is the benchmark host: the report carries its facts as
	// current.json, every result carries them too, and frameworks.json is the checkout's.
	if r.Current == nil || r.Current.Kernel == "" || r.Current.Kernel == "unknown" || r.Current.Docker == "unknown" || r.Current.Threads == "unknown" {
		t.Errorf("current = %+v, want this host's facts", r.Current)
	}
	for _, row := range r.Rows {
		if row.Result != nil && !reflect.DeepEqual(row.Result.HostFacts, r.Current) {
			t.Errorf("%s %d: host facts %+v, want the report's %+v", row.Entry, row.Conns, row.Result.HostFacts, r.Current)
		}
	}
	if g, ok := r.FrameworksFile["go-nethttp"]; !ok || g.Dir != "nethttp" {
		t.Errorf("frameworks.json = %+v, want go-nethttp's entry", r.FrameworksFile)
	}
	if len(r.Baselines) != 3 || !r.Baselines[1].Present || r.Baselines[1].Entry != "nethttp" || r.Baselines[0].Present || r.Baselines[2].Present {
		t.Errorf("baselines %+v, want nethttp present and the others not", r.Baselines)
	} else if c, ok := r.Committed("nethttp", "baseline", 512); !ok || c == nil || c.RPS != baselineRPS {
		t.Errorf("Committed(nethttp, baseline, 512) = %+v, %v; want main's result (rps %d)", c, ok, baselineRPS)
	}
	logText := strings.Join(r.Log, "\n")
	for _, want := range []string{"checked out", "image built", "job finished", "removed the job's images"} {
		if !strings.Contains(logText, want) {
			t.Errorf("report log lacks %q:\n%s", want, logText)
		}
	}

	// Events: a progress event as each row starts, its row event when it ends, in order,
	// then the queue's outcome.
	evs := events(t, q, l.Job.ID)
	var seq []string
	for _, e := range evs {
		switch e.Kind {
		case queue.EventProgress:
			var p result.Progress
			json.Unmarshal(e.Data, &p)
			if p.Note != "" {
				continue
			}
			seq = append(seq, fmt.Sprintf("start %d/%d %s/%s/%d done=%d failed=%d", p.Row, p.Rows, p.Entry, p.Profile, p.Conns, p.Done, p.Failed))
		case queue.EventRow:
			var row result.Row
			json.Unmarshal(e.Data, &row)
			seq = append(seq, fmt.Sprintf("row %s/%s/%d ok=%v", row.Entry, row.Profile, row.Conns, row.Result != nil))
		default:
			seq = append(seq, e.Kind)
		}
	}
	want := []string{
		"queued", "started",
		"start 1/5 badmeta//0 done=0 failed=0", "row badmeta//0 ok=false",
		"start 2/5 broken/baseline/512 done=1 failed=1", "row broken/baseline/512 ok=false",
		"start 3/5 broken/baseline/4096 done=2 failed=2", "row broken/baseline/4096 ok=false",
		"start 4/5 nethttp/baseline/512 done=3 failed=3", "row nethttp/baseline/512 ok=true",
		"start 5/5 nethttp/baseline/4096 done=4 failed=3", "row nethttp/baseline/4096 ok=true",
		"outcome",
	}
	if !slices.Equal(seq, want) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(seq, "\n"), strings.Join(want, "\n"))
	}
	noLeftovers(t, eng, w, l.Job.ID)
}

// TestWorkerCancelStopsTheJob cancels a running job through the queue while its first row
// is being measured.
func TestWorkerCancelStopsTheJob(t *testing.T) {
	eng, data := runnertest.Engine(t, "")
	q := redisQueue(t)
	a := newArenaRemote(t)
	w := testWorker(t, q, eng, a.clone(t), data)
	w.cfg.Bench.Duration = 5 * time.Second
	l := claim(t, q, prJob(a, queue.Benchmark, "nethttp"))

	type outcome struct {
		j   queue.Job
		err error
	}
	res := make(chan outcome, 1)
	go func() {
		j, err := w.RunJob(t.Context(), l)
		res <- outcome{j, err}
	}()
	// Wait until the first row starts, then let its container and wrk get going.
	group := "watch"
	for started := false; !started; {
		ds, err := q.Events(t.Context(), group, "c", 10, 200*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			q.Ack(t.Context(), group, d.ID)
			var p result.Progress
			if d.Kind == queue.EventProgress && json.Unmarshal(d.Data, &p) == nil && p.Row == 1 && p.Note == "" {
				started = true
			}
		}
		select {
		case o := <-res:
			t.Fatalf("job ended before its first row: %s %q %v", o.j.State, o.j.Reason, o.err)
		default:
		}
	}
	time.Sleep(1500 * time.Millisecond)
	cancelled := time.Now()
	if _, err := q.Cancel(t.Context(), l.Job.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	var o outcome
	select {
	case o = <-res:
	case <-time.After(30 * time.Second):
		t.Fatal("job still running 30s after the cancel")
	}
	took := time.Since(cancelled)
	t.Logf("job finished %s after the cancel", took.Round(time.Millisecond))
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.j.State != queue.Cancelled || o.j.CancelledBy != "alice" {
		t.Errorf("job ended %s (by %q), want cancelled by alice", o.j.State, o.j.CancelledBy)
	}
	if took > 5*time.Second {
		t.Errorf("job took %s to stop after the cancel, want under 5s", took)
	}
	r := report(t, o.j)
	if len(r.Rows) != 0 || r.Commit != a.PR || len(r.Log) == 0 {
		t.Errorf("report of the cancelled job: %d rows, commit %s, %d log lines; want no rows (the first was cut short), the commit and the log", len(r.Rows), r.Commit, len(r.Log))
	}
	if stored, err := q.Get(t.Context(), l.Job.ID); err != nil || stored.State != queue.Cancelled {
		t.Errorf("stored job: %s, %v", stored.State, err)
	}
	noLeftovers(t, eng, w, l.Job.ID)
}

// TestWorkerFailsWhenTheApprovedCommitIsGone: the approved SHA is not on the PR's ref nor
// anywhere in the remote. Docker plays no part, so the engine is a fake; the queue (real
// Redis) and git are real, and the job goes through Run's claim loop.
func TestWorkerFailsWhenTheApprovedCommitIsGone(t *testing.T) {
	privateHostLock(t)
	q := redisQueue(t)
	a := newArenaRemote(t)
	eng := &fakeEngine{}
	w := testWorker(t, q, eng, a.clone(t), t.TempDir())
	j := prJob(a, queue.Benchmark, "nethttp")
	j.SHA = strings.Repeat("0123456789", 4)
	stored, _, err := q.Enqueue(t.Context(), j)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()
	var got queue.Job
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if got, err = q.Get(t.Context(), stored.ID); err == nil && got.State.Terminal() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job is %s after 2m", got.State)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-ran; err != nil {
		t.Errorf("Run = %v, want nil after ctx ends", err)
	}
	want := "the approved commit 012345678901 is not on refs/pull/7/head of origin; was the branch force-pushed? comment the command again"
	if got.State != queue.Failed || got.Reason != want {
		t.Errorf("job ended %s (%q), want failed (%q)", got.State, got.Reason, want)
	}
	if r := report(t, got); r.Error != want || len(r.Rows) != 0 {
		t.Errorf("report error %q with %d rows, want %q", r.Error, len(r.Rows), want)
	}
	if !slices.Contains(eng.calls(), "RemoveImagesLabeled arenabot.job="+stored.ID) {
		t.Errorf("the job's images were not removed after it failed: %v", eng.calls())
	}
}

// TestWorkerWaitsForDockerToComeBack points the engine at a socket proxy to the real
// daemon, stops the proxy when the first row has been measured and starts it again 3 s
// later: the worker waits and measures the second row.
func TestWorkerWaitsForDockerToComeBack(t *testing.T) {
	p := startDockerProxy(t)
	eng, data := runnertest.Engine(t, "unix://"+p.path)
	rq := redisQueue(t)
	const outage = 3 * time.Second
	var once sync.Once
	var downAt time.Time
	q := &testQueue{WorkQueue: rq, published: func(e queue.Event) {
		if e.Kind == queue.EventRow {
			once.Do(func() {
				p.down()
				downAt = time.Now()
				time.AfterFunc(outage, func() {
					if err := p.up(); err != nil {
						t.Errorf("restart the proxy: %v", err)
					}
				})
			})
		}
	}}
	a := newArenaRemote(t)
	w := testWorker(t, q, eng, a.clone(t), data)
	// 2 s runs: the row after the outage runs while the engine catches up, and under
	// .ci/flaky's load wrk's 4,096 connections got no response in two 1 s runs.
	w.cfg.Bench.Duration = 2 * time.Second
	l := claim(t, rq, prJob(a, queue.Benchmark, "nethttp"))
	done, err := w.RunJob(t.Context(), l)
	if err != nil {
		t.Fatal(err)
	}
	if downAt.IsZero() {
		t.Fatal("no row was published")
	}
	r := report(t, done)
	if done.State != queue.Done || done.Reason != "" || len(r.Rows) != 2 {
		t.Fatalf("job ended %s (%q) with %d rows, want done with 2", done.State, done.Reason, len(r.Rows))
	}
	for _, row := range r.Rows {
		if row.Result == nil || row.Result.RPS <= 0 {
			t.Errorf("row %s %d: %q; want measured", row.Profile, row.Conns, row.Err)
		}
	}
	var waited, back string
	var secondStart time.Time
	for _, e := range events(t, rq, l.Job.ID) {
		var pr result.Progress
		if e.Kind != queue.EventProgress || json.Unmarshal(e.Data, &pr) != nil {
			continue
		}
		switch {
		case strings.Contains(pr.Note, "Docker does not answer"):
			waited = pr.Note
		case strings.Contains(pr.Note, "Docker answers again"):
			back = pr.Note
			secondStart = e.Time
		}
	}
	if waited == "" || back == "" {
		t.Errorf("no progress notes about the wait: waited %q, back %q", waited, back)
	} else if gap := secondStart.Sub(downAt); gap < outage-500*time.Millisecond {
		t.Errorf("the second row went on %s after the daemon went away, within the %s outage", gap, outage)
	} else {
		t.Logf("notes: %q, then %q (%s after the proxy went down)", waited, back, gap.Round(time.Millisecond))
	}
	noLeftovers(t, eng, w, l.Job.ID)
}

// TestWorkerLeaseLostDoesNotFinish: when Heartbeat says the lease is gone, the job stops at
// once and is not finished (it is someone else's now); its leftovers are still removed.
func TestWorkerLeaseLostDoesNotFinish(t *testing.T) {
	privateHostLock(t)
	a := newArenaRemote(t)
	mem := queue.NewMemory(queue.Options{})
	q := &testQueue{WorkQueue: mem, beat: func(n int) error {
		if n >= 3 {
			return fmt.Errorf("heartbeat: %w", queue.ErrLeaseLost)
		}
		return nil
	}}
	eng := &fakeEngine{blockBuild: true}
	w := testWorker(t, q, eng, a.clone(t), t.TempDir())
	w.cfg.Heartbeat = 20 * time.Millisecond
	w.cfg.Bench.Lite = true
	l := claim(t, mem, prJob(a, queue.Benchmark, "nethttp"))
	start := time.Now()
	_, err := w.RunJob(t.Context(), l)
	if !errors.Is(err, queue.ErrLeaseLost) {
		t.Fatalf("RunJob = %v, want ErrLeaseLost", err)
	}
	if q.finishes.Load() != 0 {
		t.Errorf("Finish was called %d times after the lease was lost", q.finishes.Load())
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the job took %s to stop", took)
	}
	if calls := eng.calls(); !slices.Contains(calls, "RemoveLabeled arenabot.job="+l.Job.ID) || !slices.Contains(calls, "RemoveImagesLabeled arenabot.job="+l.Job.ID) {
		t.Errorf("leftovers not removed: %v", calls)
	}
}

// TestWorkerCancelKeepsTheRowsSoFar: a cancel during a build ends the job as cancelled with
// the reason Cancel recorded and the rows finished before it (here a bad meta.json's).
func TestWorkerCancelKeepsTheRowsSoFar(t *testing.T) {
	privateHostLock(t)
	a := newArenaRemote(t)
	mem := queue.NewMemory(queue.Options{})
	building := make(chan struct{})
	eng := &fakeEngine{blockBuild: true, onBuild: sync.OnceFunc(func() { close(building) })}
	w := testWorker(t, mem, eng, a.clone(t), t.TempDir())
	w.cfg.Heartbeat = 20 * time.Millisecond
	w.cfg.Bench.Lite = true
	l := claim(t, mem, prJob(a, queue.BenchmarkMultiple, "badmeta", "nethttp"))
	go func() {
		<-building
		mem.Cancel(context.Background(), l.Job.ID, "bob")
	}()
	done, err := w.RunJob(t.Context(), l)
	if err != nil {
		t.Fatal(err)
	}
	if done.State != queue.Cancelled || done.CancelledBy != "bob" {
		t.Errorf("job ended %s (by %q), want cancelled by bob", done.State, done.CancelledBy)
	}
	r := report(t, done)
	if len(r.Rows) != 1 || r.Rows[0].Entry != "badmeta" || r.Rows[0].Err == "" {
		t.Errorf("rows %+v, want only badmeta's failed row", r.Rows)
	}
}

// TestWorkerShutdownLeavesTheJobToTheQueue: when the worker's ctx ends mid-job, the job is
// cleaned up but not finished, so its lease runs out and the queue retries it.
func TestWorkerShutdownLeavesTheJobToTheQueue(t *testing.T) {
	privateHostLock(t)
	a := newArenaRemote(t)
	mem := queue.NewMemory(queue.Options{})
	q := &testQueue{WorkQueue: mem}
	ctx, cancel := context.WithCancel(t.Context())
	eng := &fakeEngine{blockBuild: true, onBuild: cancel}
	w := testWorker(t, q, eng, a.clone(t), t.TempDir())
	w.cfg.Bench.Lite = true
	l := claim(t, mem, prJob(a, queue.Benchmark, "nethttp"))
	if _, err := w.RunJob(ctx, l); !errors.Is(err, context.Canceled) {
		t.Errorf("RunJob = %v, want context.Canceled", err)
	}
	if q.finishes.Load() != 0 {
		t.Errorf("Finish was called %d times", q.finishes.Load())
	}
	if !slices.Contains(eng.calls(), "RemoveImagesLabeled arenabot.job="+l.Job.ID) {
		t.Errorf("the job's images were not removed: %v", eng.calls())
	}
}

// TestWorkerBenchmarkTest: /benchmark-test runs every enabled entry of the checkout that
// subscribes to the test; entries that do not load are left out.
func TestWorkerBenchmarkTest(t *testing.T) {
	privateHostLock(t)
	a := newArenaRemote(t)
	mem := queue.NewMemory(queue.Options{})
	w := testWorker(t, mem, &fakeEngine{}, a.clone(t), t.TempDir())
	w.cfg.Bench.Lite = true
	j := prJob(a, queue.BenchmarkTest)
	done, err := w.RunJob(t.Context(), claim(t, mem, j))
	if err != nil {
		t.Fatal(err)
	}
	r := report(t, done)
	if want := []string{"broken", "nethttp"}; !slices.Equal(r.Frameworks, want) || !slices.Equal(r.Tests, []string{"baseline"}) {
		t.Errorf("frameworks %v tests %v, want %v and [baseline]", r.Frameworks, r.Tests, want)
	}
	// A --lite runner is not the benchmark host: no current.json. frameworks.json lists
	// every entry of the checkout that loads.
	if r.Current != nil {
		t.Errorf("a --lite runner's report carries current.json: %+v", r.Current)
	}
	if got := slices.Sorted(maps.Keys(r.FrameworksFile)); !slices.Equal(got, []string{"broken", "disabled", "go-nethttp"}) {
		t.Errorf("frameworks.json names %v, want the three entries that load", got)
	}
	// The fake engine starts no container, so every row fails, and the job is still done.
	if done.State != queue.Done || done.Reason != "2 of 2 rows failed" {
		t.Errorf("job ended %s (%q)", done.State, done.Reason)
	}

	// A test no entry of the checkout subscribes to, and one that cannot run yet, fail the
	// job with the selection's reason.
	never := unrunnable(t)
	for test, want := range map[string]string{
		never:   `test "` + never + `" cannot run here yet: `,
		"bogus": `unknown test "bogus"; choose a runnable test: "baseline"`,
	} {
		j.Tests = []string{test}
		done, err = w.RunJob(t.Context(), claim(t, mem, j))
		if err != nil {
			t.Fatal(err)
		}
		if done.State != queue.Failed || !strings.HasPrefix(done.Reason, want) {
			t.Errorf("job of test %s ended %s (%q), want failed with %q", test, done.State, done.Reason, want)
		}
	}
	nethttp, err := frameworks.Load(filepath.Join("..", "frameworks"), "nethttp", profile.Names())
	if err != nil {
		t.Fatal(err)
	}
	for _, test := range selection.Runnable(true) {
		if nethttp.Subscribes(test) {
			continue
		}
		j.Tests = []string{test}
		done, err = w.RunJob(t.Context(), claim(t, mem, j))
		if err != nil {
			t.Fatal(err)
		}
		if want := `no enabled framework subscribes to test "` + test + `"`; done.State != queue.Failed || !strings.HasPrefix(done.Reason, want) {
			t.Errorf("job of a test nobody runs ended %s (%q), want failed with %q", done.State, done.Reason, want)
		}
		break
	}
}

// TestWorkerMeasuresTheJobsRows: a job that carries rows is measured row for row, in their
// order, whatever this runner's own mode would select (here: full-host rows on a --lite
// runner), and the difference is logged. A row whose entry does not load, or that its
// entry cannot measure, is a failed row of its own.
func TestWorkerMeasuresTheJobsRows(t *testing.T) {
	privateHostLock(t)
	a := newArenaRemote(t)
	mem := queue.NewMemory(queue.Options{})
	w := testWorker(t, mem, &fakeEngine{}, a.clone(t), t.TempDir())
	w.cfg.Bench.Lite = true
	j := prJob(a, queue.BenchmarkMultiple, "nethttp", "disabled", "gone", "badmeta")
	j.Rows = []profile.Row{
		{Entry: "nethttp", Test: "baseline", Conns: 512},
		{Entry: "nethttp", Test: "baseline", Conns: 4096},
		{Entry: "disabled", Test: "json", Conns: 4096},
		{Entry: "disabled", Test: "baseline", Conns: 512},
		{Entry: "gone", Test: "baseline", Conns: 512},
		{Entry: "badmeta", Test: "baseline", Conns: 4096},
	}
	done, err := w.RunJob(t.Context(), claim(t, mem, j))
	if err != nil {
		t.Fatal(err)
	}
	r := report(t, done)
	var got []string
	for _, row := range r.Rows {
		got = append(got, fmt.Sprintf("%s/%s/%d", row.Entry, row.Profile, row.Conns))
	}
	var want []string
	for _, row := range j.Rows {
		want = append(want, fmt.Sprintf("%s/%s/%d", row.Entry, row.Test, row.Conns))
	}
	if !slices.Equal(got, want) {
		t.Errorf("report rows %v, want the job's %v", got, want)
	}
	if !slices.Equal(r.Frameworks, []string{"nethttp", "disabled", "gone", "badmeta"}) || !slices.Equal(r.Tests, []string{"baseline"}) {
		t.Errorf("report frameworks %v tests %v", r.Frameworks, r.Tests)
	}
	for _, row := range r.Rows {
		var want string
		switch row.Entry {
		case "disabled":
			if row.Profile == "json" {
				want = `"disabled" does not subscribe to test "json"`
			}
		case "gone":
			want = "unknown framework"
		case "badmeta":
			want = "frameworks/badmeta/meta.json"
		}
		if want != "" && !strings.Contains(row.Err, want) {
			t.Errorf("row %s/%s/%d: err %q, want it to say %q", row.Entry, row.Profile, row.Conns, row.Err, want)
		}
	}
	// The lite runner measured the full host's nethttp baseline 4096 row, and said so.
	logText := strings.Join(r.Log, "\n")
	if !strings.Contains(logText, "the job's rows differ from this runner's own selection") || !strings.Contains(logText, "nethttp baseline: job 512, 4096, runner 512") {
		t.Errorf("the log does not name the difference:\n%s", logText)
	}
	if strings.Contains(logText, "disabled baseline: job") {
		t.Errorf("the log names a row that matches the runner's mode:\n%s", logText)
	}
}

// TestWorkerStopsWhenTheQueueIsUnreachable: no heartbeat gets through for LeaseTTL, so the
// job stops without Finish.
func TestWorkerStopsWhenTheQueueIsUnreachable(t *testing.T) {
	privateHostLock(t)
	a := newArenaRemote(t)
	mem := queue.NewMemory(queue.Options{})
	q := &testQueue{WorkQueue: mem, beat: func(int) error { return errors.New("dial tcp: connection refused") }}
	eng := &fakeEngine{blockBuild: true}
	w := testWorker(t, q, eng, a.clone(t), t.TempDir())
	w.cfg.Heartbeat, w.cfg.LeaseTTL = 20*time.Millisecond, 300*time.Millisecond
	w.cfg.Bench.Lite = true
	l := claim(t, mem, prJob(a, queue.Benchmark, "nethttp"))
	start := time.Now()
	_, err := w.RunJob(t.Context(), l)
	if !errors.Is(err, ErrQueueUnreachable) {
		t.Fatalf("RunJob = %v, want ErrQueueUnreachable", err)
	}
	if took := time.Since(start); took < 300*time.Millisecond || took > 5*time.Second {
		t.Errorf("the job stopped after %s, want soon after LeaseTTL (300ms)", took)
	}
	if q.finishes.Load() != 0 {
		t.Errorf("Finish was called %d times", q.finishes.Load())
	}
}

// TestWorkerEngineNeverComesBack: the daemon stops answering for good; the rows fail with
// an error that says so, without waiting again for each, and the job is done.
func TestWorkerEngineNeverComesBack(t *testing.T) {
	privateHostLock(t)
	a := newArenaRemote(t)
	mem := queue.NewMemory(queue.Options{})
	eng := &fakeEngine{pingErr: errors.New("Docker is not reachable at unix:///var/run/docker.sock: connection refused")}
	w := testWorker(t, mem, eng, a.clone(t), t.TempDir())
	w.cfg.EngineWait = 300 * time.Millisecond
	w.cfg.Bench.Lite = true
	l := claim(t, mem, prJob(a, queue.BenchmarkMultiple, "nethttp", "broken"))
	done, err := w.RunJob(t.Context(), l)
	if err != nil {
		t.Fatal(err)
	}
	r := report(t, done)
	// It waited once, for the first row; the second failed at once. (Counted from the log,
	// not timed: .ci/flaky's load made the whole job take 3.3 s with one wait.)
	if n := strings.Count(strings.Join(r.Log, "\n"), "waiting up to 300ms"); n != 1 {
		t.Errorf("the worker waited for the engine %d times; want once:\n%s", n, strings.Join(r.Log, "\n"))
	}
	if done.State != queue.Done || done.Reason != "2 of 2 rows failed" { // lite: one connection count
		t.Errorf("job ended %s (%q), want done with 2 of 2 rows failed", done.State, done.Reason)
	}
	for _, row := range r.Rows {
		if !strings.Contains(row.Err, "Docker daemon on the runner host did not answer for 300ms") {
			t.Errorf("row %s %s %d: %q, want the engine's absence", row.Entry, row.Profile, row.Conns, row.Err)
		}
	}
	if !strings.Contains(strings.Join(r.Log, "\n"), "waiting up to 300ms") {
		t.Errorf("the log does not say the worker waited:\n%s", strings.Join(r.Log, "\n"))
	}
}

// TestWorkerTakesTurnsOnTheHost: a job waits for the host lock that a local bench holds,
// building meanwhile, says so, and goes on when it is released.
func TestWorkerTakesTurnsOnTheHost(t *testing.T) {
	privateHostLock(t)
	unlock, err := host.LockHost(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := newArenaRemote(t)
	mem := queue.NewMemory(queue.Options{})
	eng := &fakeEngine{}
	w := testWorker(t, mem, eng, a.clone(t), t.TempDir())
	w.cfg.Bench.Lite = true
	// The lock is released once the job says it waits for it, not after a fixed time: a
	// machine busy with the whole suite took more than 3 s to clone, check out and build,
	// and found the lock already free (.ci/flaky). The engine's calls are taken first.
	calls := make(chan []string, 1)
	var release sync.Once
	w.log = slog.New(onMessage{Handler: w.log.Handler(), prefix: "waiting for another arenabot run", hit: func() {
		release.Do(func() {
			calls <- eng.calls()
			unlock()
		})
	}})
	l := claim(t, mem, prJob(a, queue.Benchmark, "nethttp"))
	// A job that never waits would hold the test forever: it is released after a minute,
	// and the assertions below then say what went wrong.
	time.AfterFunc(time.Minute, func() { release.Do(func() { calls <- nil; unlock() }) })
	done, err := w.RunJob(t.Context(), l)
	if err != nil {
		t.Fatal(err)
	}
	before := <-calls
	// Before the lock, the job may build (a build uses no port); it starts nothing, removes
	// no other run's containers and runs no load tool.
	if i := slices.IndexFunc(before, func(c string) bool {
		return strings.HasPrefix(c, "Start ") || strings.HasPrefix(c, "Run wrk") || strings.HasPrefix(c, "RemoveLabeled "+build.LabelManaged)
	}); i >= 0 {
		t.Errorf("before the lock was released the job called %q: %v", before[i], before)
	}
	if !slices.ContainsFunc(before, func(c string) bool { return strings.HasPrefix(c, "Build ") }) {
		t.Errorf("the job did not build while it waited: %v", before)
	}
	if !slices.ContainsFunc(eng.calls(), func(c string) bool { return strings.HasPrefix(c, "Run wrk") }) {
		t.Errorf("the job did not use the engine after the lock: %v", eng.calls())
	}
	if r := report(t, done); !strings.Contains(strings.Join(r.Log, "\n"), "waiting for another arenabot run on this host to finish") {
		t.Errorf("the log does not say the job waited for the host:\n%s", strings.Join(r.Log, "\n"))
	}
	// The job released the lock.
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if unlock, err := host.LockHost(ctx, nil); err != nil {
		t.Errorf("host lock after the job: %v", err)
	} else {
		unlock()
	}
}

// onMessage passes every record on to its Handler and calls hit for each one whose message
// starts with prefix: a test acts at the moment the code under test says it reached a step.
type onMessage struct {
	slog.Handler
	prefix string
	hit    func()
}

func (h onMessage) Handle(ctx context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, h.prefix) {
		h.hit()
	}
	return h.Handler.Handle(ctx, r)
}

func (h onMessage) WithAttrs(attrs []slog.Attr) slog.Handler {
	return onMessage{h.Handler.WithAttrs(attrs), h.prefix, h.hit}
}

func (h onMessage) WithGroup(name string) slog.Handler {
	return onMessage{h.Handler.WithGroup(name), h.prefix, h.hit}
}

// privateHostLock gives a test that starts no real server and builds no real image its own
// host lock and its own build turns (build.TurnsDir), so that it neither waits for the real
// runs and builds on this host nor holds them up: a fake build that blocks holds its entry's
// turn, and a real build of nethttp elsewhere (.ci/test's prewarm) would hold this test's.
func privateHostLock(t *testing.T) {
	oldLock, oldTurns := host.LockPath, build.TurnsDir
	host.LockPath = filepath.Join(t.TempDir(), "host.lock")
	build.TurnsDir = t.TempDir()
	t.Cleanup(func() { host.LockPath, build.TurnsDir = oldLock, oldTurns })
}

// TestRingLog keeps the last lines in order.
func TestRingLog(t *testing.T) {
	r := newRingLog(3)
	for i := range 5 {
		fmt.Fprintf(r, "line %d\n", i)
	}
	if got, want := r.lines(), []string{"line 2", "line 3", "line 4"}; !slices.Equal(got, want) {
		t.Errorf("lines = %q, want %q", got, want)
	}
}

// testQueue wraps a queue to count Finish calls, replace heartbeats by errors and watch
// published events.
type testQueue struct {
	WorkQueue
	beat      func(n int) error   // nil passes heartbeats through; else a non-nil error replaces the n-th
	published func(e queue.Event) // called after each Publish, from the publishing goroutine

	beats    sync.Mutex
	n        int
	finishes atomic.Int64
}

func (q *testQueue) Heartbeat(ctx context.Context, l queue.Lease) (bool, error) {
	q.beats.Lock()
	q.n++
	n := q.n
	q.beats.Unlock()
	if q.beat != nil {
		if err := q.beat(n); err != nil {
			return false, err
		}
	}
	return q.WorkQueue.Heartbeat(ctx, l)
}

func (q *testQueue) Finish(ctx context.Context, l queue.Lease, o queue.Outcome) (queue.Job, error) {
	q.finishes.Add(1)
	return q.WorkQueue.Finish(ctx, l, o)
}

func (q *testQueue) Publish(ctx context.Context, e queue.Event) error {
	err := q.WorkQueue.Publish(ctx, e)
	if q.published != nil {
		q.published(e)
	}
	return err
}

// fakeEngine drives control flow the real engine cannot make repeatable: a build that
// hangs until it is cancelled, a daemon that never answers. It has every image, and the
// load generator answers wrk's version.
type fakeEngine struct {
	blockBuild bool
	pingErr    error
	onRun      func() // called by Run
	onBuild    func() // called by Build

	mu  sync.Mutex
	log []string
}

func (e *fakeEngine) record(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.log = append(e.log, s)
}

func (e *fakeEngine) calls() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.log)
}

func (e *fakeEngine) Build(ctx context.Context, o docker.BuildOptions) (string, error) {
	e.record("Build " + o.Tag)
	if e.onBuild != nil {
		e.onBuild()
	}
	if e.blockBuild {
		<-ctx.Done()
		return "", ctx.Err()
	}
	return "sha256:fake", nil
}

func (e *fakeEngine) ImageExists(context.Context, string) (bool, error) { return true, nil }
func (e *fakeEngine) PullImage(context.Context, string) error           { return nil }

func (e *fakeEngine) Start(_ context.Context, o docker.RunOptions) (docker.Container, error) {
	e.record("Start " + o.Name)
	return docker.Container{}, errors.New("fake engine: no containers")
}

func (e *fakeEngine) State(context.Context, string) (bool, int, error) { return false, 1, nil }

func (e *fakeEngine) Run(_ context.Context, o docker.RunOptions, out io.Writer) (int, error) {
	e.record("Run " + strings.Join(o.Cmd, " "))
	if e.onRun != nil {
		e.onRun()
	}
	io.WriteString(out, "wrk 4.1.0 [epoll] Copyright (C) 2012 Will Glozer\n")
	return 1, nil
}

func (e *fakeEngine) Logs(context.Context, string, int) (string, error) { return "", nil }
func (e *fakeEngine) Remove(context.Context, string) error              { return nil }

func (e *fakeEngine) RemoveLabeled(_ context.Context, key, value string) (int, error) {
	e.record("RemoveLabeled " + key + "=" + value)
	return 0, nil
}

func (e *fakeEngine) RemoveImagesLabeled(_ context.Context, key, value string) (int, error) {
	e.record("RemoveImagesLabeled " + key + "=" + value)
	return 0, nil
}

func (e *fakeEngine) ImageLabelValues(_ context.Context, key string) ([]string, error) {
	e.record("ImageLabelValues " + key)
	return nil, nil
}

func (e *fakeEngine) Ping(context.Context) error { return e.pingErr }

// A dockerProxy forwards a unix socket of its own to the real daemon's socket; down closes
// it and every connection through it, as a daemon restart would, and up opens it again.
type dockerProxy struct {
	path, target string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
}

func startDockerProxy(t *testing.T) *dockerProxy {
	t.Helper()
	target := "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
		target = strings.TrimPrefix(h, "unix://")
	}
	dir, err := os.MkdirTemp("", "abproxy") // short: a socket path is limited to about 100 bytes
	if err != nil {
		t.Fatal(err)
	}
	p := &dockerProxy{path: filepath.Join(dir, "docker.sock"), target: target, conns: map[net.Conn]bool{}}
	if err := p.up(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.down()
		os.RemoveAll(dir)
	})
	return p
}

func (p *dockerProxy) up() error {
	ln, err := net.Listen("unix", p.path)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d, err := net.Dial("unix", p.target)
			if err != nil {
				c.Close()
				continue
			}
			if !p.track(c, d) {
				return
			}
			go p.pipe(c, d)
			go p.pipe(d, c)
		}
	}()
	return nil
}

// track remembers a connection pair; false when the proxy went down meanwhile.
func (p *dockerProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = true
	}
	return true
}

func (p *dockerProxy) pipe(dst, src net.Conn) {
	io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

func (p *dockerProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close() // removes the socket file
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// TestLeftoverSweepSparesLiveJobs: a runner starting on this host removes the images of
// jobs no process runs any more, and keeps those of a job a live runner holds (it may be
// building on them: .ci/flaky saw a build lose the image its last step was on, removed by
// another runner's sweep under the host lock, which builds do not take).
func TestLeftoverSweepSparesLiveJobs(t *testing.T) {
	eng, _ := runnertest.Engine(t, "")
	ctx := t.Context()
	live, dead := "live"+rand.Text()[:12], "dead"+rand.Text()[:12]
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("leftover\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Held before its image exists: a worker in another test (or package) sweeping
	// meanwhile must not take it for a leftover.
	release, err := host.HoldJob(live)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	images := map[string]string{}
	for _, id := range []string{live, dead} {
		img, err := eng.Build(ctx, docker.BuildOptions{ContextDir: dir, Tag: "arenabot-sweep:" + strings.ToLower(id),
			DockerfileContent: []byte("FROM scratch\nCOPY f /f\n"), Labels: map[string]string{LabelJob: id}})
		if err != nil {
			t.Fatal(err)
		}
		images[id] = img
		t.Cleanup(func() { eng.RemoveImagesLabeled(context.WithoutCancel(ctx), LabelJob, id) })
	}
	if !host.JobLive(live) || host.JobLive(dead) {
		t.Fatalf("JobLive: %s %v, %s %v; want only the held one live", live, host.JobLive(live), dead, host.JobLive(dead))
	}
	var log strings.Builder
	w := NewWorker(queue.NewMemory(queue.Options{}), eng, WorkerConfig{WorkDir: t.TempDir(), Log: slog.New(slog.NewTextHandler(&log, nil))})
	w.removeLeftoverImages(ctx)
	if ok, err := eng.ImageExists(ctx, images[live]); !ok || err != nil {
		t.Errorf("the live job's image was removed (%v); log:\n%s", err, log.String())
	}
	if ok, _ := eng.ImageExists(ctx, images[dead]); ok {
		t.Errorf("the dead job's image was kept; log:\n%s", log.String())
	}
	if !strings.Contains(log.String(), "kept the images of a job running on this host") {
		t.Errorf("the log does not say why the live job's images stayed:\n%s", log.String())
	}
	// Released, the job is a leftover like any other.
	release()
	if host.JobLive(live) {
		t.Errorf("%s is still live after its release", live)
	}
	w.removeLeftoverImages(ctx)
	if ok, _ := eng.ImageExists(ctx, images[live]); ok {
		t.Errorf("the released job's image was kept; log:\n%s", log.String())
	}
}
