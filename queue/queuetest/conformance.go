// Package queuetest helps test the queue: one conformance suite that every
// queue.Queue implementation must pass, and a real redis-server for tests.
// It is imported only by tests.
package queuetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// NewQueue returns an empty queue with options o for one test. Redis queues
// get a prefix no other test uses.
type NewQueue func(t *testing.T, o queue.Options) queue.Queue

// ShortLease is the lease TTL the suite uses where runners get lost.
const ShortLease = 300 * time.Millisecond

// Conformance checks that a queue behaves as the queue package documents.
// It runs the same subtests against every implementation.
func Conformance(t *testing.T, newQueue NewQueue) {
	tests := []struct {
		name string
		run  func(t *testing.T, newQueue NewQueue)
	}{
		{"EnqueueGet", testEnqueueGet},
		{"Order", testOrder},
		{"OneDeepPerPR", testOneDeepPerPR},
		{"DepthTwo", testDepthTwo},
		{"JobDepth", testJobDepth},
		{"ClaimBlocksUntilEnqueue", testClaimBlocksUntilEnqueue},
		{"ClaimGivesUpWithContext", testClaimGivesUp},
		{"ClaimWaitsForRunningJob", testClaimWaitsForRunning},
		{"PoolsIndependent", testPoolsIndependent},
		{"HeartbeatCancelFinish", testHeartbeatCancelFinish},
		{"CancelWaiting", testCancelWaiting},
		{"Finish", testFinish},
		{"LeaseLostRetriedOnceThenFailed", testLeaseLost},
		{"HeartbeatKeepsLease", testHeartbeatKeepsLease},
		{"CancelledJobWithLostRunner", testCancelledLost},
		{"ReapersRace", testReapersRace},
		{"FencingIncreases", testFencing},
		{"PositionETA", testPositionETA},
		{"DeliveryDedupe", testDedupe},
		{"EventsConsumerGroup", testEvents},
		{"ListGet", testList},
		{"Drain", testDrain},
		{"Concurrent", testConcurrent},
		{"SubmitGet", testSubmitGet},
		{"SubmitReplacesSameRequester", testSubmitReplaces},
		{"Approve", testApprove},
		{"ApproveRace", testApproveRace},
		{"Reject", testReject},
		{"Expire", testExpire},
		{"CancelAwaiting", testCancelAwaiting},
		{"Amend", testAmend},
		{"Runners", testRunners},
		{"ListAwaiting", testListAwaiting},
		{"Hosts", testHosts},
		{"Leases", testLeases},
		{"Shares", testShares},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, newQueue)
		})
	}
}

var jobSeq struct {
	sync.Mutex
	n int
}

// Job returns a job of a pull request of octo/arena, ready to enqueue.
func Job(pr int, pool string) queue.Job {
	jobSeq.Lock()
	jobSeq.n++
	n := jobSeq.n
	jobSeq.Unlock()
	return queue.Job{
		Repo:            "octo/arena",
		PR:              pr,
		Requester:       fmt.Sprintf("user%d", pr),
		Approver:        "maintainer",
		Command:         "/benchmark -f gin -t baseline",
		Kind:            queue.Benchmark,
		Frameworks:      []string{"gin"},
		Tests:           []string{"baseline"},
		Rows:            []profile.Row{{Entry: "gin", Test: "baseline", Conns: 512}, {Entry: "gin", Test: "baseline", Conns: 4096}},
		SHA:             "0123456789abcdef0123456789abcdef01234567",
		Pool:            pool,
		InstallationID:  77,
		CommentID:       int64(1000 + n),
		StatusCommentID: int64(5000 + n),
		Estimate:        time.Minute,
		Created:         time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC),
		Approved:        time.Date(2025, 5, 1, 12, 1, 0, 0, time.UTC),
	}
}

func enqueue(t *testing.T, q queue.Queue, j queue.Job) (queue.Job, *queue.Job) {
	t.Helper()
	stored, displaced, err := q.Enqueue(t.Context(), j)
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	return stored, displaced
}

func claim(t *testing.T, q queue.Queue, pool string) queue.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	l, err := q.Claim(ctx, pool)
	if err != nil {
		t.Fatalf("Claim(%q): %v", pool, err)
	}
	return l
}

func noClaim(t *testing.T, q queue.Queue, pool string, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	l, err := q.Claim(ctx, pool)
	if err == nil {
		t.Fatalf("Claim(%q) gave job %s, want none", pool, l.Job.ID)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Claim(%q): %v, want context.DeadlineExceeded", pool, err)
	}
}

func finish(t *testing.T, q queue.Queue, l queue.Lease, s queue.State) queue.Job {
	t.Helper()
	j, err := q.Finish(t.Context(), l, queue.Outcome{State: s})
	if err != nil {
		t.Fatalf("Finish(%s): %v", l.Job.ID, err)
	}
	return j
}

