package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/arenabot/arenabot/bot"
	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/runner"
)

type serveConfig struct {
	Listen        string
	Secret        []byte
	APIURL        string
	Token         string
	AppID         int64
	PrivateKey    []byte
	BotLogin      string
	RedisURL      string
	Prefix        string
	Depth         int
	ApprovalPoll  time.Duration
	ApprovalTTL   time.Duration
	ProgressEvery time.Duration
	ReapEvery     time.Duration
	Consumer      string
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
	// "runner"); tests see when they return.
	WrapLoop func(name string, loop func(context.Context) error) func(context.Context) error
}

// runnerListen is where serve --runner listens unless told otherwise: the default :8080 is
// the entries' own port on the same host.
const runnerListen = ":9090"

func parseServe(args []string, getenv func(string) string, stderr io.Writer) (serveConfig, error) {
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: arenabot serve [flags]\n\nThe webhook service: answers PR commands, takes approvals and queues jobs.\nEvery flag defaults to its ARENA_* variable.\n\nflags:")
		fs.PrintDefaults()
	}
	var c serveConfig
	var secretFile, keyFile, appID, depth, poll, ttl, progress string
	fs.StringVar(&c.Listen, "listen", envOr(getenv, "ARENA_LISTEN", ":8080"), "address of the HTTP server (ARENA_LISTEN)")
	fs.StringVar(&secretFile, "webhook-secret-file", "", "file holding the webhook secret (default: ARENA_WEBHOOK_SECRET; a flag names a file because flag values show in ps)")
	fs.StringVar(&c.APIURL, "github-api-url", envOr(getenv, "ARENA_GITHUB_API_URL", ghapi.DefaultBaseURL), "GitHub REST API root (ARENA_GITHUB_API_URL)")
	fs.StringVar(&appID, "github-app-id", getenv("ARENA_GITHUB_APP_ID"), "GitHub App id (ARENA_GITHUB_APP_ID)")
	fs.StringVar(&keyFile, "github-private-key-file", getenv("ARENA_GITHUB_PRIVATE_KEY_FILE"), "GitHub App private key, PEM (ARENA_GITHUB_PRIVATE_KEY_FILE)")
	fs.StringVar(&c.BotLogin, "bot-login", envOr(getenv, "ARENA_BOT_LOGIN", ""), "the bot's own login, e.g. arenabot[bot] (ARENA_BOT_LOGIN)")
	fs.StringVar(&c.RedisURL, "redis-url", getenv("ARENA_REDIS_URL"), "the queue's Redis; unset: the embedded store in --state-dir (ARENA_REDIS_URL)")
	fs.StringVar(&c.StateDir, "state-dir", defaultStateDir(getenv), "where the embedded store keeps the queue, the pending requests and the webhook inbox (arenabot.db) when no Redis URL is set (ARENA_STATE_DIR)")
	fs.StringVar(&c.Prefix, "redis-prefix", envOr(getenv, "ARENA_REDIS_PREFIX", "arena:"), "key prefix in Redis (ARENA_REDIS_PREFIX)")
	fs.StringVar(&depth, "queue-depth", envOr(getenv, "ARENA_QUEUE_DEPTH", "1"), "waiting places per runner pool (ARENA_QUEUE_DEPTH)")
	fs.StringVar(&poll, "approval-poll", envOr(getenv, "ARENA_APPROVAL_POLL", "15s"), "how often pending requests' reactions are read (ARENA_APPROVAL_POLL)")
	fs.StringVar(&ttl, "approval-ttl", envOr(getenv, "ARENA_APPROVAL_TTL", "72h"), "how long a request waits for approval (ARENA_APPROVAL_TTL)")
	fs.StringVar(&progress, "progress-every", envOr(getenv, "ARENA_PROGRESS_EVERY", "5s"), "least time between two progress edits of a running job's status comment (ARENA_PROGRESS_EVERY)")
	fs.DurationVar(&c.ReapEvery, "reap-every", 5*time.Second, "how often jobs whose runner stopped heart-beating are looked for")
	fs.DurationVar(&c.ShutdownWait, "shutdown-wait", time.Minute, "how long serve waits on SIGTERM for its loops to stop (the runner's job in flight is stopped and its containers removed) before it exits anyway")
	fs.StringVar(&c.Consumer, "consumer", envOr(getenv, "ARENA_BOT_CONSUMER", "arenabot"), "the bot's stable name on the runner event stream; keep it across restarts (ARENA_BOT_CONSUMER)")
	fs.BoolVar(&c.Runner, "runner", false, "also run the runner in this process (the single-machine mode; the runner flags below apply)")
	c.Work.runnerFlags(fs, getenv)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return c, errReported
		}
		return c, fmt.Errorf("serve: %w; run 'arenabot serve --help'", err)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("serve: unexpected argument %q; serve takes flags only", fs.Arg(0))
	}
	c.Token = getenv("ARENA_GITHUB_TOKEN")
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
	var err error
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
	if c.ReapEvery <= 0 {
		return c, fmt.Errorf("serve: --reap-every %s: want a positive duration", c.ReapEvery)
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
		c.Work.RedisURL, c.Work.Prefix = c.RedisURL, c.Prefix
		explicit := fs.Changed("listen") || getenv("ARENA_LISTEN") != ""
		if port := listenPort(c.Listen); entryPort(port) {
			if explicit {
				return c, fmt.Errorf("serve --runner: ARENA_LISTEN %s is port %d, which the entries listen on when they are measured on this host; use another port, e.g. %s", c.Listen, port, runnerListen)
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

// entryPort reports whether the entries' servers listen on port (docs/profiles.md).
func entryPort(port int) bool {
	switch port {
	case profile.PortH1, profile.PortH1TLS, profile.PortH2C, profile.PortTLS:
		return true
	}
	return false
}

// botConfig is the bot's configuration from serve's: the runner's mode too (--lite,
// ARENA_LITE), so that the acks' rows are those the runners measure.
func (c serveConfig) botConfig() bot.Config {
	return bot.Config{
		BotLogin:      c.BotLogin,
		ApprovalTTL:   c.ApprovalTTL,
		ApprovalPoll:  c.ApprovalPoll,
		WebhookSecret: c.Secret,
		ProgressEvery: c.ProgressEvery,
		Lite:          c.Work.Lite,
	}
}

// serve runs the webhook service until ctx ends. Then it stops taking requests, stops its
// loops and waits for them (at most ShutdownWait: the runner's job in flight is stopped and
// its containers removed), and only then closes the Docker engine and the store.
func serve(ctx context.Context, c serveConfig, stderr io.Writer) (err error) {
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	st, err := openQueue(ctx, c, log)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.close(); cerr != nil {
			log.Error("close the store", "err", cerr)
			if err == nil {
				err = fmt.Errorf("serve: close the store: %w", cerr)
			}
		}
	}()
	q := st.q
	gh, err := ghapi.New(ghapi.Config{
		BaseURL: c.APIURL, Token: c.Token, AppID: c.AppID, PrivateKey: c.PrivateKey,
		BotLogin: c.BotLogin, Logger: log.With("component", "github"),
	})
	if err != nil {
		return fmt.Errorf("serve: GitHub client: %w", err)
	}
	reg, onReply := metrics(q)
	bc := c.botConfig()
	bc.OnReply = onReply
	bc.InboxStore = st.inbox // accepted deliveries survive a restart
	b := bot.New(bc, gh, q, log.With("component", "bot"))
	var worker *runner.Worker
	if c.Runner {
		w, closeEngine, err := c.Work.newWorker(ctx, q, log)
		if err != nil {
			return fmt.Errorf("serve --runner: %w", err)
		}
		// Deferred after the store's close, so it runs before it: the engine is closed
		// once the worker has returned, the store after that.
		defer closeEngine()
		worker = w
	}

	mux := http.NewServeMux()
	mux.Handle("POST /webhook", b.Webhook())
	// The page judges runners by --lease-ttl: this process's runner's, or the one the
	// runners elsewhere are given.
	leaseTTL := c.Work.LeaseTTL
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := queue.WriteOperatorPage(r.Context(), w, q, time.Now(), leaseTTL); err != nil {
			http.Error(w, "queue unavailable", http.StatusServiceUnavailable)
		}
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if _, err := q.Status(r.Context()); err != nil {
			http.Error(w, "queue unavailable", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok\n")
	})
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("serve: listen on %s: %w; set ARENA_LISTEN to a free address", c.Listen, err)
	}
	if c.ReadyListening != nil {
		c.ReadyListening(ln.Addr().String())
	}

	// The loops run until serve stops them, after the HTTP server: a webhook accepted while
	// it shuts down is still pushed into a live inbox.
	loopCtx, stopLoops := context.WithCancel(context.WithoutCancel(ctx))
	defer stopLoops()
	g := newLoops(loopCtx, log, c.WrapLoop)
	g.start("bot", b.Run)
	g.start("events", func(ctx context.Context) error { return b.RunEvents(ctx, c.Consumer) })
	g.start("reaper", func(ctx context.Context) error { return q.RunReaper(ctx, c.ReapEvery) })
	if worker != nil {
		g.start("runner", worker.Run)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	httpErr := make(chan error, 1)
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			httpErr <- err
		}
	}()
	log.Info("serving", "listen", ln.Addr().String(), "redis", c.RedisURL != "", "state", st.where, "runner", c.Runner, "lite", c.Work.Lite)
	select {
	case <-ctx.Done():
		log.Info("shutting down", "cause", context.Cause(ctx))
	case err = <-g.failed:
		log.Error("shutting down: a loop stopped", "err", err)
	case err = <-httpErr:
		err = fmt.Errorf("serve: HTTP server: %w", err)
		log.Error("shutting down: the HTTP server stopped", "err", err)
	}
	start := time.Now()
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if serr := srv.Shutdown(shutCtx); serr != nil {
		log.Warn("HTTP server shutdown", "err", serr)
		srv.Close()
	}
	stopLoops()
	if left := g.wait(c.ShutdownWait); len(left) > 0 {
		log.Error("shutdown: loops still running; exiting without them", "loops", left, "waited", c.ShutdownWait.String())
		if err == nil {
			err = fmt.Errorf("serve: shutdown: %s still running after %s", strings.Join(left, ", "), c.ShutdownWait)
		}
	} else if ferr := g.firstErr(); ferr != nil && err == nil {
		err = ferr
	}
	log.Info("stopped", "took", time.Since(start).Round(time.Millisecond).String())
	return err
}

