package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/redisconn"
	"github.com/arenabot/arenabot/runner"
	"github.com/arenabot/arenabot/runner/measure"
	"github.com/arenabot/arenabot/text"
)

// workConfig is the runner service's configuration: where jobs come from (the queue, the
// pool), where the arena repository is, and how to measure. serve --runner uses the same
// flags.
type workConfig struct {
	hostConfig
	measureFlags
	RedisURL  string
	RedisTLS  redisconn.TLSFiles
	Prefix    string
	Pool      string
	HostName  string // ARENA_HOST_NAME: the host's name in the pool's registry and its results
	Remote    string
	Repos     []string // ARENA_REPOS: the repositories whose jobs it runs (runner.WorkerConfig.Repos)
	BaseRef   string
	WorkDir   string
	Heartbeat time.Duration
	LeaseTTL  time.Duration
	// JobTimeout is the ceiling of a job's wall-clock limit, and JobTimeoutFactor × its
	// estimate (plus one build's limit) the limit below it (runner.WorkerConfig).
	JobTimeout       time.Duration
	JobTimeoutFactor float64

	jobTimeout, jobFactor string
}

// runnerFlags registers the flags the runner needs besides the queue's.
func (c *workConfig) runnerFlags(fs *pflag.FlagSet, getenv func(string) string) {
	c.hostConfig.flags(fs, getenv)
	fs.StringVar(&c.Root, "repo-dir", envOr(getenv, "ARENA_REPO_DIR", "."), "a git clone of the arena repository; jobs fetch the PR head and the base branch from its remote (ARENA_REPO_DIR; --root is the same)")
	fs.StringVar(&c.Pool, "pool", envOr(getenv, "ARENA_POOL", queue.DefaultPool), "the runner pool to take jobs from (ARENA_POOL)")
	fs.StringVar(&c.HostName, "host-name", getenv("ARENA_HOST_NAME"), "the name this runner's host goes by in its pool's registry, on the status page and in every result it measures; give each host of a pool its own, since a job is split over the pool's hosts by name (ARENA_HOST_NAME; default: the machine's hostname)")
	fs.StringVar(&c.Remote, "remote", envOr(getenv, "ARENA_REMOTE", "origin"), "the remote of the repository to fetch from (ARENA_REMOTE)")
	fs.StringVar(&c.BaseRef, "base-ref", envOr(getenv, "ARENA_BASE_REF", "main"), "the branch whose committed results deltas compare against (ARENA_BASE_REF)")
	fs.StringVar(&c.WorkDir, "work-dir", getenv("ARENA_WORK_DIR"), "where each job's workspace is checked out (ARENA_WORK_DIR; default: <cache-dir>/work)")
	c.measureFlags.flags(fs, getenv, "work")
	fs.DurationVar(&c.Heartbeat, "heartbeat", 2*time.Second, "how often the job's lease is renewed and a cancel looked for")
	fs.DurationVar(&c.LeaseTTL, "lease-ttl", 30*time.Second, "how long a job stays this runner's without a heartbeat; after it the queue retries the job once")
	fs.StringVar(&c.jobTimeout, "job-timeout", envOr(getenv, "ARENA_JOB_TIMEOUT", text.Duration(runner.DefaultJobLimitCeiling)), "the most a job may run: past its limit (--job-timeout-factor × its estimate, plus one build's limit, at most this; this for a job without an estimate) it is stopped and fails saying so (ARENA_JOB_TIMEOUT)")
	fs.StringVar(&c.jobFactor, "job-timeout-factor", envOr(getenv, "ARENA_JOB_TIMEOUT_FACTOR", strconv.Itoa(runner.DefaultJobLimitFactor)), "a job's limit is this × its estimate, plus one build's limit (--build-timeout), at most --job-timeout (ARENA_JOB_TIMEOUT_FACTOR)")
}

func (c *workConfig) check(cmd string) error {
	if err := c.measureFlags.check(cmd); err != nil {
		return err
	}
	if c.Heartbeat <= 0 || c.LeaseTTL < 2*c.Heartbeat {
		return fmt.Errorf("%s: --lease-ttl %s must be at least twice --heartbeat %s", cmd, c.LeaseTTL, c.Heartbeat)
	}
	var err error
	if c.JobTimeout, err = time.ParseDuration(c.jobTimeout); err != nil || c.JobTimeout <= 0 {
		return fmt.Errorf("%s: --job-timeout (ARENA_JOB_TIMEOUT) %q: want a positive duration such as 6h", cmd, c.jobTimeout)
	}
	if c.JobTimeoutFactor, err = strconv.ParseFloat(c.jobFactor, 64); err != nil || c.JobTimeoutFactor < 1 {
		return fmt.Errorf("%s: --job-timeout-factor (ARENA_JOB_TIMEOUT_FACTOR) %q: want a number of at least 1, such as 3", cmd, c.jobFactor)
	}
	if c.WorkDir == "" {
		c.WorkDir = filepath.Join(c.CacheDir, "work")
	}
	return c.hostConfig.finish(cmd)
}

