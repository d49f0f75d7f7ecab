package queuetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/queue"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The subtests of a request's life before it is queued: Submit, Approve,
// Reject, Expire, Cancel of a request awaiting approval, Amend and Runners.

// Request returns a request of requester on a pull request of repo, ready to
// submit.
func Request(repo string, pr int, requester string) queue.Job {
	j := Job(pr, "")
	j.Repo, j.Requester = repo, requester
	j.Approver, j.Approved = "", time.Time{}
	return j
}

func submit(t *testing.T, q queue.Queue, j queue.Job) (queue.Job, *queue.Job) {
	t.Helper()
	stored, replaced, err := q.Submit(t.Context(), j)
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	return stored, replaced
}

func approve(t *testing.T, q queue.Queue, id, by string) (queue.Job, *queue.Job) {
	t.Helper()
	stored, displaced, err := q.Approve(t.Context(), id, by)
	if err != nil {
		t.Fatalf("Approve(%s): %v", id, err)
	}
	return stored, displaced
}

func list(t *testing.T, q queue.Queue, f queue.Filter) []string {
	t.Helper()
	jobs, err := q.List(t.Context(), f)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return ids(jobs)
}

func testSubmitGet(t *testing.T, newQueue NewQueue) {
	clk := NewClock(time.Date(2025, 5, 1, 12, 2, 0, 0, time.UTC))
	q := newQueue(t, queue.Options{Now: clk.Now})
	ev := NewEventLog(q, "bot")
	in := Job(1, "")
	in.Created = time.Time{}
	in.Expires = clk.Now().Add(72 * time.Hour)
	in.Payload = json.RawMessage(`{"plan":[{"fw":"gin","test":"baseline","conns":[512,4096]}]}`)
	stored, replaced := submit(t, q, in)
	if replaced != nil {
		t.Errorf("first Submit replaced %s", replaced.ID)
	}
	want := in
	want.ID = stored.ID
	want.Pool = queue.DefaultPool
	want.State = queue.AwaitingApproval
	want.Created = clk.Now()
	want.Approver, want.Approved = "", time.Time{} // not approved yet
	if diff := cmp.Diff(want, stored); diff != "" {
		t.Errorf("stored request (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(stored, get(t, q, stored.ID)); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}
	wantKinds(t, ev, stored.ID, queue.EventSubmitted)
	if diff := cmp.Diff(stored, ev.Last(t, stored.ID, queue.EventSubmitted)); diff != "" {
		t.Errorf("submitted event job (-want +got):\n%s", diff)
	}
	if _, _, err := q.Submit(t.Context(), stored); !errors.Is(err, queue.ErrExists) {
		t.Errorf("Submit of an existing ID: %v, want ErrExists", err)
	}
	if _, _, err := q.Enqueue(t.Context(), stored); !errors.Is(err, queue.ErrExists) {
		t.Errorf("Enqueue of a submitted ID: %v, want ErrExists", err)
	}
	// A request awaiting approval is in no line.
	lines, err := q.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if len(l.Places) > 0 {
			t.Errorf("Status shows %+v, want no job in line", l)
		}
	}
	p, err := q.Position(t.Context(), stored.ID)
	if !errors.Is(err, queue.ErrNotAwaiting) || p.Job.ID != stored.ID || p.Position != 0 {
		t.Errorf("Position of a request awaiting approval = %d %q, %v; want the job and ErrNotAwaiting", p.Position, p.Job.ID, err)
	}
	noClaim(t, q, "", 200*time.Millisecond)
	named := Request("octo/arena", 2, "bob")
	named.ID = "req-2"
	if s, _ := submit(t, q, named); s.ID != "req-2" || s.Attempt != 0 || !s.Queued.IsZero() {
		t.Errorf("Submit with ID req-2 stored %q attempt %d queued %v", s.ID, s.Attempt, s.Queued)
	}
}

func testSubmitReplaces(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{})
	ev := NewEventLog(q, "bot")
	a, _ := submit(t, q, Request("octo/arena", 1, "alice"))
	b, _ := submit(t, q, Request("octo/arena", 1, "bob"))       // another requester
	other, _ := submit(t, q, Request("octo/arena", 2, "alice")) // another PR
	fork, _ := submit(t, q, Request("octo/fork", 1, "alice"))   // another repository
	c, replaced := submit(t, q, Request("Octo/Arena", 1, "ALICE"))
	if replaced == nil || replaced.ID != a.ID {
		t.Fatalf("Submit by the same requester replaced %v, want %s", replaced, a.ID)
	}
	if replaced.State != queue.Superseded || replaced.SupersededBy != c.ID || replaced.Reason != "" || replaced.Finished.IsZero() {
		t.Errorf("replaced request: %s, superseded by %q, reason %q; want superseded by %s", replaced.State, replaced.SupersededBy, replaced.Reason, c.ID)
	}
	if got := get(t, q, a.ID); got.State != queue.Superseded || got.SupersededBy != c.ID {
		t.Errorf("Get(replaced) = %s by %q", got.State, got.SupersededBy)
	}
	for _, id := range []string{b.ID, other.ID, fork.ID, c.ID} {
		if got := get(t, q, id); got.State != queue.AwaitingApproval {
			t.Errorf("request %s: %s, want awaiting_approval", id, got.State)
		}
	}
	wantKinds(t, ev, a.ID, queue.EventSubmitted, queue.EventSuperseded)
	wantKinds(t, ev, b.ID, queue.EventSubmitted)
	wantKinds(t, ev, c.ID, queue.EventSubmitted)
	if j := ev.Last(t, a.ID, queue.EventSuperseded); j.SupersededBy != c.ID || j.State != queue.Superseded {
		t.Errorf("superseded event job: %s by %q", j.State, j.SupersededBy)
	}
	// The new request's event comes first, then the replaced one's.
	var order []string
	for _, d := range ev.all {
		if d.Job == a.ID || d.Job == c.ID {
			order = append(order, d.Job+" "+d.Kind)
		}
	}
	if diff := cmp.Diff([]string{a.ID + " submitted", c.ID + " submitted", a.ID + " superseded"}, order); diff != "" {
		t.Errorf("event order (-want +got):\n%s", diff)
	}
	// An approved request is not replaced: it is in line.
	approve(t, q, c.ID, "maintainer")
	d, replaced := submit(t, q, Request("octo/arena", 1, "alice"))
	if replaced != nil {
		t.Errorf("Submit after approval replaced %s", replaced.ID)
	}
	if got := get(t, q, c.ID); got.State != queue.Queued {
		t.Errorf("approved request after another Submit: %s", got.State)
	}
	// Nor is one that ended.
	if _, err := q.Reject(t.Context(), d.ID, "maintainer"); err != nil {
		t.Fatal(err)
	}
	if _, replaced := submit(t, q, Request("octo/arena", 1, "alice")); replaced != nil {
		t.Errorf("Submit after a rejection replaced %s", replaced.ID)
	}
}

