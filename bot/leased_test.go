package bot

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arenabot/arenabot/queue"
)

// TestLeasedOneAtATime: three replicas start the same leased loop; one runs it at a time.
// When the one running it stops, another takes over within the ttl; a replica whose
// extensions are refused (its queue unreachable) stops its loop before the lease can pass
// to another.
func TestLeasedOneAtATime(t *testing.T) {
	q := queue.NewMemory(queue.Options{})
	const ttl = 300 * time.Millisecond
	var running, most atomic.Int32
	var mu sync.Mutex
	ran := map[string]int{}
	loop := func(who string) func(context.Context) error {
		return func(ctx context.Context) error {
			n := running.Add(1)
			defer running.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			mu.Lock()
			ran[who]++
			mu.Unlock()
			<-ctx.Done()
			return ctx.Err()
		}
	}
	type replica struct {
		cancel context.CancelFunc
		done   chan error
	}
	start := func(who string, l queue.Leader) replica {
		ctx, cancel := context.WithCancel(t.Context())
		r := replica{cancel, make(chan error, 1)}
		go func() { r.done <- Leased(l, "events", who, ttl, slog.New(slog.DiscardHandler), loop(who))(ctx) }()
		return r
	}
	a := start("a", q)
	time.Sleep(50 * time.Millisecond) // a first
	flaky := &refusing{Leader: q}
	b, c := start("b", q), start("c", flaky)
	time.Sleep(ttl)
	mu.Lock()
	ranA := ran["a"]
	mu.Unlock()
	if running.Load() != 1 || ranA != 1 {
		t.Fatalf("running %d, a ran %d times; want a alone", running.Load(), ranA)
	}
	a.cancel()
	if err := <-a.done; !errors.Is(err, context.Canceled) {
		t.Errorf("a's Leased = %v, want its context's end", err)
	}
	deadline := time.Now().Add(2 * ttl)
	for running.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	took := ran["b"] + ran["c"]
	mu.Unlock()
	if running.Load() != 1 || took != 1 {
		t.Fatalf("after a stopped: running %d, b and c took it %d times; want once, within the ttl", running.Load(), took)
	}
	// Whoever took it: if c, its extensions are refused from now on and it must stop its
	// loop; b takes over after c's lease lapses.
	flaky.refuse.Store(true)
	time.Sleep(3 * ttl)
	if running.Load() != 1 {
		t.Errorf("running %d after c's queue stopped answering, want 1 (b)", running.Load())
	}
	b.cancel()
	c.cancel()
	<-b.done
	<-c.done
	if most.Load() != 1 {
		t.Errorf("%d replicas ran the loop at once, want 1", most.Load())
	}
}

// refusing is a Leader whose Lead fails once refuse is set, as when the queue is
// unreachable.
type refusing struct {
	queue.Leader
	refuse atomic.Bool
}

func (r *refusing) Lead(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	if r.refuse.Load() {
		return false, errors.New("dial tcp: connection refused")
	}
	return r.Leader.Lead(ctx, name, holder, ttl)
}

// TestLeasedLoopError: an error the loop returns by itself is Leased's, and the lease is
// resigned: another takes it at once.
func TestLeasedLoopError(t *testing.T) {
	q := queue.NewMemory(queue.Options{})
	boom := errors.New("boom")
	err := Leased(q, "reaper", "a", time.Minute, slog.New(slog.DiscardHandler), func(context.Context) error { return boom })(t.Context())
	if !errors.Is(err, boom) {
		t.Errorf("Leased = %v, want the loop's error", err)
	}
	if ok, err := q.Lead(t.Context(), "reaper", "b", time.Minute); !ok || err != nil {
		t.Errorf("b could not take the lease a's failed loop left: %v %v", ok, err)
	}
}
