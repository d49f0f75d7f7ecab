package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arenabot/arenabot/bot/hook"
	"github.com/arenabot/arenabot/queue/queuetest"
)

// rebuild replaces e's Bot with one of the same fakes whose Config mod changed, as a
// restart of the bot would.
func (e *env) rebuild(mod func(*Config)) {
	e.t.Helper()
	cfg := Config{WebhookSecret: []byte(secret), Now: e.clock}
	mod(&cfg)
	e.bot = New(cfg, e.bot.gh, e.q, nil)
	e.hook = e.bot.Webhook()
}

// redisInboxStore returns a RedisInbox on a private prefix of a real Redis, and a
// function returning a new RedisInbox on the same server and prefix.
func redisInboxStore(t *testing.T) (func() *RedisInbox, *RedisInbox) {
	t.Helper()
	addr := queuetest.RedisAddr(t)
	rdb := queuetest.NewClient(t, addr)
	prefix := queuetest.Prefix(t, rdb)
	// Each call is a new process's view: a new client on the same server and prefix.
	again := func() *RedisInbox { return NewRedisInbox(queuetest.NewClient(t, addr), prefix) }
	return again, NewRedisInbox(rdb, prefix)
}

func delivery(i int) hook.Delivery {
	return hook.Delivery{ID: fmt.Sprintf("d%d", i), Event: "issue_comment", Payload: fmt.Appendf(nil, `{"n":%d,"s":"\u00e9\"x"}`, i)}
}

func TestMemoryInbox(t *testing.T) {
	testInbox(t, func(*testing.T) Inbox { return NewMemoryInbox(0) })
}

func TestRedisInbox(t *testing.T) {
	testInbox(t, func(t *testing.T) Inbox { _, in := redisInboxStore(t); return in })
}

func pop(t *testing.T, in Inbox) (hook.Delivery, func(context.Context) error) {
	t.Helper()
	d, ack, err := in.Pop(t.Context(), 0)
	if err != nil {
		t.Fatalf("Pop: %v", err)
	}
	return d, ack
}

