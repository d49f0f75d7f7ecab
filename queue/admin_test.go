package queue_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/queuetest"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestAdmin runs one scenario through the operator functions against both
// queues: the output must be the same, and match the golden file.
func TestAdmin(t *testing.T) {
	memory := adminTranscript(t, func(o queue.Options) queue.Queue { return queue.NewMemory(o) })
	golden := filepath.Join("testdata", "admin.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(memory), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), memory); diff != "" {
		t.Errorf("memory transcript (-golden +got):\n%s", diff)
	}
	addr := queuetest.RedisAddr(t)
	redisOut := adminTranscript(t, func(o queue.Options) queue.Queue {
		rdb := queuetest.NewClient(t, addr)
		o.Prefix = queuetest.Prefix(t, rdb)
		return queue.NewRedis(rdb, o)
	})
	if diff := cmp.Diff(memory, redisOut); diff != "" {
		t.Errorf("redis transcript differs from memory (-memory +redis):\n%s", diff)
	}
}

func adminTranscript(t *testing.T, open func(queue.Options) queue.Queue) string {
	ctx := t.Context()
	clk := queuetest.NewClock(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC))
	q := open(queue.Options{Now: clk.Now})
	var out bytes.Buffer
	run := func(cmd string, f func(w *bytes.Buffer) error) {
		fmt.Fprintf(&out, "$ arenabot queue %s\n", cmd)
		if err := f(&out); err != nil {
			fmt.Fprintf(&out, "error: %v\n", err)
		}
	}
	job := func(id string, pr int, pool string, est time.Duration) {
		j := queuetest.Job(pr, pool)
		j.ID = id
		j.Estimate = est
		clk.Add(time.Minute)
		if _, _, err := q.Enqueue(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(pool string) queue.Lease {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		l, err := q.Claim(c, pool)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}

	run("status", func(w *bytes.Buffer) error { return queue.WriteStatus(ctx, w, q) })
	run("list", func(w *bytes.Buffer) error { return queue.WriteList(ctx, w, q) })

	job("job-1", 11, "", 10*time.Minute)
	claim("")
	job("job-2", 12, "", 5*time.Minute)
	job("job-3", 12, "", 7*time.Minute) // the same pull request: takes job-2's place
	job("job-4", 14, "gpu", 20*time.Minute)
	l := claim("gpu")
	clk.Add(time.Minute)
	if _, err := q.Finish(ctx, l, queue.Outcome{State: queue.Done}); err != nil {
		t.Fatal(err)
	}
	job("job-5", 15, "gpu", time.Minute)
	job("job-6", 16, "small", 2*time.Minute)
	request := func(id string, pr int) {
		r := queuetest.Request("octo/arena", pr, fmt.Sprintf("user%d", pr))
		r.ID = id
		r.Created = time.Time{}
		r.Expires = clk.Now().Add(72 * time.Hour)
		clk.Add(time.Minute)
		if _, _, err := q.Submit(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	request("req-7", 17)
	request("req-8", 18)
	request("req-9", 19)
	if _, err := q.Reject(ctx, "req-8", "maintainer"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := q.Approve(ctx, "req-9", "maintainer"); err != nil {
		t.Fatal(err)
	}
	clk.Add(3 * time.Minute)

	run("status", func(w *bytes.Buffer) error { return queue.WriteStatus(ctx, w, q) })
	run("cancel job-1", func(w *bytes.Buffer) error { return queue.CancelJob(ctx, w, q, "job-1", "ops") })
	run("cancel job-6", func(w *bytes.Buffer) error { return queue.CancelJob(ctx, w, q, "job-6", "ops") })
	run("cancel job-4", func(w *bytes.Buffer) error { return queue.CancelJob(ctx, w, q, "job-4", "ops") })
	run("cancel job-9", func(w *bytes.Buffer) error { return queue.CancelJob(ctx, w, q, "job-9", "ops") })
	run("list", func(w *bytes.Buffer) error { return queue.WriteList(ctx, w, q) })
	run("cancel req-7", func(w *bytes.Buffer) error { return queue.CancelJob(ctx, w, q, "req-7", "ops") })
	run("status", func(w *bytes.Buffer) error { return queue.WriteStatus(ctx, w, q) })
	run("drain gpu", func(w *bytes.Buffer) error { return queue.DrainPool(ctx, w, q, "gpu", "ops") })
	run("drain gpu", func(w *bytes.Buffer) error { return queue.DrainPool(ctx, w, q, "gpu", "ops") })
	run("list", func(w *bytes.Buffer) error { return queue.WriteList(ctx, w, q) })
	return out.String()
}
