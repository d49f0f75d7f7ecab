package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.etcd.io/bbolt"

	"github.com/arenabot/arenabot/bot/hook"
	"github.com/arenabot/arenabot/queue/queuetest"
)

// rebuild replaces e's Bot with one of the same fakes whose Config mod changed, as a
// restart of the bot would.
func (e *env) rebuild(mod func(*Config)) {
	e.t.Helper()
	cfg := Config{WebhookSecret: []byte(secret), Now: e.clock}
	mod(&cfg)
	e.bot = New(cfg, e.bot.Intake.gh, e.q, nil)
	e.hook = e.bot.Webhook()
}

// An inboxKind is one Inbox implementation under the shared tests.
type inboxKind struct {
	name string
	// open returns an empty inbox and a function that opens it again as a restarted
	// process would (nil for an inbox that does not survive a restart).
	open func(t *testing.T) (in Inbox, reopen func() Inbox)
	// lens returns how many deliveries wait and how many were popped and not acked (nil
	// for an inbox that forgets popped deliveries).
	lens func(t *testing.T, in Inbox) (waiting, processing int)
	// garbage stores a record that is not a delivery at the head (nil: none can be).
	garbage func(t *testing.T, in Inbox)
}

// inboxKinds are the implementations: MemoryInbox where it applies, RedisInbox on a
// real redis-server, BoltInbox on a file.
var inboxKinds = []inboxKind{
	{
		name: "Memory",
		open: func(*testing.T) (Inbox, func() Inbox) { return NewMemoryInbox(0), nil },
	},
	{
		name: "Redis",
		open: func(t *testing.T) (Inbox, func() Inbox) {
			again, in := redisInboxStore(t)
			return in, func() Inbox { return again() }
		},
		lens: func(t *testing.T, in Inbox) (int, int) {
			w, p := redisLen(t, in.(*RedisInbox))
			return int(w), int(p)
		},
		garbage: func(t *testing.T, in Inbox) {
			r := in.(*RedisInbox)
			if err := r.rdb.LPush(t.Context(), r.inboxKey(), "not json").Err(); err != nil {
				t.Fatal(err)
			}
		},
	},
	{
		name: "Bolt",
		open: func(t *testing.T) (Inbox, func() Inbox) {
			path := filepath.Join(t.TempDir(), "arenabot.db")
			db := openBolt(t, path)
			in := newBoltInbox(t, db)
			return in, func() Inbox {
				// A restart: the file is closed and opened again.
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				db = openBolt(t, path)
				return newBoltInbox(t, db)
			}
		},
		lens: func(t *testing.T, in Inbox) (int, int) {
			w, p, err := in.(*BoltInbox).Len()
			if err != nil {
				t.Fatal(err)
			}
			return w, p
		},
		garbage: func(t *testing.T, in Inbox) {
			err := in.(*BoltInbox).db.Update(func(tx *bbolt.Tx) error {
				w, _, err := boltBuckets(tx)
				if err != nil {
					return err
				}
				return w.Put(make([]byte, 8), []byte("not json")) // key 0: the head
			})
			if err != nil {
				t.Fatal(err)
			}
		},
	},
}

