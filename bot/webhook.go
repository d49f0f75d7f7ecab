package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/arenabot/arenabot/bot/hook"
)

// Webhook returns the handler of POST /webhook. It verifies the delivery (a failure
// answers hook.Status's code and has no side effect), decodes it, answers ping with 200
// and events the bot does not act on with 202, de-duplicates the rest by delivery id
// through the queue (a replay answers 200 "duplicate" and does nothing), and Pushes the
// delivery to the Inbox before it answers 202; Run's workers pop and handle it. When
// Push fails (a full in-memory inbox, Redis unavailable) the answer is 503 so GitHub (or
// a manual redelivery) may send it again, and the id is forgotten in the queue, so the
// redelivery is taken as new rather than answered "duplicate".
func (b *Bot) Webhook() http.Handler { return http.HandlerFunc(b.serveWebhook) }

// pushTimeout bounds Push; it does not follow the request's context, so a client that
// hangs up cannot leave a delivery half-recorded.
const pushTimeout = 10 * time.Second

func (b *Bot) serveWebhook(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	v := hook.Verifier{Secret: b.cfg.WebhookSecret, MaxBody: b.cfg.MaxBody}
	d, err := v.Verify(r)
	if err != nil {
		b.log.Warn("webhook refused", "err", err)
		http.Error(w, http.StatusText(hook.Status(err)), hook.Status(err))
		return
	}
	ev, err := hook.Decode(d)
	if err != nil {
		b.log.Warn("webhook malformed", "delivery", d.ID, "event", d.Event, "err", err)
		http.Error(w, http.StatusText(hook.Status(err)), hook.Status(err))
		return
	}
	switch ev := ev.(type) {
	case hook.Ping:
		_, _ = fmt.Fprintln(w, "pong")
		return
	case hook.Comment, hook.PullRequest:
	case hook.Installation:
		// Installation tokens are fetched per call, so nothing needs to change here; the
		// operator sees which accounts installed or removed the App.
		b.log.Info("installation", "delivery", d.ID, "action", ev.Action, "installation", ev.ID, "account", ev.Account, "repos", len(ev.Repos))
		w.WriteHeader(http.StatusAccepted)
		_, _ = fmt.Fprintln(w, "noted")
		return
	default:
		w.WriteHeader(http.StatusAccepted)
		_, _ = fmt.Fprintln(w, "ignored")
		return
	}
	first, err := b.q.SeenDelivery(r.Context(), d.ID, b.cfg.DeliveryTTL)
	if err != nil {
		b.log.Error("webhook dedupe", "delivery", d.ID, "err", err)
		http.Error(w, "queue unavailable", http.StatusServiceUnavailable)
		return
	}
	if !first {
		_, _ = fmt.Fprintln(w, "duplicate")
		return
	}
	b.track(d.ID)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), pushTimeout)
	err = b.inbox.Push(ctx, d)
	cancel()
	if err != nil {
		b.untrack(d.ID)
		// Not accepted: forget the id, so GitHub's redelivery is taken as new.
		fctx, fcancel := context.WithTimeout(context.WithoutCancel(r.Context()), pushTimeout)
		if ferr := b.q.ForgetDelivery(fctx, d.ID); ferr != nil {
			b.log.Error("webhook forget delivery", "delivery", d.ID, "err", ferr)
		}
		fcancel()
		b.log.Error("webhook inbox", "delivery", d.ID, "err", err)
		msg := "inbox unavailable"
		if errors.Is(err, ErrInboxFull) {
			msg = "busy"
		}
		http.Error(w, msg, http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusAccepted)
	_, _ = fmt.Fprintln(w, "accepted")
}

// track counts a delivery about to be pushed in inflight.
func (b *Bot) track(id string) {
	b.trackMu.Lock()
	defer b.trackMu.Unlock()
	b.tracked[id]++
	b.inflight.Add(1)
}

// untrack ends what track started; a delivery this Bot did not push is ignored.
func (b *Bot) untrack(id string) {
	b.trackMu.Lock()
	defer b.trackMu.Unlock()
	n, ok := b.tracked[id]
	if !ok {
		return
	}
	if n <= 1 {
		delete(b.tracked, id)
	} else {
		b.tracked[id] = n - 1
	}
	b.inflight.Done()
}

// Timing of Run's workers.
const (
	// popBlock is how long a worker waits in Inbox.Pop; a RedisInbox worker notices
	// the end of Run's context only after it.
	popBlock = time.Second
	// popRetry is the pause after a failed Pop (Redis unavailable).
	popRetry = time.Second
	// ackTimeout bounds the ack of a handled delivery.
	ackTimeout = 10 * time.Second
)

// Run processes webhook deliveries with Config.Workers workers and polls pending requests
// every Config.ApprovalPoll until ctx is done. It returns ctx's error after the workers
// stopped. When the Inbox is a Recoverer, Run first puts back the deliveries an earlier
// run popped and did not finish, so a bot killed mid-event handles them again.
func (b *Bot) Run(ctx context.Context) error {
	if rec, ok := b.inbox.(Recoverer); ok {
		n, err := rec.Recover(ctx)
		if err != nil {
			b.log.Error("inbox recover", "err", err)
		} else if n > 0 {
			b.log.Info("inbox recover", "deliveries", n)
		}
	}
	done := make(chan struct{})
	for range b.cfg.Workers {
		go func() {
			defer func() { done <- struct{}{} }()
			b.work(ctx)
		}()
	}
	t := time.NewTicker(b.cfg.ApprovalPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			for range b.cfg.Workers {
				<-done
			}
			return ctx.Err()
		case <-t.C:
			if err := b.PollOnce(ctx); err != nil {
				b.log.Error("approval poll", "err", err)
			}
		}
	}
}

// work is one worker: it pops and handles deliveries until ctx is done.
func (b *Bot) work(ctx context.Context) {
	for ctx.Err() == nil {
		d, ack, err := b.inbox.Pop(ctx, popBlock)
		switch {
		case err == nil:
			b.handle(ctx, d, ack)
		case errors.Is(err, ErrInboxEmpty) || ctx.Err() != nil:
		default:
			b.log.Error("inbox pop", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(popRetry):
			}
		}
	}
}

// handle processes one delivery and acks it. A delivery whose handling was cut short by
// the end of Run's context is not acked: Recover gives it to the next run.
func (b *Bot) handle(ctx context.Context, d hook.Delivery, ack func(context.Context) error) {
	defer b.untrack(d.ID)
	if ev, err := hook.Decode(d); err != nil {
		b.log.Error("inbox: undecodable delivery dropped", "delivery", d.ID, "event", d.Event, "err", err)
	} else {
		b.process(ctx, d.ID, ev)
		if ctx.Err() != nil {
			return
		}
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	if err := ack(actx); err != nil {
		// Recover hands it out again; the handlers are idempotent.
		b.log.Error("inbox ack", "delivery", d.ID, "err", err)
	}
}

// process handles one event.
func (b *Bot) process(ctx context.Context, delivery string, ev any) {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.EventTimeout)
	defer cancel()
	var err error
	switch e := ev.(type) {
	case hook.Comment:
		err = b.HandleComment(ctx, e)
	case hook.PullRequest:
		err = b.HandlePullRequest(ctx, e)
	}
	if err != nil {
		b.log.Error("event", "delivery", delivery, "err", err)
	}
}
