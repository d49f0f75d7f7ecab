package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/profile/selection"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/result/site"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/runner/measure"
	"github.com/arenabot/arenabot/stats"
	"github.com/arenabot/arenabot/text"

	"github.com/arenabot/arenabot/internal/clock"
)

// WorkQueue is the part of the queue the worker uses; *queue.Redis and *queue.Memory
// implement it.
type WorkQueue interface {
	Claim(ctx context.Context, pool string) (queue.Lease, error)
	Heartbeat(ctx context.Context, l queue.Lease) (cancelled bool, err error)
	Finish(ctx context.Context, l queue.Lease, o queue.Outcome) (queue.Job, error)
	Publish(ctx context.Context, e queue.Event) error
	Announce(ctx context.Context, h queue.Host, ttl time.Duration) error

	// A job with many rows is split into shares over the pool's live hosts (share.go).
	Hosts(ctx context.Context) ([]queue.Host, error)
	Enqueue(ctx context.Context, j queue.Job) (queue.Job, *queue.Job, error)
	ClaimShare(ctx context.Context, pool, parent string) (queue.Lease, error)
	Get(ctx context.Context, id string) (queue.Job, error)
	Cancel(ctx context.Context, id, by string) (queue.Job, error)
	Status(ctx context.Context) ([]queue.Line, error) // a sweep yields to the jobs waiting
}

// WorkerConfig says where a worker takes jobs from and how it runs them. The zero value of
// each optional field is documented.
type WorkerConfig struct {
	Pool string // the runner pool to claim from; "" means queue.DefaultPool

	// RepoDir is a git clone of the arena repository, used by this worker only. Each job
	// fetches the PR's head and BaseRef into refs/arenabot/ from Remote, with read access
	// only: the runner holds no GitHub credentials.
	RepoDir string
	Remote  string // the remote of RepoDir to fetch from; "" means "origin"
	BaseRef string // the branch baselines come from; "" means "main"
	// Repos are the repositories ("owner/name", ARENA_REPOS) whose jobs the worker runs;
	// a job of any other fails at once, naming it. Empty means any, but never one other
	// than the repository Remote's URL names (checkRepo).
	Repos []string
	// WorkDir holds one workspace per job (the approved commit's frameworks/), removed after
	// the job; "" means $TMPDIR/arenabot-work.
	WorkDir string

	Heartbeat time.Duration // how often the lease is renewed and a cancel looked for; 0 means 2s
	// LeaseTTL is how long the worker goes on without reaching the queue before it stops the
	// job, which may then be given to another runner; 0 means 30s, the queue's default.
	LeaseTTL time.Duration
	// EngineWait is how long to wait for a Docker daemon that does not answer, before each
	// build and row (measure.Config.EngineWait); 0 means 2m.
	EngineWait time.Duration
	LogTail    int // how many lines of the job's log go into its report; 0 means 200

	// JobLimitFactor and JobLimitCeiling make a job's wall-clock limit (not counting its
	// wait for the host lock, which is another run's time): JobLimitFactor × the
	// job's estimate (queue.Job.Estimate, the bot's plan), plus one build's limit
	// (Bench.BuildTimeout) for a cold build the estimate does not foresee, and at most
	// JobLimitCeiling, which is also the limit of a job without an estimate. 0 means 3 and
	// 6h. A job past it is stopped, its containers removed, and it fails saying so.
	JobLimitFactor  float64
	JobLimitCeiling time.Duration
	// CheckData verifies the arena data (Bench.DataDir) before a job mounts it and puts back
	// what differs, returning what it found; nil means arenadata.Repair.
	CheckData func(dir string) ([]arenadata.Problem, error)
	// Facts describes the host for each job: every result records it, and a job measured
	// in full mode (not Bench.Lite) carries it as site/data/current.json for its results
	// commit, which only the benchmark host's runner writes. nil means host.Facts with the
	// engine's Docker version and default runtime.
	Facts func(ctx context.Context) result.HostFacts

	// StandIn, when set, stands in for the measurement: a job is checked out and planned as
	// always, then each of its rows is reported as failed, not measured, after StandIn,
	// without building or running anything and without the host lock. It is for tests of
	// several runners on one machine (one set of ports and CPUs), which need jobs that take
	// a known time; no command sets it.
	StandIn time.Duration

	// Bench is the measurement configuration every job starts from (DataDir, CPUs,
	// BuildArgs, Runs, Duration, Lite, Host…). Root, Commit, ScratchDir, Labels, EngineWait,
	// OnRowStart, OnRow, BuildLogGoes, Log and Progress are set per job.
	Bench measure.Config

	Log *slog.Logger // nil means discard
}

// A Worker takes approved jobs off the queue and measures them, one at a time: it checks
// out the approved commit, measures the requested entries, publishes progress and rows on
// the event stream and finishes the job with a result.Report.
type Worker struct {
	q   WorkQueue
	eng Engine
	cfg WorkerConfig
	log *slog.Logger
	// cleaned: RemoveLeftovers ran (work runs it before its host checks), so Run, which
	// runs it first otherwise, does not take the host lock a second time for it.
	cleaned bool
}

