package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/measure"
	"github.com/arenabot/arenabot/runner/runnertest"
)

func TestJobLimit(t *testing.T) {
	w := NewWorker(nil, nil, WorkerConfig{})
	for _, c := range []struct {
		estimate time.Duration
		limit    time.Duration
		how      string
	}{
		{0, 6 * time.Hour, "the ceiling ARENA_JOB_TIMEOUT, for a job without an estimate"},
		{87 * time.Second, 24*time.Minute + 21*time.Second, "3 × its estimate 1m27s, plus the 20m build limit"},
		{2 * time.Hour, 6 * time.Hour, "the ceiling ARENA_JOB_TIMEOUT, below 3 × its estimate 2h, plus the 20m build limit"},
	} {
		limit, how := w.jobLimit(queue.Job{Estimate: c.estimate})
		if limit != c.limit || how != c.how {
			t.Errorf("estimate %s: limit %s (%s), want %s (%s)", c.estimate, limit, how, c.limit, c.how)
		}
	}
	w = NewWorker(nil, nil, WorkerConfig{JobLimitFactor: 1.5, JobLimitCeiling: time.Hour, Bench: measure.Config{BuildTimeout: 5 * time.Minute}})
	if limit, how := w.jobLimit(queue.Job{Estimate: 10 * time.Minute}); limit != 20*time.Minute || how != "1.5 × its estimate 10m, plus the 5m build limit" {
		t.Errorf("factor 1.5, build limit 5m: limit %s (%s), want 20m", limit, how)
	}
}

