package queuetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arenabot/arenabot/queue"
)

// testConcurrent runs four runners per pool on two pools while 50 requests
// per pool (of ten pull requests) arrive (half at once, half spread out) and some are cancelled, then checks: never two
// running jobs of one pull request (a pool runs one job per runner, a pull
// request one job at a time), no job claimed twice, every displaced or cancelled
// job reported exactly once (by the call that did it and on the stream) and
// displaced only by its own pull request's newer job, and no job lost.
func testConcurrent(t *testing.T, newQueue NewQueue) {
	const (
		claimers  = 4
		enqueuers = 50
		cancels   = 10 // per canceller, one canceller per pool
	)
	pools := []string{"p0", "p1"}
	q := newQueue(t, queue.Options{LeaseTTL: 10 * time.Second})
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	runCtx, stopRunners := context.WithCancel(ctx)
	defer stopRunners()

	var (
		mu               sync.Mutex
		enqueued         = make(map[string]string) // job -> pool
		displaced        = make(map[string]int)    // returned by Enqueue as displaced
		cancelledWaiting = make(map[string]int)    // Cancel returned it cancelled
		cancelRequested  = make(map[string]int)    // Cancel returned it running
		claimed          = make(map[string]int)
		runningPR        = make(map[string]int) // pool/PR -> jobs running
		overlaps         atomic.Int32
		most             atomic.Int32 // the most jobs running at once in one pool
		running          = make([]atomic.Int32, len(pools))
	)

	var runners sync.WaitGroup
	for pi, pool := range pools {
		for range claimers {
			runners.Go(func() {
				for {
					l, err := q.Claim(runCtx, pool)
					if err != nil {
						if runCtx.Err() == nil {
							t.Errorf("Claim(%s): %v", pool, err)
						}
						return
					}
					n := running[pi].Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					key := fmt.Sprintf("%s/%d", pool, l.Job.PR)
					mu.Lock()
					claimed[l.Job.ID]++
					if runningPR[key]++; runningPR[key] > 1 {
						overlaps.Add(1)
					}
					mu.Unlock()
					time.Sleep(time.Millisecond)
					stop, err := q.Heartbeat(ctx, l)
					if err != nil {
						t.Errorf("Heartbeat(%s): %v", l.Job.ID, err)
					}
					running[pi].Add(-1)
					mu.Lock()
					runningPR[key]--
					mu.Unlock()
					state := queue.Done
					if stop {
						state = queue.Cancelled
					}
					if _, err := q.Finish(ctx, l, queue.Outcome{State: state}); err != nil {
						t.Errorf("Finish(%s): %v", l.Job.ID, err)
					}
				}
			})
		}
	}

	start := make(chan struct{})
	var producers sync.WaitGroup
	for pi, pool := range pools {
		fresh := make(chan string, enqueuers)
		for i := range enqueuers {
			producers.Go(func() {
				<-start
				// Half arrive at once, half spread over 200ms so that many run.
				if i%2 == 1 {
					time.Sleep(time.Duration(i) * 4 * time.Millisecond)
				}
				// Ten pull requests per pool, five requests each: a pull request's
				// newer request displaces its waiting one, others never do.
				j, d, err := q.Enqueue(ctx, Job(100*pi+i%10+1, pool)) // PR 0 is no pull request
				if err != nil {
					t.Errorf("Enqueue: %v", err)
					return
				}
				mu.Lock()
				enqueued[j.ID] = pool
				if d != nil {
					displaced[d.ID]++
				}
				mu.Unlock()
				if i%2 == 1 {
					fresh <- j.ID
				}
			})
		}
		producers.Go(func() {
			<-start
			for k := range cancels {
				id := <-fresh
				if k%2 == 1 {
					time.Sleep(time.Millisecond) // sometimes it is running by now
				}
				j, err := q.Cancel(ctx, id, "canceller")
				mu.Lock()
				switch {
				case errors.Is(err, queue.ErrFinished):
				case err != nil:
					t.Errorf("Cancel(%s): %v", id, err)
				case j.State == queue.Cancelled:
					cancelledWaiting[id]++
				case j.State == queue.Running:
					cancelRequested[id]++
				default:
					t.Errorf("Cancel(%s) returned state %s", id, j.State)
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	producers.Wait()

	// Wait until every line is empty, then stop the runners.
	for {
		lines, err := q.Status(ctx)
		if err != nil {
			t.Fatalf("Status: %v", err)
		}
		busy := 0
		for _, l := range lines {
			busy += len(l.Places)
		}
		if busy == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("jobs still in line when time ran out: %+v", lines)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopRunners()
	runners.Wait()

	if n := overlaps.Load(); n > 0 {
		t.Errorf("%d times two jobs of one pull request ran at once", n)
	}
	if n := most.Load(); n > claimers {
		t.Errorf("%d jobs ran at once in one pool of %d runners", n, claimers)
	}
	if len(enqueued) != len(pools)*enqueuers {
		t.Fatalf("%d jobs enqueued, want %d", len(enqueued), len(pools)*enqueuers)
	}

	// The queue's own record: the stream, in order.
	ev := NewEventLog(q, "check")
	ev.Read(t)
	final := make(map[string][]string) // job -> terminal event kinds
	started := make(map[string]int)
	inflight := make(map[string]map[string]int) // pool -> running job -> its PR, according to the stream
	for _, d := range ev.all {
		var j queue.Job
		if err := json.Unmarshal(d.Data, &j); err != nil {
			t.Fatalf("event %s %s: %v", d.Kind, d.Job, err)
		}
		switch d.Kind {
		case queue.EventStarted:
			started[d.Job]++
			if inflight[j.Pool] == nil {
				inflight[j.Pool] = map[string]int{}
			}
			for other, pr := range inflight[j.Pool] {
				if pr == j.PR {
					t.Errorf("stream: %s started in %s while %s of the same PR ran", d.Job, j.Pool, other)
				}
			}
			if len(inflight[j.Pool]) >= claimers {
				t.Errorf("stream: %s started in %s while %d jobs ran", d.Job, j.Pool, len(inflight[j.Pool]))
			}
			inflight[j.Pool][d.Job] = j.PR
		case queue.EventOutcome:
			if _, ok := inflight[j.Pool][d.Job]; !ok {
				t.Errorf("stream: outcome of %s in %s, which was not running", d.Job, j.Pool)
			}
			delete(inflight[j.Pool], d.Job)
			final[d.Job] = append(final[d.Job], d.Kind+":"+string(j.State))
		case queue.EventSuperseded, queue.EventCancelled, queue.EventLost:
			final[d.Job] = append(final[d.Job], d.Kind)
		}
	}

	counts := make(map[queue.State]int)
	for id := range enqueued {
		j, err := q.Get(ctx, id)
		if err != nil {
			t.Fatalf("Get(%s): %v", id, err)
		}
		counts[j.State]++
		if claimed[id] > 1 || started[id] > 1 {
			t.Errorf("%s claimed %d times, started %d times", id, claimed[id], started[id])
		}
		if len(final[id]) != 1 {
			t.Errorf("%s (%s) reported %v on the stream, want exactly one final event", id, j.State, final[id])
			continue
		}
		var want string
		switch j.State {
		case queue.Superseded:
			want = queue.EventSuperseded
			if displaced[id] != 1 {
				t.Errorf("superseded %s returned %d times by Enqueue, want once", id, displaced[id])
			}
			if by, err := q.Get(ctx, j.SupersededBy); err != nil || by.PR != j.PR || by.Pool != j.Pool {
				t.Errorf("%s of PR %d superseded by %s (PR %d, pool %s, %v), want a job of the same pull request", id, j.PR, j.SupersededBy, by.PR, by.Pool, err)
			}
		case queue.Cancelled:
			if cancelledWaiting[id] == 1 {
				want = queue.EventCancelled
			} else {
				want = queue.EventOutcome + ":cancelled"
				if cancelRequested[id] != 1 {
					t.Errorf("cancelled %s: Cancel returned it %d times cancelled, %d times running", id, cancelledWaiting[id], cancelRequested[id])
				}
			}
		case queue.Done:
			want = queue.EventOutcome + ":done"
			if claimed[id] != 1 {
				t.Errorf("done %s claimed %d times", id, claimed[id])
			}
		default:
			t.Errorf("%s ended as %s, want done, superseded or cancelled", id, j.State)
			continue
		}
		if final[id][0] != want {
			t.Errorf("%s (%s) reported %v, want %s", id, j.State, final[id], want)
		}
		if j.State != queue.Superseded && displaced[id] != 0 {
			t.Errorf("%s ended as %s but Enqueue returned it displaced", id, j.State)
		}
	}
	t.Logf("outcomes: %v; cancels: %d while waiting, %d while running; at most %d running at once in a pool", fmt.Sprint(counts), len(cancelledWaiting), len(cancelRequested), most.Load())
}