func testApprove(t *testing.T, newQueue NewQueue) {
	clk := NewClock(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC))
	q := newQueue(t, queue.Options{Now: clk.Now})
	ev := NewEventLog(q, "bot")
	a, _ := submit(t, q, Request("octo/arena", 1, "alice"))
	clk.Add(time.Minute)
	stored, displaced := approve(t, q, a.ID, "bob")
	if displaced != nil {
		t.Errorf("first approval displaced %s", displaced.ID)
	}
	want := a
	want.State = queue.Queued
	want.Approver, want.Approved, want.Queued = "bob", clk.Now(), clk.Now()
	want.Attempt = 1
	if diff := cmp.Diff(want, stored); diff != "" {
		t.Errorf("approved job (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(stored, get(t, q, a.ID)); diff != "" {
		t.Errorf("Get after Approve (-want +got):\n%s", diff)
	}
	wantKinds(t, ev, a.ID, queue.EventSubmitted, queue.EventQueued)
	if diff := cmp.Diff(stored, ev.Last(t, a.ID, queue.EventQueued)); diff != "" {
		t.Errorf("queued event job (-want +got):\n%s", diff)
	}
	if p := position(t, q, a.ID); p.Position != 1 {
		t.Errorf("position after approval: %d, want 1", p.Position)
	}
	for _, op := range []struct {
		name string
		err  func() error
	}{
		{"Approve", func() error { _, _, err := q.Approve(t.Context(), a.ID, "carol"); return err }},
		{"Reject", func() error { _, err := q.Reject(t.Context(), a.ID, "carol"); return err }},
	} {
		if err := op.err(); !errors.Is(err, queue.ErrNotAwaiting) {
			t.Errorf("%s of a queued job: %v, want ErrNotAwaiting", op.name, err)
		}
	}
	l := claim(t, q, "")
	if l.Job.ID != a.ID || l.Job.Approver != "bob" || l.Job.Attempt != 1 {
		t.Fatalf("claimed %s (approver %q, attempt %d), want %s", l.Job.ID, l.Job.Approver, l.Job.Attempt, a.ID)
	}
	if _, _, err := q.Approve(t.Context(), a.ID, "carol"); !errors.Is(err, queue.ErrNotAwaiting) {
		t.Errorf("Approve of a running job: %v, want ErrNotAwaiting", err)
	}
	// Approval lines the job up as Enqueue does: each pull request has one job waiting,
	// and a newer approved one of the same pull request (another requester's too)
	// displaces it; other pull requests' jobs wait in the order they were approved.
	b, _ := submit(t, q, Request("octo/arena", 2, "dave"))
	x, _ := submit(t, q, Request("octo/arena", 3, "frank"))
	c, _ := submit(t, q, Request("octo/arena", 2, "erin"))
	if _, d := approve(t, q, b.ID, "bob"); d != nil {
		t.Errorf("approval behind a running job displaced %s", d.ID)
	}
	if _, d := approve(t, q, x.ID, "bob"); d != nil {
		t.Errorf("approval of another pull request's job displaced %s", d.ID)
	}
	_, d := approve(t, q, c.ID, "bob")
	if d == nil || d.ID != b.ID || d.State != queue.Superseded || d.SupersededBy != c.ID || d.Reason != "" {
		t.Fatalf("second approval on pull request 2 displaced %+v, want %s superseded by %s", d, b.ID, c.ID)
	}
	wantKinds(t, ev, b.ID, queue.EventSubmitted, queue.EventQueued, queue.EventSuperseded)
	wantKinds(t, ev, c.ID, queue.EventSubmitted, queue.EventQueued)
	wantKinds(t, ev, x.ID, queue.EventSubmitted, queue.EventQueued)
	finish(t, q, l, queue.Done)
	for _, want := range []string{c.ID, x.ID} {
		l := claim(t, q, "")
		if l.Job.ID != want {
			t.Errorf("claimed %s, want %s", l.Job.ID, want)
		}
		finish(t, q, l, queue.Done)
	}
	// Errors.
	if _, _, err := q.Approve(t.Context(), a.ID, "bob"); !errors.Is(err, queue.ErrFinished) {
		t.Errorf("Approve of a finished job: %v, want ErrFinished", err)
	}
	if _, _, err := q.Approve(t.Context(), b.ID, "bob"); !errors.Is(err, queue.ErrFinished) {
		t.Errorf("Approve of a superseded job: %v, want ErrFinished", err)
	}
	if _, _, err := q.Approve(t.Context(), "no-such-job", "bob"); !errors.Is(err, queue.ErrNotFound) {
		t.Errorf("Approve of an unknown job: %v, want ErrNotFound", err)
	}
	wantKinds(t, ev, a.ID, queue.EventSubmitted, queue.EventQueued, queue.EventStarted, queue.EventOutcome)
}