// NewWorker returns a worker over a queue and a Docker engine.
func NewWorker(q WorkQueue, eng Engine, cfg WorkerConfig) *Worker {
	if cfg.Pool == "" {
		cfg.Pool = queue.DefaultPool
	}
	if cfg.Remote == "" {
		cfg.Remote = "origin"
	}
	if cfg.BaseRef == "" {
		cfg.BaseRef = "main"
	}
	if cfg.WorkDir == "" {
		cfg.WorkDir = filepath.Join(os.TempDir(), "arenabot-work")
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = 2 * time.Second
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = 30 * time.Second
	}
	if cfg.EngineWait <= 0 {
		cfg.EngineWait = 2 * time.Minute
	}
	if cfg.LogTail <= 0 {
		cfg.LogTail = 200
	}
	if cfg.JobLimitFactor <= 0 {
		cfg.JobLimitFactor = DefaultJobLimitFactor
	}
	if cfg.JobLimitCeiling <= 0 {
		cfg.JobLimitCeiling = DefaultJobLimitCeiling
	}
	if cfg.CheckData == nil {
		cfg.CheckData = arenadata.Repair
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Bench.Host == "" {
		cfg.Bench.Host, _ = os.Hostname()
	}
	return &Worker{q: q, eng: eng, cfg: cfg, log: cfg.Log}
}

// facts describes the host (WorkerConfig.Facts).
func (w *Worker) facts(ctx context.Context) result.HostFacts {
	if w.cfg.Facts != nil {
		return w.cfg.Facts(ctx)
	}
	return HostFacts(ctx, w.eng)
}

// Config returns the effective configuration.
func (w *Worker) Config() WorkerConfig { return w.cfg }

// ErrQueueUnreachable is returned by RunJob when the queue could not be reached for
// LeaseTTL: the job was stopped and not finished, since the queue may give it to another
// runner.
var ErrQueueUnreachable = errors.New("queue unreachable")

// errCancelRequested is the cause of a job context that a /benchmark-cancel ended.
var errCancelRequested = errors.New("cancel requested")

// errYield is the cause of a sweep share's context ended so that a job waiting takes its
// host: the share ends with the rows it measured and its other rows go back to the line.
var errYield = errors.New("yielded to a job waiting")

// The job limit's defaults (WorkerConfig.JobLimitFactor, JobLimitCeiling).
const (
	DefaultJobLimitFactor  = 3
	DefaultJobLimitCeiling = 6 * time.Hour
)

// A JobLimitError is the cause of a job context that the job's wall-clock limit ended: the
// job fails with it as its reason.
type JobLimitError struct {
	Limit time.Duration
	How   string // how the limit was derived: "3 × its estimate 1m27s, plus the 20m build limit"
	Where string // what the job was doing: "building the images (gin: building …)"
}

func (e *JobLimitError) Error() string {
	// The where comes last: a reply clips a long reason at its end.
	return fmt.Sprintf("the job ran past its %s limit (%s) and was stopped, its containers removed, while %s", text.Duration(e.Limit), e.How, e.Where)
}

// A limiter calls its function once the time it was given has run, not counting the time
// it was paused. Its methods are safe on a nil limiter, which does nothing.
type limiter struct {
	mu    sync.Mutex
	left  time.Duration
	since time.Time   // when it last started running
	timer *time.Timer // nil while paused
	fired bool
	f     func()
}

func startLimiter(d time.Duration, f func()) *limiter {
	l := &limiter{left: d}
	l.f = func() {
		l.mu.Lock()
		l.fired = true
		l.mu.Unlock()
		f()
	}
	l.resume()
	return l
}

// pause stops the clock; it is a no-op when paused or after the function ran.
func (l *limiter) pause() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.timer != nil && l.timer.Stop() {
		l.left -= time.Since(l.since)
	}
	l.timer = nil
}

// resume starts the clock again with the time left; it is a no-op when running or after
// the function ran.
func (l *limiter) resume() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.timer == nil && !l.fired {
		l.since = time.Now()
		l.timer = time.AfterFunc(max(l.left, 0), l.f)
	}
}

// jobLimit is the wall-clock limit of job and how it was derived.
func (w *Worker) jobLimit(job queue.Job) (time.Duration, string) {
	buildLimit := w.cfg.Bench.BuildTimeout
	if buildLimit <= 0 {
		buildLimit = build.DefaultTimeout
	}
	ceiling := w.cfg.JobLimitCeiling
	if job.Estimate <= 0 {
		return ceiling, "the ceiling ARENA_JOB_TIMEOUT, for a job without an estimate"
	}
	factor := strconv.FormatFloat(w.cfg.JobLimitFactor, 'f', -1, 64)
	derived := time.Duration(w.cfg.JobLimitFactor*float64(job.Estimate)).Round(time.Second) + buildLimit
	how := fmt.Sprintf("%s × its estimate %s, plus the %s build limit", factor, text.Duration(job.Estimate), text.Duration(buildLimit))
	if derived > ceiling {
		return ceiling, fmt.Sprintf("the ceiling ARENA_JOB_TIMEOUT, below %s", how)
	}
	return derived, how
}

// Run claims jobs of the pool and runs them one after the other until ctx is done, then
// returns nil. A failed claim is logged and retried after a backoff. First it removes what
// an earlier worker on this host left behind: containers, job images, workspaces. When ctx
// ends during a job, the job is stopped and cleaned up but not finished: its lease runs
// out and the queue retries it once (on this runner when it comes back, or another).
//
// While it runs, it announces its host to the queue's registry of live hosts (pool, name,
// facts, CPU split, the job it runs) at once and every Heartbeat, for 3 × Heartbeat (at
// least 10s); a failed announcement is logged, never fatal.
func (w *Worker) Run(ctx context.Context) error {
	beacon := newHostBeacon(w)
	beaconCtx, stopBeacon := context.WithCancel(ctx)
	var beaconDone sync.WaitGroup
	beaconDone.Go(func() { beacon.run(beaconCtx) })
	defer beaconDone.Wait()
	defer stopBeacon()
	if !w.cleaned {
		w.RemoveLeftovers(ctx)
	}
	w.log.Info("waiting for jobs", "pool", w.cfg.Pool)
	backoff := time.Second
	for {
		l, err := w.q.Claim(ctx, w.cfg.Pool)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			w.log.Error("claim", "pool", w.cfg.Pool, "err", err, "retry_in", backoff)
			if clock.Sleep(ctx, backoff) != nil {
				return nil
			}
			backoff = min(backoff*2, 30*time.Second)
			continue
		}
		backoff = time.Second
		beacon.running(l.Job.ID)
		if _, err := w.RunJob(ctx, l); err != nil && ctx.Err() == nil {
			w.log.Error("job not finished", "job", l.Job.ID, "err", err)
		}
		beacon.running("")
		if ctx.Err() != nil {
			return nil
		}
	}
}

// RemoveLeftovers removes what a worker that stopped mid-job left: containers, job-labelled
// images and workspaces. Run does it first; work also does it before it checks the host, so a
// killed runner's server still holding 8080 is removed, not taken for a port in use. A
// worker whose measurement is stood in for (WorkerConfig.StandIn) leaves nothing on the
// host and takes no host lock: it removes nothing.
func (w *Worker) RemoveLeftovers(ctx context.Context) {
	if w.cfg.StandIn > 0 {
		return
	}
	unlock, err := host.LockHost(ctx, func(holder string) {
		w.log.Info("waiting for another arenabot run on this host to finish", "holder", holder)
	})
	if err != nil {
		return
	}
	defer unlock()
	w.cleaned = true
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if n, err := w.eng.RemoveLabeled(ctx, build.LabelManaged, "true"); err != nil {
		w.log.Warn("remove leftover containers", "err", err)
	} else if n > 0 {
		w.log.Info("removed leftover containers", "count", n)
	}
	w.removeLeftoverImages(ctx)
	dirs, _ := filepath.Glob(filepath.Join(w.cfg.WorkDir, "job-*"))
	for _, d := range dirs {
		if err := os.RemoveAll(d); err != nil {
			w.log.Warn("remove leftover workspace", "dir", d, "err", err)
		}
	}
}