// testInbox is the behaviour every Inbox shares; newIn returns an empty one.
func testInbox(t *testing.T, newIn func(*testing.T) Inbox) {
	ctx := context.Background()
	t.Run("FIFO", func(t *testing.T) {
		in := newIn(t)
		for i := range 3 {
			if err := in.Push(ctx, delivery(i)); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 3 {
			d, ack := pop(t, in)
			if diff := cmp.Diff(delivery(i), d); diff != "" {
				t.Errorf("Pop %d (-want +got):\n%s", i, diff)
			}
			if err := ack(ctx); err != nil {
				t.Errorf("ack: %v", err)
			}
		}
		if _, _, err := in.Pop(ctx, 0); !errors.Is(err, ErrInboxEmpty) {
			t.Errorf("Pop of empty = %v, want ErrInboxEmpty", err)
		}
	})
	t.Run("BlockTimesOut", func(t *testing.T) {
		in := newIn(t)
		start := time.Now()
		if _, _, err := in.Pop(ctx, 100*time.Millisecond); !errors.Is(err, ErrInboxEmpty) {
			t.Errorf("Pop = %v, want ErrInboxEmpty", err)
		}
		if d := time.Since(start); d < 90*time.Millisecond || d > 5*time.Second {
			t.Errorf("Pop waited %v", d)
		}
	})
	t.Run("BlockWakesOnPush", func(t *testing.T) {
		in := newIn(t)
		got := make(chan hook.Delivery, 1)
		go func() {
			d, _, err := in.Pop(ctx, 5*time.Second)
			if err != nil {
				t.Errorf("Pop: %v", err)
			}
			got <- d
		}()
		time.Sleep(50 * time.Millisecond)
		if err := in.Push(ctx, delivery(1)); err != nil {
			t.Fatal(err)
		}
		select {
		case d := <-got:
			if d.ID != "d1" {
				t.Errorf("Pop = %+v", d)
			}
		case <-time.After(4 * time.Second):
			t.Fatal("Pop did not wake up")
		}
	})
}

func TestMemoryInboxFull(t *testing.T) {
	in := NewMemoryInbox(1)
	if err := in.Push(t.Context(), delivery(1)); err != nil {
		t.Fatal(err)
	}
	if err := in.Push(t.Context(), delivery(2)); !errors.Is(err, ErrInboxFull) {
		t.Errorf("Push beyond capacity = %v, want ErrInboxFull", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	pop(t, in)
	if _, _, err := in.Pop(ctx, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("Pop with cancelled ctx = %v", err)
	}
}

func redisLen(t *testing.T, in *RedisInbox) (int64, int64) {
	t.Helper()
	w, p, err := in.Len(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return w, p
}

func TestRedisInboxAckAndRecover(t *testing.T) {
	again, in := redisInboxStore(t)
	ctx := t.Context()
	for i := range 4 {
		if err := in.Push(ctx, delivery(i)); err != nil {
			t.Fatal(err)
		}
	}
	d0, ack0 := pop(t, in)
	if err := ack0(ctx); err != nil {
		t.Fatal(err)
	}
	d1, _ := pop(t, in) // popped, never acked: the bot dies handling them
	d2, _ := pop(t, in)
	if d0.ID != "d0" || d1.ID != "d1" || d2.ID != "d2" {
		t.Fatalf("popped %s %s %s", d0.ID, d1.ID, d2.ID)
	}
	if w, p := redisLen(t, in); w != 1 || p != 2 {
		t.Fatalf("waiting %d, processing %d; want 1, 2 (the acked one removed)", w, p)
	}

	// Restart: a new Inbox value on the same Redis.
	in = again()
	n, err := in.Recover(ctx)
	if err != nil || n != 2 {
		t.Fatalf("Recover = %d, %v; want 2", n, err)
	}
	var order []string
	for range 3 {
		d, ack := pop(t, in)
		order = append(order, d.ID)
		if d.ID == "d1" {
			if diff := cmp.Diff(delivery(1), d); diff != "" {
				t.Errorf("recovered (-want +got):\n%s", diff)
			}
		}
		if err := ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"d1", "d2", "d3"}; !cmp.Equal(order, want) {
		t.Errorf("order after Recover = %v, want %v (the recovered first, oldest first)", order, want)
	}
	if w, p := redisLen(t, in); w != 0 || p != 0 {
		t.Errorf("waiting %d, processing %d after acks", w, p)
	}
	if n, err := in.Recover(ctx); err != nil || n != 0 {
		t.Errorf("second Recover = %d, %v", n, err)
	}
}

func TestRedisInboxDropsGarbage(t *testing.T) {
	_, in := redisInboxStore(t)
	if err := in.rdb.LPush(t.Context(), in.inboxKey(), "not json").Err(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := in.Pop(t.Context(), 0); err == nil || errors.Is(err, ErrInboxEmpty) {
		t.Errorf("Pop of garbage = %v", err)
	}
	if w, p := redisLen(t, in); w != 0 || p != 0 {
		t.Errorf("garbage kept: waiting %d, processing %d", w, p)
	}
}

// fakeInbox wraps a MemoryInbox; while fail is set, Push returns an error.
type fakeInbox struct {
	*MemoryInbox
	mu     sync.Mutex
	fail   error
	pushed []hook.Delivery
}

func (f *fakeInbox) Push(ctx context.Context, d hook.Delivery) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	f.pushed = append(f.pushed, d)
	return f.MemoryInbox.Push(ctx, d)
}

func (f *fakeInbox) setFail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = err
}

func (f *fakeInbox) pushedIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for _, d := range f.pushed {
		ids = append(ids, d.ID)
	}
	return ids
}

func TestWebhookPushesBeforeAnswering(t *testing.T) {
	e := setup(t)
	in := &fakeInbox{MemoryInbox: NewMemoryInbox(0)}
	e.rebuild(func(c *Config) { c.InboxStore = in })
	body := "/benchmark -f nethttp -t baseline"
	id := e.gh.AddComment(repo, prNum, "bob", body)
	payload := commentPayload(t, id, "bob", "User", body)
	sig := hook.Sign([]byte(secret), payload)

	// No worker runs: the 202 means the delivery is in the inbox already.
	if w := e.deliver("issue_comment", "d1", payload, sig); w.Code != http.StatusAccepted {
		t.Fatalf("delivery: %d %s", w.Code, w.Body)
	}
	if len(in.pushed) != 1 || in.pushed[0].ID != "d1" || in.pushed[0].Event != "issue_comment" || string(in.pushed[0].Payload) != string(payload) {
		t.Fatalf("pushed = %+v", in.pushed)
	}
	if in.Len() != 1 || len(e.jobs()) != 0 {
		t.Fatalf("inbox %d, jobs %d", in.Len(), len(e.jobs()))
	}
	e.run()
	e.bot.inflight.Wait()
	if js := e.jobs(); len(js) != 1 || js[0].SHA != sha1 {
		t.Fatalf("jobs = %+v", js)
	}
}

func TestWebhookPushFailure(t *testing.T) {
	e := setup(t)
	in := &fakeInbox{MemoryInbox: NewMemoryInbox(0)}
	e.rebuild(func(c *Config) { c.InboxStore = in })
	e.run()
	body := "/benchmark -f nethttp -t baseline"
	id := e.gh.AddComment(repo, prNum, "bob", body)
	payload := commentPayload(t, id, "bob", "User", body)
	sig := hook.Sign([]byte(secret), payload)

	in.setFail(errors.New("redis: connection refused"))
	w := e.deliver("issue_comment", "d1", payload, sig)
	if w.Code != http.StatusServiceUnavailable {
		t.Fatalf("Push failed: %d %s, want 503", w.Code, w.Body)
	}
	e.bot.inflight.Wait()
	if calls := e.gh.Calls(); len(calls) != 0 || len(e.jobs()) != 0 {
		t.Fatalf("a refused delivery had effects: %+v", calls)
	}

	// GitHub redelivers the same delivery id: it is not a duplicate, its Push failed.
	in.setFail(nil)
	if w := e.deliver("issue_comment", "d1", payload, sig); w.Code != http.StatusAccepted {
		t.Fatalf("redelivery: %d %s, want 202", w.Code, w.Body)
	}
	e.bot.inflight.Wait()
	if js := e.jobs(); len(js) != 1 || js[0].SHA != sha1 {
		t.Fatalf("jobs = %+v", js)
	}
	// Once accepted, a replay is a duplicate again.
	w = e.deliver("issue_comment", "d1", payload, sig)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "duplicate") {
		t.Errorf("replay: %d %s", w.Code, w.Body)
	}
	if got := in.pushedIDs(); !cmp.Equal(got, []string{"d1"}) {
		t.Errorf("pushed = %v", got)
	}
}

func TestWebhookMemoryInboxFull(t *testing.T) {
	e := setup(t)
	e.rebuild(func(c *Config) { c.Inbox = 1 }) // no worker runs: the second does not fit
	body := "/benchmark -f nethttp -t baseline"
	for i, want := range []int{http.StatusAccepted, http.StatusServiceUnavailable} {
		p := commentPayload(t, int64(10+i), "bob", "User", body)
		if w := e.deliver("issue_comment", fmt.Sprintf("f%d", i), p, hook.Sign([]byte(secret), p)); w.Code != want {
			t.Errorf("delivery %d: %d %s, want %d", i, w.Code, w.Body, want)
		}
	}
}

// TestWebhookRedisInbox: webhook → Redis inbox → worker → job, and the Redis lists are
// empty afterwards.
func TestWebhookRedisInbox(t *testing.T) {
	_, in := redisInboxStore(t)
	e := setup(t)
	e.rebuild(func(c *Config) { c.InboxStore = in })
	e.run()
	body := "/benchmark -f nethttp -t baseline"
	id := e.gh.AddComment(repo, prNum, "bob", body)
	payload := commentPayload(t, id, "bob", "User", body)
	if w := e.deliver("issue_comment", "d1", payload, hook.Sign([]byte(secret), payload)); w.Code != http.StatusAccepted {
		t.Fatalf("delivery: %d %s", w.Code, w.Body)
	}
	e.bot.inflight.Wait()
	if js := e.jobs(); len(js) != 1 || js[0].SHA != sha1 || js[0].Requester != "bob" {
		t.Fatalf("jobs = %+v", js)
	}
	if w, p := redisLen(t, in); w != 0 || p != 0 {
		t.Errorf("waiting %d, processing %d after handling", w, p)
	}
}

// TestRedisInboxRestart: the bot accepts a delivery and dies before handling it (once
// before popping it, once after): the next bot on the same Redis handles both.
func TestRedisInboxRestart(t *testing.T) {
	again, in := redisInboxStore(t)
	e := setup(t)
	e.rebuild(func(c *Config) { c.InboxStore = in }) // not running
	body := "/benchmark -f nethttp -t baseline"
	for i, d := range []string{"d1", "d2"} {
		pr := prNum
		id := e.gh.AddComment(repo, pr, "bob", body)
		payload := commentPayload(t, id, "bob", "User", body)
		if w := e.deliver("issue_comment", d, payload, hook.Sign([]byte(secret), payload)); w.Code != http.StatusAccepted {
			t.Fatalf("delivery %d: %d %s", i, w.Code, w.Body)
		}
	}
	// The first is popped by a worker that dies before its ack.
	if d, _ := pop(t, in); d.ID != "d1" {
		t.Fatalf("popped %s", d.ID)
	}
	if w, p := redisLen(t, in); w != 1 || p != 1 {
		t.Fatalf("waiting %d, processing %d", w, p)
	}

	// Restart: a new Bot and Inbox value on the same Redis; Run recovers.
	in = again()
	e.rebuild(func(c *Config) { c.InboxStore = in })
	e.run()
	deadline := time.Now().Add(10 * time.Second)
	for {
		w, p := redisLen(t, in)
		if len(e.jobs()) == 2 && w == 0 && p == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs %+v, waiting %d, processing %d", e.jobs(), w, p)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, j := range e.jobs() {
		if j.SHA != sha1 || j.Requester != "bob" {
			t.Errorf("job %+v", j)
		}
	}
}