func get(t *testing.T, q queue.Queue, id string) queue.Job {
	t.Helper()
	j, err := q.Get(t.Context(), id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return j
}

func position(t *testing.T, q queue.Queue, id string) queue.Place {
	t.Helper()
	p, err := q.Position(t.Context(), id)
	if err != nil {
		t.Fatalf("Position(%s): %v", id, err)
	}
	return p
}

func reap(t *testing.T, q queue.Queue) []queue.Job {
	t.Helper()
	jobs, err := q.Reap(t.Context())
	if err != nil {
		t.Fatalf("Reap: %v", err)
	}
	return jobs
}

func ids(jobs []queue.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

// An EventLog reads every event of a queue through its own consumer group.
type EventLog struct {
	q     queue.Queue
	group string
	all   []queue.Delivery
}

// NewEventLog returns a log that reads q's events from the oldest kept.
func NewEventLog(q queue.Queue, group string) *EventLog {
	return &EventLog{q: q, group: group}
}

// Read reads and acknowledges every event available now and returns them.
func (e *EventLog) Read(t testing.TB) []queue.Delivery {
	t.Helper()
	var out []queue.Delivery
	for {
		ds, err := e.q.Events(context.Background(), e.group, "log", 500, 0)
		if err != nil {
			t.Fatalf("Events: %v", err)
		}
		if len(ds) == 0 {
			break
		}
		ack := make([]string, len(ds))
		for i, d := range ds {
			ack[i] = d.ID
		}
		if err := e.q.Ack(context.Background(), e.group, ack...); err != nil {
			t.Fatalf("Ack: %v", err)
		}
		out = append(out, ds...)
	}
	e.all = append(e.all, out...)
	return out
}

// Kinds reads what is new and returns the kinds of every event of job id so far.
func (e *EventLog) Kinds(t testing.TB, id string) []string {
	t.Helper()
	e.Read(t)
	var kinds []string
	for _, d := range e.all {
		if d.Job == id {
			kinds = append(kinds, d.Kind)
		}
	}
	return kinds
}

// Last reads what is new and returns the job carried by the last event of
// job id of the given kind.
func (e *EventLog) Last(t testing.TB, id, kind string) queue.Job {
	t.Helper()
	e.Read(t)
	for i := len(e.all) - 1; i >= 0; i-- {
		if d := e.all[i]; d.Job == id && d.Kind == kind {
			var j queue.Job
			if err := json.Unmarshal(d.Data, &j); err != nil {
				t.Fatalf("event %s of %s: %v", kind, id, err)
			}
			return j
		}
	}
	t.Fatalf("no %s event of %s", kind, id)
	return queue.Job{}
}

func wantKinds(t *testing.T, ev *EventLog, id string, want ...string) {
	t.Helper()
	if diff := cmp.Diff(want, ev.Kinds(t, id), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("events of %s (-want +got):\n%s", id, diff)
	}
}

// A Clock is a settable clock for Options.Now.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock stopped at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func testEnqueueGet(t *testing.T, newQueue NewQueue) {
	clk := NewClock(time.Date(2025, 5, 1, 12, 2, 0, 0, time.UTC))
	q := newQueue(t, queue.Options{Now: clk.Now})
	in := Job(1, "")
	stored, displaced := enqueue(t, q, in)
	if displaced != nil {
		t.Errorf("first Enqueue displaced %s", displaced.ID)
	}
	want := in
	want.ID = stored.ID
	want.Pool = queue.DefaultPool
	want.State = queue.Queued
	want.Attempt = 1
	want.Queued = clk.Now()
	if diff := cmp.Diff(want, stored); diff != "" {
		t.Errorf("stored job (-want +got):\n%s", diff)
	}
	if len(stored.ID) < 8 {
		t.Errorf("ID %q is too short", stored.ID)
	}
	if diff := cmp.Diff(stored, get(t, q, stored.ID)); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}
	if _, _, err := q.Enqueue(t.Context(), stored); !errors.Is(err, queue.ErrExists) {
		t.Errorf("Enqueue of an existing ID: %v, want ErrExists", err)
	}
	if _, err := q.Get(t.Context(), "no-such-job"); !errors.Is(err, queue.ErrNotFound) {
		t.Errorf("Get of an unknown ID: %v, want ErrNotFound", err)
	}
	named := Job(2, "")
	named.ID = "job-2"
	if stored, _ := enqueue(t, q, named); stored.ID != "job-2" {
		t.Errorf("Enqueue with ID job-2 stored %q", stored.ID)
	}
}

func testOrder(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{Depth: 5})
	var want []string
	for pr := range 5 {
		j, _ := enqueue(t, q, Job(pr, "p"))
		want = append(want, j.ID)
	}
	var got []string
	for range 5 {
		l := claim(t, q, "p")
		got = append(got, l.Job.ID)
		finish(t, q, l, queue.Done)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("claim order (-want +got):\n%s", diff)
	}
}

// inLine returns every pool's line as "position ID state" lines.
func inLine(t *testing.T, q queue.Queue) []string {
	t.Helper()
	lines, err := q.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		for _, p := range l.Places {
			got = append(got, fmt.Sprintf("%d %s %s", p.Position, p.Job.ID, p.Job.State))
		}
	}
	return got
}