// removeLeftoverImages removes the images of jobs no runner on this host is running: a job
// builds before it takes the host lock, so another runner's job may be building on one of
// its images (labelled with its ID) at this moment; those stay (host.JobLive).
func (w *Worker) removeLeftoverImages(ctx context.Context) {
	ids, err := w.eng.ImageLabelValues(ctx, LabelJob)
	if err != nil {
		w.log.Warn("remove leftover images", "err", err)
		return
	}
	removed := 0
	for _, id := range ids {
		if host.JobLive(id) {
			w.log.Info("kept the images of a job running on this host", "job", id)
			continue
		}
		n, err := w.eng.RemoveImagesLabeled(ctx, LabelJob, id)
		if err != nil {
			w.log.Warn("remove leftover images", "job", id, "err", err)
		}
		removed += n
	}
	if removed > 0 {
		w.log.Info("removed leftover images", "count", removed)
	}
}

// RunJob runs one claimed job and finishes it: Done when its rows were measured (some may
// have failed), Failed when it could not run at all (the checkout failed, nothing in it was
// runnable, the load tools are missing), Cancelled when a cancel arrived through Heartbeat
// (with the rows measured until then). It returns the job as finished.
//
// It does not finish the job, and returns an error, when the lease was lost (wrapping
// queue.ErrLeaseLost), when the queue could not be reached for LeaseTTL
// (ErrQueueUnreachable), or when ctx ended (ctx's error). In every case the job's
// containers, the images it built and its workspace are removed before RunJob returns.
func (w *Worker) RunJob(ctx context.Context, l queue.Lease) (queue.Job, error) {
	if l.Job.Parent != "" {
		if why := w.shares().parentEnded(ctx, l.Job); why != "" {
			w.log.Info("share not run", "job", l.Job.ID, "reason", why)
			return w.finish(ctx, l, queue.Outcome{State: queue.Cancelled, Reason: why})
		}
	} else if ids, err := w.shareJobs(ctx, l.Job); err != nil {
		w.log.Warn("the job could not be split over the pool's hosts; it runs here alone", "job", l.Job.ID, "err", err)
	} else if len(ids) > 0 {
		return w.runShared(ctx, l, ids)
	}
	return w.runAlone(ctx, l)
}

// runAlone runs a job (or a share of one) wholly on this host; see RunJob.
func (w *Worker) runAlone(ctx context.Context, l queue.Lease) (queue.Job, error) {
	start := time.Now()
	j := newJobRun(w, l)
	j.log.Info("job started", "pr", l.Job.PR, "sha", l.Job.SHA, "kind", l.Job.Kind, "attempt", l.Job.Attempt)
	// Marked running on this host until its images are removed: another runner's sweep
	// leaves them alone meanwhile.
	if release, err := host.HoldJob(l.Job.ID); err != nil {
		j.log.Warn("the job is not marked running on this host; another runner starting now may remove its images", "err", err)
	} else {
		defer release()
	}

	jobCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	limit, how := w.jobLimit(l.Job)
	j.log.Info("job limit", "limit", limit, "derived", how)
	j.limit = startLimiter(limit, func() {
		err := &JobLimitError{Limit: limit, How: how, Where: j.where()}
		j.log.Error("job limit reached; stopping the job", "limit", limit, "where", err.Where)
		cancel(err)
	})
	defer j.limit.pause()
	if l.Job.Parent != "" && l.Job.Kind == queue.BenchmarkSweep {
		j.yield = func() {
			if w.shares().othersWait(ctx) {
				j.log.Info("a job waits for a host: the sweep's share stops after this row and queues the rest")
				cancel(errYield)
			}
		}
	}
	stopBeat := make(chan struct{})
	beatDone := make(chan struct{})
	go func() {
		defer close(beatDone)
		w.keepLease(ctx, l, cancel, stopBeat, j.log)
	}()
	stopBeating := sync.OnceFunc(func() { close(stopBeat); <-beatDone })
	defer stopBeating()

	state, reason := j.run(jobCtx)
	j.limit.pause() // a job that ended is not failed by its limit during the cleanup
	// Taken before cleanup: a cancel or shutdown that arrives later changes nothing.
	interrupted, cause := jobCtx.Err() != nil, context.Cause(jobCtx)
	w.cleanup(ctx, j)
	if j.unlock != nil {
		j.unlock()
	}

	switch {
	case errors.Is(cause, queue.ErrLeaseLost), errors.Is(cause, ErrQueueUnreachable):
		stopBeating()
		j.log.Warn("job stopped, not finished", "err", cause, "duration", time.Since(start).Round(time.Second))
		return queue.Job{}, cause
	case errors.Is(cause, errCancelRequested):
		// The queue keeps who cancelled it (Job.CancelledBy).
		state, reason = queue.Cancelled, ""
	case errors.Is(cause, errYield):
		// The rows not measured go back to the line as a new share, before this one ends,
		// so its job never sees every share ended without them.
		rest, err := w.shares().yieldRest(ctx, l.Job, j.report.Rows)
		if err != nil {
			stopBeating()
			j.log.Error("the rest of the share could not be queued; the share is not finished, so it runs again", "err", err)
			return queue.Job{}, fmt.Errorf("yield: %w", err)
		}
		j.log.Info("share yielded its host", "rest", rest, "rows", len(j.report.Rows))
		state, reason = queue.Done, ""
		j.report.Error = ""
		j.sortRows()
	case errors.As(cause, new(*JobLimitError)):
		// Stopped and cleaned up like a cancel; the reason says which limit and where.
		reason = j.public(cause.Error())
		state = queue.Failed
		j.report.Error = reason
		j.sortRows()
	case interrupted:
		stopBeating()
		j.log.Warn("job stopped, not finished: the worker is shutting down; the queue will retry it", "duration", time.Since(start).Round(time.Second))
		return queue.Job{}, ctx.Err()
	}
	j.log.Info("job finished", "state", state, "reason", reason, "rows", len(j.report.Rows), "failed", j.report.Failed(), "duration", time.Since(start).Round(time.Second))
	j.report.Log = j.ring.lines()
	body, err := json.Marshal(j.report)
	if err != nil {
		return queue.Job{}, fmt.Errorf("job %s: report: %w", l.Job.ID, err)
	}
	done, err := w.finish(ctx, l, queue.Outcome{State: state, Reason: reason, Result: body})
	stopBeating()
	return done, err
}

