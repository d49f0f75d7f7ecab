package main

import (
	"context"
	"fmt"
	"io"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/redisconn"
	"github.com/arenabot/arenabot/runner"
)

// sweepConfig is `arenabot sweep`: a maintainer's sweep of the arena queued from the command
// line, as /benchmark-sweep queues one from a comment.
type sweepConfig struct {
	RedisURL, Prefix, Pool   string
	RedisTLS                 redisconn.TLSFiles
	RepoDir, Remote, BaseRef string
	Repo, By                 string
	PR                       int
	Installation             int64
	Frameworks, Tests        []string
	Lite                     bool
	installation, repos      string
}

const sweepUsage = "usage: arenabot sweep --pr N [-f framework,...] [-t test,...] [flags]"

func parseSweep(args []string, getenv func(string) string, stderr io.Writer) (sweepConfig, error) {
	fs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), sweepUsage+"\n\nQueues a sweep of the arena at pull request N's head: every enabled entry on every test it\nsubscribes to (only those -f and -t name), spread over the pool's hosts. The bot posts its\nstatus and results on the pull request and commits the results to its branch in one commit.\n\nflags:")
		fs.PrintDefaults()
	}
	c := sweepConfig{By: "operator"}
	if u, err := user.Current(); err == nil && u.Username != "" {
		c.By = u.Username
	}
	fs.IntVar(&c.PR, "pr", 0, "the pull request whose head is swept and whose branch gets the results commit")
	fs.StringSliceVarP(&c.Frameworks, "framework", "f", nil, "entries to sweep, comma separated (default: every enabled entry)")
	fs.StringSliceVarP(&c.Tests, "test", "t", nil, "tests to sweep, comma separated (default: every test each entry subscribes to)")
	fs.StringVar(&c.RepoDir, "repo-dir", envOr(getenv, "ARENA_REPO_DIR", "."), "a git clone of the arena repository, to read the pull request's entries (ARENA_REPO_DIR)")
	fs.StringVar(&c.Remote, "remote", envOr(getenv, "ARENA_REMOTE", "origin"), "the remote of the clone to fetch the pull request from (ARENA_REMOTE)")
	fs.StringVar(&c.BaseRef, "base-ref", envOr(getenv, "ARENA_BASE_REF", "main"), "the base branch (ARENA_BASE_REF)")
	fs.StringVar(&c.Repo, "repo", "", "the arena repository, owner/name (default: the one ARENA_REPOS names, else the remote's)")
	fs.StringVar(&c.Pool, "pool", envOr(getenv, "ARENA_POOL", queue.DefaultPool), "the runner pool to queue the sweep to (ARENA_POOL)")
	fs.StringVar(&c.installation, "installation", getenv("ARENA_INSTALLATION_ID"), "the GitHub App's installation ID on the repository, which the bot answers through (the number ending the installation's settings URL); not needed with token auth (ARENA_INSTALLATION_ID)")
	fs.BoolVar(&c.Lite, "lite", getenv("ARENA_LITE") == "true", "plan the --lite rows, for runners measuring with --lite (ARENA_LITE)")
	fs.StringVar(&c.By, "by", c.By, "who asks for the sweep, recorded as its requester and approver")
	fs.StringVar(&c.RedisURL, "redis-url", getenv("ARENA_REDIS_URL"), "the queue's Redis (ARENA_REDIS_URL)")
	redisTLSFlags(fs, getenv, &c.RedisTLS)
	fs.StringVar(&c.Prefix, "redis-prefix", envOr(getenv, "ARENA_REDIS_PREFIX", "arena:"), "key prefix in Redis (ARENA_REDIS_PREFIX)")
	c.repos = getenv("ARENA_REPOS")
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	switch {
	case fs.NArg() > 0:
		return c, &usageError{err: fmt.Errorf("sweep: unexpected argument %q; name entries with -f and tests with -t; %s", fs.Arg(0), sweepUsage)}
	case c.PR <= 0:
		return c, &usageError{err: fmt.Errorf("sweep: --pr is missing: name the pull request whose head is swept and whose branch gets the results, e.g. --pr 123")}
	case c.RedisURL == "":
		return c, fmt.Errorf("sweep: ARENA_REDIS_URL is not set; set it (or --redis-url) to the Redis the bot and the runners use")
	}
	if c.installation != "" {
		n, err := strconv.ParseInt(c.installation, 10, 64)
		if err != nil || n <= 0 {
			return c, fmt.Errorf("sweep: --installation %q is not an installation ID; give the number that ends the installation's settings URL", c.installation)
		}
		c.Installation = n
	}
	return c, nil
}

// sweepCommand plans the sweep from the pull request's head and queues it, approved.
func sweepCommand(ctx context.Context, c sweepConfig, stdout io.Writer) error {
	if c.Repo == "" {
		if rs := splitList(c.repos); len(rs) == 1 {
			c.Repo = rs[0]
		} else if c.Repo = runner.RemoteRepo(ctx, c.RepoDir, c.Remote); c.Repo == "" {
			return fmt.Errorf("sweep: cannot tell the arena repository: give --repo owner/name")
		}
	}
	p, err := runner.PlanSweep(ctx, c.RepoDir, c.Remote, c.BaseRef, c.PR, c.Frameworks, c.Tests, c.Lite)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	for _, s := range p.Skipped {
		fmt.Fprintln(stdout, "left out (does not load):", s)
	}
	rdb, err := dialRedis(ctx, c.RedisURL, c.RedisTLS, "sweep")
	if err != nil {
		return fmt.Errorf("%w; check ARENA_REDIS_URL and that redis-server runs", err)
	}
	defer rdb.Close()
	j, err := enqueueSweep(ctx, queue.NewRedis(rdb, queue.Options{Prefix: c.Prefix}), c, p, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "queued sweep %s on pool %s: %d rows of %d entries at %s; the bot posts its status and results on %s#%d\n",
		j.ID, j.Pool, len(j.Rows), len(j.Frameworks), p.SHA[:min(12, len(p.SHA))], j.Repo, j.PR)
	return nil
}

// enqueueSweep queues the planned sweep, approved by whoever asked for it.
func enqueueSweep(ctx context.Context, q queue.Pools, c sweepConfig, p runner.SweepPlan, now time.Time) (queue.Job, error) {
	line := "/benchmark-sweep"
	if len(c.Frameworks) > 0 {
		line += " -f " + strings.Join(c.Frameworks, ",")
	}
	if len(c.Tests) > 0 {
		line += " -t " + strings.Join(c.Tests, ",")
	}
	j, _, err := q.Enqueue(ctx, queue.Job{
		Repo: c.Repo, PR: c.PR, Requester: c.By, Approver: c.By, Command: line, Kind: queue.BenchmarkSweep,
		Frameworks: p.Frameworks, Tests: c.Tests, Rows: p.Rows, Save: true, Baseline: queue.BaselineCommitted,
		SHA: p.SHA, Pool: c.Pool, InstallationID: c.Installation, Created: now, Approved: now,
	})
	if err != nil {
		return j, fmt.Errorf("sweep: queue: %w", err)
	}
	return j, nil
}