// testOneDeepPerPR: each pull request has one job waiting. Jobs of different pull requests
// wait behind the running job in the order they came and never displace each other; a
// newer job of a pull request takes the place of that pull request's waiting one, which
// ends as superseded; the running job is never touched.
func testOneDeepPerPR(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{})
	ev := NewEventLog(q, "bot")
	a, _ := enqueue(t, q, Job(1, ""))
	la := claim(t, q, "")
	b, d := enqueue(t, q, Job(2, ""))
	if d != nil {
		t.Fatalf("Enqueue behind a running job displaced %s", d.ID)
	}
	c, d := enqueue(t, q, Job(3, ""))
	if d != nil {
		t.Fatalf("Enqueue of another pull request's job displaced %s", d.ID)
	}
	// The running job's pull request gets one job waiting too.
	a2, d := enqueue(t, q, Job(1, ""))
	if d != nil {
		t.Fatalf("Enqueue of the running job's pull request displaced %s", d.ID)
	}
	want := []string{"1 " + a.ID + " running", "2 " + b.ID + " queued", "3 " + c.ID + " queued", "4 " + a2.ID + " queued"}
	if diff := cmp.Diff(want, inLine(t, q)); diff != "" {
		t.Errorf("line of three pull requests (-want +got):\n%s", diff)
	}
	for i, id := range []string{b.ID, c.ID, a2.ID} {
		p := position(t, q, id)
		ahead := []string{a.ID, b.ID, c.ID}[i]
		if p.Position != i+2 || p.Ahead == nil || p.Ahead.ID != ahead {
			t.Errorf("place of %s: %d behind %v, want %d behind %s", id, p.Position, p.Ahead, i+2, ahead)
		}
	}
	if p := position(t, q, b.ID); p.Ahead.State != queue.Running || p.Ahead.PR != 1 {
		t.Errorf("the job ahead of the first waiting one: %s of PR %d, want the running job of PR 1", p.Ahead.State, p.Ahead.PR)
	}

	// A newer job of pull request 2 (the repository written in other case) takes the
	// place of its waiting job: pull request 2 keeps its turn.
	nb := Job(2, "")
	nb.Repo = "Octo/Arena"
	b2, d := enqueue(t, q, nb)
	if d == nil || d.ID != b.ID {
		t.Fatalf("Enqueue of pull request 2's second job displaced %v, want %s", d, b.ID)
	}
	if d.State != queue.Superseded || d.SupersededBy != b2.ID || d.Reason != "" || d.Finished.IsZero() {
		t.Errorf("displaced job: state %s, superseded by %q, reason %q, finished %v; want superseded by %s, no reason", d.State, d.SupersededBy, d.Reason, d.Finished, b2.ID)
	}
	if got := get(t, q, b.ID); got.State != queue.Superseded || got.SupersededBy != b2.ID {
		t.Errorf("Get(displaced): %s, superseded by %q", got.State, got.SupersededBy)
	}
	if got := get(t, q, a.ID); got.State != queue.Running || got.CancelRequested {
		t.Errorf("running job after new requests: %s (cancel %v), want running", got.State, got.CancelRequested)
	}
	want = []string{"1 " + a.ID + " running", "2 " + b2.ID + " queued", "3 " + c.ID + " queued", "4 " + a2.ID + " queued"}
	if diff := cmp.Diff(want, inLine(t, q)); diff != "" {
		t.Errorf("line after pull request 2's second job (-want +got):\n%s", diff)
	}
	wantKinds(t, ev, b.ID, queue.EventQueued, queue.EventSuperseded)
	wantKinds(t, ev, b2.ID, queue.EventQueued)
	wantKinds(t, ev, c.ID, queue.EventQueued)
	// The event carries what the bot needs to tell the displaced requester.
	sj := ev.Last(t, b.ID, queue.EventSuperseded)
	if sj.StatusCommentID != b.StatusCommentID || sj.Repo != b.Repo || sj.PR != b.PR || sj.State != queue.Superseded || sj.SupersededBy != b2.ID {
		t.Errorf("superseded event job = %+v", sj)
	}

	// Every job left runs, in line order.
	finish(t, q, la, queue.Done)
	for _, want := range []string{b2.ID, c.ID, a2.ID} {
		l := claim(t, q, "")
		if l.Job.ID != want {
			t.Errorf("claimed %s, want %s", l.Job.ID, want)
		}
		finish(t, q, l, queue.Done)
	}

	// Without a runner the same holds: two pull requests wait, a pull request's newer job
	// takes its place.
	x, _ := enqueue(t, q, Job(4, "idle"))
	y, d := enqueue(t, q, Job(5, "idle"))
	if d != nil {
		t.Errorf("second pull request's job on an idle pool displaced %s", d.ID)
	}
	x2, d := enqueue(t, q, Job(4, "idle"))
	if d == nil || d.ID != x.ID {
		t.Errorf("pull request 4's second job on an idle pool displaced %v, want %s", d, x.ID)
	}
	if p := position(t, q, x2.ID); p.Position != 1 || p.Ahead != nil {
		t.Errorf("place of the replacement at the front: %d behind %v, want 1 behind none", p.Position, p.Ahead)
	}
	if p := position(t, q, y.ID); p.Position != 2 || p.Ahead == nil || p.Ahead.ID != x2.ID {
		t.Errorf("place of the other pull request's job: %+v, want 2 behind %s", p, x2.ID)
	}
	// Jobs of no pull request (an operator's) displace nobody.
	o1, o2 := Job(0, "ops"), Job(0, "ops")
	o1.Repo, o2.Repo = "", ""
	enqueue(t, q, o1)
	if _, d := enqueue(t, q, o2); d != nil {
		t.Errorf("a job of no pull request displaced %s", d.ID)
	}
}

// testDepthTwo: with two places per pull request, a pull request's third job displaces its
// oldest waiting one and its jobs keep their order; other pull requests are not touched.
func testDepthTwo(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{Depth: 2})
	ev := NewEventLog(q, "bot")
	a, _ := enqueue(t, q, Job(1, ""))
	claim(t, q, "")
	b, _ := enqueue(t, q, Job(2, ""))
	o, _ := enqueue(t, q, Job(9, ""))
	c, d := enqueue(t, q, Job(2, ""))
	if d != nil {
		t.Fatalf("second waiting job of a pull request displaced %s with depth 2", d.ID)
	}
	dj, d := enqueue(t, q, Job(2, ""))
	if d == nil || d.ID != b.ID {
		t.Fatalf("displaced %v, want the pull request's oldest waiting %s", d, b.ID)
	}
	e, d := enqueue(t, q, Job(2, ""))
	if d == nil || d.ID != c.ID {
		t.Fatalf("displaced %v, want the pull request's oldest waiting %s", d, c.ID)
	}
	want := []string{"1 " + a.ID + " running", "2 " + dj.ID + " queued", "3 " + o.ID + " queued", "4 " + e.ID + " queued"}
	if diff := cmp.Diff(want, inLine(t, q)); diff != "" {
		t.Errorf("line (-want +got):\n%s", diff)
	}
	wantKinds(t, ev, b.ID, queue.EventQueued, queue.EventSuperseded)
	wantKinds(t, ev, c.ID, queue.EventQueued, queue.EventSuperseded)
	wantKinds(t, ev, o.ID, queue.EventQueued)
}