// finish calls Finish until it succeeds, the lease is lost, or LeaseTTL has passed.
func (w *Worker) finish(ctx context.Context, l queue.Lease, o queue.Outcome) (queue.Job, error) {
	ctx = context.WithoutCancel(ctx)
	deadline := time.Now().Add(w.cfg.LeaseTTL)
	for {
		fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		j, err := w.q.Finish(fctx, l, o)
		cancel()
		if err == nil || errors.Is(err, queue.ErrLeaseLost) || time.Now().After(deadline) {
			if err != nil {
				return j, fmt.Errorf("finish job %s as %s: %w", l.Job.ID, o.State, err)
			}
			return j, nil
		}
		w.log.Warn("finish failed; retrying", "job", l.Job.ID, "err", err)
		time.Sleep(time.Second)
	}
}

// keepLease renews the lease every Heartbeat until stop is closed or ctx ends. It cancels
// the job with errCancelRequested when a cancel was requested (and keeps beating, so the
// cleanup and Finish happen under a live lease), with queue.ErrLeaseLost when the lease is
// gone, and with ErrQueueUnreachable when no heartbeat got through for LeaseTTL; after
// those two it stops.
func (w *Worker) keepLease(ctx context.Context, l queue.Lease, cancel context.CancelCauseFunc, stop <-chan struct{}, log *slog.Logger) {
	t := time.NewTicker(w.cfg.Heartbeat)
	defer t.Stop()
	lastOK := time.Now()
	cancelled := false
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		hctx, hcancel := context.WithTimeout(ctx, max(w.cfg.Heartbeat, time.Second))
		c, err := w.q.Heartbeat(hctx, l)
		hcancel()
		switch {
		case err == nil:
			lastOK = time.Now()
			if c && !cancelled {
				cancelled = true
				log.Info("cancel requested; stopping the job")
				cancel(errCancelRequested)
			}
		case errors.Is(err, queue.ErrLeaseLost):
			log.Warn("lease lost; stopping the job without finishing it", "err", err)
			cancel(fmt.Errorf("job %s: %w", l.Job.ID, err))
			return
		case ctx.Err() != nil:
			return
		default:
			log.Warn("heartbeat failed", "err", err, "since_ok", time.Since(lastOK).Round(time.Millisecond))
			if time.Since(lastOK) >= w.cfg.LeaseTTL {
				log.Error("queue unreachable; stopping the job without finishing it", "duration", w.cfg.LeaseTTL)
				cancel(fmt.Errorf("job %s: no heartbeat got through for %s: %w", l.Job.ID, w.cfg.LeaseTTL, ErrQueueUnreachable))
				return
			}
		}
	}
}

// cleanup removes the job's containers and images and its workspace, even after ctx ended.
func (w *Worker) cleanup(ctx context.Context, j *jobRun) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	id := j.lease.Job.ID
	if n, err := w.eng.RemoveLabeled(ctx, LabelJob, id); err != nil {
		j.log.Error("remove the job's containers", "err", err)
	} else if n > 0 {
		j.log.Info("removed the job's containers", "count", n)
	}
	if n, err := w.eng.RemoveImagesLabeled(ctx, LabelJob, id); err != nil {
		j.log.Error("remove the job's images", "err", err)
	} else if n > 0 {
		j.log.Info("removed the job's images", "count", n)
	}
	if err := os.RemoveAll(j.dir); err != nil {
		j.log.Error("remove the workspace", "dir", j.dir, "err", err)
	}
}

// A jobRun is the state of one job while it runs.
type jobRun struct {
	w     *Worker
	lease queue.Lease
	log   *slog.Logger
	ring  *ringLog
	dir   string // the workspace
	// unlock releases the host lock, taken before the first container starts; nil when the
	// job did not get that far.
	unlock func()

	ctx    context.Context // the job's context, for the progress callbacks
	report result.Report
	total  int // rows in the job
	index  int // 1-based index of the row being measured
	done   int
	failed int
	cur    result.Progress     // the latest progress event, repeated with notes
	first  map[string]bool     // entries whose first row was reported
	order  map[string]int      // entry → position in the job, for the report's row order
	rank   map[profile.Row]int // position in the job's rows, when it has them

	limit *limiter // the job's wall-clock limit; nil in tests that run a jobRun alone
	// yield, on a share of a sweep, stops the share after the row just done when another
	// job waits for a host (errYield); nil for other jobs.
	yield func()

	// What the job is doing, for the job limit's message (read from its timer).
	placeMu  sync.Mutex
	phase    string // "building the images", "measuring row 2 of 4 (gin baseline, 512 connections)"
	lastNote string // the latest progress note in that phase
}

// setPhase records what the job is doing now.
func (j *jobRun) setPhase(p string) {
	j.placeMu.Lock()
	j.phase, j.lastNote = p, ""
	j.placeMu.Unlock()
}

// where says what the job is doing: its phase and the latest note in it.
func (j *jobRun) where() string {
	j.placeMu.Lock()
	defer j.placeMu.Unlock()
	w := text.Or(j.phase, "starting")
	if j.lastNote != "" {
		w += " (last step: " + text.Clip(j.lastNote, 120) + ")"
	}
	return w
}

func newJobRun(w *Worker, l queue.Lease) *jobRun {
	ring := newRingLog(w.cfg.LogTail)
	log := slog.New(slog.NewMultiHandler(w.log.Handler(), ring.handler())).With("job", l.Job.ID)
	return &jobRun{
		w:     w,
		lease: l,
		log:   log,
		ring:  ring,
		dir:   filepath.Join(w.cfg.WorkDir, "job-"+safeName(l.Job.ID)),
		first: map[string]bool{},
		order: map[string]int{},
		rank:  map[profile.Row]int{},
	}
}

