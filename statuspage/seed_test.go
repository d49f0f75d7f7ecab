package statuspage

import (
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/queue"
)

// The hostile strings a request can carry: the command is the commenter's own text, and
// the frameworks and the login come from it and from the webhook.
const (
	hostileCommand   = `/benchmark -f gin -t <script>alert(1)</script>`
	hostileFramework = `<img src=x onerror=alert(2)>`
	hostileLogin     = `"><svg onload=alert(3)>`
	// longWord is a word wider than a phone, which must wrap rather than scroll.
	longWord = "fiberwithanamefartoolongtofitononelineofaphonescreenatallwhateveritsfont"
	// hostileHost is a runner host's name: the operator's, but shown as text all the same.
	hostileHost = `<iframe src=javascript:alert(4)>`
)

// A clock is the queue's and the page's time, moved by the test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// seed fills a queue with what the page shows: in pool default a running job (hostile
// command, 4 of its 10 planned minutes gone) and a waiting one (a command with a word wider than a phone), whose runner beat just now;
// in pool gpu a waiting job whose runner was last seen an hour ago (dead); two requests
// awaiting approval; and four finished requests: done, failed (with a status comment),
// rejected (never ran), cancelled. Two hosts are live in pool default: tr-1, running d2
// with its CPUs split, which announced 4s ago, and an idle one with a hostile name; gpu's
// host announced two minutes ago for one and is gone.
func seed(t *testing.T) (*queue.Memory, *clock) {
	t.Helper()
	clk := &clock{t: t0.Add(-time.Hour)}
	q := queue.NewMemory(queue.Options{Now: clk.Now, LeaseTTL: 30 * time.Second})
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	enqueue := func(j queue.Job) queue.Job {
		t.Helper()
		if j.Repo == "" {
			j.Repo = "octo/arena"
		}
		j.Kind, j.Created = queue.Benchmark, clk.Now()
		stored, _, err := q.Enqueue(ctx, j)
		must(err)
		return stored
	}
	run := func(pool string, at time.Duration) queue.Lease {
		t.Helper()
		clk.Set(t0.Add(at))
		l, err := q.Claim(ctx, pool)
		must(err)
		return l
	}
	finish := func(l queue.Lease, at time.Duration, o queue.Outcome) {
		t.Helper()
		clk.Set(t0.Add(at))
		_, err := q.Finish(ctx, l, o)
		must(err)
	}

	// Pool gpu: one job ran and finished; another waits; its runner was not seen since.
	enqueue(queue.Job{ID: "g1", Pool: "gpu", PR: 7, Requester: "carol", Command: "/benchmark -f actix", Frameworks: []string{"actix"}, StatusCommentID: 7001})
	finish(run("gpu", -time.Hour), -55*time.Minute, queue.Outcome{State: queue.Done})
	enqueue(queue.Job{ID: "g2", Pool: "gpu", PR: 8, Requester: "dave", Command: "/benchmark -f axum -t json", Frameworks: []string{"axum"}, Tests: []string{"json"}, Estimate: 3 * time.Minute})

	// Pool default: a failed job, then one running and one waiting.
	clk.Set(t0.Add(-30 * time.Minute))
	enqueue(queue.Job{ID: "d1", PR: 42, Requester: "alice", Command: "/benchmark -f gin", Frameworks: []string{"gin"}, StatusCommentID: 4201})
	finish(run(queue.DefaultPool, -29*time.Minute), -25*time.Minute, queue.Outcome{State: queue.Failed, Reason: "the server did not start"})
	clk.Set(t0.Add(-5 * time.Minute))
	enqueue(queue.Job{ID: "d2", PR: 42, Requester: "alice", Command: hostileCommand,
		Frameworks: []string{"gin", hostileFramework}, Tests: []string{"baseline", "json"}, Estimate: 10 * time.Minute})
	lease := run(queue.DefaultPool, -4*time.Minute)
	enqueue(queue.Job{ID: "d3", PR: 43, Requester: "erin", Command: "/benchmark -f fiber --compare " + longWord, Frameworks: []string{"fiber"}, Estimate: 2 * time.Minute})
	clk.Set(t0)
	_, err := q.Heartbeat(ctx, lease)
	must(err)

	// Requests: two awaiting approval, one rejected, one cancelled.
	submit := func(j queue.Job, at time.Duration) {
		t.Helper()
		clk.Set(t0.Add(at))
		j.Repo, j.Kind, j.Created, j.Expires = "octo/arena", queue.Benchmark, clk.Now(), clk.Now().Add(time.Hour)
		_, _, err := q.Submit(ctx, j)
		must(err)
	}
	submit(queue.Job{ID: "a1", PR: 50, Requester: hostileLogin, Command: "/benchmark -f gin", Frameworks: []string{"gin"}}, -3*time.Minute)
	submit(queue.Job{ID: "a2", PR: 51, Requester: "frank", Command: "/benchmark-multiple -f gin,chi", Frameworks: []string{"gin", "chi"}}, -2*time.Minute)
	submit(queue.Job{ID: "x1", PR: 52, Requester: "gina", Command: "/benchmark -f chi"}, -20*time.Minute)
	clk.Set(t0.Add(-15 * time.Minute))
	_, err = q.Reject(ctx, "x1", "bob")
	must(err)
	submit(queue.Job{ID: "x2", PR: 53, Requester: "hank", Command: "/benchmark -f echo"}, -10*time.Minute)
	clk.Set(t0.Add(-9 * time.Minute))
	_, err = q.Cancel(ctx, "x2", "hank")
	must(err)

	// Hosts.
	announce := func(h queue.Host, at time.Duration) {
		t.Helper()
		clk.Set(t0.Add(at))
		must(q.Announce(ctx, h, time.Minute))
	}
	announce(queue.Host{Pool: "gpu", Name: "g-1", CPU: "Intel Xeon", Cores: "8", Threads: "16"}, -2*time.Minute)
	announce(queue.Host{Pool: queue.DefaultPool, Name: "tr-1", CPU: "AMD Ryzen Threadripper PRO 3995WX 64-Cores", Cores: "64", Threads: "128",
		Kernel: "6.17.0-22-generic", Docker: "29.3.0", ServerCPUs: "0-31,64-95", LoadgenCPUs: "32-63,96-127", Job: "d2"}, -4*time.Second)
	announce(queue.Host{Pool: queue.DefaultPool, Name: hostileHost}, -20*time.Second)
	clk.Set(t0)
	return q, clk
}
