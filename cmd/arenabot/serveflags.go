package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/bot"
	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue/redisconn"
)

type serveConfig struct {
	Listen     string
	Secret     []byte
	APIURL     string
	WebURL     string // the GitHub's web root, for links in replies and on the status page
	Token      string
	AppID      int64
	PrivateKey []byte
	BotLogin   string
	RedisURL   string
	RedisTLS   redisconn.TLSFiles
	Prefix     string
	Depth      int
	// Pools are the runner pools jobs are routed to, in preference order (ARENA_POOLS;
	// default: the runner's pool, ARENA_POOL).
	Pools         []string
	ApprovalPoll  time.Duration
	ApprovalTTL   time.Duration
	ProgressEvery time.Duration
	ReapEvery     time.Duration
	// RecoverEvery and RecoverWindow: how often the App's webhook deliveries are read for
	// those serve missed, and how far back (App auth only).
	RecoverEvery, RecoverWindow time.Duration
	Consumer                    string
	// Replica names this process among serve's replicas on one Redis (ARENA_REPLICA;
	// default: hostname and pid); LeaderTTL is how long a replica holds a loop's lease
	// without extending it, so a killed replica's loops move within it (--leader-ttl).
	Replica   string
	LeaderTTL time.Duration
	// Repos are the repositories served (ARENA_REPOS); serve fills them in at start when
	// the App is installed on just one (servedScope).
	Repos []string
	// StateDir holds the embedded store (arenabot.db: the queue, the pending requests and
	// the webhook inbox) when RedisURL is empty.
	StateDir string
	// ShutdownWait bounds how long serve waits, once it has stopped taking webhooks, for its
	// loops to return: the runner's job in flight is stopped and its containers removed.
	ShutdownWait time.Duration
	// Runner runs the runner in the same process (serve --runner): the single-machine mode.
	Runner         bool
	Work           workConfig
	ReadyListening func(addr string) // tests: called with the bound address
	// WrapLoop, when set, wraps each loop serve starts ("bot", "events", "reaper",
	// "recovery", "runner"); tests see when they return.
	WrapLoop func(name string, loop func(context.Context) error) func(context.Context) error
}

// runnerListen is where serve --runner listens unless told otherwise: the default :8080 is
// the entries' own port on the same host, and 9090 production-stack's authsvc. 9300 is in
// no profile's or stack's ports (profile.HostPorts; TestRunnerListenFree).
const runnerListen = ":9300"