// testJobDepth: a job's own Depth (its repository's settings) overrides the queue's: in a
// queue of one place per pull request, jobs of depth 2 keep two waiting, and a third
// displaces the oldest; a job without one keeps the queue's single place.
func testJobDepth(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{Depth: 1})
	deep := func(pr int) queue.Job {
		j := Job(pr, "")
		j.Depth = 2
		return j
	}
	enqueue(t, q, Job(1, ""))
	claim(t, q, "")
	b, _ := enqueue(t, q, deep(2))
	if _, d := enqueue(t, q, deep(2)); d != nil {
		t.Fatalf("a second waiting job of depth 2 displaced %s", d.ID)
	}
	if _, d := enqueue(t, q, deep(2)); d == nil || d.ID != b.ID {
		t.Fatalf("a third job of depth 2 displaced %v, want the oldest waiting %s", d, b.ID)
	}
	enqueue(t, q, Job(3, ""))
	if _, d := enqueue(t, q, Job(3, "")); d == nil {
		t.Fatalf("a job without a depth of its own did not displace its pull request's waiting one (queue depth 1)")
	}
}

func testClaimBlocksUntilEnqueue(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{})
	type result struct {
		l   queue.Lease
		err error
		at  time.Time
	}
	got := make(chan result, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	go func() {
		l, err := q.Claim(ctx, "p")
		got <- result{l, err, time.Now()}
	}()
	select {
	case r := <-got:
		t.Fatalf("Claim returned with nothing queued: %v %v", r.l.Job.ID, r.err)
	case <-time.After(300 * time.Millisecond):
	}
	j, _ := enqueue(t, q, Job(1, "p"))
	start := time.Now()
	r := <-got
	if r.err != nil || r.l.Job.ID != j.ID {
		t.Fatalf("Claim = %s, %v; want %s", r.l.Job.ID, r.err, j.ID)
	}
	// Woken by the enqueue, not by a poll.
	if d := r.at.Sub(start); d > 700*time.Millisecond {
		t.Errorf("Claim took %v after Enqueue", d)
	}
}

func testClaimGivesUp(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := q.Claim(ctx, "p")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Claim: %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("Claim returned %v after its context ended", d)
	}
	// A job enqueued after the wait ended is still there for the next claim.
	j, _ := enqueue(t, q, Job(1, "p"))
	if l := claim(t, q, "p"); l.Job.ID != j.ID {
		t.Errorf("claimed %s, want %s", l.Job.ID, j.ID)
	}
}

// testClaimWaitsForRunning: a pool runs one job per runner that claims: a
// second runner takes the next job of another pull request at once, while a
// job of a pull request that has one running waits for it to finish (then the
// waiting claim gets it at once).
func testClaimWaitsForRunning(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{})
	enqueue(t, q, Job(1, "p"))
	la := claim(t, q, "p")
	b, _ := enqueue(t, q, Job(1, "p")) // the same pull request: it waits behind la
	c, _ := enqueue(t, q, Job(2, "p"))
	if lc := claim(t, q, "p"); lc.Job.ID != c.ID {
		t.Fatalf("a second runner claimed %s, want %s (another PR's, beside the running one)", lc.Job.ID, c.ID)
	}
	got := make(chan queue.Lease, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	go func() {
		l, err := q.Claim(ctx, "p")
		if err != nil {
			t.Errorf("Claim: %v", err)
		}
		got <- l
	}()
	select {
	case l := <-got:
		t.Fatalf("%s ran while its pull request's %s ran", l.Job.ID, la.Job.ID)
	case <-time.After(300 * time.Millisecond):
	}
	finish(t, q, la, queue.Done)
	start := time.Now()
	select {
	case l := <-got:
		if l.Job.ID != b.ID {
			t.Errorf("claimed %s, want %s", l.Job.ID, b.ID)
		}
		if d := time.Since(start); d > 700*time.Millisecond {
			t.Errorf("Claim took %v after Finish", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Claim did not return after the running job finished")
	}
}

func testPoolsIndependent(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{})
	enqueue(t, q, Job(1, "x"))
	claim(t, q, "x")
	enqueue(t, q, Job(1, "x")) // waits for its pull request's running job
	c, _ := enqueue(t, q, Job(3, "y"))
	noClaim(t, q, "x", 300*time.Millisecond)
	if l := claim(t, q, "y"); l.Job.ID != c.ID {
		t.Errorf("claimed %s from y, want %s", l.Job.ID, c.ID)
	}
	noClaim(t, q, "y", 200*time.Millisecond)
}

func testHeartbeatCancelFinish(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{})
	ev := NewEventLog(q, "bot")
	a, _ := enqueue(t, q, Job(1, ""))
	l := claim(t, q, "")
	if l.Job.ID != a.ID || l.Job.State != queue.Running || l.Job.Attempt != 1 || l.Job.Started.IsZero() || l.Token == "" || l.Fence <= 0 || l.Job.Fence != l.Fence {
		t.Fatalf("lease = %+v", l)
	}
	if cancelled, err := q.Heartbeat(t.Context(), l); err != nil || cancelled {
		t.Fatalf("Heartbeat = %v, %v; want false, nil", cancelled, err)
	}
	j, err := q.Cancel(t.Context(), a.ID, "bob")
	if err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	if j.State != queue.Running || !j.CancelRequested || j.CancelledBy != "bob" {
		t.Errorf("Cancel of a running job returned %s (cancel %v, by %q), want running with cancel requested by bob", j.State, j.CancelRequested, j.CancelledBy)
	}
	if cancelled, err := q.Heartbeat(t.Context(), l); err != nil || !cancelled {
		t.Fatalf("Heartbeat after Cancel = %v, %v; want true, nil", cancelled, err)
	}
	wantKinds(t, ev, a.ID, queue.EventQueued, queue.EventStarted)
	done := finish(t, q, l, queue.Cancelled)
	if done.State != queue.Cancelled || done.CancelledBy != "bob" || done.Reason != "" || done.Finished.IsZero() {
		t.Errorf("finished job: %s by %q, reason %q, finished %v; want cancelled by bob, no reason", done.State, done.CancelledBy, done.Reason, done.Finished)
	}
	if _, err := q.Heartbeat(t.Context(), l); !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("Heartbeat after Finish: %v, want ErrLeaseLost", err)
	}
	if _, err := q.Finish(t.Context(), l, queue.Outcome{State: queue.Done}); !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("second Finish: %v, want ErrLeaseLost", err)
	}
	if _, err := q.Cancel(t.Context(), a.ID, "bob"); !errors.Is(err, queue.ErrFinished) {
		t.Errorf("Cancel of a finished job: %v, want ErrFinished", err)
	}
	wantKinds(t, ev, a.ID, queue.EventQueued, queue.EventStarted, queue.EventOutcome)
	if j := ev.Last(t, a.ID, queue.EventOutcome); j.State != queue.Cancelled {
		t.Errorf("outcome event state %s, want cancelled", j.State)
	}
}

