package queue_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/queuetest"
)

// TestMemoryLeaseDefaultTTL runs the default 30 s lease on a fake clock: a
// runner that heart-beats every 10 s keeps its job for an hour; once it
// stops, the reaper retries the job within a lease and a reaper interval.
func TestMemoryLeaseDefaultTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.NewMemory(queue.Options{})
		ev := queuetest.NewEventLog(q, "bot")
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go q.RunReaper(ctx, time.Second)

		j, _, err := q.Enqueue(ctx, queuetest.Job(1, ""))
		if err != nil {
			t.Fatal(err)
		}
		l, err := q.Claim(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		for range 360 {
			time.Sleep(10 * time.Second)
			if _, err := q.Heartbeat(ctx, l); err != nil {
				t.Fatalf("Heartbeat after %v: %v", time.Since(l.Job.Started), err)
			}
		}
		stopped := time.Now()
		for {
			time.Sleep(time.Second)
			if got, _ := q.Get(ctx, j.ID); got.State == queue.Queued {
				break
			}
			if time.Since(stopped) > time.Minute {
				t.Fatal("job not retried a minute after its runner stopped")
			}
		}
		if d := time.Since(stopped); d < 30*time.Second || d > 32*time.Second {
			t.Errorf("retried %v after the last heartbeat, want 30s to 32s", d)
		}
		if kinds := ev.Kinds(t, j.ID); len(kinds) != 3 || kinds[2] != queue.EventRetried {
			t.Errorf("events = %v", kinds)
		}
		cancel()
	})
}
