package queue_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/queuetest"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
)

// The test binary doubles as a runner process: with ARENA_QUEUE_TEST_RUNNER
// set it claims one job, prints it, and heart-beats until it is killed; and
// with ARENA_QUEUE_TEST_DISK as a process that changes a Disk until it is
// killed (TestDiskCrash).
func TestMain(m *testing.M) {
	if spec := os.Getenv("ARENA_QUEUE_TEST_RUNNER"); spec != "" {
		os.Exit(childRunner(spec))
	}
	if spec := os.Getenv("ARENA_QUEUE_TEST_DISK"); spec != "" {
		os.Exit(diskChild(spec))
	}
	os.Exit(m.Run())
}

// childRunner runs a runner from spec "addr|prefix|pool|leaseTTL".
func childRunner(spec string) int {
	parts := strings.Split(spec, "|")
	if len(parts) != 4 {
		fmt.Fprintf(os.Stderr, "bad runner spec %q\n", spec)
		return 2
	}
	ttl, err := time.ParseDuration(parts[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	rdb := redis.NewClient(&redis.Options{Addr: parts[0], DisableIdentity: true})
	q := queue.NewRedis(rdb, queue.Options{Prefix: parts[1], LeaseTTL: ttl})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := q.Claim(ctx, parts[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("claimed %s %d %d\n", l.Job.ID, l.Job.Attempt, l.Fence)
	for {
		time.Sleep(ttl / 3)
		if _, err := q.Heartbeat(context.Background(), l); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
}

// startRunner starts a runner process and returns it once it has claimed a
// job, with the job ID, attempt and fence it printed.
func startRunner(t *testing.T, addr, prefix, pool string, ttl time.Duration) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ARENA_QUEUE_TEST_RUNNER="+strings.Join([]string{addr, prefix, pool, ttl.String()}, "|"))
	cmd.Stderr = t.Output()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
	}()
	select {
	case l, ok := <-line:
		if !ok {
			t.Fatal("runner process exited without claiming")
		}
		return cmd, l
	case <-time.After(15 * time.Second):
		t.Fatal("runner process did not claim a job")
	}
	return nil, ""
}

// waitEvent reads the stream through ev until an event of job id of kind
// arrives, or fails after timeout.
func waitEvent(t *testing.T, ev *queuetest.EventLog, id, kind string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, k := range ev.Kinds(t, id) {
			if k == kind {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %s event of %s within %v; events: %v", kind, id, timeout, ev.Kinds(t, id))
}

func startReapers(t *testing.T, n int, addr, prefix string, ttl time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range n {
		q := queue.NewRedis(queuetest.NewClient(t, addr), queue.Options{Prefix: prefix, LeaseTTL: ttl})
		wg.Go(func() { q.RunReaper(ctx, 50*time.Millisecond) })
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// TestRunnerKilled kills real runner processes mid-job with SIGKILL: the job
// is retried once at the front of its line, then failed, and each transition
// is on the stream exactly once although two reapers race.
func TestRunnerKilled(t *testing.T) {
	srv := queuetest.StartRedis(t)
	rdb := srv.Client(t)
	prefix := queuetest.Prefix(t, rdb)
	const ttl = 500 * time.Millisecond
	q := queue.NewRedis(rdb, queue.Options{Prefix: prefix, LeaseTTL: ttl})
	ev := queuetest.NewEventLog(q, "bot")
	startReapers(t, 2, srv.Addr, prefix, ttl)

	a, _, err := q.Enqueue(t.Context(), queuetest.Job(1, "host-1"))
	if err != nil {
		t.Fatal(err)
	}
	runner, line := startRunner(t, srv.Addr, prefix, "host-1", ttl)
	var fence1 int64
	if _, err := fmt.Sscanf(line, "claimed "+a.ID+" 1 %d", &fence1); err != nil {
		t.Fatalf("runner printed %q, want job %s attempt 1: %v", line, a.ID, err)
	}
	b, _, err := q.Enqueue(t.Context(), queuetest.Job(2, "host-1"))
	if err != nil {
		t.Fatal(err)
	}
	// A live runner keeps its job for many lease periods.
	time.Sleep(4 * ttl)
	if j, _ := q.Get(t.Context(), a.ID); j.State != queue.Running || j.Attempt != 1 {
		t.Fatalf("job of a live runner: %s attempt %d", j.State, j.Attempt)
	}
	runner.Process.Kill()
	runner.Wait()
	waitEvent(t, ev, a.ID, queue.EventRetried, 5*time.Second)

	// The next runner gets the retried job before the waiting one.
	runner, line = startRunner(t, srv.Addr, prefix, "host-1", ttl)
	var fence2 int64
	if _, err := fmt.Sscanf(line, "claimed "+a.ID+" 2 %d", &fence2); err != nil {
		t.Fatalf("second runner printed %q, want job %s attempt 2: %v", line, a.ID, err)
	}
	if fence2 <= fence1 {
		t.Errorf("fence %d after %d", fence2, fence1)
	}
	runner.Process.Kill()
	runner.Wait()
	waitEvent(t, ev, a.ID, queue.EventLost, 5*time.Second)

	j, err := q.Get(t.Context(), a.ID)
	if err != nil || j.State != queue.Failed || j.Reason != queue.ReasonLost {
		t.Fatalf("job after two lost runners: %s %q, %v", j.State, j.Reason, err)
	}
	l, err := q.Claim(t.Context(), "host-1")
	if err != nil || l.Job.ID != b.ID {
		t.Fatalf("claim after the failure = %s, %v; want %s", l.Job.ID, err, b.ID)
	}
	// The test holds b's lease as a live runner would: on a loaded machine
	// the checks below may come later than one lease period after the claim.
	hold, stop := context.WithCancel(t.Context())
	held := make(chan struct{})
	go func() {
		defer close(held)
		for tick := time.NewTicker(ttl / 5); ; {
			select {
			case <-hold.Done():
				tick.Stop()
				return
			case <-tick.C:
				q.Heartbeat(hold, l)
			}
		}
	}()
	defer func() { stop(); <-held }()
	time.Sleep(200 * time.Millisecond) // let the reapers look once more
	want := []string{queue.EventQueued, queue.EventStarted, queue.EventRetried, queue.EventStarted, queue.EventLost}
	if diff := cmp.Diff(want, ev.Kinds(t, a.ID)); diff != "" {
		t.Errorf("events of the job (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{queue.EventQueued, queue.EventStarted}, ev.Kinds(t, b.ID)); diff != "" {
		t.Errorf("events of the waiting job (-want +got):\n%s", diff)
	}
}

// TestRedisKilled kills redis-server with SIGKILL while a runner holds a job
// and others wait, and restarts it from its append-only file: no job is
// lost, a short outage keeps the lease, and after a long one with the runner
// gone too the reaper recovers the job.
func TestRedisKilled(t *testing.T) {
	srv := queuetest.StartRedis(t)
	rdb := srv.Client(t)
	prefix := queuetest.Prefix(t, rdb)
	const ttl = time.Second
	q := queue.NewRedis(rdb, queue.Options{Prefix: prefix, LeaseTTL: ttl, Depth: 2})
	ctx := t.Context()

	var jobs []queue.Job
	for i, pool := range []string{"a", "a", "b"} {
		j, _, err := q.Enqueue(ctx, queuetest.Job(i, pool))
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	l, err := q.Claim(ctx, "a")
	if err != nil || l.Job.ID != jobs[0].ID {
		t.Fatalf("Claim = %s, %v", l.Job.ID, err)
	}
	if _, err := q.SeenDelivery(ctx, "delivery-1", time.Hour); err != nil {
		t.Fatal(err)
	}

	// A runner heart-beats through a short outage.
	var failed, ok atomic.Int32
	hbCtx, stopHB := context.WithCancel(ctx)
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		for hbCtx.Err() == nil {
			time.Sleep(ttl / 4)
			c, cancel := context.WithTimeout(hbCtx, ttl/4)
			_, err := q.Heartbeat(c, l)
			cancel()
			switch {
			case errors.Is(err, queue.ErrLeaseLost):
				t.Errorf("lease lost during a short outage")
				return
			case err != nil:
				failed.Add(1)
			default:
				ok.Add(1)
			}
		}
	}()
	time.Sleep(ttl / 2)
	srv.Kill()
	time.Sleep(300 * time.Millisecond)
	srv.Restart()
	okBefore := ok.Load()
	time.Sleep(ttl)
	stopHB()
	<-hbDone
	if failed.Load() == 0 || ok.Load() == okBefore {
		t.Errorf("heartbeats: %d failed, %d succeeded after the restart; want failures during the outage and successes after", failed.Load(), ok.Load()-okBefore)
	}
	if got, err := q.Reap(ctx); err != nil || len(got) != 0 {
		t.Errorf("Reap after a short outage = %v, %v; want nothing", got, err)
	}
	for i, want := range []queue.State{queue.Running, queue.Queued, queue.Queued} {
		if j, err := q.Get(ctx, jobs[i].ID); err != nil || j.State != want {
			t.Errorf("job %d after the restart: %s, %v; want %s", i, j.State, err, want)
		}
	}
	if first, err := q.SeenDelivery(ctx, "delivery-1", time.Hour); err != nil || first {
		t.Errorf("delivery seen before the crash: first = %v, %v", first, err)
	}

	// A long outage, and the runner is gone too: the reaper recovers the job.
	srv.Kill()
	time.Sleep(ttl + 200*time.Millisecond)
	srv.Restart()
	recovered, err := q.Reap(ctx)
	if err != nil || len(recovered) != 1 || recovered[0].ID != jobs[0].ID || recovered[0].State != queue.Queued || recovered[0].Attempt != 2 {
		t.Fatalf("Reap after a long outage = %+v, %v; want %s retried", recovered, err, jobs[0].ID)
	}
	if _, err := q.Heartbeat(ctx, l); !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("the old runner's heartbeat: %v, want ErrLeaseLost", err)
	}
	// Every job still runs to the end.
	for _, want := range []struct{ pool, id string }{{"a", jobs[0].ID}, {"a", jobs[1].ID}, {"b", jobs[2].ID}} {
		l, err := q.Claim(ctx, want.pool)
		if err != nil || l.Job.ID != want.id {
			t.Fatalf("Claim(%s) = %s, %v; want %s", want.pool, l.Job.ID, err, want.id)
		}
		if _, err := q.Finish(ctx, l, queue.Outcome{State: queue.Done}); err != nil {
			t.Fatal(err)
		}
	}
	ev := queuetest.NewEventLog(q, "bot")
	if diff := cmp.Diff([]string{queue.EventQueued, queue.EventStarted, queue.EventRetried, queue.EventStarted, queue.EventOutcome}, ev.Kinds(t, jobs[0].ID)); diff != "" {
		t.Errorf("events of the running job (-want +got):\n%s", diff)
	}
}

// TestClaimConnectionDropped drops the connection of a runner blocked in
// Claim, and closes another runner's client: no job gets stuck.
func TestClaimConnectionDropped(t *testing.T) {
	srv := queuetest.StartRedis(t)
	admin := srv.Client(t)
	prefix := queuetest.Prefix(t, admin)
	const ttl = 300 * time.Millisecond
	open := func(rdb *redis.Client) *queue.Redis {
		return queue.NewRedis(rdb, queue.Options{Prefix: prefix, LeaseTTL: ttl})
	}
	ctx := t.Context()
	q := open(admin)

	// 1. CLIENT KILL of the blocked connection.
	r1 := srv.Client(t)
	got := make(chan error, 1)
	c1, stop1 := context.WithTimeout(ctx, 10*time.Second)
	defer stop1()
	go func() {
		l, err := open(r1).Claim(c1, "p")
		if err == nil {
			// go-redis may retry the wait on a new connection: then it
			// gets the job like any runner, and finishes it.
			_, err = open(r1).Finish(ctx, l, queue.Outcome{State: queue.Done})
		}
		got <- err
	}()
	killBlocked(t, admin)
	j, _, err := q.Enqueue(ctx, queuetest.Job(1, "p"))
	if err != nil {
		t.Fatal(err)
	}
	// Another runner, or the first one's retried wait, gets the job.
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	if l, err := open(srv.Client(t)).Claim(c, "p"); err == nil {
		if l.Job.ID != j.ID {
			t.Errorf("claimed %s, want %s", l.Job.ID, j.ID)
		}
		if _, err := q.Finish(ctx, l, queue.Outcome{State: queue.Done}); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	stop1()
	t.Logf("the runner whose connection was killed: %v", <-got)
	if j, _ := q.Get(ctx, j.ID); j.State != queue.Done {
		t.Errorf("job after the dropped connection: %s, want done", j.State)
	}

	// 2. The client is closed while Claim waits.
	r2 := srv.Client(t)
	go func() {
		_, err := open(r2).Claim(context.Background(), "p")
		got <- err
	}()
	time.Sleep(200 * time.Millisecond)
	r2.Close()
	select {
	case err := <-got:
		if err == nil {
			t.Error("Claim on a closed client returned a job")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Claim did not return after its client was closed")
	}
	j2, _, err := q.Enqueue(ctx, queuetest.Job(2, "p"))
	if err != nil {
		t.Fatal(err)
	}
	// 3. A runner claims it and its connection dies before it ever
	// heart-beats: the lease expires and the job is retried.
	r3 := srv.Client(t)
	l, err := open(r3).Claim(ctx, "p")
	if err != nil || l.Job.ID != j2.ID {
		t.Fatalf("Claim = %s, %v", l.Job.ID, err)
	}
	if err := admin.ClientKillByFilter(ctx, "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	r3.Close()
	time.Sleep(ttl * 3 / 2)
	if rec, err := q.Reap(ctx); err != nil || len(rec) != 1 || rec[0].ID != j2.ID || rec[0].Attempt != 2 {
		t.Fatalf("Reap = %+v, %v", rec, err)
	}
	l, err = open(srv.Client(t)).Claim(ctx, "p")
	if err != nil || l.Job.ID != j2.ID || l.Job.Attempt != 2 {
		t.Fatalf("Claim after the loss = %s attempt %d, %v", l.Job.ID, l.Job.Attempt, err)
	}
}

// killBlocked waits until a client blocks in BLPOP and kills its connection.
func killBlocked(t *testing.T, admin *redis.Client) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		list, err := admin.ClientList(t.Context()).Result()
		if err != nil {
			t.Fatal(err)
		}
		for l := range strings.Lines(list) {
			if !strings.Contains(l, "cmd=blpop") {
				continue
			}
			for f := range strings.FieldsSeq(l) {
				if id, ok := strings.CutPrefix(f, "id="); ok {
					if err := admin.Do(t.Context(), "CLIENT", "KILL", "ID", id).Err(); err != nil {
						t.Fatal(err)
					}
					return
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no client blocked in BLPOP")
}
