package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/arenabot/arenabot/bot/command"
	"github.com/arenabot/arenabot/bot/hook"

	"github.com/arenabot/arenabot/internal/clock"
)

// Webhook returns the handler of POST /webhook. It verifies the delivery (a failure
// answers hook.Status's code and has no side effect), decodes it, answers ping with 200
// and events the bot does not act on (among them any from a repository outside
// Config.Repos) with 202 (one outside webhookEvents before its body is read),
// de-duplicates the rest by delivery id through the queue (a replay answers 200
// "duplicate" and does nothing), and Pushes the delivery to the Inbox before it answers
// 202; Run's workers pop and handle it. When Push fails (a full in-memory inbox, Redis
// unavailable) the answer is 503 so GitHub (or a manual redelivery) may send it again,
// and the id is forgotten in the queue, so the redelivery is taken as new rather than
// answered "duplicate". The body's deadline is the server's (serve's ReadTimeout).
func (in *Intake) Webhook() http.Handler { return http.HandlerFunc(in.serveWebhook) }

// ignoredForeign answers a delivery from a repository the bot does not serve
// (Config.Repos): nothing is recorded, so it has no effect at all.
const ignoredForeign = "ignored: repository not served"

// webhookEvents are the events the switch in serveWebhook acts on; a delivery of any other
// is answered 202 "ignored" before its body is read (hook.Verifier.Events).
var webhookEvents = []string{"issue_comment", "pull_request", "ping", "installation"}

// pushTimeout bounds Push; it does not follow the request's context, so a client that
// hangs up cannot leave a delivery half-recorded.
const pushTimeout = 10 * time.Second

func (in *Intake) serveWebhook(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	v := hook.Verifier{Secret: in.cfg.WebhookSecret, MaxBody: in.cfg.MaxBody, Events: webhookEvents}
	d, err := v.Verify(r)
	if errors.Is(err, hook.ErrIgnored) {
		w.WriteHeader(http.StatusAccepted)
		_, _ = fmt.Fprintln(w, "ignored")
		return
	}
	if err != nil {
		in.log.Warn("webhook refused", "err", err)
		http.Error(w, http.StatusText(hook.Status(err)), hook.Status(err))
		return
	}
	ev, err := hook.Decode(d)
	if err != nil {
		in.log.Warn("webhook malformed", "delivery", d.ID, "event", d.Event, "err", err)
		http.Error(w, http.StatusText(hook.Status(err)), hook.Status(err))
		return
	}
	switch ev := ev.(type) {
	case hook.Ping:
		_, _ = fmt.Fprintln(w, "pong")
		return
	case hook.Comment:
		if !in.mayAct(ev) {
			// Most comments are conversation: answered before any durable write, so a busy
			// repository's chatter costs no disk commit (the embedded store syncs each).
			w.WriteHeader(http.StatusAccepted)
			_, _ = fmt.Fprintln(w, "ignored")
			return
		}
		if in.foreign(d.ID, d.Event, ev.Repo) {
			w.WriteHeader(http.StatusAccepted)
			_, _ = fmt.Fprintln(w, ignoredForeign)
			return
		}
	case hook.PullRequest:
		if in.foreign(d.ID, d.Event, ev.Repo) {
			w.WriteHeader(http.StatusAccepted)
			_, _ = fmt.Fprintln(w, ignoredForeign)
			return
		}
	case hook.Installation:
		// Installation tokens are fetched per call, so nothing needs to change here; the
		// operator sees which accounts installed or removed the App.
		in.log.Info("installation", "delivery", d.ID, "action", ev.Action, "installation", ev.ID, "account", ev.Account, "repos", len(ev.Repos))
		w.WriteHeader(http.StatusAccepted)
		_, _ = fmt.Fprintln(w, "noted")
		return
	default:
		w.WriteHeader(http.StatusAccepted)
		_, _ = fmt.Fprintln(w, "ignored")
		return
	}
	code, msg := in.accept(r.Context(), d)
	if code >= http.StatusBadRequest {
		http.Error(w, msg, code)
		return
	}
	w.WriteHeader(code)
	_, _ = fmt.Fprintln(w, msg)
}

