package queue_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/queuetest"
	"github.com/google/go-cmp/cmp"
	"go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

func openDisk(t *testing.T, path string, o queue.Options) *queue.Disk {
	t.Helper()
	d, err := queue.OpenDisk(path, o)
	if err != nil {
		t.Fatalf("OpenDisk: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestDisk(t *testing.T) {
	queuetest.Conformance(t, func(t *testing.T, o queue.Options) queue.Queue {
		return openDisk(t, filepath.Join(t.TempDir(), "queue.db"), o)
	})
}

// TestDiskReopen closes the file and opens it again: every kind of state
// is as it was, and leases keep running on the wall clock meanwhile.
func TestDiskReopen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "queue.db")
	clk := queuetest.NewClock(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC))
	const ttl = 500 * time.Millisecond
	o := queue.Options{Now: clk.Now, LeaseTTL: ttl}
	d := openDisk(t, path, o)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// Awaiting approval, amended.
	req := queuetest.Request("octo/arena", 1, "alice")
	req.Expires = clk.Now().Add(72 * time.Hour)
	req.Payload = json.RawMessage(`{"plan":"gin x baseline"}`)
	awaiting, _, err := d.Submit(ctx, req)
	must(err)
	etag := `W/"1"`
	_, err = d.Amend(ctx, awaiting.ID, queue.Amendment{ETag: &etag, StatusCommentID: 777})
	must(err)
	// Running with a lease, the cancel requested, and two pull requests' jobs waiting behind it.
	running, _, err := d.Enqueue(ctx, queuetest.Job(2, "p"))
	must(err)
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	lease, err := d.Claim(c, "p")
	must(err)
	_, err = d.Cancel(ctx, running.ID, "bob")
	must(err)
	waiting, _, err := d.Enqueue(ctx, queuetest.Job(3, "p"))
	must(err)
	waiting4, _, err := d.Enqueue(ctx, queuetest.Job(4, "p"))
	must(err)
	// Terminal: done with a result, rejected, superseded.
	done, _, err := d.Enqueue(ctx, queuetest.Job(5, "q"))
	must(err)
	l, err := d.Claim(c, "q")
	must(err)
	_, err = d.Finish(ctx, l, queue.Outcome{State: queue.Done, Result: json.RawMessage(`{"rows":1}`)})
	must(err)
	rej, _, err := d.Submit(ctx, queuetest.Request("octo/arena", 6, "carol"))
	must(err)
	_, err = d.Reject(ctx, rej.ID, "bob")
	must(err)
	newer, superseded, err := d.Enqueue(ctx, queuetest.Job(3, "p"))
	must(err)
	if superseded == nil || superseded.ID != waiting.ID {
		t.Fatalf("superseded = %v, want %s", superseded, waiting.ID)
	}
	// Events: one acknowledged, the rest delivered to b1 and pending.
	delivered, err := d.Events(ctx, "bot", "b1", 4, 0)
	must(err)
	must(d.Ack(ctx, "bot", delivered[0].ID))
	must(d.Publish(ctx, queue.Event{Job: "x", Kind: queue.EventProgress, Data: []byte("not JSON")}))
	// Deliveries.
	if first, err := d.SeenDelivery(ctx, "d-1", time.Hour); err != nil || !first {
		t.Fatalf("SeenDelivery = %v, %v", first, err)
	}
	_, err = d.SeenDelivery(ctx, "d-2", time.Hour)
	must(err)
	must(d.ForgetDelivery(ctx, "d-2"))

	type state struct {
		List    []queue.Job
		Status  []queue.Line
		Runners []queue.Runner
		Jobs    []queue.Job
	}
	snapshot := func(q queue.Queue) state {
		t.Helper()
		var s state
		var err error
		s.List, err = q.List(ctx, queue.Filter{})
		must(err)
		s.Status, err = q.Status(ctx)
		must(err)
		s.Runners, err = q.Runners(ctx)
		must(err)
		for _, id := range []string{awaiting.ID, running.ID, waiting.ID, waiting4.ID, done.ID, rej.ID} {
			j, err := q.Get(ctx, id)
			must(err)
			s.Jobs = append(s.Jobs, j)
		}
		return s
	}
	before := snapshot(d)
	must(d.Close())
	if _, err := d.Get(ctx, awaiting.ID); err == nil {
		t.Error("Get after Close: no error")
	}

	d = openDisk(t, path, o)
	if diff := cmp.Diff(before, snapshot(d)); diff != "" {
		t.Errorf("state after reopening (-before +after):\n%s", diff)
	}
	again, err := d.Events(ctx, "bot", "b1", 10, 0)
	must(err)
	if diff := cmp.Diff(delivered[1:], again); diff != "" {
		t.Errorf("unacknowledged events after reopening (-want +got):\n%s", diff)
	}
	rest, err := d.Events(ctx, "bot", "b2", 10, 0)
	must(err)
	if len(rest) != 0 && rest[0].ID == delivered[0].ID {
		t.Errorf("the group's position was lost: b2 got %s again", rest[0].ID)
	}
	if len(rest) == 0 || rest[len(rest)-1].Job != "x" || string(rest[len(rest)-1].Data) != "not JSON" {
		t.Errorf("events after the delivered ones = %+v, want the rest through the published one", rest)
	}
	if first, err := d.SeenDelivery(ctx, "d-1", time.Hour); err != nil || first {
		t.Errorf("delivery seen before reopening: first = %v, %v", first, err)
	}
	if first, err := d.SeenDelivery(ctx, "d-2", time.Hour); err != nil || !first {
		t.Errorf("forgotten delivery: first = %v, %v", first, err)
	}
	// The lease is still the runner's: its heartbeat works and sees the cancel.
	if cancelled, err := d.Heartbeat(ctx, lease); err != nil || !cancelled {
		t.Errorf("Heartbeat after reopening = %v, %v; want true, nil", cancelled, err)
	}
	if _, _, err := d.Submit(ctx, awaiting); !errors.Is(err, queue.ErrExists) {
		t.Errorf("Submit of a known ID after reopening: %v, want ErrExists", err)
	}
	// The same requester's request is still replaced after reopening.
	if _, replaced, err := d.Submit(ctx, queuetest.Request("OCTO/arena", 1, "Alice")); err != nil || replaced == nil || replaced.ID != awaiting.ID {
		t.Errorf("Submit after reopening replaced %v, %v; want %s", replaced, err, awaiting.ID)
	}

	// Closed longer than a lease: the running job is lost at the next Reap.
	must(d.Close())
	time.Sleep(ttl * 3 / 2)
	d = openDisk(t, path, o)
	reaped, err := d.Reap(ctx)
	must(err)
	if len(reaped) != 1 || reaped[0].ID != running.ID || reaped[0].State != queue.Cancelled || reaped[0].CancelledBy != "bob" {
		t.Fatalf("Reap after reopening = %+v, want %s cancelled by bob", reaped, running.ID)
	}
	if _, err := d.Heartbeat(ctx, lease); !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("Heartbeat of the lapsed lease: %v, want ErrLeaseLost", err)
	}
	// The line kept its order and each job its pull request: pull request 4's newer job
	// takes its waiting job's place, pull request 3's newer job (which took the superseded
	// one's place) runs first.
	newer4, superseded, err := d.Enqueue(ctx, queuetest.Job(4, "p"))
	must(err)
	if superseded == nil || superseded.ID != waiting4.ID {
		t.Errorf("Enqueue of pull request 4 after reopening superseded %v, want %s", superseded, waiting4.ID)
	}
	for _, want := range []string{newer.ID, newer4.ID} {
		next, err := d.Claim(c, "p")
		must(err)
		if next.Job.ID != want || next.Fence <= lease.Fence {
			t.Errorf("next claim = %s fence %d, want %s with a fence above %d", next.Job.ID, next.Fence, want, lease.Fence)
		}
		_, err = d.Finish(ctx, next, queue.Outcome{State: queue.Done})
		must(err)
	}
	ev := queuetest.NewEventLog(d, "check")
	want := []string{queue.EventQueued, queue.EventStarted, queue.EventCancelled}
	if diff := cmp.Diff(want, ev.Kinds(t, running.ID)); diff != "" {
		t.Errorf("events of the running job (-want +got):\n%s", diff)
	}
}

