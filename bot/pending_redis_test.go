package bot

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arenabot/arenabot/bot/command"
	"github.com/arenabot/arenabot/bot/plan"
	"github.com/arenabot/arenabot/queue/queuetest"
)

// newRedisPending returns a RedisPending on a private prefix of a real Redis.
func newRedisPending(t *testing.T) *RedisPending {
	t.Helper()
	rdb := queuetest.NewClient(t, queuetest.RedisAddr(t))
	return NewRedisPending(rdb, queuetest.Prefix(t, rdb))
}

func TestMemoryPending(t *testing.T) {
	testPending(t, func(*testing.T) Pending { return NewMemoryPending() })
}

func TestRedisPending(t *testing.T) {
	testPending(t, func(t *testing.T) Pending { return newRedisPending(t) })
}

var pendingT0 = time.Date(2026, 1, 6, 10, 0, 0, 0, time.UTC)

func pendingReq(id, repo string, pr int, created time.Time) Request {
	return Request{
		ID: id, Repo: repo, PR: pr, Installation: 7, Requester: "alice", CommentID: 100,
		StatusCommentID: 200,
		Command: command.Command{
			Kind: command.KindBenchmark, Frameworks: []string{"gin"}, Tests: []string{"baseline"},
			Save: true, Compare: "nethttp", Line: "/benchmark -f gin -t baseline --save --compare nethttp",
		},
		Plan: plan.Plan{
			Kind: command.KindBenchmark,
			Targets: []plan.Target{{
				Entry: "gin", Display: "Gin", Tests: []string{"baseline"},
				Rows: []plan.Row{{Test: "baseline", Conns: 64}, {Test: "baseline", Conns: 512}},
			}},
			Save: true, Compare: "nethttp", Skipped: []string{"frameworks/x/meta.json: bad"},
			Estimate: 90 * time.Second,
		},
		SHA: sha1, HeadMoved: sha2, Created: created, Expires: created.Add(DefaultApprovalTTL),
		ETag: `W/"abc"`,
	}
}