func testCancelWaiting(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{})
	ev := NewEventLog(q, "bot")
	enqueue(t, q, Job(1, "p"))
	la := claim(t, q, "p")
	b, _ := enqueue(t, q, Job(2, "p"))
	j, err := q.Cancel(t.Context(), b.ID, "carol")
	if err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	if j.State != queue.Cancelled || j.CancelledBy != "carol" || j.Reason != "" {
		t.Errorf("Cancel of a waiting job = %s by %q, reason %q; want cancelled by carol, no reason", j.State, j.CancelledBy, j.Reason)
	}
	if got := get(t, q, b.ID); got.State != queue.Cancelled || got.CancelledBy != "carol" {
		t.Errorf("Get after Cancel: %s by %q", got.State, got.CancelledBy)
	}
	if got := ev.Last(t, b.ID, queue.EventCancelled); got.CancelledBy != "carol" {
		t.Errorf("cancelled event: by %q, want carol", got.CancelledBy)
	}
	wantKinds(t, ev, b.ID, queue.EventQueued, queue.EventCancelled)
	finish(t, q, la, queue.Done)
	noClaim(t, q, "p", 300*time.Millisecond)
	if _, err := q.Cancel(t.Context(), b.ID, "carol"); !errors.Is(err, queue.ErrFinished) {
		t.Errorf("second Cancel: %v, want ErrFinished", err)
	}
	if _, err := q.Cancel(t.Context(), "no-such-job", "carol"); !errors.Is(err, queue.ErrNotFound) {
		t.Errorf("Cancel of an unknown job: %v, want ErrNotFound", err)
	}
	wantKinds(t, ev, b.ID, queue.EventQueued, queue.EventCancelled)
}

func testFinish(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{})
	ev := NewEventLog(q, "bot")
	a, _ := enqueue(t, q, Job(1, ""))
	l := claim(t, q, "")
	if _, err := q.Finish(t.Context(), l, queue.Outcome{State: queue.Running}); err == nil || errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("Finish as running: %v, want an error", err)
	}
	if _, err := q.Finish(t.Context(), l, queue.Outcome{State: queue.Done, Result: json.RawMessage("{not json")}); err == nil {
		t.Error("Finish with a result that is not JSON: no error")
	}
	bad := l
	bad.Token = "not-the-token"
	if _, err := q.Finish(t.Context(), bad, queue.Outcome{State: queue.Done}); !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("Finish with another token: %v, want ErrLeaseLost", err)
	}
	if _, err := q.Heartbeat(t.Context(), bad); !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("Heartbeat with another token: %v, want ErrLeaseLost", err)
	}
	result := json.RawMessage(`{"rows":[{"test":"baseline","rps":123456.5}]}`)
	j, err := q.Finish(t.Context(), l, queue.Outcome{State: queue.Done, Result: result})
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	for _, got := range []queue.Job{j, get(t, q, a.ID), ev.Last(t, a.ID, queue.EventOutcome)} {
		if got.State != queue.Done || string(got.Result) != string(result) || got.Finished.IsZero() || got.Reason != "" {
			t.Errorf("finished job = %s %q %s %v", got.State, got.Reason, got.Result, got.Finished)
		}
	}
	// A failure keeps its reason.
	enqueue(t, q, Job(2, ""))
	l = claim(t, q, "")
	j, err = q.Finish(t.Context(), l, queue.Outcome{State: queue.Failed, Reason: "gin: build failed"})
	if err != nil || j.State != queue.Failed || j.Reason != "gin: build failed" {
		t.Errorf("Finish as failed = %s %q, %v", j.State, j.Reason, err)
	}
}