// loops are the long-running loops of serve: each runs until ctx ends and serve waits for
// all of them before it closes what they use.
type loops struct {
	ctx    context.Context
	log    *slog.Logger
	wrap   func(string, func(context.Context) error) func(context.Context) error
	failed chan error // a loop that stopped before ctx ended, or failed; buffered, first only
	wg     sync.WaitGroup

	mu      sync.Mutex
	running map[string]int
	err     error // the first loop's error
}

func newLoops(ctx context.Context, log *slog.Logger, wrap func(string, func(context.Context) error) func(context.Context) error) *loops {
	return &loops{ctx: ctx, log: log, wrap: wrap, failed: make(chan error, 1), running: map[string]int{}}
}

// start runs loop in a goroutine under name.
func (g *loops) start(name string, loop func(context.Context) error) {
	if g.wrap != nil {
		loop = g.wrap(name, loop)
	}
	g.mu.Lock()
	g.running[name]++
	g.mu.Unlock()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		err := ignoreCancel(g.ctx, loop(g.ctx))
		if err == nil && g.ctx.Err() == nil {
			err = errors.New("returned before serve stopped it")
		}
		if err != nil {
			err = fmt.Errorf("serve: %s loop: %w", name, err)
		}
		g.mu.Lock()
		if g.running[name]--; g.running[name] == 0 {
			delete(g.running, name)
		}
		if err != nil && g.err == nil {
			g.err = err
		}
		g.mu.Unlock()
		if err != nil {
			select {
			case g.failed <- err:
			default:
			}
		}
	}()
}