// testPending is the behaviour every Pending shares; newP returns an empty store.
func testPending(t *testing.T, newP func(*testing.T) Pending) {
	ctx := context.Background()
	ids := func(t *testing.T, p Pending) []string {
		t.Helper()
		rs, err := p.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}

	t.Run("Empty", func(t *testing.T) {
		p := newP(t)
		if _, ok, err := p.Get(ctx, repo, prNum); err != nil || ok {
			t.Errorf("Get = %v, %v", ok, err)
		}
		if got := ids(t, p); len(got) != 0 {
			t.Errorf("List = %v", got)
		}
		if ok, err := p.Delete(ctx, "r1"); err != nil || ok {
			t.Errorf("Delete = %v, %v", ok, err)
		}
	})

	t.Run("RoundTrip", func(t *testing.T) {
		p := newP(t)
		r := pendingReq("r1", "Octo/Arena", prNum, pendingT0.In(time.FixedZone("CET", 3600)))
		if err := p.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
		got, ok, err := p.Get(ctx, "octo/arena", prNum) // the repository's case does not matter
		if err != nil || !ok {
			t.Fatalf("Get = %v, %v", ok, err)
		}
		if d := cmp.Diff(r, got); d != "" {
			t.Errorf("Get (-put +got):\n%s", d)
		}
		rs, err := p.List(ctx)
		if err != nil || len(rs) != 1 {
			t.Fatalf("List = %v, %v", rs, err)
		}
		if d := cmp.Diff(r, rs[0]); d != "" {
			t.Errorf("List (-put +got):\n%s", d)
		}
		if _, ok, _ := p.Get(ctx, repo, prNum+1); ok {
			t.Error("other PR found")
		}
	})

	t.Run("ReplaceAndUpdate", func(t *testing.T) {
		p := newP(t)
		r1 := pendingReq("r1", repo, prNum, pendingT0)
		r2 := pendingReq("r2", repo, prNum, pendingT0.Add(time.Minute))
		for _, r := range []Request{r1, r2} {
			if err := p.Put(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if got, _, _ := p.Get(ctx, repo, prNum); got.ID != "r2" {
			t.Errorf("Get = %s, want the newer r2", got.ID)
		}
		if got := ids(t, p); !cmp.Equal(got, []string{"r2"}) {
			t.Errorf("List = %v", got)
		}
		if ok, err := p.Delete(ctx, "r1"); err != nil || ok {
			t.Errorf("Delete(replaced r1) = %v, %v", ok, err)
		}
		r2.ETag = `W/"new"` // an update of the same request
		if err := p.Put(ctx, r2); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := p.Get(ctx, repo, prNum); got.ETag != `W/"new"` {
			t.Errorf("ETag = %q", got.ETag)
		}
		if got := ids(t, p); !cmp.Equal(got, []string{"r2"}) {
			t.Errorf("List after update = %v", got)
		}
		if ok, err := p.Delete(ctx, "r2"); err != nil || !ok {
			t.Errorf("Delete(r2) = %v, %v", ok, err)
		}
		if ok, err := p.Delete(ctx, "r2"); err != nil || ok {
			t.Errorf("second Delete(r2) = %v, %v", ok, err)
		}
		if _, ok, _ := p.Get(ctx, repo, prNum); ok {
			t.Error("found after Delete")
		}
		if got := ids(t, p); len(got) != 0 {
			t.Errorf("List after Delete = %v", got)
		}
		// Put again after Delete.
		if err := p.Put(ctx, r1); err != nil {
			t.Fatal(err)
		}
		if got := ids(t, p); !cmp.Equal(got, []string{"r1"}) {
			t.Errorf("List after Put again = %v", got)
		}
	})

	t.Run("ListOldestFirst", func(t *testing.T) {
		p := newP(t)
		for _, r := range []Request{
			pendingReq("r3", repo, 3, pendingT0.Add(2*time.Minute)),
			pendingReq("r2b", "octo/other", 1, pendingT0.Add(time.Minute)),
			pendingReq("r1", repo, 1, pendingT0),
			pendingReq("r2a", repo, 2, pendingT0.Add(time.Minute)), // same time: by id
		} {
			if err := p.Put(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := ids(t, p), []string{"r1", "r2a", "r2b", "r3"}; !cmp.Equal(got, want) {
			t.Errorf("List = %v, want %v", got, want)
		}
		if ok, err := p.Delete(ctx, "r2a"); err != nil || !ok {
			t.Errorf("Delete(r2a) = %v, %v", ok, err)
		}
		if got, want := ids(t, p), []string{"r1", "r2b", "r3"}; !cmp.Equal(got, want) {
			t.Errorf("List after Delete = %v, want %v", got, want)
		}
		if _, ok, _ := p.Get(ctx, repo, 2); ok {
			t.Error("deleted PR 2 found")
		}
	})
}

// TestRedisPendingSurvivesRestart: a request waiting for approval is approved by a 👍
// read by a new Bot on the same Redis (nothing is lost on restart).
func TestRedisPendingSurvivesRestart(t *testing.T) {
	rdb := queuetest.NewClient(t, queuetest.RedisAddr(t))
	prefix := queuetest.Prefix(t, rdb)
	e := setup(t)
	e.rebuild(func(c *Config) { c.Pending = NewRedisPending(rdb, prefix) })
	e.comment("alice", "/benchmark -f nethttp -t baseline")
	if len(e.pending()) != 1 || len(e.jobs()) != 0 {
		t.Fatalf("pending %+v, jobs %+v", e.pending(), e.jobs())
	}
	st := e.onlyStatus()

	// Restart: a new Bot with a new store value on the same Redis.
	e.rebuild(func(c *Config) { c.Pending = NewRedisPending(rdb, prefix) })
	if ps := e.pending(); len(ps) != 1 || ps[0].StatusCommentID != st.ID || ps[0].SHA != sha1 {
		t.Fatalf("pending after restart = %+v", ps)
	}
	e.gh.React(repo, st.ID, "bob", "+1")
	e.poll()
	if js := e.jobs(); len(js) != 1 || js[0].Approver != "bob" || js[0].SHA != sha1 {
		t.Fatalf("jobs = %+v", js)
	}
	if len(e.pending()) != 0 {
		t.Error("still pending")
	}
}