func testLeaseLost(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{LeaseTTL: ShortLease})
	ev := NewEventLog(q, "bot")
	a, _ := enqueue(t, q, Job(1, ""))
	claimed := time.Now()
	la := claim(t, q, "")
	b, _ := enqueue(t, q, Job(2, ""))
	if jobs := reap(t, q); len(jobs) != 0 {
		stalled(t, claimed)
		t.Fatalf("Reap with a live lease recovered %v", ids(jobs))
	}
	time.Sleep(ShortLease * 3 / 2)
	jobs := reap(t, q)
	if len(jobs) != 1 || jobs[0].ID != a.ID {
		t.Fatalf("Reap = %v, want [%s]", ids(jobs), a.ID)
	}
	if r := jobs[0]; r.State != queue.Queued || r.Attempt != 2 || r.Reason != queue.ReasonRetried {
		t.Errorf("retried job: %s attempt %d %q", r.State, r.Attempt, r.Reason)
	}
	if jobs := reap(t, q); len(jobs) != 0 {
		t.Errorf("second Reap recovered %v again", ids(jobs))
	}
	if _, err := q.Heartbeat(t.Context(), la); !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("Heartbeat of the lost lease: %v, want ErrLeaseLost", err)
	}
	if _, err := q.Finish(t.Context(), la, queue.Outcome{State: queue.Done}); !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("Finish of the lost lease: %v, want ErrLeaseLost", err)
	}
	// The retried job waits at the front, and a new request does not displace it.
	if p := position(t, q, a.ID); p.Position != 1 {
		t.Errorf("retried job at position %d, want 1", p.Position)
	}
	if p := position(t, q, b.ID); p.Position != 2 {
		t.Errorf("waiting job at position %d, want 2", p.Position)
	}
	// A newer job of the retried job's pull request waits behind it; one of the waiting
	// job's pull request takes that job's place.
	a2, d := enqueue(t, q, Job(1, ""))
	if d != nil {
		t.Errorf("Enqueue of the retried job's pull request displaced %s", d.ID)
	}
	c, d := enqueue(t, q, Job(2, ""))
	if d == nil || d.ID != b.ID {
		t.Errorf("Enqueue behind a retried job displaced %v, want %s", d, b.ID)
	}
	la2 := claim(t, q, "")
	if la2.Job.ID != a.ID || la2.Job.Attempt != 2 || la2.Fence <= la.Fence || la2.Token == la.Token {
		t.Fatalf("claim after the loss = %s attempt %d fence %d (was %d)", la2.Job.ID, la2.Job.Attempt, la2.Fence, la.Fence)
	}
	time.Sleep(ShortLease * 3 / 2)
	jobs = reap(t, q)
	if len(jobs) != 1 || jobs[0].ID != a.ID || jobs[0].State != queue.Failed || jobs[0].Reason != queue.ReasonLost {
		t.Fatalf("Reap after the second loss = %+v", jobs)
	}
	if got := get(t, q, a.ID); got.State != queue.Failed || got.Reason != queue.ReasonLost {
		t.Errorf("Get = %s %q", got.State, got.Reason)
	}
	if diff := cmp.Diff([]string{"1 " + c.ID + " queued", "2 " + a2.ID + " queued"}, inLine(t, q)); diff != "" {
		t.Errorf("line after the failure (-want +got):\n%s", diff)
	}
	if l := claim(t, q, ""); l.Job.ID != c.ID {
		t.Errorf("claimed %s after the failure, want %s", l.Job.ID, c.ID)
	}
	wantKinds(t, ev, a.ID, queue.EventQueued, queue.EventStarted, queue.EventRetried, queue.EventStarted, queue.EventLost)
	wantKinds(t, ev, b.ID, queue.EventQueued, queue.EventSuperseded)
	if j := ev.Last(t, a.ID, queue.EventLost); j.State != queue.Failed || j.Reason != queue.ReasonLost || j.Attempt != 2 {
		t.Errorf("lost event job: %s %q attempt %d", j.State, j.Reason, j.Attempt)
	}
}

func testHeartbeatKeepsLease(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{LeaseTTL: ShortLease})
	enqueue(t, q, Job(1, ""))
	renewed := time.Now() // the lease runs at least ShortLease from here
	l := claim(t, q, "")
	for range 8 {
		time.Sleep(ShortLease / 3)
		beat := time.Now()
		if _, err := q.Heartbeat(t.Context(), l); err != nil {
			if errors.Is(err, queue.ErrLeaseLost) {
				stalled(t, renewed)
			}
			t.Fatalf("Heartbeat: %v", err)
		}
		if jobs := reap(t, q); len(jobs) != 0 {
			stalled(t, beat)
			t.Fatalf("Reap took %v from a heart-beating runner", ids(jobs))
		}
		renewed = beat
	}
	finish(t, q, l, queue.Done)
}

// stalled skips a test whose check that a short lease is still live failed
// after the lease could have run out: since is a moment before the lease was
// last granted or renewed, so under ShortLease later the lease must be live
// and the failure is the queue's. Past it, a machine that stalled (a loaded
// CI host stalls for hundreds of milliseconds) left nothing to judge.
func stalled(t *testing.T, since time.Time) {
	t.Helper()
	if d := time.Since(since); d >= ShortLease {
		t.Skipf("the machine stalled: %v passed since the lease was renewed, past its %v; a live lease cannot be judged", d.Round(time.Millisecond), ShortLease)
	}
}

func testCancelledLost(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{LeaseTTL: ShortLease})
	ev := NewEventLog(q, "bot")
	a, _ := enqueue(t, q, Job(1, ""))
	claim(t, q, "")
	if _, err := q.Cancel(t.Context(), a.ID, "dave"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(ShortLease * 3 / 2)
	jobs := reap(t, q)
	if len(jobs) != 1 || jobs[0].State != queue.Cancelled || jobs[0].CancelledBy != "dave" || jobs[0].Reason != "" {
		t.Fatalf("Reap = %+v, want the job cancelled by dave", jobs)
	}
	wantKinds(t, ev, a.ID, queue.EventQueued, queue.EventStarted, queue.EventCancelled)
	noClaim(t, q, "", 200*time.Millisecond)
}

