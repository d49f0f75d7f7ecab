package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/arenabot/arenabot/bot"
	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/queue/metrics"
	"github.com/arenabot/arenabot/runner"
	"github.com/arenabot/arenabot/statuspage"
)

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
	if c.BotLogin, c.Repos, err = servedScope(ctx, c, gh, log); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if c.Runner {
		c.Work.Repos = c.Repos // it runs the jobs of the repositories it serves
		if err := checkRunnerRepos(ctx, "serve --runner", c.Work); err != nil {
			return err
		}
	}
	log.Info("github identity", "login", c.BotLogin, "repos", c.Repos)
	// /metrics: the Go runtime and the process, the queue's gauges read at scrape time, the
	// final replies.
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		metrics.NewCollector(q, time.Now))
	bc := c.botConfig()
	bc.OnReply = bot.ReplyMetrics(reg)
	bc.InboxStore = st.inbox // accepted deliveries survive a restart
	bc.Checks = ghapi.NewChecks(gh)
	b := bot.New(bc, gh, q, log.With("component", "bot"))
	bot.IntakeMetrics(reg, b.Intake)
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
	mux.Handle("GET /{$}", statuspage.Handler(statuspage.Config{
		Queue: q, LeaseTTL: leaseTTL, WebURL: bc.WebURL, Pools: c.Pools, Logger: log.With("component", "statuspage"),
	}))
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
	g := bot.NewLoops(loopCtx, log, c.WrapLoop)
	// Each of the bot's loops runs in one replica at a time, the holder of its lease; the
	// HTTP endpoints answer in every replica.
	leased := func(name string, loop func(context.Context) error) func(context.Context) error {
		return bot.Leased(q, name, c.Replica, c.LeaderTTL, log.With("component", "lease"), loop)
	}
	g.Start("bot", leased("bot", b.Run))
	g.Start("events", leased("events", func(ctx context.Context) error { return b.RunEvents(ctx, c.Consumer) }))
	g.Start("reaper", leased("reaper", func(ctx context.Context) error { return q.RunReaper(ctx, c.ReapEvery) }))
	if c.AppID != 0 {
		g.Start("recovery", leased("recovery", func(ctx context.Context) error {
			return bot.NewRecovery(b.Intake, gh).Run(ctx, c.RecoverEvery, c.RecoverWindow)
		}))
	} else {
		log.Info("missed webhooks are not recovered: GitHub lists webhook deliveries to a GitHub App only (set ARENA_GITHUB_APP_ID and ARENA_GITHUB_PRIVATE_KEY_FILE instead of a token)")
	}
	if worker != nil {
		g.Start("runner", worker.Run)
	}
	srv := newHTTPServer(mux, serveHTTPLimits)
	httpErr := make(chan error, 1)
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			httpErr <- err
		}
	}()
	log.Info("serving", "replica", c.Replica, "listen", ln.Addr().String(), "redis", c.RedisURL != "", "state", st.where, "runner", c.Runner, "lite", c.Work.Lite)
	select {
	case <-ctx.Done():
		log.Info("shutting down", "cause", context.Cause(ctx))
	case err = <-g.Failed():
		err = fmt.Errorf("serve: %w", err)
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
	if left := g.Wait(c.ShutdownWait); len(left) > 0 {
		log.Error("shutdown: loops still running; exiting without them", "loops", left, "waited", c.ShutdownWait.String())
		if err == nil {
			err = fmt.Errorf("serve: shutdown: %s still running after %s", strings.Join(left, ", "), c.ShutdownWait)
		}
	} else if ferr := g.Err(); ferr != nil && err == nil {
		err = fmt.Errorf("serve: %w", ferr)
	}
	log.Info("stopped", "took", time.Since(start).Round(time.Millisecond).String())
	return err
}