func parseServe(args []string, getenv func(string) string, stderr io.Writer) (serveConfig, error) {
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: arenabot serve [flags]\n\nThe webhook service: answers PR commands, takes approvals and queues jobs.\nEvery flag defaults to its ARENA_* variable.\n\nflags:")
		fs.PrintDefaults()
	}
	var c serveConfig
	var secretFile, keyFile, appID, depth, poll, ttl, progress string
	fs.StringVar(&c.Listen, "listen", envOr(getenv, "ARENA_LISTEN", ":8080"), "address of the HTTP server (ARENA_LISTEN)")
	fs.StringVar(&secretFile, "webhook-secret-file", "", "file holding the webhook secret (default: ARENA_WEBHOOK_SECRET; a flag names a file because flag values show in ps)")
	fs.StringVar(&c.APIURL, "github-api-url", envOr(getenv, "ARENA_GITHUB_API_URL", ghapi.DefaultBaseURL), "GitHub REST API root (ARENA_GITHUB_API_URL)")
	fs.StringVar(&c.WebURL, "github-web-url", getenv("ARENA_GITHUB_WEB_URL"), "the GitHub's web root, which links in replies and on the status page point at (ARENA_GITHUB_WEB_URL; default: from the API root: https://github.com/ for api.github.com, https://ghe.example.com/ for GitHub Enterprise's https://ghe.example.com/api/v3/)")
	fs.StringVar(&appID, "github-app-id", getenv("ARENA_GITHUB_APP_ID"), "GitHub App id (ARENA_GITHUB_APP_ID)")
	fs.StringVar(&keyFile, "github-private-key-file", getenv("ARENA_GITHUB_PRIVATE_KEY_FILE"), "GitHub App private key, PEM (ARENA_GITHUB_PRIVATE_KEY_FILE)")
	fs.StringVar(&c.BotLogin, "bot-login", envOr(getenv, "ARENA_BOT_LOGIN", ""), "the bot's own login, e.g. arenabot[bot]; serve learns it from GitHub at start (GET /app or GET /user) and refuses to start when this differs (ARENA_BOT_LOGIN)")
	var repos string
	reposFlag(fs, getenv, &repos, "the repositories whose deliveries the bot acts on, the others being ignored; required with a token, and with an App installed on more than one repository")
	fs.StringVar(&c.RedisURL, "redis-url", getenv("ARENA_REDIS_URL"), "the queue's Redis; unset: the embedded store in --state-dir (ARENA_REDIS_URL)")
	redisTLSFlags(fs, getenv, &c.RedisTLS)
	fs.StringVar(&c.StateDir, "state-dir", defaultStateDir(getenv), "where the embedded store keeps the queue, the pending requests and the webhook inbox (arenabot.db) when no Redis URL is set (ARENA_STATE_DIR)")
	fs.StringVar(&c.Prefix, "redis-prefix", envOr(getenv, "ARENA_REDIS_PREFIX", "arena:"), "key prefix in Redis (ARENA_REDIS_PREFIX)")
	var pools string
	fs.StringVar(&pools, "pools", getenv("ARENA_POOLS"), "the runner pools jobs go to, in preference order, comma-separated: each request goes to the first whose live hosts all have the CPUs its rows need (default: ARENA_POOL) (ARENA_POOLS)")
	fs.StringVar(&depth, "queue-depth", envOr(getenv, "ARENA_QUEUE_DEPTH", "1"), "requests each pull request may have waiting in a runner pool's line; the arena's rule is 1 (ARENA_QUEUE_DEPTH)")
	fs.StringVar(&poll, "approval-poll", envOr(getenv, "ARENA_APPROVAL_POLL", "15s"), "how often pending requests' reactions are read (ARENA_APPROVAL_POLL)")
	fs.StringVar(&ttl, "approval-ttl", envOr(getenv, "ARENA_APPROVAL_TTL", "72h"), "how long a request waits for approval (ARENA_APPROVAL_TTL)")
	fs.StringVar(&progress, "progress-every", envOr(getenv, "ARENA_PROGRESS_EVERY", "5s"), "least time between two progress edits of a running job's status comment (ARENA_PROGRESS_EVERY)")
	fs.DurationVar(&c.ReapEvery, "reap-every", 5*time.Second, "how often jobs whose runner stopped heart-beating are looked for")
	var recoverEvery, recoverWindow string
	fs.StringVar(&recoverEvery, "recover-every", envOr(getenv, "ARENA_RECOVER_EVERY", "5m"), "how often the App's webhook deliveries are read for comments serve missed while it was down; also at start (ARENA_RECOVER_EVERY)")
	fs.StringVar(&recoverWindow, "recover-window", envOr(getenv, "ARENA_RECOVER_WINDOW", "6h"), "how far back missed webhook deliveries are recovered, at most the 24h delivery ids are kept (ARENA_RECOVER_WINDOW)")
	fs.DurationVar(&c.ShutdownWait, "shutdown-wait", time.Minute, "how long serve waits on SIGTERM for its loops to stop (the runner's job in flight is stopped and its containers removed) before it exits anyway")
	fs.StringVar(&c.Replica, "replica", getenv("ARENA_REPLICA"), "this process's name among serve's replicas on one Redis, unique to it (default: hostname-pid) (ARENA_REPLICA)")
	fs.DurationVar(&c.LeaderTTL, "leader-ttl", 15*time.Second, "how long a replica holds a loop's lease without extending it: a killed replica's loops move to another within it")
	fs.StringVar(&c.Consumer, "consumer", envOr(getenv, "ARENA_BOT_CONSUMER", "arenabot"), "the bot's stable name on the runner event stream; keep it across restarts (ARENA_BOT_CONSUMER)")
	fs.BoolVar(&c.Runner, "runner", false, "also run the runner in this process (the single-machine mode; the runner flags below apply)")
	c.Work.runnerFlags(fs, getenv)
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("serve: unexpected argument %q; serve takes flags only", fs.Arg(0))
	}
	c.Token = getenv("ARENA_GITHUB_TOKEN")
	if c.WebURL == "" {
		c.WebURL = ghapi.WebURL(c.APIURL)
	} else if u, err := url.Parse(c.WebURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return c, fmt.Errorf("serve: --github-web-url %q is not a web address; give the GitHub's root, e.g. https://ghe.example.com/", c.WebURL)
	}
	var err error
	if c.Repos, err = parseRepos("serve", repos); err != nil {
		return c, err
	}
	secret := getenv("ARENA_WEBHOOK_SECRET")
	if secretFile != "" {
		b, err := os.ReadFile(secretFile)
		if err != nil {
			return c, fmt.Errorf("serve: webhook secret: %w", err)
		}
		secret = strings.TrimSpace(string(b))
	}
	if secret == "" {
		return c, fmt.Errorf("serve: no webhook secret; set ARENA_WEBHOOK_SECRET (or --webhook-secret-file) to the secret configured on the GitHub App or webhook — serve refuses to accept unsigned deliveries")
	}
	c.Secret = []byte(secret)
	if appID != "" {
		if c.AppID, err = strconv.ParseInt(appID, 10, 64); err != nil || c.AppID <= 0 {
			return c, fmt.Errorf("serve: ARENA_GITHUB_APP_ID %q is not an App id (a positive number)", appID)
		}
		if keyFile == "" {
			return c, fmt.Errorf("serve: ARENA_GITHUB_APP_ID is set but ARENA_GITHUB_PRIVATE_KEY_FILE is not; point it at the App's private key (.pem)")
		}
		if c.PrivateKey, err = os.ReadFile(keyFile); err != nil {
			return c, fmt.Errorf("serve: GitHub App private key: %w", err)
		}
	}
	if c.AppID == 0 && c.Token == "" {
		return c, fmt.Errorf("serve: no GitHub credentials; set ARENA_GITHUB_TOKEN, or ARENA_GITHUB_APP_ID and ARENA_GITHUB_PRIVATE_KEY_FILE")
	}
	if c.AppID != 0 && c.Token != "" {
		return c, fmt.Errorf("serve: both ARENA_GITHUB_TOKEN and ARENA_GITHUB_APP_ID are set; use one")
	}
	if c.Pools, err = parsePools(pools, c.Work.Pool, c.Runner); err != nil {
		return c, err
	}
	if c.Depth, err = strconv.Atoi(depth); err != nil || c.Depth < 1 {
		return c, fmt.Errorf("serve: ARENA_QUEUE_DEPTH %q: want a whole number ≥ 1", depth)
	}
	if c.ApprovalPoll, err = time.ParseDuration(poll); err != nil || c.ApprovalPoll <= 0 {
		return c, fmt.Errorf("serve: ARENA_APPROVAL_POLL %q: want a duration such as 15s", poll)
	}
	if c.ApprovalTTL, err = time.ParseDuration(ttl); err != nil || c.ApprovalTTL <= 0 {
		return c, fmt.Errorf("serve: ARENA_APPROVAL_TTL %q: want a duration such as 72h", ttl)
	}
	if c.ProgressEvery, err = time.ParseDuration(progress); err != nil || c.ProgressEvery <= 0 {
		return c, fmt.Errorf("serve: ARENA_PROGRESS_EVERY %q: want a duration such as 5s", progress)
	}
	if c.RecoverEvery, err = time.ParseDuration(recoverEvery); err != nil || c.RecoverEvery <= 0 {
		return c, fmt.Errorf("serve: ARENA_RECOVER_EVERY %q: want a duration such as 5m", recoverEvery)
	}
	if c.RecoverWindow, err = time.ParseDuration(recoverWindow); err != nil || c.RecoverWindow <= 0 {
		return c, fmt.Errorf("serve: ARENA_RECOVER_WINDOW %q: want a duration such as 6h", recoverWindow)
	}
	if c.ReapEvery <= 0 {
		return c, fmt.Errorf("serve: --reap-every %s: want a positive duration", c.ReapEvery)
	}
	if c.Replica == "" {
		c.Replica = defaultReplica()
	}
	if c.LeaderTTL < 100*time.Millisecond {
		return c, fmt.Errorf("serve: --leader-ttl %s: want at least 100ms", c.LeaderTTL)
	}
	if c.ShutdownWait <= 0 {
		return c, fmt.Errorf("serve: --shutdown-wait %s: want a positive duration", c.ShutdownWait)
	}
	if err := c.Work.checkLite("serve"); err != nil {
		return c, err
	}
	if c.RedisURL == "" && c.StateDir == "" {
		return c, fmt.Errorf("serve: no state directory for the embedded store (neither $XDG_STATE_HOME nor $HOME is set); set ARENA_STATE_DIR (or --state-dir), or ARENA_REDIS_URL")
	}
	if c.Runner {
		if err := c.Work.check("serve --runner"); err != nil {
			return c, err
		}
		c.Work.RedisURL, c.Work.RedisTLS, c.Work.Prefix = c.RedisURL, c.RedisTLS, c.Prefix
		explicit := fs.Changed("listen") || getenv("ARENA_LISTEN") != ""
		if hp, used := profile.HostPortOf(listenPort(c.Listen)); used {
			if explicit {
				return c, fmt.Errorf("serve --runner: ARENA_LISTEN %s is port %d, which a measurement on this host listens on (%s); set ARENA_LISTEN (--listen) to a port no profile or stack uses, e.g. %s (the default)", c.Listen, hp.Port, hp.Who(), runnerListen)
			}
			c.Listen = runnerListen
		}
	}
	return c, nil
}

// listenPort returns the port of a listen address, 0 when it has none.
func listenPort(addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(p)
	return n
}

// botConfig is the bot's configuration from serve's: the runner's mode too (--lite,
// ARENA_LITE), so that the acks' rows are those the runners measure.
func (c serveConfig) botConfig() bot.Config {
	return bot.Config{
		BotLogin:      c.BotLogin,
		Repos:         c.Repos,
		ApprovalTTL:   c.ApprovalTTL,
		ApprovalPoll:  c.ApprovalPoll,
		WebhookSecret: c.Secret,
		ProgressEvery: c.ProgressEvery,
		Lite:          c.Work.Lite,
		Pools:         c.Pools,
		WebURL:        c.WebURL,
		QueueDepth:    c.Depth,
	}
}