// run measures the job and returns how it ended; the report is in j.report.
func (j *jobRun) run(ctx context.Context) (queue.State, string) {
	j.ctx = ctx
	job := j.lease.Job
	cfg := j.w.cfg
	j.report = result.Report{Commit: job.SHA, BaseRef: cfg.BaseRef, Host: cfg.Bench.Host}
	if err := j.w.checkRepo(ctx, job.PR, job.Repo); err != nil {
		return j.fail(err)
	}

	if err := os.RemoveAll(j.dir); err != nil {
		return j.fail(fmt.Errorf("workspace: %w", err))
	}
	r := repo{dir: cfg.RepoDir, remote: cfg.Remote}
	j.setPhase("fetching the PR and " + cfg.BaseRef)
	j.note("fetching the PR and " + cfg.BaseRef)
	co, err := r.checkout(ctx, job.PR, job.SHA, cfg.BaseRef, filepath.Join(j.dir, "src")) // see public
	if err != nil {
		return j.fail(err)
	}
	j.report.BaseCommit = co.BaseCommit
	if co.Moved != "" {
		j.note(fmt.Sprintf("the PR's head moved to %s since the approval; measuring the approved commit %s", short(co.Moved), short(co.Commit)))
	}
	j.log.Info("checked out", "sha", co.Commit, "base", co.BaseCommit)

	root := filepath.Join(co.Root, "frameworks")
	plan, planFailed, err := j.plan(root)
	if err != nil {
		return j.fail(err)
	}
	plan.CPUProfile = job.CPUProfile // the bot decided which rows (profile.CPUProfileMode)
	names := slices.Clone(j.report.Frameworks)
	if job.Compare != "" && !slices.Contains(names, job.Compare) {
		names = append(names, job.Compare)
	}
	j.report.Baselines = r.baselines(ctx, co.BaseCommit, names, filepath.Join(j.dir, "base"), j.log)
	j.report.ScoreBests = r.scoreBests(ctx, co.BaseCommit, scoredProfiles(plan), filepath.Join(j.dir, "scored"), j.log)
	if job.Baseline == queue.BaselineCommitted {
		j.report.AgainstCommitted = true
	} else {
		j.pairBases(ctx, r, co, root, &plan)
	}

	if d := cfg.StandIn; d > 0 {
		j.total = plan.Rows() + len(planFailed)
		if err := j.standIn(ctx, plan, planFailed, d); err != nil {
			return j.fail(err)
		}
		j.sortRows()
		return queue.Done, fmt.Sprintf("%d of %d rows failed", j.report.Failed(), len(j.report.Rows))
	}

	groups, bad := site.Frameworks(root)
	for _, err := range bad {
		j.log.Warn("frameworks.json leaves out an entry that does not load", "err", err)
	}
	j.report.FrameworksFile = groups

	b, err := j.bencher(ctx, co.Root, plan)
	if err != nil {
		return j.fail(err)
	}
	j.total = plan.Rows() + len(planFailed)

	for _, row := range planFailed {
		j.rowStart(row)
		j.rowDone(row)
	}
	if len(plan.Targets) == 0 {
		return j.fail(fmt.Errorf("nothing to measure: %s", strings.Join(errorLines(planFailed), "; ")))
	}
	// RunJob releases the host lock after cleanup.
	if _, j.unlock, err = j.pipeline(b).Run(ctx, plan); err != nil {
		return j.fail(err) // cancelled when ctx ended (only that ends Measure early); RunJob says why
	}
	j.sortRows()
	if n := j.report.Failed(); n > 0 {
		return queue.Done, fmt.Sprintf("%d of %d rows failed", n, len(j.report.Rows))
	}
	return queue.Done, ""
}

// standIn reports each row of plan as failed after d, without measuring it, and the rows
// that could not be planned at once (WorkerConfig.StandIn).
func (j *jobRun) standIn(ctx context.Context, plan measure.Plan, failed []result.Row, d time.Duration) error {
	j.setPhase("standing in for the measurement")
	for _, row := range failed {
		j.rowStart(row)
		j.rowDone(row)
	}
	for _, t := range plan.Targets {
		for _, p := range t.Profiles {
			for _, c := range p.ConnCounts(plan.Lite) {
				row := measure.FailedRow(t.Entry, p, c, errors.New("not measured: a stand-in for the measurement (WorkerConfig.StandIn)"))
				j.rowStart(row)
				if err := clock.Sleep(ctx, d); err != nil {
					return err
				}
				j.rowDone(row)
			}
		}
	}
	return nil
}

// bencher is the job's measurement: the runner's configuration (WorkerConfig.Bench) for the
// checkout at root, with the host's facts, the job's commit, labels and scratch directory,
// and the job's progress callbacks. The report says how it measures.
func (j *jobRun) bencher(ctx context.Context, root string, plan measure.Plan) (*measure.Bencher, error) {
	job, cfg := j.lease.Job, j.w.cfg
	bc := cfg.Bench
	bc.Rule, bc.Budget = tuned(bc.Rule, bc.Budget, job.Tuning)
	facts := j.w.facts(ctx)
	bc.HostFacts = &facts
	if !bc.Lite {
		j.report.Current = &facts
	}
	bc.Root = root
	bc.Commit, bc.TagByCommit = job.SHA, true
	bc.ScratchDir = filepath.Join(j.dir, "scratch")
	if err := os.MkdirAll(bc.ScratchDir, 0o755); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	bc.Labels = maps.Clone(bc.Labels)
	if bc.Labels == nil {
		bc.Labels = map[string]string{}
	}
	bc.Labels[LabelJob] = job.ID
	bc.EngineWait = cfg.EngineWait
	bc.OnRowStart, bc.OnRow = j.rowStart, j.rowDone
	bc.BuildLogGoes = true // the workspace goes: the reply shows the tail
	bc.Log, bc.Progress = j.log, j
	b := measure.New(j.w.eng, bc)
	eff := b.Config()
	j.report.Runs = eff.Runs
	j.report.Mode = eff.Mode()
	if slices.ContainsFunc(plan.Targets, func(t measure.Target) bool { return t.Base != nil }) {
		rule := result.Rule(eff.Rule)
		j.report.Rule = &rule
	}
	return b, nil
}