// sleeperPR pushes refs/pull/8/head: the PR's commit plus an entry, slowbuild, whose
// Dockerfile's RUN step sleeps for n seconds, and returns its commit. (Not "sleeper": builds
// of one image name take turns on the host, and runner/build's tests build a sleeper.)
func sleeperPR(t *testing.T, a *arenaRemote, n int) string {
	t.Helper()
	dir := filepath.Join(a.work, "frameworks", "slowbuild")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "meta.json"), []byte(`{"display_name":"slowbuild","language":"Go","type":"engine","engine":"none","enabled":true,"tests":["baseline"]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "Dockerfile"), fmt.Appendf(nil, "FROM arenabot/debian:local\nRUN sleep %d\n", n), 0o644)
	gitT(t, a.work, "add", "-A")
	gitT(t, a.work, "commit", "-q", "-m", "an entry that never builds")
	sha := gitT(t, a.work, "rev-parse", "HEAD")
	gitT(t, a.work, "push", "-q", a.URL, "HEAD:refs/pull/8/head")
	return sha
}

// sleeperJob claims a job measuring the slowbuild entry (sleeperPR, whose build sleeps
// base plus this process's id modulo 10,000 seconds, the number returned) with a worker on
// the real engine and Redis, set up by configure, and returns them with the queue.
func sleeperJob(t *testing.T, base int, configure func(*Worker)) (*docker.Engine, *queue.Redis, *Worker, queue.Lease, int) {
	t.Helper()
	eng, data := runnertest.Engine(t, "")
	runnertest.StandIns(t, eng, "arenabot/debian:local")
	q := redisQueue(t)
	a := newArenaRemote(t)
	n := base + os.Getpid()%10000
	sha := sleeperPR(t, a, n)
	w := testWorker(t, q, eng, a.clone(t), data)
	configure(w)
	job := queue.Job{Repo: "octo/arena", PR: 8, Requester: "alice", Kind: queue.Benchmark, Frameworks: []string{"slowbuild"}, Tests: []string{"baseline"}, SHA: sha, Estimate: 10 * time.Second}
	return eng, q, w, claim(t, q, job), n
}

// TestWorkerJobPastItsLimit: a job whose entry's build never ends (its own build limit far
// away) is stopped at the job's limit on the real engine and Redis: it fails with a reason
// that gives the limit, how it was derived and what the job was doing; the build's step is
// gone, and so are the job's containers, images and workspace.
func TestWorkerJobPastItsLimit(t *testing.T) {
	eng, q, w, l, n := sleeperJob(t, 90000, func(w *Worker) {
		w.cfg.JobLimitCeiling = 4 * time.Second
		w.cfg.Bench.BuildTimeout = time.Minute
	})

	start := time.Now()
	done, err := w.RunJob(t.Context(), l)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("job ended %s after %s: %s", done.State, took.Round(time.Millisecond), done.Reason)
	want := "the job ran past its 4s limit (the ceiling ARENA_JOB_TIMEOUT, below 3 × its estimate 10s, plus the 1m build limit) and was stopped, its containers removed, while building the images (last step: slowbuild: building arenabot-slowbuild:"
	if done.State != queue.Failed || !strings.HasPrefix(done.Reason, want) {
		t.Errorf("job ended %s: %q\nwant failed: %q…", done.State, done.Reason, want)
	}
	if took > 15*time.Second {
		t.Errorf("the job took %s, want it stopped at its 4s limit", took)
	}
	if r := report(t, done); r.Error != done.Reason {
		t.Errorf("report error %q, want the reason", r.Error)
	}
	if stored, err := q.Get(t.Context(), l.Job.ID); err != nil || stored.State != queue.Failed {
		t.Errorf("stored job: %s, %v", stored.State, err)
	}
	var left []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		out, err := exec.Command("pgrep", "-f", fmt.Sprintf("^sleep %d$", n)).Output()
		var exit *exec.ExitError
		if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) { // 1: no such process
			t.Fatalf("pgrep (procps, which .ci/setup installs): %v", err)
		}
		if left = strings.Fields(string(out)); len(left) == 0 {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("the build's step is still running: processes %v", left)
	}
	noLeftovers(t, eng, w, l.Job.ID)
}

// TestWorkerRepairsTheData: a job on a runner whose arena data an earlier job changed (a
// file's bytes, a file added) puts the data back before its containers mount it, and its
// log says what differed.
func TestWorkerRepairsTheData(t *testing.T) {
	privateHostLock(t)
	shared, err := arenadata.Ensure(runnertest.CacheDir)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(data, os.DirFS(shared)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(data, arenadata.DatasetFile), []byte(`[]`), 0o644)
	os.WriteFile(filepath.Join(data, "planted"), []byte(`x`), 0o644)

	a := newArenaRemote(t)
	mem := queue.NewMemory(queue.Options{})
	w := testWorker(t, mem, &fakeEngine{}, a.clone(t), data)
	w.cfg.CheckData = nil
	w = NewWorker(mem, w.eng, w.cfg) // CheckData nil: arenadata.Repair, as work runs it
	w.cfg.Bench.Lite = true
	l := claim(t, mem, prJob(a, queue.Benchmark, "nethttp"))
	done, err := w.RunJob(t.Context(), l)
	if err != nil {
		t.Fatal(err)
	}
	if problems, err := arenadata.Verify(data); err != nil || len(problems) > 0 {
		t.Errorf("the data after the job: %v, %v; want it as generated", problems, err)
	}
	log := strings.Join(report(t, done).Log, "\n")
	if !strings.Contains(log, "the arena data differed from its checksums") || !strings.Contains(log, "dataset.json: changed; planted: not in the tree") {
		t.Errorf("the job's log does not say what differed:\n%s", log)
	}
}

// TestWorkerBuildPastItsLimit: a job whose entry's build never ends goes on past it: the
// build is stopped at the build limit, the entry's rows fail saying which limit, and the job
// ends done, well before its own limit.
func TestWorkerBuildPastItsLimit(t *testing.T) {
	eng, _, w, l, n := sleeperJob(t, 80000, func(w *Worker) { w.cfg.Bench.BuildTimeout = time.Second })
	done, err := w.RunJob(t.Context(), l)
	if err != nil {
		t.Fatal(err)
	}
	r := report(t, done)
	if done.State != queue.Done || len(r.Rows) == 0 || done.Reason != fmt.Sprintf("%d of %d rows failed", len(r.Rows), len(r.Rows)) {
		t.Errorf("job ended %s (%q) with %d rows; want done with every row failed", done.State, done.Reason, len(r.Rows))
	}
	for _, row := range r.Rows {
		if !strings.HasPrefix(row.Err, "the build of slowbuild exceeded its 1s limit and was stopped (the runner's build limit, ARENA_BUILD_TIMEOUT)") || row.Short != "build timed out" {
			t.Errorf("row %s %d: %q (%q), want the build limit", row.Profile, row.Conns, row.Err, row.Short)
		}
	}
	if len(r.Rows) > 0 && !strings.Contains(strings.Join(r.Rows[0].BuildLog, "\n"), fmt.Sprintf("sleep %d", n)) {
		t.Errorf("first row's build log %q, want the step that ran", r.Rows[0].BuildLog)
	}
	noLeftovers(t, eng, w, l.Job.ID)
}

// TestLimiterPauses: the time a limiter is paused does not count, and it fires once.
func TestLimiterPauses(t *testing.T) {
	fired := make(chan time.Time, 2)
	start := time.Now()
	l := startLimiter(300*time.Millisecond, func() { fired <- time.Now() })
	time.Sleep(100 * time.Millisecond)
	l.pause()
	time.Sleep(400 * time.Millisecond)
	l.resume()
	l.resume() // running already: no second clock
	at := <-fired
	if took := at.Sub(start); took < 650*time.Millisecond || took > 2*time.Second {
		t.Errorf("fired after %s, want about 700ms (300ms running, 400ms paused in between)", took)
	}
	l.pause()
	l.resume()
	select {
	case <-fired:
		t.Error("fired twice")
	case <-time.After(400 * time.Millisecond):
	}
	var none *limiter
	none.pause()
	none.resume()
}