// wait waits for every loop to return, at most bound, and returns the names of those still
// running then (none: all returned). It logs what it waits for.
func (g *loops) wait(bound time.Duration) []string {
	done := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(done)
	}()
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	notice := time.NewTimer(min(100*time.Millisecond, bound/2))
	defer notice.Stop()
	for {
		select {
		case <-done:
			return nil
		case <-notice.C:
			g.log.Info("waiting for the loops to stop", "loops", g.names(), "at_most", bound.String())
		case <-deadline.C:
			return g.names()
		}
	}
}

// names returns the loops still running, sorted.
func (g *loops) names() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Sorted(maps.Keys(g.running))
}

// firstErr returns the first error a loop returned.
func (g *loops) firstErr() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// metrics is the service's Prometheus registry: Go and process collectors, and, read from
// the queue at scrape time, the jobs per pool and state, the requests awaiting approval and
// how long ago each pool's runner was seen.
// It also returns the hook that counts the final replies and times them from the final
// event to the results commit and to the reply.
func metrics(q queue.Queue) (*prometheus.Registry, func(bot.ReplyTiming)) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(newQueueCollector(q, time.Now))
	replies := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arena_final_replies_total", Help: "Final replies posted, by how the job ended.",
	}, []string{"state"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "arena_final_reply_seconds", Help: "Time from reading a job's final event to its results commit (step=commit) and to its reply posted (step=reply).",
		Buckets: []float64{0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 300},
	}, []string{"step"})
	reg.MustRegister(replies, latency)
	return reg, func(t bot.ReplyTiming) {
		replies.WithLabelValues(string(t.State)).Inc()
		if t.Commit > 0 {
			latency.WithLabelValues("commit").Observe(t.Commit.Seconds())
		}
		latency.WithLabelValues("reply").Observe(t.Reply.Seconds())
	}
}

// queueCollector reads the queue's gauges at scrape time.
type queueCollector struct {
	q                   queue.Queue
	now                 func() time.Time
	jobs, pending, seen *prometheus.Desc
}

