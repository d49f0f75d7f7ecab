package queuetest

import (
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/queue"
)

// testLeases: a lease has one holder: the first to Lead takes it, the holder
// extends it, another is refused until the holder resigns or its ttl passes
// (on the store's clock); Resign by another is a no-op; of many replicas
// leading at once exactly one wins.
func testLeases(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{})
	ctx := t.Context()
	lead := func(name, holder string, ttl time.Duration) bool {
		t.Helper()
		ok, err := q.Lead(ctx, name, holder, ttl)
		if err != nil {
			t.Fatalf("Lead(%s, %s): %v", name, holder, err)
		}
		return ok
	}
	if !lead("events", "a", time.Minute) {
		t.Fatal("a did not take a free lease")
	}
	if lead("events", "b", time.Minute) {
		t.Error("b took the lease a holds")
	}
	if !lead("events", "a", time.Minute) {
		t.Error("a could not extend its own lease")
	}
	if !lead("reaper", "b", time.Minute) {
		t.Error("b could not take another name's lease")
	}
	if err := q.Resign(ctx, "events", "b"); err != nil {
		t.Fatal(err)
	}
	if lead("events", "b", time.Minute) {
		t.Error("b's Resign of a's lease freed it")
	}
	if err := q.Resign(ctx, "events", "a"); err != nil {
		t.Fatal(err)
	}
	if !lead("events", "b", 200*time.Millisecond) {
		t.Error("b could not take the lease a resigned")
	}
	time.Sleep(400 * time.Millisecond) // b's ttl passes without a renewal
	if !lead("events", "a", time.Minute) {
		t.Error("a could not take the lease whose holder stopped renewing")
	}
	if _, err := q.Lead(ctx, "", "a", time.Minute); err == nil {
		t.Error("Lead without a name succeeded")
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := range 8 {
		wg.Go(func() {
			ok, err := q.Lead(ctx, "race", string(rune('a'+i)), time.Minute)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				won++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if won != 1 {
		t.Errorf("%d of 8 replicas leading at once won the lease, want 1", won)
	}
}