func testReapersRace(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{LeaseTTL: 200 * time.Millisecond})
	ev := NewEventLog(q, "bot")
	pools := []string{"a", "b", "c"}
	var jobIDs []string
	for i, p := range pools {
		j, _ := enqueue(t, q, Job(i, p))
		jobIDs = append(jobIDs, j.ID)
	}
	race := func() map[string]int {
		seen := make(map[string]int)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				jobs, err := q.Reap(context.Background())
				if err != nil {
					t.Errorf("Reap: %v", err)
				}
				mu.Lock()
				for _, j := range jobs {
					seen[j.ID]++
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		return seen
	}
	for round, kind := range []string{queue.EventRetried, queue.EventLost} {
		for _, p := range pools {
			claim(t, q, p)
		}
		time.Sleep(300 * time.Millisecond)
		seen := race()
		for _, id := range jobIDs {
			if seen[id] != 1 {
				t.Errorf("round %d: %s recovered %d times by racing reapers, want once", round, id, seen[id])
			}
		}
		for _, id := range jobIDs {
			n := 0
			for _, k := range ev.Kinds(t, id) {
				if k == kind {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%d %s events of %s, want 1", n, kind, id)
			}
		}
	}
}

func testFencing(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{})
	var last int64
	for i := range 20 {
		pool := []string{"a", "b"}[i%2]
		enqueue(t, q, Job(i, pool))
		l := claim(t, q, pool)
		if l.Fence <= last || l.Job.Fence != l.Fence {
			t.Fatalf("claim %d: fence %d (job %d) after %d", i, l.Fence, l.Job.Fence, last)
		}
		last = l.Fence
		finish(t, q, l, queue.Done)
	}
}

func testPositionETA(t *testing.T, newQueue NewQueue) {
	clk := NewClock(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC))
	q := newQueue(t, queue.Options{Depth: 2, Now: clk.Now})
	mk := func(pr int, est time.Duration) queue.Job {
		j := Job(pr, "")
		j.Estimate = est
		s, _ := enqueue(t, q, j)
		return s
	}
	a := mk(1, 10*time.Minute)
	if p := position(t, q, a.ID); p.Position != 1 || p.ETA != 0 {
		t.Errorf("only job, not running: %d %v, want 1 0s", p.Position, p.ETA)
	}
	la := claim(t, q, "")
	b := mk(2, 5*time.Minute)
	c := mk(3, 7*time.Minute)
	clk.Add(4 * time.Minute)
	check := func(id string, pos int, eta time.Duration) {
		t.Helper()
		p := position(t, q, id)
		if p.Position != pos || p.ETA != eta || p.Job.ID != id {
			t.Errorf("Position(%s) = %d, %v; want %d, %v", id, p.Position, p.ETA, pos, eta)
		}
	}
	check(a.ID, 1, 0)
	check(b.ID, 2, 6*time.Minute)
	check(c.ID, 3, 11*time.Minute)
	lines, err := q.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || lines[0].Pool != queue.DefaultPool || len(lines[0].Places) != 3 || len(lines[0].Running()) != 1 || lines[0].Places[2].ETA != 11*time.Minute {
		t.Errorf("Status = %+v", lines)
	}
	clk.Add(20 * time.Minute) // the running job overran its estimate
	check(b.ID, 2, 0)
	check(c.ID, 3, 5*time.Minute)
	finish(t, q, la, queue.Done)
	if _, err := q.Position(t.Context(), a.ID); !errors.Is(err, queue.ErrFinished) {
		t.Errorf("Position of a finished job: %v, want ErrFinished", err)
	}
	if _, err := q.Position(t.Context(), "no-such-job"); !errors.Is(err, queue.ErrNotFound) {
		t.Errorf("Position of an unknown job: %v, want ErrNotFound", err)
	}
	check(b.ID, 1, 0)
	check(c.ID, 2, 5*time.Minute)
}

func testDedupe(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{})
	// Only the expiry is timed: every "seen before" check runs under a lease
	// no loaded machine outlasts, and the expiry check sleeps past a short one
	// (time only moves forward, so a slow machine cannot make it fail).
	const long = time.Hour
	seen := func(id string, ttl time.Duration, want bool) {
		t.Helper()
		first, err := q.SeenDelivery(t.Context(), id, ttl)
		if err != nil || first != want {
			t.Errorf("SeenDelivery(%s) = %v, %v; want %v", id, first, err, want)
		}
	}
	seen("d-1", long, true)
	seen("d-1", long, false)
	seen("d-2", long, true)
	seen("d-1", long, false)

	seen("d-3", ShortLease, true)
	time.Sleep(ShortLease * 3 / 2)
	seen("d-3", long, true) // the lease ran out: the redelivery counts as new
	seen("d-3", long, false)

	if err := q.ForgetDelivery(t.Context(), "d-1"); err != nil {
		t.Fatal(err)
	}
	seen("d-1", long, true) // forgotten: the redelivery counts as new
	seen("d-1", long, false)
	seen("d-2", long, false) // forgetting one forgets only that one
	if err := q.ForgetDelivery(t.Context(), "never-seen"); err != nil {
		t.Errorf("ForgetDelivery of an unknown id = %v, want nil", err)
	}
}

