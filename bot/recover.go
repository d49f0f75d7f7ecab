package bot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
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
//
// GitHub lists deliveries newest first; Recover accepts them in the order they were sent
// (each GUID's first attempt: its delivered_at, then its id, which GitHub hands out in
// increasing order), and the comments about one pull request in the order they were
// written (their ids), so a /benchmark-approve or /benchmark-cancel comes after the request
// it answers. The inbox then handles one pull request's deliveries in that order.
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
	var errs []error
	missed := sentOrder(ds)
	read := make([]missedDelivery, 0, len(missed))
	for _, m := range missed {
		if err := r.read(ctx, &m); err != nil {
			errs = append(errs, err)
			continue
		}
		read = append(read, m)
	}
	writtenOrder(read)
	var n int
	for _, m := range read {
		switch code, msg := in.accept(ctx, m.hd); code {
		case http.StatusAccepted:
			n++
			in.log.Info("missed webhook recovered", "delivery", m.d.GUID, "event", m.d.Event, "action", m.d.Action, "delivered_at", m.first, "status_code", m.d.StatusCode)
		case http.StatusOK: // stored after all
		default:
			errs = append(errs, fmt.Errorf("delivery %s: %s", m.d.GUID, msg))
		}
	}
	return n, errors.Join(errs...)
}

// A missedDelivery is one GUID that was never answered 2xx: its latest attempt, when it was
// first sent, and, once read, its payload and the pull request it is about.
type missedDelivery struct {
	d       ghapi.HookDelivery // the latest attempt
	first   time.Time          // the first attempt's delivered_at
	firstID int64              // the first attempt's id
	hd      hook.Delivery
	key     string // prKey of the event
	comment int64  // the comment's id; 0 for another event
}

// sentOrder returns the deliveries of ds (newest first, as GitHub lists them) that were
// never answered 2xx and are of events the bot acts on, once per GUID, oldest first by
// their first attempt.
func sentOrder(ds []ghapi.HookDelivery) []missedDelivery {
	answered := map[string]bool{} // a GUID delivered again later with success is done
	for _, d := range ds {
		if d.StatusCode >= 200 && d.StatusCode < 300 {
			answered[d.GUID] = true
		}
	}
	byGUID := map[string]int{}
	var out []missedDelivery
	for _, d := range ds {
		if answered[d.GUID] || d.GUID == "" || (d.Event != "issue_comment" && d.Event != "pull_request") {
			continue
		}
		i, seen := byGUID[d.GUID]
		if !seen {
			byGUID[d.GUID] = len(out)
			out = append(out, missedDelivery{d: d, first: d.DeliveredAt, firstID: d.ID})
			continue
		}
		if m := &out[i]; sentBefore(d.DeliveredAt, d.ID, m.first, m.firstID) {
			m.first, m.firstID = d.DeliveredAt, d.ID
		}
	}
	slices.SortStableFunc(out, func(a, b missedDelivery) int {
		switch {
		case sentBefore(a.first, a.firstID, b.first, b.firstID):
			return -1
		case sentBefore(b.first, b.firstID, a.first, a.firstID):
			return 1
		}
		return 0
	})
	return out
}

// sentBefore reports whether a delivery sent at t with id came before one sent at u with
// id2: delivered_at counts in whole seconds, so ids order those of the same second.
func sentBefore(t time.Time, id int64, u time.Time, id2 int64) bool {
	if !t.Equal(u) {
		return t.Before(u)
	}
	return id < id2
}

// writtenOrder puts the comments about each pull request in the order they were written
// (comment ids grow with time), keeping the places the pull request's comments hold in
// ms: two comments delivered in the same second, or a delivery GitHub was slow to send,
// are applied as their authors wrote them. Other events keep their place.
func writtenOrder(ms []missedDelivery) {
	places := map[string][]int{}
	for i, m := range ms {
		if m.comment != 0 && m.key != "" {
			places[m.key] = append(places[m.key], i)
		}
	}
	for _, idx := range places {
		group := make([]missedDelivery, len(idx))
		for k, i := range idx {
			group[k] = ms[i]
		}
		slices.SortStableFunc(group, func(a, b missedDelivery) int { return cmp.Compare(a.comment, b.comment) })
		for k, i := range idx {
			ms[i] = group[k]
		}
	}
}

// read reads m's payload and decodes it.
func (r *Recovery) read(ctx context.Context, m *missedDelivery) error {
	event, payload, err := r.gh.HookPayload(ctx, m.d.ID)
	if err != nil {
		return fmt.Errorf("delivery %s: %w", m.d.GUID, err)
	}
	m.hd = hook.Delivery{ID: m.d.GUID, Event: event, Payload: payload}
	ev, err := hook.Decode(m.hd)
	if err != nil {
		return fmt.Errorf("delivery %s: %w", m.d.GUID, err)
	}
	m.key = prKey(ev)
	if c, ok := ev.(hook.Comment); ok {
		m.comment = c.CommentID
	}
	return nil
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