// TestDiskLocked opens a file that is open already: OpenDisk gives up after
// about a second and says why.
func TestDiskLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.db")
	openDisk(t, path, queue.Options{})
	start := time.Now()
	d, err := queue.OpenDisk(path, queue.Options{})
	if err == nil {
		d.Close()
		t.Fatal("OpenDisk of an open file: no error")
	}
	if !errors.Is(err, bolterrors.ErrTimeout) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "another arenabot process") {
		t.Errorf("OpenDisk of an open file: %v; want a timeout naming the file and another arenabot process", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("OpenDisk took %v to give up", d)
	}
}

// TestDiskSaveFails makes commits fail: the call returns the error, the
// queue holds what the file holds, and the next call works.
func TestDiskSaveFails(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "queue.db")
	d := openDisk(t, path, queue.Options{})
	full := errors.New("no space left on device")
	a, _, err := d.Enqueue(ctx, queuetest.Job(1, ""))
	if err != nil {
		t.Fatal(err)
	}

	queue.FailSaves(d, 1, full)
	if _, _, err := d.Enqueue(ctx, queuetest.Job(2, "")); !errors.Is(err, full) {
		t.Fatalf("Enqueue with a failing commit: %v, want the commit's error", err)
	}
	jobs, err := d.List(ctx, queue.Filter{})
	if err != nil || len(jobs) != 1 || jobs[0].ID != a.ID {
		t.Errorf("List after the failed Enqueue = %v, %v; want only %s", jobs, err, a.ID)
	}
	queue.FailSaves(d, 1, full)
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := d.Claim(c, ""); !errors.Is(err, full) {
		t.Fatalf("Claim with a failing commit: %v, want the commit's error", err)
	}
	if j, err := d.Get(ctx, a.ID); err != nil || j.State != queue.Queued {
		t.Errorf("job after the failed Claim: %s, %v; want queued", j.State, err)
	}
	queue.FailSaves(d, 1, full)
	if first, err := d.SeenDelivery(ctx, "d-1", time.Hour); !errors.Is(err, full) {
		t.Errorf("SeenDelivery with a failing commit = %v, %v", first, err)
	}
	ev := queuetest.NewEventLog(d, "bot")
	if kinds := ev.Kinds(t, a.ID); len(kinds) != 1 || kinds[0] != queue.EventQueued {
		t.Errorf("events after failed changes: %v, want only the queued of the Enqueue that succeeded", kinds)
	}
	// The next calls work, and the file has them.
	l, err := d.Claim(c, "")
	if err != nil || l.Job.ID != a.ID || l.Fence != 1 {
		t.Fatalf("Claim = %s fence %d, %v", l.Job.ID, l.Fence, err)
	}
	if first, err := d.SeenDelivery(ctx, "d-1", time.Hour); err != nil || !first {
		t.Errorf("SeenDelivery after the failure = %v, %v; want first", first, err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openDisk(t, path, queue.Options{})
	if j, err := d.Get(ctx, a.ID); err != nil || j.State != queue.Running {
		t.Errorf("job after reopening: %s, %v; want running", j.State, err)
	}
	if jobs, _ := d.List(ctx, queue.Filter{}); len(jobs) != 1 {
		t.Errorf("List after reopening = %d jobs, want 1", len(jobs))
	}
}

// TestDiskDB keeps another bucket in the queue's file.
func TestDiskDB(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.db")
	d := openDisk(t, path, queue.Options{})
	err := d.DB().Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("bot-inbox"))
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("v"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Enqueue(t.Context(), queuetest.Job(1, "")); err != nil {
		t.Fatal(err)
	}
	d.Close()
	d = openDisk(t, path, queue.Options{})
	err = d.DB().View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket([]byte("bot-inbox")).Get([]byte("k")); string(v) != "v" {
			return fmt.Errorf("bot-inbox k = %q", v)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// diskChild runs from the test binary (ARENA_QUEUE_TEST_DISK="path|round"):
// it changes the queue in the file in every way it can and prints each
// change once the call that made it returned, until it is killed.
func diskChild(spec string) int {
	path, round, _ := strings.Cut(spec, "|")
	d, err := queue.OpenDisk(path, queue.Options{Depth: 1 << 20})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx := context.Background()
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := 0; ; i++ {
		id := fmt.Sprintf("r%s-%d", round, i)
		r := queuetest.Request("octo/arena", i, "user-"+id)
		r.ID = "s-" + id
		if _, _, err := d.Submit(ctx, r); err != nil {
			return fail(err)
		}
		fmt.Println("submitted", r.ID)
		if i%2 == 0 {
			if _, _, err := d.Approve(ctx, r.ID, "maintainer"); err != nil {
				return fail(err)
			}
			fmt.Println("approved", r.ID)
		}
		// Each round has its own pool: a job running when the last child was
		// killed keeps its lease for a while.
		pool := "pool-" + round
		j := queuetest.Job(i, pool)
		j.ID = "e-" + id
		if _, _, err := d.Enqueue(ctx, j); err != nil {
			return fail(err)
		}
		fmt.Println("enqueued", j.ID)
		if _, err := d.SeenDelivery(ctx, "d-"+id, time.Hour); err != nil {
			return fail(err)
		}
		fmt.Println("seen", "d-"+id)
		if err := d.Publish(ctx, queue.Event{Job: "p-" + id, Kind: queue.EventProgress}); err != nil {
			return fail(err)
		}
		fmt.Println("published", "p-"+id)
		l, err := d.Claim(ctx, pool)
		if err != nil {
			return fail(err)
		}
		if _, err := d.Heartbeat(ctx, l); err != nil {
			return fail(err)
		}
		if _, err := d.Finish(ctx, l, queue.Outcome{State: queue.Done}); err != nil {
			return fail(err)
		}
		fmt.Println("finished", l.Job.ID)
	}
}

// TestDiskCrash kills a process with SIGKILL while it changes the queue,
// three times over, and checks after each that nothing a returned call
// acknowledged was lost.
func TestDiskCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "queue.db")
	acked := make(map[string][]string) // what -> IDs
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("ARENA_QUEUE_TEST_DISK=%s|%d", path, round))
		cmd.Stderr = t.Output()
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		s := bufio.NewScanner(out)
		n := 0
		killAt := 60 + 37*round // lines
		for s.Scan() {
			what, id, _ := strings.Cut(s.Text(), " ")
			acked[what] = append(acked[what], id)
			if n++; n == killAt {
				// A little later, so the kill lands anywhere in an operation.
				time.AfterFunc(time.Duration(rand.IntN(20_000))*time.Microsecond, func() {
					cmd.Process.Signal(syscall.SIGKILL)
				})
			}
		}
		err = cmd.Wait()
		if n < killAt {
			t.Fatalf("round %d: the child stopped after %d changes: %v", round, n, err)
		}
		t.Logf("round %d: killed after %d acknowledged changes (%v)", round, n, err)

		d := openDisk(t, path, queue.Options{Depth: 1 << 20})
		for what, list := range acked {
			for _, id := range list {
				var bad string
				switch what {
				case "submitted", "enqueued":
					if _, err := d.Get(ctx, id); err != nil {
						bad = err.Error()
					}
				case "approved":
					if j, err := d.Get(ctx, id); err != nil || j.State == queue.AwaitingApproval {
						bad = fmt.Sprintf("%s, %v", j.State, err)
					}
				case "finished":
					if j, err := d.Get(ctx, id); err != nil || j.State != queue.Done {
						bad = fmt.Sprintf("%s, %v", j.State, err)
					}
				case "seen":
					if first, err := d.SeenDelivery(ctx, id, time.Hour); err != nil || first {
						bad = fmt.Sprintf("seen for the first time (%v)", err)
					}
				}
				if bad != "" {
					t.Errorf("round %d: %s %s lost after the crash: %s", round, what, id, bad)
				}
			}
		}
		events := make(map[string]bool)
		for _, e := range queuetest.NewEventLog(d, fmt.Sprintf("check-%d", round)).Read(t) {
			events[e.Job] = true
		}
		for _, id := range acked["published"] {
			if !events[id] {
				t.Errorf("round %d: published event of %s lost after the crash", round, id)
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDiskLegacyClaim: a file written before a pool could run several jobs keeps its
// running claim as "run"; a reopened Disk reads it as one of the line's claims, which
// heart-beats and finishes, and another job claims beside it.
func TestDiskLegacyClaim(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	d, err := queue.OpenDisk(path, queue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, _, err := d.Enqueue(ctx, queuetest.Job(1, "")); err != nil {
		t.Fatal(err)
	}
	la, err := d.Claim(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	err = d.DB().Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("queue"))
		var meta map[string]any
		if err := json.Unmarshal(b.Get([]byte("meta")), &meta); err != nil {
			return err
		}
		pool := meta["pools"].(map[string]any)[queue.DefaultPool].(map[string]any)
		pool["run"] = pool["runs"].([]any)[0]
		delete(pool, "runs")
		raw, err := json.Marshal(meta)
		if err != nil {
			return err
		}
		return b.Put([]byte("meta"), raw)
	})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	d = openDisk(t, path, queue.Options{})
	if _, err := d.Heartbeat(ctx, la); err != nil {
		t.Fatalf("Heartbeat of the claim read from \"run\": %v", err)
	}
	if _, _, err := d.Enqueue(ctx, queuetest.Job(2, "")); err != nil {
		t.Fatal(err)
	}
	lb, err := d.Claim(ctx, "")
	if err != nil || lb.Job.PR != 2 {
		t.Fatalf("Claim beside it = %+v, %v", lb.Job, err)
	}
	for _, l := range []queue.Lease{la, lb} {
		if _, err := d.Finish(ctx, l, queue.Outcome{State: queue.Done}); err != nil {
			t.Errorf("Finish %s: %v", l.Job.ID, err)
		}
	}
}