// accept takes a verified delivery of an event the bot acts on: it de-duplicates it by
// delivery id through the queue (a replay answers 200 "duplicate" and does nothing) and
// Pushes it to the Inbox (202 "accepted"). When Push fails the id is forgotten in the queue,
// so a redelivery is taken as new, and the answer is 503. The webhook and the recovery of
// missed deliveries both come through here.
func (in *Intake) accept(ctx context.Context, d hook.Delivery) (int, string) {
	first, err := in.q.SeenDelivery(ctx, d.ID, in.cfg.DeliveryTTL)
	if err != nil {
		in.log.Error("webhook dedupe", "delivery", d.ID, "err", err)
		return http.StatusServiceUnavailable, "queue unavailable"
	}
	if !first {
		return http.StatusOK, "duplicate"
	}
	in.inflight.track(d.ID)
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pushTimeout)
	err = in.inbox.Push(pctx, d)
	cancel()
	if err != nil {
		in.inflight.untrack(d.ID)
		// Not accepted: forget the id, so GitHub's redelivery is taken as new.
		fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), pushTimeout)
		if ferr := in.q.ForgetDelivery(fctx, d.ID); ferr != nil {
			in.log.Error("webhook forget delivery", "delivery", d.ID, "err", ferr)
		}
		fcancel()
		in.log.Error("webhook inbox", "delivery", d.ID, "err", err)
		if errors.Is(err, ErrInboxFull) {
			return http.StatusServiceUnavailable, "busy"
		}
		return http.StatusServiceUnavailable, "inbox unavailable"
	}
	return http.StatusAccepted, "accepted"
}

// mayAct reports whether HandleComment could do anything with c: a new comment on a pull
// request, by a person, holding a command line. The rest are ignored there too.
func (in *Intake) mayAct(c hook.Comment) bool {
	if c.Action != "created" || !c.IsPR || c.FromBot() || in.isBot(c.Author) {
		return false
	}
	_, found, _ := command.Parse(c.Body)
	return found
}

// inflight counts the deliveries pushed and not handled yet; ids holds their ids, so a
// delivery recovered from an earlier run, which was never added, is not subtracted.
type inflight struct {
	sync.WaitGroup
	mu  sync.Mutex
	ids map[string]int
}

// track counts a delivery about to be pushed.
func (f *inflight) track(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids[id]++
	f.Add(1)
}