func newQueueCollector(q queue.Queue, now func() time.Time) queueCollector {
	return queueCollector{
		q: q, now: now,
		jobs:    prometheus.NewDesc("arena_queue_jobs", "Jobs in the queue by pool and state.", []string{"pool", "state"}, nil),
		pending: prometheus.NewDesc("arena_pending_requests", "Requests awaiting approval.", nil, nil),
		seen:    prometheus.NewDesc("arena_runner_last_seen_seconds", "Seconds since a runner of the pool last claimed or heart-beat; +Inf when none ever was.", []string{"pool"}, nil),
	}
}

func (c queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobs
	ch <- c.pending
	ch <- c.seen
}

func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if lines, err := c.q.Status(ctx); err != nil {
		ch <- prometheus.NewInvalidMetric(c.jobs, err)
	} else {
		for _, l := range lines {
			counts := map[queue.State]int{}
			for _, p := range l.Places {
				counts[p.Job.State]++
			}
			for _, st := range []queue.State{queue.Queued, queue.Running} {
				ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(counts[st]), l.Pool, string(st))
			}
		}
	}
	if pending, err := c.q.List(ctx, queue.Filter{States: []queue.State{queue.AwaitingApproval}}); err != nil {
		ch <- prometheus.NewInvalidMetric(c.pending, err)
	} else {
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(len(pending)))
	}
	runners, err := c.q.Runners(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.seen, err)
		return
	}
	now := c.now()
	for _, r := range runners {
		ago := math.Inf(1)
		if !r.Seen.IsZero() {
			ago = max(now.Sub(r.Seen).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(c.seen, prometheus.GaugeValue, ago, r.Pool)
	}
}

// A store is where serve keeps its state: the queue (with the requests awaiting approval)
// and the webhook inbox, on Redis or in the embedded file.
type store struct {
	q     queue.Queue
	inbox bot.Inbox
	where string // for the log: "redis" or the file's path
	close func() error
}

// openQueue opens the Redis queue when a URL is set, else the embedded store: the file
// arenabot.db in StateDir (created 0700), which one process at a time may hold.
func openQueue(ctx context.Context, c serveConfig, log *slog.Logger) (store, error) {
	opts := queue.Options{Prefix: c.Prefix, Depth: c.Depth, Logger: log.With("component", "queue")}
	if c.Runner {
		opts.LeaseTTL = c.Work.LeaseTTL
	}
	if c.RedisURL != "" {
		rdb, err := dialRedis(ctx, c.RedisURL, "serve")
		if err != nil {
			return store{}, err
		}
		return store{
			q: queue.NewRedis(rdb, opts), inbox: bot.NewRedisInbox(rdb, c.Prefix),
			where: "redis", close: rdb.Close,
		}, nil
	}
	if err := os.MkdirAll(c.StateDir, 0o700); err != nil {
		return store{}, fmt.Errorf("serve: state directory: %w; set ARENA_STATE_DIR (or --state-dir) to a directory serve may write", err)
	}
	path := filepath.Join(c.StateDir, stateFile)
	d, err := queue.OpenDisk(path, opts)
	if errors.Is(err, bolterrors.ErrTimeout) {
		return store{}, fmt.Errorf("serve: the embedded store %s is in use by another process (another arenabot serve?); stop it, or give this one another ARENA_STATE_DIR (or --state-dir)", path)
	}
	if err != nil {
		return store{}, fmt.Errorf("serve: embedded store %s: %w", path, err)
	}
	inbox, err := bot.NewBoltInbox(d.DB())
	if err != nil {
		d.Close()
		return store{}, fmt.Errorf("serve: embedded store %s: %w", path, err)
	}
	return store{q: d, inbox: inbox, where: path, close: d.Close}, nil
}

// stateFile is the embedded store's file in the state directory.
const stateFile = "arenabot.db"

// defaultStateDir is ARENA_STATE_DIR, else $XDG_STATE_HOME/arenabot, else
// ~/.local/state/arenabot; "" when there is no home directory either.
func defaultStateDir(getenv func(string) string) string {
	if v := getenv("ARENA_STATE_DIR"); v != "" {
		return v
	}
	if v := getenv("XDG_STATE_HOME"); filepath.IsAbs(v) {
		return filepath.Join(v, "arenabot")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "state", "arenabot")
}

// dialRedis connects to the Redis at url and checks that it answers.
func dialRedis(ctx context.Context, url, cmd string) (*redis.Client, error) {
	ro, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("%s: ARENA_REDIS_URL: %w; want redis://[user:password@]host:port[/db]", cmd, err)
	}
	rdb := redis.NewClient(ro)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("%s: Redis at %s does not answer: %w", cmd, ro.Addr, err)
	}
	return rdb, nil
}

// ignoreCancel turns the error a loop returns when its context ends into nil.
func ignoreCancel(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}
