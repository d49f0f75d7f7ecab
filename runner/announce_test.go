package runner

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/queuetest"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/runnertest"
	"github.com/google/go-cmp/cmp"
)

// announceQueue holds a job's Finish until its runner announced the job, so the
// announcement of a job that ends at once is seen.
type announceQueue struct {
	WorkQueue
	mu        sync.Mutex
	announced map[string]chan struct{} // job ID -> closed once announced
}

func (q *announceQueue) seen(id string) chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.announced[id] == nil {
		q.announced[id] = make(chan struct{})
	}
	return q.announced[id]
}

func (q *announceQueue) Announce(ctx context.Context, h queue.Host, ttl time.Duration) error {
	err := q.WorkQueue.Announce(ctx, h, ttl)
	if h.Job != "" && err == nil {
		ch := q.seen(h.Job)
		q.mu.Lock()
		select {
		case <-ch:
		default:
			close(ch)
		}
		q.mu.Unlock()
	}
	return err
}

func (q *announceQueue) Finish(ctx context.Context, l queue.Lease, o queue.Outcome) (queue.Job, error) {
	select {
	case <-q.seen(l.Job.ID):
	case <-time.After(10 * time.Second):
	}
	return q.WorkQueue.Finish(ctx, l, o)
}

// TestWorkerAnnouncesItsHost: a worker started against an empty queue is in its Hosts at
// once, with its pool, name, facts and CPU split, idle; the job it claims is announced
// while it runs, and it is idle again after; once the worker stops, its host is listed
// until 10s (3 × a 200ms heartbeat is less) after its last announcement, then no more.
func TestWorkerAnnouncesItsHost(t *testing.T) {
	privateHostLock(t)
	clk := queuetest.NewClock(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))
	mem := queue.NewMemory(queue.Options{Now: clk.Now})
	q := &announceQueue{WorkQueue: mem, announced: map[string]chan struct{}{}}
	a := newArenaRemote(t)
	w := testWorker(t, q, &fakeEngine{}, a.clone(t), t.TempDir())
	w.cfg.Pool = "bench"
	w.cfg.Repos = []string{"octo/arena"}
	w.cfg.Bench.Host = "tr-1"
	w.cfg.Bench.ServerCPUs, w.cfg.Bench.LoadgenCPUs = "0-7", "8-15"
	w.cfg.Facts = func(context.Context) result.HostFacts {
		return result.HostFacts{CPU: "AMD Ryzen 9 7950X 16-Core", Cores: "16", Threads: "32", Kernel: "6.8.0-45-generic", Docker: "27.3.1", OS: "Ubuntu"}
	}
	want := queue.Host{Pool: "bench", Name: "tr-1", CPU: "AMD Ryzen 9 7950X 16-Core", Cores: "16", Threads: "32",
		Kernel: "6.8.0-45-generic", Docker: "27.3.1", ServerCPUs: "0-7", LoadgenCPUs: "8-15", Seen: clk.Now()}

	hosts := func() []queue.Host {
		t.Helper()
		hs, err := mem.Hosts(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return hs
	}
	waitFor := func(what string, ok func([]queue.Host) bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			hs := hosts()
			if ok(hs) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: Hosts = %+v", what, hs)
			}
		}
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()
	waitFor("the worker's host was never announced", func(hs []queue.Host) bool { return len(hs) > 0 })
	if diff := cmp.Diff([]queue.Host{want}, hosts()); diff != "" {
		t.Errorf("the idle worker's host (-want +got):\n%s", diff)
	}

	// A job of a repository the runner does not serve fails at once.
	j := prJob(a, queue.Benchmark, "nethttp")
	j.Pool, j.Repo = "bench", "mallory/fork"
	stored, _, err := mem.Enqueue(t.Context(), j)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-q.seen(stored.ID):
	case <-time.After(10 * time.Second):
		t.Fatalf("the running job %s was never announced", stored.ID)
	}
	waitFor("the host is not idle after its job", func(hs []queue.Host) bool {
		got, err := mem.Get(t.Context(), stored.ID)
		return err == nil && got.State.Terminal() && len(hs) == 1 && hs[0].Job == ""
	})

	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run = %v", err)
	}
	clk.Add(10*time.Second - time.Millisecond)
	if got := hosts(); len(got) != 1 {
		t.Errorf("just under 10s after the worker stopped, Hosts = %+v, want its host", got)
	}
	clk.Add(time.Millisecond)
	if got := hosts(); len(got) != 0 {
		t.Errorf("10s after the worker stopped, Hosts = %+v, want none", got)
	}
}

// failingAnnounce is a queue whose registry of hosts cannot be reached.
type failingAnnounce struct{ WorkQueue }

func (failingAnnounce) Announce(context.Context, queue.Host, time.Duration) error {
	return errors.New("dial tcp: connection refused")
}

// TestWorkerAnnounceFailureIsNotFatal: a worker whose announcements fail logs it once and
// runs its jobs all the same.
func TestWorkerAnnounceFailureIsNotFatal(t *testing.T) {
	privateHostLock(t)
	mem := queue.NewMemory(queue.Options{})
	a := newArenaRemote(t)
	w := testWorker(t, failingAnnounce{mem}, &fakeEngine{}, a.clone(t), t.TempDir())
	var log runnertest.SyncBuffer
	w.log = slog.New(slog.NewTextHandler(&log, nil))
	w.cfg.Repos = []string{"octo/arena"}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()
	j := prJob(a, queue.Benchmark, "nethttp")
	j.Repo = "mallory/fork"
	stored, _, err := mem.Enqueue(t.Context(), j)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got, err := mem.Get(t.Context(), stored.ID); err == nil && got.State == queue.Failed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job did not end; log:\n%s", log.String())
		}
	}
	cancel()
	if err := <-ran; err != nil {
		t.Errorf("Run = %v", err)
	}
	if n := strings.Count(log.String(), "announce the host to the queue"); n != 1 {
		t.Errorf("the failed announcements are logged %d times, want once:\n%s", n, log.String())
	}
	if hs, _ := mem.Hosts(t.Context()); len(hs) != 0 {
		t.Errorf("Hosts = %+v, want none", hs)
	}
}

// TestHostOfLite: a --lite runner says so, with no CPU split (it pins nothing); a full one
// says it is not lite.
func TestHostOfLite(t *testing.T) {
	var cfg WorkerConfig
	cfg.Bench.Lite = true
	if h := hostOf(cfg, result.HostFacts{Threads: "2"}); !h.Lite || h.ServerCPUs != "" || h.LoadgenCPUs != "" {
		t.Errorf("a lite runner announces %+v, want Lite and no CPU split", h)
	}
	cfg.Bench.Lite = false
	if h := hostOf(cfg, result.HostFacts{Threads: "2"}); h.Lite || h.ServerCPUs == "" {
		t.Errorf("a full runner announces %+v, want not Lite, with its CPU split", h)
	}
}
