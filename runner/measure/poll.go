package measure

import (
	"context"
	"errors"
	"time"

	"github.com/arenabot/arenabot/internal/clock"
)

// A pace is how a readiness poll waits between two tries: first after the first, doubling
// up to most.
type pace struct {
	first, most time.Duration
}

// halt marks an error of a try that ends the poll at once: what it waits for cannot come
// any more (its container exited, its health says unhealthy).
type halt struct{ err error }

func (h halt) Error() string { return h.err.Error() }

// poll is the one readiness poll of the servers, the stacks and the sidecars. It calls try
// until try returns nil (ready), then returns nil. Any other error of try is this try's
// "not ready yet": poll waits (pc) and tries again, and once deadline has passed it returns
// expired(last), last being that error. A halt ends the poll with the error it holds. A ctx
// that has ended ends it with ctx's error, before a halt or the deadline is looked at.
func poll(ctx context.Context, deadline time.Time, pc pace, try func() error, expired func(last error) error) error {
	wait := pc.first
	for {
		err := try()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if h, ok := errors.AsType[halt](err); ok {
			return h.err
		}
		if time.Now().After(deadline) {
			return expired(err)
		}
		if err := clock.Sleep(ctx, wait); err != nil {
			return err
		}
		wait = min(wait*2, pc.most)
	}
}