// untrack ends what track started; a delivery this Intake did not push is ignored.
func (f *inflight) untrack(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.ids[id]
	if !ok {
		return
	}
	if n <= 1 {
		delete(f.ids, id)
	} else {
		f.ids[id] = n - 1
	}
	f.Done()
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

// Run processes webhook deliveries with Config.Workers workers until ctx is done, and
// returns ctx's error after the workers stopped. When the Inbox is a Recoverer, Run first
// puts back the deliveries an earlier run popped and did not finish, so a bot killed
// mid-event handles them again. Those are handled after Config.RecoverGrace: the earlier
// run may have sent a reply whose answer it never read (killed, or cancelled while GitHub
// was slow), and GitHub may post it after the handler has looked for it and found none;
// the reply would then be posted twice (found by the chaos test: a cancel's reply sent by
// a serve killed during a slow answer landed 0.8 s after the next serve had looked).
func (in *Intake) Run(ctx context.Context) error {
	if rec, ok := in.inbox.(Recoverer); ok {
		n, err := rec.Recover(ctx)
		if err != nil {
			in.log.Error("inbox recover", "err", err)
		} else if n > 0 {
			in.log.Info("inbox recover", "deliveries", n, "handled_after", in.cfg.RecoverGrace)
			if in.cfg.RecoverGrace > 0 {
				in.recovering.Store(int64(n))
				err := clock.Sleep(ctx, in.cfg.RecoverGrace)
				in.recovering.Store(0)
				if err != nil {
					return ctx.Err()
				}
			}
		}
	}
	var wg sync.WaitGroup
	for range in.cfg.Workers {
		wg.Go(func() { in.work(ctx) })
	}
	wg.Wait()
	return ctx.Err()
}

// work is one worker: it pops and handles deliveries until ctx is done. Deliveries about
// one pull request are handled one at a time, in the order they were popped (lanes): a
// delivery for a pull request another worker is handling is left in its lane.
func (in *Intake) work(ctx context.Context) {
	for ctx.Err() == nil {
		d, ack, key, claimed, err := in.pop(ctx)
		switch {
		case err == nil && !claimed:
			// In the lane of the worker handling key.
		case err == nil:
			in.handle(ctx, d, ack)
			for key != "" {
				p, ok := in.lanes.next(key)
				if !ok {
					break
				}
				if ctx.Err() != nil {
					in.inflight.untrack(p.d.ID) // not acked: the next run's Recover gives it back, in order
					continue
				}
				in.handle(ctx, p.d, p.ack)
			}
		case errors.Is(err, ErrInboxEmpty) || ctx.Err() != nil:
		default:
			in.log.Error("inbox pop", "err", err)
			_ = clock.Sleep(ctx, popRetry) // a cancelled ctx ends the loop
		}
	}
}

// pop takes the next delivery and claims its pull request's lane: claimed is false when
// another worker handles that pull request and the delivery was left in its lane. key is
// the lane's key, "" for a delivery about no pull request.
func (in *Intake) pop(ctx context.Context) (d hook.Delivery, ack func(context.Context) error, key string, claimed bool, err error) {
	in.popMu.Lock()
	defer in.popMu.Unlock()
	if err := ctx.Err(); err != nil {
		return d, nil, "", false, err
	}
	d, ack, err = in.inbox.Pop(ctx, popBlock)
	if err != nil {
		return d, nil, "", false, err
	}
	if ev, derr := hook.Decode(d); derr == nil {
		key = prKey(ev)
	}
	if key == "" {
		return d, ack, "", true, nil
	}
	return d, ack, key, in.lanes.enter(key, popped{d, ack}), nil
}

// handle processes one delivery and acks it. A delivery whose handling was cut short by
// the end of Run's context is not acked: Recover gives it to the next run.
func (in *Intake) handle(ctx context.Context, d hook.Delivery, ack func(context.Context) error) {
	defer in.inflight.untrack(d.ID)
	if ev, err := hook.Decode(d); err != nil {
		in.log.Error("inbox: undecodable delivery dropped", "delivery", d.ID, "event", d.Event, "err", err)
	} else {
		in.process(ctx, d.ID, ev)
		if ctx.Err() != nil {
			return
		}
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	if err := ack(actx); err != nil {
		// Recover hands it out again; the handlers are idempotent.
		in.log.Error("inbox ack", "delivery", d.ID, "err", err)
	}
}

// process handles one event.
func (in *Intake) process(ctx context.Context, delivery string, ev any) {
	ctx, cancel := context.WithTimeout(ctx, in.cfg.EventTimeout)
	defer cancel()
	var err error
	for attempt := 1; ; attempt++ {
		switch e := ev.(type) {
		case hook.Comment:
			err = in.HandleComment(ctx, e)
		case hook.PullRequest:
			err = in.HandlePullRequest(ctx, e)
		}
		if err == nil || attempt == handleAttempts || ctx.Err() != nil {
			break
		}
		// The handlers are idempotent: a GitHub or queue blip is retried here rather
		// than answered.
		in.log.Warn("event failed, retrying", "delivery", delivery, "attempt", attempt, "err", err)
		if clock.Sleep(ctx, handleRetry<<(attempt-1)) != nil {
			break
		}
	}
	if err == nil {
		return
	}
	in.log.Error("event", "delivery", delivery, "err", err)
	if fe, ok := errors.AsType[*failure](err); ok {
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
		defer rcancel()
		in.failReply(rctx, fe.comment, fe.line, fe.problem)
	}
}

// handleAttempts is how often a delivery whose handling failed is tried.
const handleAttempts = 4

// handleRetry is the first wait between two attempts, doubled after each; a variable so
// tests need not wait seconds.
var handleRetry = time.Second

// failure is a handler's error that, should retrying not mend it, is answered with a reply
// naming problem.
type failure struct {
	comment hook.Comment
	line    string
	problem string
	err     error
}

func (f *failure) Error() string { return f.problem + ": " + f.err.Error() }
func (f *failure) Unwrap() error { return f.err }
