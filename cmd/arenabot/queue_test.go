package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/queuetest"
)

// TestQueueCommand drives `arenabot queue` through run() against a real redis-server: the
// operator sees the waiting job, cancels it, and bad invocations name the fix.
func TestQueueCommand(t *testing.T) {
	srv := queuetest.StartRedis(t)
	url := "redis://" + srv.Addr
	q := queue.NewRedis(srv.Client(t), queue.Options{})
	ctx := t.Context()
	running := queuetest.Job(7, queue.DefaultPool)
	running.ID = "a1b2c3d4e5f60001"
	waiting := queuetest.Job(8, queue.DefaultPool)
	waiting.ID = "a1b2c3d4e5f60002"
	// The first job runs; the second, another pull request's, waits behind it.
	if _, _, err := q.Enqueue(ctx, running); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Claim(ctx, queue.DefaultPool); err != nil {
		t.Fatal(err)
	}
	if _, _, err := q.Enqueue(ctx, waiting); err != nil {
		t.Fatal(err)
	}
	cmd := func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		err := run(ctx, append([]string{"queue"}, args...), func(k string) string {
			if k == "ARENA_REDIS_URL" {
				return url
			}
			return ""
		}, &out, &errb)
		return out.String(), err
	}
	out, err := cmd("status")
	if err != nil || !strings.Contains(out, running.ID) || !strings.Contains(out, waiting.ID) {
		t.Fatalf("queue status = %v\n%s\nwant both jobs", err, out)
	}
	if out, err = cmd("cancel", waiting.ID, "--by", "ops"); err != nil {
		t.Fatalf("queue cancel: %v\n%s", err, out)
	}
	if j, err := q.Get(ctx, waiting.ID); err != nil || j.State != queue.Cancelled {
		t.Errorf("after cancel the job is %v (%v), want cancelled", j.State, err)
	}
	if out, err = cmd("list"); err != nil || !strings.Contains(out, "cancelled") {
		t.Errorf("queue list = %v\n%s\nwant the cancelled job listed", err, out)
	}

	for _, tt := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"status"}, "", "ARENA_REDIS_URL is not set"},
		{[]string{"frobnicate"}, url, `unknown action "frobnicate"`},
		{[]string{"cancel"}, url, "wrong number of arguments"},
		{[]string{"status"}, "redis://127.0.0.1:1", "does not answer"},
	} {
		var out, errb bytes.Buffer
		err := run(ctx, append([]string{"queue"}, tt.args...), func(k string) string {
			if k == "ARENA_REDIS_URL" {
				return tt.env
			}
			return ""
		}, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("queue %v: err = %v, want one line containing %q", tt.args, err, tt.want)
		}
	}
}