// durableInboxKinds are the kinds whose deliveries survive a restart.
func durableInboxKinds() []inboxKind {
	var out []inboxKind
	for _, k := range inboxKinds {
		if k.lens != nil {
			out = append(out, k)
		}
	}
	return out
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

// openBolt opens a bbolt file that is closed when the test ends (unless closed before).
func openBolt(t *testing.T, path string) *bbolt.DB {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newBoltInbox(t *testing.T, db *bbolt.DB) *BoltInbox {
	t.Helper()
	in, err := NewBoltInbox(db)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func delivery(i int) hook.Delivery {
	return hook.Delivery{ID: fmt.Sprintf("d%d", i), Event: "issue_comment", Payload: fmt.Appendf(nil, `{"n":%d,"s":"\u00e9\"x"}`, i)}
}

func pop(t *testing.T, in Inbox) (hook.Delivery, func(context.Context) error) {
	t.Helper()
	d, ack, err := in.Pop(t.Context(), 0)
	if err != nil {
		t.Fatalf("Pop: %v", err)
	}
	return d, ack
}

// TestInbox is the behaviour every Inbox shares.
func TestInbox(t *testing.T) {
	for _, k := range inboxKinds {
		t.Run(k.name, func(t *testing.T) { testInbox(t, k) })
	}
}

func testInbox(t *testing.T, k inboxKind) {
	ctx := context.Background()
	newIn := func(t *testing.T) Inbox { in, _ := k.open(t); return in }
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
		pushed := time.Now()
		if err := in.Push(ctx, delivery(1)); err != nil {
			t.Fatal(err)
		}
		select {
		case d := <-got:
			if d.ID != "d1" {
				t.Errorf("Pop = %+v", d)
			}
			t.Logf("woke %v after the Push", time.Since(pushed))
		case <-time.After(4 * time.Second):
			t.Fatal("Pop did not wake up")
		}
	})
	t.Run("ManyWaiters", func(t *testing.T) {
		// Each of several waiting Pops gets exactly one of as many Pushes.
		in := newIn(t)
		const n = 4
		got := make(chan string, n)
		for range n {
			go func() {
				d, _, err := in.Pop(ctx, 5*time.Second)
				if err != nil {
					t.Errorf("Pop: %v", err)
				}
				got <- d.ID
			}()
		}
		time.Sleep(50 * time.Millisecond)
		for i := range n {
			if err := in.Push(ctx, delivery(i)); err != nil {
				t.Fatal(err)
			}
		}
		seen := map[string]bool{}
		for range n {
			select {
			case id := <-got:
				if seen[id] {
					t.Errorf("%s popped twice", id)
				}
				seen[id] = true
			case <-time.After(6 * time.Second):
				t.Fatalf("only %d of %d Pops returned", len(seen), n)
			}
		}
	})
	t.Run("CancelledPop", func(t *testing.T) {
		if k.name == "Redis" {
			t.Skip("a blocking BLMOVE ends at its timeout, not at ctx's end (RedisInbox.Pop)")
		}
		in := newIn(t)
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		if _, _, err := in.Pop(cctx, time.Minute); !errors.Is(err, context.Canceled) {
			t.Errorf("Pop with cancelled ctx = %v", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Pop returned %v after its ctx ended", d)
		}
	})
	if k.lens == nil {
		return
	}
	t.Run("AckAndRecover", func(t *testing.T) {
		in, reopen := k.open(t)
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
		if w, p := k.lens(t, in); w != 1 || p != 2 {
			t.Fatalf("waiting %d, processing %d; want 1, 2 (the acked one removed)", w, p)
		}

		// Restart: a new Inbox value on the same store.
		in = reopen()
		if w, p := k.lens(t, in); w != 1 || p != 2 {
			t.Fatalf("after the restart: waiting %d, processing %d; want 1, 2", w, p)
		}
		n, err := in.(Recoverer).Recover(ctx)
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
		if w, p := k.lens(t, in); w != 0 || p != 0 {
			t.Errorf("waiting %d, processing %d after acks", w, p)
		}
		if n, err := in.(Recoverer).Recover(ctx); err != nil || n != 0 {
			t.Errorf("second Recover = %d, %v", n, err)
		}
	})
	t.Run("DropsGarbage", func(t *testing.T) {
		in, _ := k.open(t)
		k.garbage(t, in)
		if _, _, err := in.Pop(ctx, 0); err == nil || errors.Is(err, ErrInboxEmpty) {
			t.Errorf("Pop of garbage = %v", err)
		}
		if w, p := k.lens(t, in); w != 0 || p != 0 {
			t.Errorf("garbage kept: waiting %d, processing %d", w, p)
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

// TestBoltInboxReopen: pushed deliveries and popped, unacked ones are in the file after
// it is closed, and the next process's Recover hands the unacked ones out first; the
// inbox's bucket leaves the other buckets of the file alone.
func TestBoltInboxReopen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "arenabot.db")
	db := openBolt(t, path)
	// A bucket of someone else's (the queue's) in the same file.
	if err := db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("queue"))
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("v"))
	}); err != nil {
		t.Fatal(err)
	}
	in := newBoltInbox(t, db)
	for i := range 5 {
		if err := in.Push(ctx, delivery(i)); err != nil {
			t.Fatal(err)
		}
	}
	_, ack0 := pop(t, in)
	if err := ack0(ctx); err != nil {
		t.Fatal(err)
	}
	pop(t, in) // d1, d2: popped and never acked
	_, ack2 := pop(t, in)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// An ack after the file closed fails; the delivery stays unacked.
	if err := ack2(ctx); err == nil {
		t.Error("ack on a closed file succeeded")
	}

	db = openBolt(t, path)
	in = newBoltInbox(t, db)
	if w, p, err := in.Len(); err != nil || w != 2 || p != 2 {
		t.Fatalf("reopened: waiting %d, processing %d (%v); want 2, 2", w, p, err)
	}
	if n, err := in.Recover(ctx); err != nil || n != 2 {
		t.Fatalf("Recover = %d, %v; want 2", n, err)
	}
	var order []string
	for {
		d, ack, err := in.Pop(ctx, 0)
		if errors.Is(err, ErrInboxEmpty) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(delivery(len(order)+1), d); diff != "" {
			t.Errorf("Pop %d (-want +got):\n%s", len(order), diff)
		}
		order = append(order, d.ID)
		if err := ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"d1", "d2", "d3", "d4"}; !cmp.Equal(order, want) {
		t.Errorf("after the reopen and Recover: %v, want %v", order, want)
	}
	// A Push after the reopen goes behind, not over, what was there: sequence numbers
	// continue across the reopen.
	if err := in.Push(ctx, delivery(9)); err != nil {
		t.Fatal(err)
	}
	if d, _ := pop(t, in); d.ID != "d9" {
		t.Errorf("popped %s, want d9", d.ID)
	}
	if err := db.View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket([]byte("queue")).Get([]byte("k")); string(v) != "v" {
			return fmt.Errorf("the queue's bucket holds %q", v)
		}
		return nil
	}); err != nil {
		t.Error(err)
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
	e.wait()
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
	e.wait()
	if calls := e.gh.Calls(); len(calls) != 0 || len(e.jobs()) != 0 {
		t.Fatalf("a refused delivery had effects: %+v", calls)
	}

	// GitHub redelivers the same delivery id: it is not a duplicate, its Push failed.
	in.setFail(nil)
	if w := e.deliver("issue_comment", "d1", payload, sig); w.Code != http.StatusAccepted {
		t.Fatalf("redelivery: %d %s, want 202", w.Code, w.Body)
	}
	e.wait()
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

// TestWebhookDurableInbox: webhook → durable inbox → worker → job, and the inbox is
// empty afterwards.
func TestWebhookDurableInbox(t *testing.T) {
	for _, k := range durableInboxKinds() {
		t.Run(k.name, func(t *testing.T) {
			in, _ := k.open(t)
			e := setup(t)
			e.rebuild(func(c *Config) { c.InboxStore = in })
			e.run()
			body := "/benchmark -f nethttp -t baseline"
			id := e.gh.AddComment(repo, prNum, "bob", body)
			payload := commentPayload(t, id, "bob", "User", body)
			if w := e.deliver("issue_comment", "d1", payload, hook.Sign([]byte(secret), payload)); w.Code != http.StatusAccepted {
				t.Fatalf("delivery: %d %s", w.Code, w.Body)
			}
			e.wait()
			if js := e.jobs(); len(js) != 1 || js[0].SHA != sha1 || js[0].Requester != "bob" {
				t.Fatalf("jobs = %+v", js)
			}
			if w, p := k.lens(t, in); w != 0 || p != 0 {
				t.Errorf("waiting %d, processing %d after handling", w, p)
			}
		})
	}
}

// TestDurableInboxRestart: the bot accepts a delivery and dies before handling it (once
// before popping it, once after): the next bot on the same store handles both.
func TestDurableInboxRestart(t *testing.T) {
	for _, k := range durableInboxKinds() {
		t.Run(k.name, func(t *testing.T) {
			in, reopen := k.open(t)
			e := setup(t)
			e.rebuild(func(c *Config) { c.InboxStore = in }) // not running
			body := "/benchmark -f nethttp -t baseline"
			for i, d := range []string{"d1", "d2"} {
				id := e.gh.AddComment(repo, prNum, "bob", body)
				payload := commentPayload(t, id, "bob", "User", body)
				if w := e.deliver("issue_comment", d, payload, hook.Sign([]byte(secret), payload)); w.Code != http.StatusAccepted {
					t.Fatalf("delivery %d: %d %s", i, w.Code, w.Body)
				}
			}
			// The first is popped by a worker that dies before its ack.
			if d, _ := pop(t, in); d.ID != "d1" {
				t.Fatalf("popped %s", d.ID)
			}
			if w, p := k.lens(t, in); w != 1 || p != 1 {
				t.Fatalf("waiting %d, processing %d", w, p)
			}

			// Restart: a new Bot and Inbox value on the same store; Run recovers, and holds
			// the recovered delivery for a (short) grace.
			in = reopen()
			e.rebuild(func(c *Config) { c.InboxStore, c.RecoverGrace = in, 300*time.Millisecond })
			e.run()
			deadline := time.Now().Add(10 * time.Second)
			for {
				w, p := k.lens(t, in)
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
		})
	}
}
