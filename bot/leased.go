package bot

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/arenabot/arenabot/internal/clock"
	"github.com/arenabot/arenabot/queue"
)

// Leased returns loop run only while holder holds the lease name (queue.Leader): every
// replica of serve starts it and one runs it at a time. It tries to take the lease every
// ttl/3. Holding it, it runs loop under a context of its own and extends the lease every
// ttl/3; when an extension is refused or fails, it stops loop and waits for it before it
// tries again, so loop has stopped before the lease can pass to another replica (ttl after
// the last extension). When ctx ends it stops loop and resigns, and another replica takes
// the lease at its next try. An error loop returns by itself is returned, the lease
// resigned first.
func Leased(l queue.Leader, name, holder string, ttl time.Duration, log *slog.Logger, loop func(context.Context) error) func(context.Context) error {
	every := max(ttl/3, time.Millisecond)
	log = log.With("lease", name, "holder", holder)
	lead := func(ctx context.Context) bool {
		cctx, cancel := context.WithTimeout(ctx, every)
		defer cancel()
		ok, err := l.Lead(cctx, name, holder, ttl)
		if err != nil && ctx.Err() == nil {
			log.Warn("lease: could not reach the queue", "err", err)
		}
		return ok && err == nil
	}
	resign := func(ctx context.Context) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), every)
		defer cancel()
		if err := l.Resign(rctx, name, holder); err != nil {
			log.Warn("lease: resign", "err", err)
		}
	}
	return func(ctx context.Context) error {
		for {
			if lead(ctx) {
				log.Info("lease taken: this replica runs the loop")
				lost, err := run(ctx, every, lead, loop)
				if !lost {
					resign(ctx)
					return err
				}
				log.Warn("lease lost: the loop stopped; another replica may run it now")
			}
			if err := clock.Sleep(ctx, every); err != nil {
				return err
			}
		}
	}
}

// run runs loop while lead keeps answering true, every tick. It returns lost when it stopped
// loop because lead did not, and loop's error.
func run(ctx context.Context, every time.Duration, lead func(context.Context) bool, loop func(context.Context) error) (lost bool, err error) {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- loop(lctx) }()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			return false, err
		case <-t.C:
			if ctx.Err() == nil && !lead(ctx) {
				cancel()
				if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
					return false, err
				}
				return true, nil
			}
		}
	}
}