func parseWork(args []string, getenv func(string) string, stderr io.Writer) (workConfig, error) {
	fs := pflag.NewFlagSet("work", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: arenabot work [flags]\n\nThe runner on the benchmark host: takes approved jobs from the queue, checks out the\napproved commit, measures the entries and reports back through the queue. It needs Redis,\nDocker and read access to the arena repository; never GitHub credentials.\nEvery flag defaults to its ARENA_* variable.\n\nflags:")
		fs.PrintDefaults()
	}
	var c workConfig
	fs.StringVar(&c.RedisURL, "redis-url", getenv("ARENA_REDIS_URL"), "the queue's Redis, shared with serve (ARENA_REDIS_URL)")
	redisTLSFlags(fs, getenv, &c.RedisTLS)
	fs.StringVar(&c.Prefix, "redis-prefix", envOr(getenv, "ARENA_REDIS_PREFIX", "arena:"), "key prefix in Redis (ARENA_REDIS_PREFIX)")
	c.runnerFlags(fs, getenv)
	var repos string
	reposFlag(fs, getenv, &repos, "the repositories whose jobs this runner runs, a job of any other failing at once; unset: the one --remote's URL names (work refuses to start when it names none)")
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("work: unexpected argument %q; work takes flags only", fs.Arg(0))
	}
	var err error
	if c.Repos, err = parseRepos("work", repos); err != nil {
		return c, err
	}
	if c.RedisURL == "" {
		return c, fmt.Errorf("work: no queue; set ARENA_REDIS_URL to the Redis that serve uses (a runner in the same process as the bot is 'arenabot serve --runner')")
	}
	return c, c.check("work")
}

// work runs the runner service until ctx ends.
func work(ctx context.Context, c workConfig, stderr io.Writer) error {
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	if err := checkRunnerRepos(ctx, "work", c); err != nil {
		return err
	}
	rdb, err := dialRedis(ctx, c.RedisURL, c.RedisTLS, "work")
	if err != nil {
		return err
	}
	defer rdb.Close()
	q := queue.NewRedis(rdb, queue.Options{Prefix: c.Prefix, LeaseTTL: c.LeaseTTL, Logger: log.With("component", "queue")})
	w, closeEngine, err := c.newWorker(ctx, q, log)
	if err != nil {
		return err
	}
	defer closeEngine()
	// What a runner killed mid-job left (its server may still hold 8080) goes first, so the
	// host checks judge the host, not the leftovers.
	w.RemoveLeftovers(ctx)
	if err := checkRunnerHost(ctx, c, log); err != nil {
		return fmt.Errorf("work: %w", err)
	}
	log.Info("runner started", "pool", c.Pool, "repo", c.Root, "work_dir", c.WorkDir)
	return w.Run(ctx)
}

// checkRunnerRepos refuses a runner that could not tell a foreign job from its own: no
// ARENA_REPOS and a remote whose URL names no repository, or an ARENA_REPOS without the
// remote's repository, whose jobs would all be refused.
func checkRunnerRepos(ctx context.Context, cmd string, c workConfig) error {
	origin := runner.RemoteRepo(ctx, c.Root, c.Remote)
	switch {
	case len(c.Repos) == 0 && origin == "":
		return fmt.Errorf("%s: cannot tell which repository's jobs to run: ARENA_REPOS is not set and remote %q of the clone %s is not a GitHub repository URL; set ARENA_REPOS to the arena repository, e.g. ARENA_REPOS=octo/arena", cmd, c.Remote, c.Root)
	case origin != "" && len(c.Repos) > 0 && !containsFold(c.Repos, origin):
		return fmt.Errorf("%s: ARENA_REPOS %s does not hold %s, the repository remote %q of the clone %s fetches from, so every job would be refused; add %s to ARENA_REPOS or point --repo-dir at a clone of the repositories it names", cmd, strings.Join(c.Repos, ","), origin, c.Remote, c.Root, origin)
	}
	return nil
}

// newWorker connects to Docker, prepares the arena data and returns the worker.
func (c *workConfig) newWorker(ctx context.Context, q runner.WorkQueue, log *slog.Logger) (*runner.Worker, func(), error) {
	eng, dataDir, err := c.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	bench := c.runnerConfig(ctx, dataDir)
	bench.Commit = "" // set per job: the approved commit
	c.measureFlags.apply(&bench)
	if c.HostName != "" {
		bench.Host = c.HostName
	}
	if c.noBuildPids != nil {
		log.Warn("builds run without a pids limit", "reason", c.noBuildPids.Error())
	}
	w := runner.NewWorker(q, eng, c.workerConfig(bench, log.With("component", "runner")))
	return w, func() { eng.Close() }, nil
}

// workerConfig is the worker's configuration from the flags, measuring with bench.
func (c *workConfig) workerConfig(bench measure.Config, log *slog.Logger) runner.WorkerConfig {
	return runner.WorkerConfig{
		Pool: c.Pool, RepoDir: c.Root, Remote: c.Remote, Repos: c.Repos, BaseRef: c.BaseRef, WorkDir: c.WorkDir,
		Heartbeat: c.Heartbeat, LeaseTTL: c.LeaseTTL, Bench: bench, Log: log,
		JobLimitFactor: c.JobTimeoutFactor, JobLimitCeiling: c.JobTimeout,
		StandIn: standIn,
	}
}

// standIn, when set, stands in for every job's measurement (runner.WorkerConfig.StandIn). Only
// the tests' helper process sets it, from ARENABOT_TEST_STAND_IN, to run several runners on one
// machine; no flag or variable of the command does.
var standIn time.Duration