// tuned is the rule and budget of a job whose repository's settings file sets some of them
// (queue.Tuning) over the runner's own; a file's max_runs under the runner's min_runs (or
// the other way round) raises max_runs to min_runs.
func tuned(rule stats.Rule, budget time.Duration, t *queue.Tuning) (stats.Rule, time.Duration) {
	if t == nil {
		return rule, budget
	}
	if rule == (stats.Rule{}) {
		rule = stats.DefaultRule
	}
	overwrite(&rule.MinEffect, t.MinEffect)
	overwrite(&rule.Target, t.Target)
	overwrite(&rule.MinRuns, t.MinRuns)
	overwrite(&rule.MaxRuns, t.MaxRuns)
	overwrite(&budget, t.Budget)
	rule.MaxRuns = max(rule.MaxRuns, rule.MinRuns)
	return rule, budget
}

// overwrite sets *dst to *v when v is set.
func overwrite[T any](dst, v *T) {
	if v != nil {
		*dst = *v
	}
}

// pipeline is the job's Pipeline over b: its phases and its notes of another run holding
// the host, its limit paused while it waits for the host lock (another run's time), and
// the arena data verified under the lock (no other job mounts it until this one is done).
func (j *jobRun) pipeline(b *measure.Bencher) Pipeline {
	return Pipeline{Bencher: b, Hooks: Hooks{
		Phase: j.setPhase,
		Waiting: func(holder string) {
			j.note(fmt.Sprintf("waiting for another arenabot run on this host to finish (%s holds the host lock)", text.Or(holder, "—")))
		},
		LockWait: func(waiting bool) {
			if waiting {
				j.limit.pause()
			} else {
				j.limit.resume()
			}
		},
		Locked: func() error {
			j.setPhase("verifying the arena data")
			return j.checkData()
		},
	}}
}

// pairBases gives each target of the plan the base its rows are measured against in the
// job, interleaved: the --compare entry, or the entry itself built at the merge base of the
// measured commit with the base branch when the PR changes it. An entry that is the same at
// the merge base is measured once (Δ against its committed results); one that is new has
// no base.
func (j *jobRun) pairBases(ctx context.Context, r repo, co checkout, root string, plan *measure.Plan) {
	job := j.lease.Job
	if job.Compare != "" {
		e, err := frameworks.Load(root, job.Compare, profile.Names())
		if err != nil {
			j.note(fmt.Sprintf("--compare %s does not load (%v); Δ against its committed results", job.Compare, err))
			return
		}
		for i := range plan.Targets {
			if plan.Targets[i].Entry.Name != e.Name {
				plan.Targets[i].Base = &measure.Base{Entry: e, Commit: co.Commit}
			}
		}
		return
	}
	mb, err := r.mergeBase(ctx, co.Commit, co.BaseCommit)
	if err != nil {
		j.note(fmt.Sprintf("no merge base with %s (%v); Δ against committed results", j.w.cfg.BaseRef, err))
		return
	}
	for i := range plan.Targets {
		t := &plan.Targets[i]
		dir := "frameworks/" + t.Entry.Name
		at := r.tree(ctx, mb, dir)
		switch {
		case at == "":
			j.note(fmt.Sprintf("%s is new since the merge base %s with %s: no base to measure", t.Entry.Name, short(mb), j.w.cfg.BaseRef))
			continue
		case at == r.tree(ctx, co.Commit, dir):
			j.note(fmt.Sprintf("%s is unchanged since the merge base %s: measured once, Δ against its committed results", t.Entry.Name, short(mb)))
			continue
		}
		src := filepath.Join(j.dir, "merge-base")
		if err := r.extract(ctx, mb, src, dir); err != nil {
			j.note(fmt.Sprintf("%s at the merge base %s: %v; Δ against its committed results", t.Entry.Name, short(mb), err))
			continue
		}
		e, err := frameworks.Load(filepath.Join(src, "frameworks"), t.Entry.Name, profile.Names())
		t.Base = &measure.Base{Entry: e, Ref: j.w.cfg.BaseRef, Commit: mb}
		if err != nil { // the rows say so in their Δ cells
			t.Base.Entry.Name = t.Entry.Name
			t.Base.Err = fmt.Errorf("it does not load at the merge base %s: %w", short(mb), err)
		}
		j.report.MergeBase = mb
	}
}

// plan resolves the job's rows in the checkout: the rows the job carries (what the ack
// promised), or, for a job without them, the selection of its frameworks and tests in this
// runner's mode. A pair that cannot be measured (an entry that does not load, a test it
// does not subscribe to) becomes a failed row and the others run. The error is for a job
// that names nothing at all.
func (j *jobRun) plan(root string) (measure.Plan, []result.Row, error) {
	job := j.lease.Job
	lite := j.w.cfg.Bench.Lite
	var plan measure.Plan
	var failed []result.Row
	switch {
	case len(job.Rows) > 0:
		plan, failed = j.planRows(root, job.Rows, lite)
	case job.Kind == queue.BenchmarkTest:
		if len(job.Tests) == 0 {
			return measure.Plan{}, nil, errors.New("/benchmark-test names no test; comment it again with -t <test>")
		}
		entries, err := frameworks.LoadAll(root, profile.Names())
		if err != nil {
			j.log.Warn("entries that do not load are left out", "err", err)
		}
		sel := selection.Select(selection.Request{Entries: entries, Tests: job.Tests, Lite: lite, Subscribers: true})
		if len(sel.Rows) == 0 {
			var why []string
			for _, r := range sel.Reasons {
				why = append(why, r.String())
			}
			return measure.Plan{}, nil, errors.New(strings.Join(why, "; "))
		}
		for _, r := range sel.Reasons {
			j.note("not measured: " + r.String())
		}
		for i, name := range sel.Entries() {
			j.order[name] = i
			j.report.Frameworks = append(j.report.Frameworks, name)
		}
		plan = planRows(entries, sel.Rows, sel.Reasons, lite)
	default:
		var entries []frameworks.Entry
		for _, name := range job.Frameworks {
			if _, seen := j.order[name]; seen {
				continue
			}
			j.order[name] = len(j.order)
			j.report.Frameworks = append(j.report.Frameworks, name)
			e, err := frameworks.Load(root, name, profile.Names())
			if err != nil {
				err = fmt.Errorf("%w: %w", ErrInput, err)
				j.log.Warn("framework not runnable", "framework", name, "err", err)
				failed = append(failed, measure.FailedRow(frameworks.Entry{Name: name}, profile.Profile{}, 0, err))
				continue
			}
			entries = append(entries, e)
		}
		if len(j.order) == 0 {
			return measure.Plan{}, nil, errors.New("the job names no framework; comment the command again with -f <framework>")
		}
		sel := selection.Select(selection.Request{Entries: entries, Tests: job.Tests, Lite: lite})
		for _, r := range sel.Reasons {
			if !r.Named && r.Cause != selection.NoTest {
				continue // a subscribed test left out: the Bencher notes it (measure.Target.Skipped)
			}
			e := entries[slices.IndexFunc(entries, func(e frameworks.Entry) bool { return e.Name == r.Entry })]
			j.log.Warn("not measured", "framework", r.Entry, "test", r.Test, "reason", r.String())
			failed = append(failed, measure.FailedRow(e, profileOf(r.Test), 0, reasonErr(r)))
		}
		plan = planRows(entries, sel.Rows, sel.Reasons, lite)
	}
	testSet := map[string]bool{}
	for _, tg := range plan.Targets {
		for _, pr := range tg.Profiles {
			testSet[pr.Name] = true
		}
	}
	for _, p := range profile.All {
		if testSet[p.Name] {
			j.report.Tests = append(j.report.Tests, p.Name)
		}
	}
	return plan, failed, nil
}