func testApproveRace(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{Depth: 100})
	ev := NewEventLog(q, "bot")
	const racers = 8
	for round := range 10 {
		j, _ := submit(t, q, Request("octo/arena", round, "alice"))
		var wg sync.WaitGroup
		var mu sync.Mutex
		var won []string
		start := make(chan struct{})
		for i := range racers {
			wg.Go(func() {
				<-start
				var err error
				by := "m" + string(rune('a'+i))
				switch {
				case round%2 == 1 && i == 0:
					_, err = q.Reject(t.Context(), j.ID, by) // a rejection races too
				default:
					_, _, err = q.Approve(t.Context(), j.ID, by)
				}
				switch {
				case err == nil:
					mu.Lock()
					won = append(won, by)
					mu.Unlock()
				case !errors.Is(err, queue.ErrNotAwaiting) && !errors.Is(err, queue.ErrFinished):
					t.Errorf("racing decision on %s: %v", j.ID, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if len(won) != 1 {
			t.Fatalf("round %d: %d racing decisions succeeded (%v), want exactly one", round, len(won), won)
		}
		got := get(t, q, j.ID)
		kinds := ev.Kinds(t, j.ID)
		if len(kinds) != 2 {
			t.Errorf("round %d: events %v, want submitted and one decision", round, kinds)
		}
		switch got.State {
		case queue.Queued:
			if got.Approver != won[0] || kinds[len(kinds)-1] != queue.EventQueued {
				t.Errorf("round %d: approved by %q, winner %s, events %v", round, got.Approver, won[0], kinds)
			}
		case queue.Rejected:
			if got.RejectedBy != won[0] || kinds[len(kinds)-1] != queue.EventRejected {
				t.Errorf("round %d: rejected by %q, winner %s, events %v", round, got.RejectedBy, won[0], kinds)
			}
		default:
			t.Errorf("round %d: job ended the race %s", round, got.State)
		}
	}
}

func testReject(t *testing.T, newQueue NewQueue) {
	clk := NewClock(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC))
	q := newQueue(t, queue.Options{Now: clk.Now})
	ev := NewEventLog(q, "bot")
	a, _ := submit(t, q, Request("octo/arena", 1, "alice"))
	clk.Add(time.Minute)
	j, err := q.Reject(t.Context(), a.ID, "bob")
	if err != nil {
		t.Fatalf("Reject: %v", err)
	}
	for _, got := range []queue.Job{j, get(t, q, a.ID), ev.Last(t, a.ID, queue.EventRejected)} {
		if got.State != queue.Rejected || got.RejectedBy != "bob" || !got.Finished.Equal(clk.Now()) || got.Reason != "" || got.Approver != "" {
			t.Errorf("rejected job: %s by %q, finished %v, reason %q, approver %q", got.State, got.RejectedBy, got.Finished, got.Reason, got.Approver)
		}
	}
	wantKinds(t, ev, a.ID, queue.EventSubmitted, queue.EventRejected)
	if _, err := q.Reject(t.Context(), a.ID, "bob"); !errors.Is(err, queue.ErrFinished) {
		t.Errorf("second Reject: %v, want ErrFinished", err)
	}
	if _, _, err := q.Approve(t.Context(), a.ID, "bob"); !errors.Is(err, queue.ErrFinished) {
		t.Errorf("Approve of a rejected job: %v, want ErrFinished", err)
	}
	if _, err := q.Cancel(t.Context(), a.ID, "alice"); !errors.Is(err, queue.ErrFinished) {
		t.Errorf("Cancel of a rejected job: %v, want ErrFinished", err)
	}
	if _, err := q.Reject(t.Context(), "no-such-job", "bob"); !errors.Is(err, queue.ErrNotFound) {
		t.Errorf("Reject of an unknown job: %v, want ErrNotFound", err)
	}
	if _, err := q.Position(t.Context(), a.ID); !errors.Is(err, queue.ErrFinished) {
		t.Errorf("Position of a rejected job: %v, want ErrFinished", err)
	}
	if diff := cmp.Diff([]string{a.ID}, list(t, q, queue.Filter{})); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	wantKinds(t, ev, a.ID, queue.EventSubmitted, queue.EventRejected)
}

func testExpire(t *testing.T, newQueue NewQueue) {
	clk := NewClock(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC))
	q := newQueue(t, queue.Options{Now: clk.Now})
	ev := NewEventLog(q, "bot")
	mk := func(pr int, ttl time.Duration) queue.Job {
		j := Request("octo/arena", pr, "alice")
		if ttl > 0 {
			j.Expires = clk.Now().Add(ttl)
		}
		s, _ := submit(t, q, j)
		return s
	}
	expire := func() []string {
		t.Helper()
		jobs, err := q.Expire(t.Context())
		if err != nil {
			t.Fatalf("Expire: %v", err)
		}
		for _, j := range jobs {
			if j.State != queue.Expired || !j.Finished.Equal(clk.Now()) || j.Reason != "" {
				t.Errorf("expired job %s: %s, finished %v, reason %q", j.ID, j.State, j.Finished, j.Reason)
			}
		}
		return ids(jobs)
	}
	a := mk(1, time.Hour)
	b := mk(2, 2*time.Hour)
	never := mk(3, 0)
	approved := mk(4, time.Hour)
	approve(t, q, approved.ID, "bob")
	if got := expire(); len(got) != 0 {
		t.Errorf("Expire before any deadline = %v", got)
	}
	clk.Add(time.Hour - time.Nanosecond)
	if got := expire(); len(got) != 0 {
		t.Errorf("Expire just before the deadline = %v", got)
	}
	clk.Add(time.Nanosecond) // exactly at the deadline: not after it, so it expires
	if diff := cmp.Diff([]string{a.ID}, expire(), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Expire at the first deadline (-want +got):\n%s", diff)
	}
	if got := expire(); len(got) != 0 {
		t.Errorf("second Expire = %v", got)
	}
	clk.Add(10000 * time.Hour)
	if diff := cmp.Diff([]string{b.ID}, expire(), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Expire long after (-want +got):\n%s", diff)
	}
	if got := get(t, q, never.ID); got.State != queue.AwaitingApproval {
		t.Errorf("request without Expires: %s, want awaiting_approval", got.State)
	}
	if got := get(t, q, approved.ID); got.State != queue.Queued {
		t.Errorf("approved request after its Expires: %s, want queued", got.State)
	}
	if got := get(t, q, a.ID); got.State != queue.Expired {
		t.Errorf("Get of an expired request: %s", got.State)
	}
	wantKinds(t, ev, a.ID, queue.EventSubmitted, queue.EventExpired)
	wantKinds(t, ev, b.ID, queue.EventSubmitted, queue.EventExpired)
	wantKinds(t, ev, never.ID, queue.EventSubmitted)
	if j := ev.Last(t, a.ID, queue.EventExpired); j.State != queue.Expired {
		t.Errorf("expired event job: %s", j.State)
	}
	if _, _, err := q.Approve(t.Context(), a.ID, "bob"); !errors.Is(err, queue.ErrFinished) {
		t.Errorf("Approve of an expired request: %v, want ErrFinished", err)
	}
	// The expired request no longer blocks its requester's next one.
	if _, replaced := submit(t, q, Request("octo/arena", 1, "alice")); replaced != nil {
		t.Errorf("Submit after expiry replaced %s", replaced.ID)
	}
}

func testCancelAwaiting(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{})
	ev := NewEventLog(q, "bot")
	a, _ := submit(t, q, Request("octo/arena", 1, "alice"))
	j, err := q.Cancel(t.Context(), a.ID, "alice")
	if err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	for _, got := range []queue.Job{j, get(t, q, a.ID), ev.Last(t, a.ID, queue.EventCancelled)} {
		if got.State != queue.Cancelled || got.CancelledBy != "alice" || got.Reason != "" || got.Finished.IsZero() {
			t.Errorf("cancelled request: %s by %q, reason %q", got.State, got.CancelledBy, got.Reason)
		}
	}
	wantKinds(t, ev, a.ID, queue.EventSubmitted, queue.EventCancelled)
	if _, _, err := q.Approve(t.Context(), a.ID, "bob"); !errors.Is(err, queue.ErrFinished) {
		t.Errorf("Approve of a cancelled request: %v, want ErrFinished", err)
	}
	if got := list(t, q, queue.Filter{States: []queue.State{queue.AwaitingApproval}}); len(got) != 0 {
		t.Errorf("awaiting after Cancel: %v", got)
	}
	// Drain leaves requests awaiting approval alone.
	w := Request("octo/arena", 2, "bob")
	w.Pool = "p"
	waiting, _ := submit(t, q, w)
	x, _ := enqueue(t, q, Job(3, "p"))
	drained, err := q.Drain(t.Context(), "p", "ops")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{x.ID}, ids(drained)); diff != "" {
		t.Errorf("drained (-want +got):\n%s", diff)
	}
	if got := get(t, q, waiting.ID); got.State != queue.AwaitingApproval {
		t.Errorf("request awaiting approval after Drain: %s", got.State)
	}
	if _, err := q.Expire(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantKinds(t, ev, waiting.ID, queue.EventSubmitted)
	// The same requester's next request is not replaced by the cancelled one.
	if _, replaced := submit(t, q, Request("octo/arena", 1, "alice")); replaced != nil {
		t.Errorf("Submit after Cancel replaced %s", replaced.ID)
	}
}

func testAmend(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{})
	ev := NewEventLog(q, "bot")
	r := Request("octo/arena", 1, "alice")
	r.StatusCommentID = 0
	a, _ := submit(t, q, r)
	str := func(s string) *string { return &s }
	amend := func(id string, am queue.Amendment) queue.Job {
		t.Helper()
		j, err := q.Amend(t.Context(), id, am)
		if err != nil {
			t.Fatalf("Amend(%s, %+v): %v", id, am, err)
		}
		return j
	}
	updates := func(id string) int {
		t.Helper()
		n := 0
		for _, k := range ev.Kinds(t, id) {
			if k == queue.EventUpdated {
				n++
			}
		}
		return n
	}
	j := amend(a.ID, queue.Amendment{StatusCommentID: 9001})
	if j.StatusCommentID != 9001 || updates(a.ID) != 1 {
		t.Errorf("status comment set: %d, %d updates; want 9001, 1", j.StatusCommentID, updates(a.ID))
	}
	if got := ev.Last(t, a.ID, queue.EventUpdated); got.StatusCommentID != 9001 || got.State != queue.AwaitingApproval {
		t.Errorf("updated event job: comment %d, %s", got.StatusCommentID, got.State)
	}
	amend(a.ID, queue.Amendment{StatusCommentID: 9001}) // no change
	j = amend(a.ID, queue.Amendment{ETag: str(`W/"abc"`), Shown: str("sha256:1"), Check: str("77 sha256:2")})
	if j.ETag != `W/"abc"` || j.Shown != "sha256:1" || j.Check != "77 sha256:2" || j.StatusCommentID != 9001 || updates(a.ID) != 1 {
		t.Errorf("ETag and shown set: %+v, %d updates; want no new update", j, updates(a.ID))
	}
	j = amend(a.ID, queue.Amendment{HeadMoved: str("fedcba9876543210fedcba9876543210fedcba98")})
	if j.HeadMoved != "fedcba9876543210fedcba9876543210fedcba98" || j.ETag != `W/"abc"` || updates(a.ID) != 2 {
		t.Errorf("head moved: %q, ETag %q, %d updates; want 2", j.HeadMoved, j.ETag, updates(a.ID))
	}
	amend(a.ID, queue.Amendment{HeadMoved: str("fedcba9876543210fedcba9876543210fedcba98"), ETag: str(`W/"def"`)})
	if n := updates(a.ID); n != 2 {
		t.Errorf("same head again: %d updates, want 2", n)
	}
	want := a
	want.StatusCommentID, want.ETag, want.Shown, want.Check = 9001, `W/"def"`, "sha256:1", "77 sha256:2"
	want.HeadMoved = "fedcba9876543210fedcba9876543210fedcba98"
	if diff := cmp.Diff(want, get(t, q, a.ID)); diff != "" {
		t.Errorf("Get after Amend (-want +got):\n%s", diff)
	}
	// The fields stay through the job's life and show in every snapshot.
	approve(t, q, a.ID, "bob")
	l := claim(t, q, "")
	if l.Job.StatusCommentID != 9001 || l.Job.ETag != `W/"def"` || l.Job.HeadMoved == "" {
		t.Errorf("claimed job lost the amended fields: %+v", l.Job)
	}
	if got := ev.Last(t, a.ID, queue.EventStarted); got.StatusCommentID != 9001 || got.Shown != "sha256:1" {
		t.Errorf("started event lost the amended fields: %+v", got)
	}
	finish(t, q, l, queue.Done)
	// A terminal job's status comment still converges.
	j = amend(a.ID, queue.Amendment{StatusCommentID: 9002, Shown: str("sha256:2")})
	if j.State != queue.Done || j.StatusCommentID != 9002 || j.Shown != "sha256:2" || updates(a.ID) != 3 {
		t.Errorf("Amend of a finished job: %s comment %d shown %q, %d updates", j.State, j.StatusCommentID, j.Shown, updates(a.ID))
	}
	jobs, err := q.List(t.Context(), queue.Filter{})
	if err != nil || len(jobs) != 1 || jobs[0].StatusCommentID != 9002 || jobs[0].Shown != "sha256:2" {
		t.Errorf("List after Amend = %+v, %v", jobs, err)
	}
	// A job given to Enqueue is amended alike.
	e, _ := enqueue(t, q, Job(2, ""))
	if j := amend(e.ID, queue.Amendment{StatusCommentID: e.StatusCommentID}); j.StatusCommentID != e.StatusCommentID || updates(e.ID) != 0 {
		t.Errorf("Amend to the same comment: %d, %d updates", j.StatusCommentID, updates(e.ID))
	}
	if j := amend(e.ID, queue.Amendment{HeadMoved: str("abc")}); j.HeadMoved != "abc" || j.StatusCommentID != e.StatusCommentID || updates(e.ID) != 1 {
		t.Errorf("Amend of an enqueued job: %+v, %d updates", j, updates(e.ID))
	}
	if _, err := q.Amend(t.Context(), "no-such-job", queue.Amendment{StatusCommentID: 1}); !errors.Is(err, queue.ErrNotFound) {
		t.Errorf("Amend of an unknown job: %v, want ErrNotFound", err)
	}
	wantKinds(t, ev, a.ID, queue.EventSubmitted, queue.EventUpdated, queue.EventUpdated,
		queue.EventQueued, queue.EventStarted, queue.EventOutcome, queue.EventUpdated)
}

