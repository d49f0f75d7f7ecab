package queuetest

import (
	"errors"
	"testing"

	"github.com/arenabot/arenabot/queue"
)

// testShares: a share (Job.Parent) of a running job waits behind every job that can start,
// takes no pull request's turn and displaces none, runs beside its parent, and is taken
// back by its parent's runner with ClaimShare.
func testShares(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{})
	ctx := t.Context()
	p, _ := enqueue(t, q, Job(1, "p"))
	lp := claim(t, q, "p")
	if lp.Job.ID != p.ID {
		t.Fatalf("claimed %s, want %s", lp.Job.ID, p.ID)
	}
	c, _ := enqueue(t, q, Job(1, "p")) // its PR's next request: it waits for p
	var shares []queue.Job
	for n := 1; n <= 2; n++ {
		s := Job(1, "p")
		s.ID, s.Parent, s.StatusCommentID, s.CommentID = queue.ShareID(p.ID, n), p.ID, 0, 0
		stored, displaced := enqueue(t, q, s)
		if displaced != nil {
			t.Fatalf("share %d displaced %s", n, displaced.ID)
		}
		if stored.Parent != p.ID {
			t.Fatalf("share %d stored with parent %q, want %q", n, stored.Parent, p.ID)
		}
		shares = append(shares, stored)
	}
	if got := get(t, q, c.ID); got.State != queue.Queued {
		t.Fatalf("the PR's waiting request is %s after its shares were enqueued, want queued", got.State)
	}
	b, _ := enqueue(t, q, Job(2, "p"))
	if pb, ps := position(t, q, b.ID), position(t, q, shares[0].ID); pb.Position > ps.Position {
		t.Errorf("the line shows %s at %d behind the share at %d, but it runs first", b.ID, pb.Position, ps.Position)
	}

	if l := claim(t, q, "p"); l.Job.ID != b.ID {
		t.Fatalf("an idle runner claimed %s, want %s: a job that can start goes before the shares", l.Job.ID, b.ID)
	}
	l1 := claim(t, q, "p")
	if l1.Job.ID != shares[0].ID {
		t.Fatalf("an idle runner claimed %s, want the first share %s (its PR's turn does not hold it)", l1.Job.ID, shares[0].ID)
	}
	if _, err := q.ClaimShare(ctx, "p", "nosuchjob"); !errors.Is(err, queue.ErrNoShare) {
		t.Fatalf("ClaimShare of a job without shares: %v, want ErrNoShare", err)
	}
	l2, err := q.ClaimShare(ctx, "p", p.ID)
	if err != nil || l2.Job.ID != shares[1].ID {
		t.Fatalf("ClaimShare = %s, %v; want %s", l2.Job.ID, err, shares[1].ID)
	}
	if l2.Fence <= l1.Fence {
		t.Errorf("the share taken back has fence %d, not above the earlier claim's %d", l2.Fence, l1.Fence)
	}
	if _, err := q.ClaimShare(ctx, "p", p.ID); !errors.Is(err, queue.ErrNoShare) {
		t.Fatalf("ClaimShare with every share taken: %v, want ErrNoShare", err)
	}
	if _, err := q.Finish(ctx, l1, queue.Outcome{State: queue.Done, Result: []byte(`{"rows":[]}`)}); err != nil {
		t.Fatal(err)
	}
	if got := get(t, q, shares[0].ID); got.State != queue.Done || string(got.Result) != `{"rows":[]}` || got.Parent != p.ID {
		t.Errorf("finished share = %s, result %s, parent %q", got.State, got.Result, got.Parent)
	}
	// The parent ends while a share still runs: its PR's next request may start.
	finish(t, q, lp, queue.Done)
	if l := claim(t, q, "p"); l.Job.ID != c.ID {
		t.Fatalf("claimed %s, want %s: a running share holds no pull request's turn", l.Job.ID, c.ID)
	}
	finish(t, q, l2, queue.Done)
}
