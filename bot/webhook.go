package bot

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/arenabot/arenabot/bot/hook"
)

// Webhook returns the handler of POST /webhook. It verifies the delivery (a failure
// answers hook.Status's code and has no side effect), decodes it, answers ping with 200
// and events the bot does not act on with 202, de-duplicates the rest by delivery id
// through the queue (a replay answers 200 "duplicate" and does nothing), and answers 202
// before processing: events go to a bounded in-memory inbox that Run's workers drain.
// When the inbox is full the answer is 503 and the delivery is not recorded, so GitHub
// (or a manual redelivery) may send it again.
//
// The inbox is not durable: an event accepted just before a restart is lost. A durable
// inbox (a Redis list next to the queue) is the next step.
func (b *Bot) Webhook() http.Handler { return http.HandlerFunc(b.serveWebhook) }

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
	switch ev.(type) {
	case hook.Ping:
		_, _ = fmt.Fprintln(w, "pong")
		return
	case hook.Comment, hook.PullRequest:
	default:
		w.WriteHeader(http.StatusAccepted)
		_, _ = fmt.Fprintln(w, "ignored")
		return
	}
	select {
	case b.slots <- struct{}{}:
	default:
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	first, err := b.q.SeenDelivery(r.Context(), d.ID, b.cfg.DeliveryTTL)
	if err != nil {
		<-b.slots
		b.log.Error("webhook dedupe", "delivery", d.ID, "err", err)
		http.Error(w, "queue unavailable", http.StatusServiceUnavailable)
		return
	}
	if !first {
		<-b.slots
		_, _ = fmt.Fprintln(w, "duplicate")
		return
	}
	b.inflight.Add(1)
	b.inbox <- ev // never blocks: a slot was taken
	w.WriteHeader(http.StatusAccepted)
	_, _ = fmt.Fprintln(w, "accepted")
}

// Run processes webhook events with Config.Workers workers and polls pending requests
// every Config.ApprovalPoll until ctx is done. It returns ctx's error after the workers
// stopped.
func (b *Bot) Run(ctx context.Context) error {
	done := make(chan struct{})
	for range b.cfg.Workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for {
				select {
				case <-ctx.Done():
					return
				case ev := <-b.inbox:
					b.process(ctx, ev)
				}
			}
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

// process handles one event from the inbox.
func (b *Bot) process(ctx context.Context, ev any) {
	defer b.inflight.Done()
	defer func() { <-b.slots }()
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
		b.log.Error("event", "err", err)
	}
}
