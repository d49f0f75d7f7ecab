// Package clock holds the one way this module waits: for a while, or until its context is
// done, whichever comes first.
package clock

import (
	"context"
	"time"
)

// Sleep waits d or until ctx is done. It returns ctx.Err() when ctx ended the wait (or had
// already ended), nil when d passed. A d of zero or less does not wait.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
