package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/hook"
)

// HookDeliveries is what the recovery of missed webhooks needs of GitHub: the App's
// recent deliveries and their payloads (*ghapi.Client with App auth).
type HookDeliveries interface {
	HookDeliveries(ctx context.Context, since time.Time, limit int) ([]ghapi.HookDelivery, error)
	HookPayload(ctx context.Context, id int64) (event string, payload []byte, err error)
}

var _ HookDeliveries = (*ghapi.Client)(nil)

// Recovery takes the webhook deliveries serve missed from the App's delivery list into the
// intake (Recover, Run).
type Recovery struct {
	in *Intake
	gh HookDeliveries
}

// NewRecovery returns the recovery of missed webhooks into in, reading them from gh.
func NewRecovery(in *Intake, gh HookDeliveries) *Recovery { return &Recovery{in: in, gh: gh} }

// recoverLimit bounds how many deliveries one recovery pass looks at.
const recoverLimit = 2000

// defaultDeliveryTTL is the queue's default memory of delivery ids (queue.SeenDelivery).
const defaultDeliveryTTL = 24 * time.Hour

// Recover accepts the webhook deliveries of the last window that the bot never stored:
// GitHub does not send a failed delivery again by itself, so a comment made while serve
// was down or unreachable would be lost. It lists the App's deliveries, skips those that
// were answered 2xx (the webhook stored them, or ignores their event) and those of events
// the bot does not act on, reads each other one's payload and passes it through the same
// de-duplication and inbox as the webhook (one that came in meanwhile counts once). The
// window is capped at the time delivery ids are remembered, so nothing is taken twice. It
// returns how many deliveries it accepted.
func (r *Recovery) Recover(ctx context.Context, window time.Duration) (int, error) {
	in, gh := r.in, r.gh
	ttl := in.cfg.DeliveryTTL
	if ttl <= 0 {
		ttl = defaultDeliveryTTL
	}
	window = min(window, ttl)
	ds, err := gh.HookDeliveries(ctx, in.cfg.Now().Add(-window), recoverLimit)
	if err != nil {
		return 0, fmt.Errorf("recover missed webhooks: %w", err)
	}
	answered := map[string]bool{} // a GUID delivered again later with success is done
	for _, d := range ds {
		if d.StatusCode >= 200 && d.StatusCode < 300 {
			answered[d.GUID] = true
		}
	}
	var n int
	var errs []error
	for _, d := range ds {
		if answered[d.GUID] || d.GUID == "" || (d.Event != "issue_comment" && d.Event != "pull_request") {
			continue
		}
		answered[d.GUID] = true // once per GUID, however many failed attempts
		accepted, err := r.recoverOne(ctx, d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if accepted {
			n++
			in.log.Info("missed webhook recovered", "delivery", d.GUID, "event", d.Event, "action", d.Action, "delivered_at", d.DeliveredAt, "status_code", d.StatusCode)
		}
	}
	return n, errors.Join(errs...)
}

// recoverOne reads one missed delivery's payload and accepts it; false when it had been
// stored after all.
func (r *Recovery) recoverOne(ctx context.Context, d ghapi.HookDelivery) (bool, error) {
	event, payload, err := r.gh.HookPayload(ctx, d.ID)
	if err != nil {
		return false, fmt.Errorf("delivery %s: %w", d.GUID, err)
	}
	hd := hook.Delivery{ID: d.GUID, Event: event, Payload: payload}
	if _, err := hook.Decode(hd); err != nil {
		return false, fmt.Errorf("delivery %s: %w", d.GUID, err)
	}
	switch code, msg := r.in.accept(ctx, hd); code {
	case http.StatusAccepted:
		return true, nil
	case http.StatusOK:
		return false, nil
	default:
		return false, fmt.Errorf("delivery %s: %s", d.GUID, msg)
	}
}

// Run runs Recover at once and then every interval until ctx is done, logging what
// it recovers and its errors (the next pass tries again). It returns nil when ctx is done.
func (r *Recovery) Run(ctx context.Context, interval, window time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := r.Recover(ctx, window); err != nil && ctx.Err() == nil {
			r.in.log.Warn("recover missed webhooks", "recovered", n, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
