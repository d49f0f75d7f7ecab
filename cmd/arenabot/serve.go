package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/bot"
	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/runner/profile"
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
	// Runner runs the runner in the same process (serve --runner): the single-machine mode.
	Runner         bool
	Work           workConfig
	ReadyListening func(addr string) // tests: called with the bound address
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
	fs.StringVar(&c.RedisURL, "redis-url", getenv("ARENA_REDIS_URL"), "the queue's Redis; unset: embedded queue (ARENA_REDIS_URL)")
	fs.StringVar(&c.Prefix, "redis-prefix", envOr(getenv, "ARENA_REDIS_PREFIX", "arena:"), "key prefix in Redis (ARENA_REDIS_PREFIX)")
	fs.StringVar(&depth, "queue-depth", envOr(getenv, "ARENA_QUEUE_DEPTH", "1"), "waiting places per runner pool (ARENA_QUEUE_DEPTH)")
	fs.StringVar(&poll, "approval-poll", envOr(getenv, "ARENA_APPROVAL_POLL", "15s"), "how often pending requests' reactions are read (ARENA_APPROVAL_POLL)")
	fs.StringVar(&ttl, "approval-ttl", envOr(getenv, "ARENA_APPROVAL_TTL", "72h"), "how long a request waits for approval (ARENA_APPROVAL_TTL)")
	fs.StringVar(&progress, "progress-every", envOr(getenv, "ARENA_PROGRESS_EVERY", "5s"), "least time between two progress edits of a running job's status comment (ARENA_PROGRESS_EVERY)")
	fs.DurationVar(&c.ReapEvery, "reap-every", 5*time.Second, "how often jobs whose runner stopped heart-beating are looked for")
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

// serve runs the webhook service until ctx ends.
func serve(ctx context.Context, c serveConfig, stderr io.Writer) error {
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	q, rdb, err := openQueue(ctx, c, log)
	if err != nil {
		return err
	}
	if rdb != nil {
		defer rdb.Close()
	}
	gh, err := ghapi.New(ghapi.Config{
		BaseURL: c.APIURL, Token: c.Token, AppID: c.AppID, PrivateKey: c.PrivateKey,
		BotLogin: c.BotLogin, Logger: log.With("component", "github"),
	})
	if err != nil {
		return fmt.Errorf("serve: GitHub client: %w", err)
	}
	reg, onReply := metrics(q)
	bc := bot.Config{
		BotLogin:      c.BotLogin,
		ApprovalTTL:   c.ApprovalTTL,
		ApprovalPoll:  c.ApprovalPoll,
		WebhookSecret: c.Secret,
		ProgressEvery: c.ProgressEvery,
		OnReply:       onReply,
	}
	if rdb != nil { // pending requests and accepted deliveries survive a restart
		bc.Pending = bot.NewRedisPending(rdb, c.Prefix)
		bc.InboxStore = bot.NewRedisInbox(rdb, c.Prefix)
	}
	b := bot.New(bc, gh, q, log.With("component", "bot"))

	mux := http.NewServeMux()
	mux.Handle("POST /webhook", b.Webhook())
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := queue.WriteStatus(r.Context(), w, q); err != nil {
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
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 5)
	go func() { errc <- b.Run(ctx) }()
	go func() { errc <- ignoreCancel(ctx, b.RunEvents(ctx, c.Consumer)) }()
	go func() { errc <- q.RunReaper(ctx, c.ReapEvery) }()
	if c.Runner {
		w, closeEngine, err := c.Work.newWorker(ctx, q, log)
		if err != nil {
			return fmt.Errorf("serve --runner: %w", err)
		}
		defer closeEngine()
		go func() { errc <- w.Run(ctx) }()
	}
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	}()
	log.Info("serving", "listen", ln.Addr().String(), "redis", c.RedisURL != "", "runner", c.Runner)
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if serr := srv.Shutdown(shutCtx); serr != nil && err == nil {
		err = serr
	}
	return err
}

// metrics is the service's Prometheus registry: Go and process collectors, and the jobs
// per pool and state read from the queue at scrape time.
// It also returns the hook that counts the final replies and times them from the final
// event to the results commit and to the reply.
func metrics(q queue.Queue) (*prometheus.Registry, func(bot.ReplyTiming)) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(queueCollector{q: q, desc: prometheus.NewDesc("arena_queue_jobs", "Jobs in the queue by pool and state.", []string{"pool", "state"}, nil)})
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

type queueCollector struct {
	q    queue.Queue
	desc *prometheus.Desc
}

func (c queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	lines, err := c.q.Status(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for _, l := range lines {
		counts := map[queue.State]int{}
		for _, p := range l.Places {
			counts[p.Job.State]++
		}
		for _, st := range []queue.State{queue.Queued, queue.Running} {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(counts[st]), l.Pool, string(st))
		}
	}
}

// openQueue opens the Redis queue when a URL is set (returning its client for the bot's
// durable records), else the embedded one.
func openQueue(ctx context.Context, c serveConfig, log *slog.Logger) (queue.Queue, *redis.Client, error) {
	opts := queue.Options{Prefix: c.Prefix, Depth: c.Depth, Logger: log.With("component", "queue")}
	if c.Runner {
		opts.LeaseTTL = c.Work.LeaseTTL
	}
	if c.RedisURL == "" {
		return queue.NewMemory(opts), nil, nil
	}
	rdb, err := dialRedis(ctx, c.RedisURL, "serve")
	if err != nil {
		return nil, nil, err
	}
	return queue.NewRedis(rdb, opts), rdb, nil
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