func testRunners(t *testing.T, newQueue NewQueue) {
	clk := NewClock(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC))
	q := newQueue(t, queue.Options{Now: clk.Now})
	runners := func() map[string]time.Time {
		t.Helper()
		rs, err := q.Runners(t.Context())
		if err != nil {
			t.Fatalf("Runners: %v", err)
		}
		out := make(map[string]time.Time)
		var names []string
		for _, r := range rs {
			out[r.Pool] = r.Seen
			names = append(names, r.Pool)
		}
		if !slices.IsSorted(names) {
			t.Errorf("Runners pools %v, want them sorted", names)
		}
		return out
	}
	if got := runners(); len(got) != 0 {
		t.Errorf("Runners of an empty queue = %v", got)
	}
	enqueue(t, q, Job(1, "idle")) // a pool that no runner ever served
	// A runner waits in Claim on pool p.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := q.Claim(ctx, "p")
		done <- err
	}()
	waitSeen := func(pool string, want time.Time) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			got := runners()
			if got[pool].Equal(want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("runner of %s last seen %v, want %v", pool, got[pool], want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitSeen("p", clk.Now())
	if got := runners(); !got["idle"].IsZero() {
		t.Errorf("pool without runners seen at %v, want never", got["idle"])
	}
	clk.Add(time.Minute) // a waiting runner is seen while it waits
	waitSeen("p", clk.Now())
	cancel()
	<-done
	seen := clk.Now()
	clk.Add(time.Minute)
	if got := runners(); !got["p"].Equal(seen) {
		t.Errorf("runner gone a minute: last seen %v, want %v", got["p"], seen)
	}
	// Claiming and heart-beating count.
	enqueue(t, q, Job(2, "p"))
	l := claim(t, q, "p")
	if got := runners(); !got["p"].Equal(clk.Now()) {
		t.Errorf("after Claim: seen %v, want %v", got["p"], clk.Now())
	}
	clk.Add(time.Minute)
	if _, err := q.Heartbeat(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	if got := runners(); !got["p"].Equal(clk.Now()) || len(got) != 2 {
		t.Errorf("after Heartbeat: %v, want p seen at %v and idle", got, clk.Now())
	}
}

func testListAwaiting(t *testing.T, newQueue NewQueue) {
	clk := NewClock(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC))
	q := newQueue(t, queue.Options{Depth: 2, Now: clk.Now})
	step := func() { clk.Add(time.Second) }
	done, _ := enqueue(t, q, Job(1, "a"))
	finish(t, q, claim(t, q, "a"), queue.Done)
	step()
	w1, _ := submit(t, q, Request("octo/arena", 10, "alice"))
	step()
	run, _ := enqueue(t, q, Job(2, "a"))
	claim(t, q, "a")
	step()
	w2r := Request("octo/arena", 11, "bob")
	w2r.Pool = "b"
	w2, _ := submit(t, q, w2r)
	step()
	waiting, _ := enqueue(t, q, Job(3, "b"))
	rej, _ := submit(t, q, Request("octo/arena", 12, "carol"))
	if _, err := q.Reject(t.Context(), rej.ID, "bob"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		f    queue.Filter
		want []string
	}{
		{"all", queue.Filter{}, []string{run.ID, waiting.ID, w1.ID, w2.ID, rej.ID, done.ID}},
		{"awaiting", queue.Filter{States: []queue.State{queue.AwaitingApproval}}, []string{w1.ID, w2.ID}},
		{"pool", queue.Filter{Pool: "b"}, []string{waiting.ID, w2.ID}},
		{"pr", queue.Filter{Repo: "octo/arena", PR: 10}, []string{w1.ID}},
		{"states", queue.Filter{States: []queue.State{queue.Rejected, queue.AwaitingApproval, queue.Queued}}, []string{waiting.ID, w1.ID, w2.ID, rej.ID}},
	} {
		if diff := cmp.Diff(tt.want, list(t, q, tt.f), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	lines, err := q.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var inLine []string
	for _, l := range lines {
		for _, p := range l.Places {
			inLine = append(inLine, p.Job.ID)
		}
	}
	if diff := cmp.Diff([]string{run.ID, waiting.ID}, inLine); diff != "" {
		t.Errorf("Status (-want +got):\n%s", diff)
	}
}