// planRows plans the rows a job carries, as they are: a runner whose own mode would select
// other connection counts measures the job's all the same (the ack promised them) and logs
// the difference. A row whose entry does not load, or that the entry cannot measure
// (selection.Check), is a failed row.
func (j *jobRun) planRows(root string, rows []profile.Row, lite bool) (measure.Plan, []result.Row) {
	var entries []frameworks.Entry
	var sel []profile.Row
	var failed []result.Row
	loadErr := map[string]error{}
	for i, r := range rows {
		if _, ok := j.rank[r]; !ok {
			j.rank[r] = i
		}
		if _, seen := j.order[r.Entry]; !seen {
			j.order[r.Entry] = len(j.order)
			j.report.Frameworks = append(j.report.Frameworks, r.Entry)
			e, err := frameworks.Load(root, r.Entry, profile.Names())
			if err != nil {
				loadErr[r.Entry] = fmt.Errorf("%w: %w", ErrInput, err)
				j.log.Warn("framework not runnable", "framework", r.Entry, "err", err)
			} else {
				entries = append(entries, e)
			}
		}
		if err := loadErr[r.Entry]; err != nil {
			failed = append(failed, measure.FailedRow(frameworks.Entry{Name: r.Entry}, profileOf(r.Test), r.Conns, err))
			continue
		}
		e := entries[slices.IndexFunc(entries, func(e frameworks.Entry) bool { return e.Name == r.Entry })]
		if why, bad := selection.Check(e, r.Test); bad {
			j.log.Warn("not measured", "framework", r.Entry, "test", r.Test, "conns", r.Conns, "reason", why.String())
			failed = append(failed, measure.FailedRow(e, profileOf(r.Test), r.Conns, reasonErr(why)))
			continue
		}
		sel = append(sel, r)
	}
	if diff := modeDiff(sel, lite); len(diff) > 0 {
		j.log.Warn("the job's rows differ from this runner's own selection; measuring the job's, as the ack promised",
			"runner_lite", lite, "differences", strings.Join(diff, "; "))
	}
	return planRows(entries, sel, nil, lite), failed
}

// modeDiff lists the entry × test pairs of rows whose connection counts are not those
// the mode selects: "gin baseline: job 512, runner 512, 4096".
func modeDiff(rows []profile.Row, lite bool) []string {
	type pair struct{ entry, test string }
	var order []pair
	counts := map[pair][]int{}
	for _, r := range rows {
		k := pair{r.Entry, r.Test}
		if _, ok := counts[k]; !ok {
			order = append(order, k)
		}
		counts[k] = append(counts[k], r.Conns)
	}
	var out []string
	for _, k := range order {
		got := slices.Compact(slices.Sorted(slices.Values(counts[k])))
		if own := selection.ConnCounts(k.test, lite); !slices.Equal(got, own) {
			out = append(out, fmt.Sprintf("%s %s: job %s, runner %s", k.entry, k.test, ints(got), ints(own)))
		}
	}
	return out
}