func testEvents(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{})
	ctx := t.Context()
	at := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	var sent []queue.Event
	for i := range 3 {
		e := queue.Event{Job: "j1", Kind: queue.EventProgress, Data: json.RawMessage(fmt.Sprintf(`{"step":%d}`, i)), Time: at.Add(time.Duration(i) * time.Second)}
		if err := q.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, e)
	}
	read := func(group, consumer string, max int, block time.Duration) []queue.Delivery {
		t.Helper()
		ds, err := q.Events(ctx, group, consumer, max, block)
		if err != nil {
			t.Fatalf("Events(%s, %s): %v", group, consumer, err)
		}
		return ds
	}
	events := func(ds []queue.Delivery) []queue.Event {
		out := make([]queue.Event, len(ds))
		for i, d := range ds {
			out[i] = d.Event
		}
		return out
	}
	ds := read("bot", "bot-1", 10, 0)
	if diff := cmp.Diff(sent, events(ds)); diff != "" {
		t.Fatalf("first read (-want +got):\n%s", diff)
	}
	if err := q.Ack(ctx, "bot", ds[0].ID); err != nil {
		t.Fatal(err)
	}
	// A restarted consumer gets what it did not acknowledge, same IDs.
	again := read("bot", "bot-1", 10, 0)
	if diff := cmp.Diff(ds[1:], again); diff != "" {
		t.Errorf("redelivery (-want +got):\n%s", diff)
	}
	if other := read("bot", "bot-2", 10, 0); len(other) != 0 {
		t.Errorf("another consumer of the group got %d events delivered to bot-1", len(other))
	}
	if err := q.Ack(ctx, "bot", again[0].ID, again[1].ID); err != nil {
		t.Fatal(err)
	}
	if rest := read("bot", "bot-1", 10, 0); len(rest) != 0 {
		t.Errorf("after Ack: %d events", len(rest))
	}
	// Another group reads the stream on its own, max at a time.
	g2 := read("site", "s", 2, 0)
	if diff := cmp.Diff(sent[:2], events(g2)); diff != "" {
		t.Errorf("second group (-want +got):\n%s", diff)
	}
	if err := q.Ack(ctx, "site", g2[0].ID, g2[1].ID); err != nil {
		t.Fatal(err)
	}
	if g2 = read("site", "s", 2, 0); len(g2) != 1 || g2[0].Kind != queue.EventProgress || string(g2[0].Data) != `{"step":2}` {
		t.Errorf("second group, rest = %+v", g2)
	}
	// A blocking read waits for the next event.
	go func() {
		time.Sleep(200 * time.Millisecond)
		if err := q.Publish(context.Background(), queue.Event{Job: "j2", Kind: queue.EventRow, Data: json.RawMessage(`{}`)}); err != nil {
			t.Error(err)
		}
	}()
	start := time.Now()
	ds = read("bot", "bot-1", 10, 5*time.Second)
	if len(ds) != 1 || ds[0].Job != "j2" || ds[0].Time.IsZero() {
		t.Fatalf("blocking read = %+v", ds)
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("blocking read returned %v after the publish", d)
	}
	if err := q.Ack(ctx, "bot", ds[0].ID); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if ds = read("bot", "bot-1", 10, 300*time.Millisecond); len(ds) != 0 {
		t.Errorf("blocking read with nothing new = %+v", ds)
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 2*time.Second {
		t.Errorf("blocking read with nothing new took %v, want about 300ms", d)
	}
}

func testList(t *testing.T, newQueue NewQueue) {
	clk := NewClock(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC))
	q := newQueue(t, queue.Options{Depth: 2, Now: clk.Now})
	mk := func(pr int, pool string) queue.Job {
		clk.Add(time.Second)
		j, _ := enqueue(t, q, Job(pr, pool))
		return j
	}
	d := mk(1, "a")
	l := claim(t, q, "a")
	finish(t, q, l, queue.Done)
	a := mk(2, "a")
	claim(t, q, "a")
	b := mk(3, "a")
	c := mk(4, "b")
	e := mk(5, "b")
	if _, err := q.Cancel(t.Context(), e.ID, "x"); err != nil {
		t.Fatal(err)
	}
	list := func(f queue.Filter) []string {
		t.Helper()
		jobs, err := q.List(t.Context(), f)
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		return ids(jobs)
	}
	for _, tt := range []struct {
		name string
		f    queue.Filter
		want []string
	}{
		{"all", queue.Filter{}, []string{a.ID, b.ID, c.ID, e.ID, d.ID}},
		{"pool", queue.Filter{Pool: "b"}, []string{c.ID, e.ID}},
		{"states", queue.Filter{States: []queue.State{queue.Done, queue.Running}}, []string{a.ID, d.ID}},
		{"pr", queue.Filter{Repo: "octo/arena", PR: 3}, []string{b.ID}},
		{"other repo", queue.Filter{Repo: "octo/other"}, nil},
	} {
		if diff := cmp.Diff(tt.want, list(tt.f), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	if j := get(t, q, d.ID); j.State != queue.Done {
		t.Errorf("Get of a finished job: %s", j.State)
	}
}

func testDrain(t *testing.T, newQueue NewQueue) {
	q := newQueue(t, queue.Options{Depth: 2})
	ev := NewEventLog(q, "bot")
	a, _ := enqueue(t, q, Job(1, "p"))
	claim(t, q, "p")
	b, _ := enqueue(t, q, Job(2, "p"))
	c, _ := enqueue(t, q, Job(3, "p"))
	o, _ := enqueue(t, q, Job(4, "other"))
	jobs, err := q.Drain(t.Context(), "p", "ops")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{b.ID, c.ID}, ids(jobs)); diff != "" {
		t.Errorf("drained (-want +got):\n%s", diff)
	}
	for _, j := range jobs {
		if j.State != queue.Cancelled || j.CancelledBy != "ops" || j.Reason != "" {
			t.Errorf("drained job %s: %s by %q, reason %q; want cancelled by ops", j.ID, j.State, j.CancelledBy, j.Reason)
		}
		wantKinds(t, ev, j.ID, queue.EventQueued, queue.EventCancelled)
	}
	if j := get(t, q, a.ID); j.State != queue.Running {
		t.Errorf("running job after Drain: %s", j.State)
	}
	if j := get(t, q, o.ID); j.State != queue.Queued {
		t.Errorf("other pool's job after Drain: %s", j.State)
	}
	if jobs, err := q.Drain(t.Context(), "p", "ops"); err != nil || len(jobs) != 0 {
		t.Errorf("second Drain = %v, %v", ids(jobs), err)
	}
	if jobs, err := q.Drain(t.Context(), "never-used", "ops"); err != nil || len(jobs) != 0 {
		t.Errorf("Drain of an unknown pool = %v, %v", ids(jobs), err)
	}
}
