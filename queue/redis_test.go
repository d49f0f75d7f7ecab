package queue_test

import (
	"testing"
	"time"

	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/queuetest"
	"github.com/google/go-cmp/cmp"
)

func TestRedis(t *testing.T) {
	addr := queuetest.RedisAddr(t)
	queuetest.Conformance(t, func(t *testing.T, o queue.Options) queue.Queue {
		rdb := queuetest.NewClient(t, addr)
		o.Prefix = queuetest.Prefix(t, rdb)
		return queue.NewRedis(rdb, o)
	})
}

// TestRedisLineSurvivesRestart: a redis-server killed and started again keeps each
// pool's line in order with each waiting job's pull request, so a new process (a new
// client) still lets a pull request's newer job take only its own job's place. A record
// written before records named their pull request (no pr field) is read from its body.
func TestRedisLineSurvivesRestart(t *testing.T) {
	srv := queuetest.StartRedis(t)
	rdb := srv.Client(t)
	prefix := queuetest.Prefix(t, rdb)
	ctx := t.Context()
	q := queue.NewRedis(rdb, queue.Options{Prefix: prefix})
	enqueue := func(q queue.Queue, pr int) (queue.Job, *queue.Job) {
		t.Helper()
		j, d, err := q.Enqueue(ctx, queuetest.Job(pr, ""))
		if err != nil {
			t.Fatal(err)
		}
		return j, d
	}
	a, _ := enqueue(q, 1)
	la, err := q.Claim(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := enqueue(q, 2)
	c, _ := enqueue(q, 3)

	srv.Kill()
	srv.Restart()
	rdb2 := srv.Client(t)
	// An older record: its pull request is only in its body.
	if err := rdb2.HDel(ctx, prefix+"job:"+c.ID, "pr").Err(); err != nil {
		t.Fatal(err)
	}
	q2 := queue.NewRedis(rdb2, queue.Options{Prefix: prefix})
	line := func() []string {
		t.Helper()
		lines, err := q2.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range lines {
			for _, p := range l.Places {
				out = append(out, p.Job.ID)
			}
		}
		return out
	}
	if diff := cmp.Diff([]string{a.ID, b.ID, c.ID}, line()); diff != "" {
		t.Fatalf("line after the restart (-want +got):\n%s", diff)
	}
	c2, d := enqueue(q2, 3)
	if d == nil || d.ID != c.ID {
		t.Errorf("pull request 3's newer job displaced %v, want %s (its record has no pr field)", d, c.ID)
	}
	b2, d := enqueue(q2, 2)
	if d == nil || d.ID != b.ID {
		t.Errorf("pull request 2's newer job displaced %v, want %s", d, b.ID)
	}
	e, d := enqueue(q2, 4)
	if d != nil {
		t.Errorf("pull request 4's job displaced %s", d.ID)
	}
	if diff := cmp.Diff([]string{a.ID, b2.ID, c2.ID, e.ID}, line()); diff != "" {
		t.Errorf("line (-want +got):\n%s", diff)
	}
	if _, err := q2.Finish(ctx, la, queue.Outcome{State: queue.Done}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{b2.ID, c2.ID, e.ID} {
		l, err := q2.Claim(ctx, "")
		if err != nil || l.Job.ID != want {
			t.Fatalf("Claim = %s, %v; want %s", l.Job.ID, err, want)
		}
		if _, err := q2.Finish(ctx, l, queue.Outcome{State: queue.Done}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRedisLegacyClaim: a running claim kept as a store written before a pool could run
// several jobs keeps it (the keys pool:<p>:run and pool:<p>:lease) is read as one of the
// line's claims: its heartbeat moves it to the hash of claims, another job claims beside
// it, it finishes; one whose lease lapsed is reaped.
func TestRedisLegacyClaim(t *testing.T) {
	rdb := queuetest.NewClient(t, queuetest.RedisAddr(t))
	prefix := queuetest.Prefix(t, rdb)
	ctx := t.Context()
	q := queue.NewRedis(rdb, queue.Options{Prefix: prefix})
	legacy := func(pool string, live bool) queue.Lease {
		t.Helper()
		if _, _, err := q.Enqueue(ctx, queuetest.Job(1, pool)); err != nil {
			t.Fatal(err)
		}
		l, err := q.Claim(ctx, pool)
		if err != nil {
			t.Fatal(err)
		}
		key := prefix + "pool:" + pool + ":"
		p := rdb.TxPipeline()
		p.Del(ctx, key+"runs", key+"lease:"+l.Token)
		p.HSet(ctx, key+"run", "job", l.Job.ID, "token", l.Token)
		if live {
			p.Set(ctx, key+"lease", l.Token, time.Minute)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		return l
	}
	la := legacy("old", true)
	lines, err := q.Status(ctx)
	if err != nil || len(lines) != 1 || len(lines[0].Running()) != 1 || lines[0].Running()[0].ID != la.Job.ID {
		t.Fatalf("Status = %+v, %v; want the legacy claim running", lines, err)
	}
	if _, err := q.Heartbeat(ctx, la); err != nil {
		t.Fatalf("Heartbeat of the legacy claim: %v", err)
	}
	if n, err := rdb.Exists(ctx, prefix+"pool:old:run", prefix+"pool:old:lease").Result(); err != nil || n != 0 {
		t.Errorf("the legacy keys are still there after a heartbeat (%d, %v)", n, err)
	}
	if tok, err := rdb.HGet(ctx, prefix+"pool:old:runs", la.Token).Result(); err != nil || tok != la.Job.ID {
		t.Errorf("the claim is not in the hash of claims: %q, %v", tok, err)
	}
	if _, _, err := q.Enqueue(ctx, queuetest.Job(2, "old")); err != nil {
		t.Fatal(err)
	}
	lb, err := q.Claim(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Finish(ctx, la, queue.Outcome{State: queue.Done}); err != nil {
		t.Errorf("Finish of the legacy claim: %v", err)
	}
	if _, err := q.Finish(ctx, lb, queue.Outcome{State: queue.Done}); err != nil {
		t.Errorf("Finish beside it: %v", err)
	}

	lost := legacy("lapsed", false)
	reaped, err := q.Reap(ctx)
	if err != nil || len(reaped) != 1 || reaped[0].ID != lost.Job.ID || reaped[0].State != queue.Queued {
		t.Errorf("Reap = %+v, %v; want the legacy claim without a lease back in line", reaped, err)
	}
}