func ints(ns []int) string {
	if len(ns) == 0 {
		return "none"
	}
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// profileOf returns the profile named test, or one with only the name when there is none.
func profileOf(test string) profile.Profile {
	if p, ok := profile.Lookup(test); ok {
		return p
	}
	return profile.Profile{Name: test}
}

// fail ends the job as failed with err as the report's error and the reason.
func (j *jobRun) fail(err error) (queue.State, string) {
	if j.ctx != nil && j.ctx.Err() != nil {
		return queue.Cancelled, "" // the error is the cancellation's; RunJob says why
	}
	msg := j.public(err.Error())
	j.log.Error("job failed", "err", msg)
	j.report.Error = msg
	j.sortRows()
	return queue.Failed, text.Cut(msg, 1000)
}

// checkData verifies the arena data before the job's containers mount it, and puts back
// what an earlier job or process changed (arenadata.Repair), saying so in the job's log.
// The error, for data that cannot be repaired, names no host path: it is posted on the PR.
func (j *jobRun) checkData() error {
	dir := j.w.cfg.Bench.DataDir
	start := time.Now()
	problems, err := j.w.cfg.CheckData(dir)
	if err != nil {
		j.log.Error("the arena data could not be verified or repaired", "dir", dir, "err", err)
		return errors.New("the runner's arena data could not be verified or repaired; the runner's log says why (the operator can remove the data directory to have it generated anew)")
	}
	if len(problems) > 0 {
		what := make([]string, len(problems))
		for i, p := range problems {
			what[i] = p.String()
		}
		j.log.Warn("the arena data differed from its checksums; it was put back before this job mounts it",
			"dir", dir, "problems", strings.Join(what, "; "), "duration", time.Since(start).Round(time.Millisecond))
		return nil
	}
	j.log.Info("arena data verified", "duration", time.Since(start).Round(time.Millisecond))
	return nil
}

// rowStart is measure.Config.OnRowStart: a progress event.
func (j *jobRun) rowStart(r result.Row) {
	if j.ctx.Err() != nil {
		return
	}
	j.setPhase(fmt.Sprintf("measuring row %d of %d (%s %s, %d connections)", j.index+1, j.total, r.Entry, r.Profile, r.Conns))
	j.index++
	j.cur = result.Progress{
		Entry: r.Entry, Profile: r.Profile, Conns: r.Conns,
		Row: j.index, Rows: j.total, Done: j.done, Failed: j.failed,
	}
	if j.lease.Job.Parent != "" {
		j.cur.Host = j.w.cfg.Bench.Host
	}
	j.publish(queue.EventProgress, j.cur)
}

// rowDone is measure.Config.OnRow: the row goes into the report and out as a row event. Rows that
// end after the job was stopped are left out.
func (j *jobRun) rowDone(row result.Row) {
	if j.ctx.Err() != nil {
		return
	}
	row.Advisories = slices.Clone(row.Advisories) // the Bencher's row keeps its own
	for i, a := range row.Advisories {
		row.Advisories[i] = j.public(a)
	}
	if row.Err != "" {
		row.Err, row.Short = j.public(row.Err), j.public(row.Short)
		j.failed++
	}
	if j.first[row.Entry] {
		row.BuildLog = nil // the tail goes on the entry's first row only
	}
	j.committedProfileDiff(row)
	if j.lease.Job.Parent != "" {
		row.Host = j.w.cfg.Bench.Host
	}
	j.first[row.Entry] = true
	j.done++
	// The row event goes without the profile's files; the report keeps them only for the
	// results commit of --save, which needs them (result.Report.Saved).
	files := row
	row.Pprof, row.Flame = nil, nil
	j.publish(queue.EventRow, row)
	if j.lease.Job.Save {
		row.Pprof, row.Flame = files.Pprof, files.Flame
	}
	j.report.Rows = append(j.report.Rows, row)
	if j.yield != nil && j.done < j.total {
		j.yield()
	}
}

// committedProfileDiff gives a profiled row that has no difference from a base profiled in
// the job (none was measured, or it failed) the difference from the profile committed for
// the same row on the base branch, when there is one (extracted with the base's results).
func (j *jobRun) committedProfileDiff(r result.Row) {
	if r.Result == nil || r.Result.CPUProfile == nil || r.Result.CPUProfile.Err != "" || r.Result.CPUProfile.Diff != nil || len(r.Pprof) == 0 {
		return
	}
	path := filepath.Join(j.dir, "base", "frameworks", r.Entry, result.Dir, result.PprofFileName(r.Profile, r.Conns))
	committed, err := os.ReadFile(path)
	if err != nil {
		return // none committed
	}
	d, err := measure.CompareCommitted(committed, r.Pprof)
	if err != nil {
		j.log.Warn("committed profile not compared", "framework", r.Entry, "test", r.Profile, "conns", r.Conns, "err", err)
		return
	}
	r.Result.CPUProfile.Diff = d
}

// public makes an error fit to post: one line, with the workspace's paths relative to the
// repository ("frameworks/gin/meta.json"), or to the workspace (build logs).
func (j *jobRun) public(msg string) string {
	msg = strings.ReplaceAll(msg, filepath.Join(j.dir, "src")+string(filepath.Separator), "")
	msg = strings.ReplaceAll(msg, j.dir+string(filepath.Separator), "")
	return text.OneLine(msg)
}

// sortRows puts the report's rows in the job's framework order, then in the order of the
// job's rows when it has them, else keeping plan order within an entry.
func (j *jobRun) sortRows() {
	slices.SortStableFunc(j.report.Rows, func(a, b result.Row) int {
		if d := j.order[a.Entry] - j.order[b.Entry]; d != 0 {
			return d
		}
		return j.rank[profile.Row{Entry: a.Entry, Test: a.Profile, Conns: a.Conns}] - j.rank[profile.Row{Entry: b.Entry, Test: b.Profile, Conns: b.Conns}]
	})
}

// Step is part of measure.Progress; rows are reported through OnRowStart instead.
func (j *jobRun) Step(string, int, int) {}

// Note is part of measure.Progress: a note goes out as a progress event (the Bencher logs it too).
func (j *jobRun) Note(line string) {
	j.placeMu.Lock()
	j.lastNote = line
	j.placeMu.Unlock()
	if j.ctx.Err() != nil {
		return
	}
	p := j.cur
	p.Rows, p.Done, p.Failed, p.Note = j.total, j.done, j.failed, line
	j.publish(queue.EventProgress, p)
}

// note logs a line of the worker's own and publishes it as a progress note.
func (j *jobRun) note(line string) {
	j.log.Info(line)
	j.Note(line)
}

// publish sends an event for the job. Events are best effort: a failure is logged and the
// job goes on (the report carries every row anyway).
func (j *jobRun) publish(kind string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		j.log.Error("encode event", "kind", kind, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(j.ctx), 5*time.Second)
	defer cancel()
	// A share's events are its job's: the status comment counts every host's rows.
	id := text.Or(j.lease.Job.Parent, j.lease.Job.ID)
	if err := j.w.q.Publish(ctx, queue.Event{Job: id, Kind: kind, Data: data}); err != nil {
		j.log.Warn("publish event", "kind", kind, "err", err)
	}
}

func errorLines(rows []result.Row) []string {
	var out []string
	for _, r := range rows {
		if r.Err != "" {
			out = append(out, text.OneLine(r.Err))
		}
	}
	return out
}

// safeName turns a job ID into a directory name.
func safeName(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// A ringLog keeps the last lines of a job's log, as text.
type ringLog struct {
	mu    sync.Mutex
	max   int
	buf   []string
	start int
}

func newRingLog(n int) *ringLog { return &ringLog{max: n} }

// Write takes one record of a slog.TextHandler (one line per call).
func (r *ringLog) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for line := range strings.Lines(string(p)) {
		line = strings.TrimRight(line, "\n")
		if len(r.buf) < r.max {
			r.buf = append(r.buf, line)
			continue
		}
		r.buf[r.start] = line
		r.start = (r.start + 1) % r.max
	}
	return len(p), nil
}

// lines returns the kept lines, oldest first.
func (r *ringLog) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append(slices.Clone(r.buf[r.start:]), r.buf[:r.start]...)
}

// handler logs Info and above into the ring, with the time of day only and without the
// job ID every line would repeat.
func (r *ringLog) handler() slog.Handler {
	return slog.NewTextHandler(r, &slog.HandlerOptions{
		Level: slog.LevelInfo,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) > 0 {
				return a
			}
			switch a.Key {
			case slog.TimeKey:
				return slog.String(slog.TimeKey, a.Value.Time().UTC().Format("15:04:05"))
			case "job":
				return slog.Attr{}
			}
			return a
		},
	})
}
