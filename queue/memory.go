package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// Memory is the in-process Queue: the twin of Redis for tests, and the state
// machine of Disk, which keeps the same state in a file. On its own its state
// lives and dies with the process. One mutex guards it all; under it, every
// change of a job is the lifecycle's transition applied to the jobs and lines
// in memory. The parts are small types: the jobs and lines (memLife), the
// event stream with its consumer groups (memStream, behind Publish, Events
// and Ack), the delivery IDs (memSeen, behind SeenDelivery and
// ForgetDelivery), when runners were seen (memRunners) and the live runner
// hosts (memHosts, behind Announce and Hosts).
type Memory struct {
	*memCore
	memEvents
	memDeliveries
	memHosts
	memLeases
}

var _ Queue = (*Memory)(nil)

// memCore is a Memory's state, the mutex that guards it and the store that
// keeps it durable (Disk's file; nil for a Memory of its own).
type memCore struct {
	opts Options

	mu      sync.Mutex
	life    memLife
	stream  memStream
	seen    memSeen
	runners memRunners
	hosts   map[string]memHost // hostKey -> the host; kept in memory only, even by Disk
	leases  map[string]memLease

	store memStore // nil for a Memory of its own; see persist.go
	dirty memDirty
	err   error // set when the store failed and the state could not be loaded again
}

// NewMemory returns an empty in-memory queue. Options.Prefix is ignored.
func NewMemory(o Options) *Memory {
	c := &memCore{opts: o.withDefaults()}
	c.resetLocked()
	return &Memory{memCore: c, memEvents: memEvents{c}, memDeliveries: memDeliveries{c}, memHosts: memHosts{c}, memLeases: memLeases{c}}
}

// resetLocked empties the queue. Blocked Claims and Events are woken.
func (c *memCore) resetLocked() {
	c.life.reset()
	c.stream.reset(c.opts.MaxEvents)
	c.seen.reset()
	c.runners.reset()
}

// lock locks the queue for an operation under ctx. It fails, unlocked, when
// ctx is done or the queue is broken.
func (c *memCore) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	return nil
}

// applyLocked applies one lifecycle command to the jobs and lines of pool
// ("" for the pool of the job it names) and publishes its events.
func (c *memCore) applyLocked(cmd command, pool string) (change, error) {
	now := c.opts.Now()
	ch, err := transition(c.life.scene(cmd, pool, now, c.opts.Depth), cmd)
	if err != nil || ch.Again {
		return ch, err
	}
	c.life.apply(ch, c.opts)
	for _, e := range ch.Events {
		var data []byte
		for _, j := range ch.Put {
			if j.ID == e.Job {
				data, _ = json.Marshal(j)
			}
		}
		c.stream.append(Event{Job: e.Job, Kind: e.Kind, Data: data, Time: now})
	}
	return ch, nil
}

// apply locks the queue, applies one command, saves and unlocks. name and id
// ("approve", "3f9c") prefix its errors.
func (c *memCore) apply(ctx context.Context, name, id string, cmd command) (change, error) {
	if err := c.lock(ctx); err != nil {
		return change{}, err
	}
	defer c.mu.Unlock()
	ch, err := c.applyLocked(cmd, "")
	if err != nil {
		return ch, fmt.Errorf("%s %s: %w", name, id, err)
	}
	if err := c.commitLocked(); err != nil {
		return change{}, fmt.Errorf("%s %s: %w", name, id, err)
	}
	return ch, nil
}

func (q *Memory) Submit(ctx context.Context, j Job) (Job, *Job, error) {
	j = prepareSubmit(j, q.opts.Now())
	ch, err := q.apply(ctx, "submit", j.ID, command{Op: opSubmit, Job: j})
	if err != nil {
		return Job{}, nil, err
	}
	return ch.Reply, ch.Other, nil
}

func (q *Memory) Approve(ctx context.Context, id, by string) (Job, *Job, error) {
	ch, err := q.apply(ctx, "approve", id, command{Op: opApprove, ID: id, By: by})
	return ch.Reply, ch.Other, err
}

func (q *Memory) Reject(ctx context.Context, id, by string) (Job, error) {
	ch, err := q.apply(ctx, "reject", id, command{Op: opReject, ID: id, By: by})
	return ch.Reply, err
}

func (q *Memory) Expire(ctx context.Context) ([]Job, error) {
	if err := q.lock(ctx); err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	var out []Job
	for _, id := range slices.Clone(q.life.awaiting) {
		if ch, err := q.applyLocked(command{Op: opExpire, ID: id}, ""); err == nil {
			out = append(out, ch.Reply)
		}
	}
	if err := q.commitLocked(); err != nil {
		return nil, fmt.Errorf("expire: %w", err)
	}
	return out, nil
}

func (q *Memory) Amend(ctx context.Context, id string, a Amendment) (Job, error) {
	ch, err := q.apply(ctx, "amend", id, command{Op: opAmend, ID: id, Amendment: a})
	if err != nil {
		return Job{}, err
	}
	return ch.Reply, nil
}

func (q *Memory) Runners(ctx context.Context) ([]Runner, error) {
	if err := q.lock(ctx); err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	return q.runners.list(slices.Collect(maps.Keys(q.life.pools)), q.opts.Now()), nil
}

func (q *Memory) Enqueue(ctx context.Context, j Job) (Job, *Job, error) {
	j = prepare(j, q.opts.Now())
	ch, err := q.apply(ctx, "enqueue", j.ID, command{Op: opEnqueue, Job: j})
	if err != nil {
		return Job{}, nil, err
	}
	return ch.Reply, ch.Other, nil
}

func (q *Memory) Claim(ctx context.Context, pool string) (Lease, error) {
	if pool == "" {
		pool = DefaultPool
	}
	if err := q.lock(ctx); err != nil {
		return Lease{}, err
	}
	q.runners.enter(pool)
	q.mu.Unlock()
	claimed := false
	defer func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		q.runners.leave(pool)
		if !claimed && q.err == nil {
			// The runner waited until now. Saving this is best effort: the
			// Claim ends with ctx's error anyway.
			q.runners.mark(pool, q.opts.Now())
			_ = q.commitLocked()
		}
	}()
	for {
		if err := q.lock(ctx); err != nil {
			return Lease{}, err
		}
		q.runners.mark(pool, q.opts.Now())
		token := newToken()
		ch, cerr := q.applyLocked(command{Op: opClaim, Token: token}, pool)
		err := q.commitLocked()
		wake := q.life.wake
		q.mu.Unlock()
		if err != nil {
			return Lease{}, fmt.Errorf("claim from %s: %w", pool, err)
		}
		if cerr == nil {
			claimed = true
			return Lease{Job: ch.Reply, Token: token, Fence: ch.Reply.Fence}, nil
		}
		if cerr != errBusy && cerr != errEmpty {
			return Lease{}, fmt.Errorf("claim from %s: %w", pool, cerr)
		}
		select {
		case <-ctx.Done():
			return Lease{}, ctx.Err()
		case <-wake:
		}
	}
}

func (q *Memory) ClaimShare(ctx context.Context, pool, parent string) (Lease, error) {
	if pool == "" {
		pool = DefaultPool
	}
	if err := q.lock(ctx); err != nil {
		return Lease{}, err
	}
	defer q.mu.Unlock()
	q.runners.mark(pool, q.opts.Now())
	token := newToken()
	ch, cerr := q.applyLocked(command{Op: opClaim, ID: parent, Token: token}, pool)
	if err := q.commitLocked(); err != nil {
		return Lease{}, fmt.Errorf("claim a share of %s: %w", parent, err)
	}
	switch {
	case cerr == errEmpty || cerr == errBusy:
		return Lease{}, fmt.Errorf("claim a share of %s: %w", parent, ErrNoShare)
	case cerr != nil:
		return Lease{}, fmt.Errorf("claim a share of %s: %w", parent, cerr)
	}
	return Lease{Job: ch.Reply, Token: token, Fence: ch.Reply.Fence}, nil
}

func (q *Memory) Heartbeat(ctx context.Context, l Lease) (bool, error) {
	if err := q.lock(ctx); err != nil {
		return false, err
	}
	defer q.mu.Unlock()
	q.runners.mark(l.Job.Pool, q.opts.Now())
	ch, herr := q.applyLocked(command{Op: opHeartbeat, ID: l.Job.ID, Token: l.Token}, l.Job.Pool)
	if err := q.commitLocked(); err != nil {
		return false, fmt.Errorf("heartbeat %s: %w", l.Job.ID, err)
	}
	if herr != nil {
		return false, fmt.Errorf("heartbeat %s: %w", l.Job.ID, herr)
	}
	return ch.Cancelled, nil
}

func (q *Memory) Finish(ctx context.Context, l Lease, o Outcome) (Job, error) {
	if err := checkOutcome(o); err != nil {
		return Job{}, err
	}
	if err := q.lock(ctx); err != nil {
		return Job{}, err
	}
	defer q.mu.Unlock()
	ch, err := q.applyLocked(command{Op: opFinish, ID: l.Job.ID, Token: l.Token, Outcome: o}, l.Job.Pool)
	if err != nil {
		return Job{}, fmt.Errorf("finish %s: %w", l.Job.ID, err)
	}
	if err := q.commitLocked(); err != nil {
		return Job{}, fmt.Errorf("finish %s: %w", l.Job.ID, err)
	}
	return ch.Reply, nil
}

func (q *Memory) Cancel(ctx context.Context, id, by string) (Job, error) {
	ch, err := q.apply(ctx, "cancel", id, command{Op: opCancel, ID: id, By: by})
	return ch.Reply, err
}

func (q *Memory) Drain(ctx context.Context, pool, by string) ([]Job, error) {
	if err := q.lock(ctx); err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	p := q.life.pools[pool]
	if p == nil {
		return nil, nil
	}
	var out []Job
	for _, id := range slices.Concat(p.retry, p.waiting) {
		if ch, err := q.applyLocked(command{Op: opDrain, ID: id, By: by}, pool); err == nil {
			out = append(out, ch.Reply)
		}
	}
	if err := q.commitLocked(); err != nil {
		return nil, fmt.Errorf("drain %s: %w", pool, err)
	}
	return out, nil
}

func (q *Memory) Position(ctx context.Context, id string) (Place, error) {
	if err := q.lock(ctx); err != nil {
		return Place{}, err
	}
	defer q.mu.Unlock()
	j := q.life.get(id)
	if j == nil {
		return Place{}, fmt.Errorf("position of %s: %w", id, ErrNotFound)
	}
	switch {
	case j.State.Terminal():
		return Place{Job: cloneJob(j.Job)}, fmt.Errorf("position of %s: %w", id, ErrFinished)
	case j.State == AwaitingApproval:
		return Place{Job: cloneJob(j.Job)}, fmt.Errorf("position of %s: in no line yet: %w", id, ErrNotAwaiting)
	}
	for _, pl := range q.life.line(j.Pool, q.opts.Now()).Places {
		if pl.Job.ID == id {
			return pl, nil
		}
	}
	return Place{}, fmt.Errorf("position of %s: job in state %s is in no line", id, j.State)
}

func (q *Memory) Status(ctx context.Context) ([]Line, error) {
	if err := q.lock(ctx); err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	return q.life.status(q.opts.Now()), nil
}

func (q *Memory) List(ctx context.Context, f Filter) ([]Job, error) {
	if err := q.lock(ctx); err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	lines := q.life.status(q.opts.Now())
	awaiting := make([]Job, 0, len(q.life.awaiting))
	for _, id := range q.life.awaiting {
		awaiting = append(awaiting, cloneJob(q.life.jobs[id].Job))
	}
	var recent []Job
	for _, id := range q.life.recent {
		if j := q.life.get(id); j != nil {
			recent = append(recent, cloneJob(j.Job))
		}
	}
	return listed(lines, awaiting, recent, f), nil
}

func (q *Memory) Get(ctx context.Context, id string) (Job, error) {
	if err := q.lock(ctx); err != nil {
		return Job{}, err
	}
	defer q.mu.Unlock()
	j := q.life.get(id)
	if j == nil {
		return Job{}, fmt.Errorf("get %s: %w", id, ErrNotFound)
	}
	return cloneJob(j.Job), nil
}

func (q *Memory) Reap(ctx context.Context) ([]Job, error) {
	if err := q.lock(ctx); err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	var out []Job
	for _, name := range slices.Sorted(maps.Keys(q.life.pools)) {
		if ch, err := q.applyLocked(command{Op: opReap}, name); err == nil {
			out = append(out, ch.Reply)
		}
	}
	if err := q.commitLocked(); err != nil {
		return nil, fmt.Errorf("reap: %w", err)
	}
	return out, nil
}

func (q *Memory) RunReaper(ctx context.Context, interval time.Duration) error {
	return runReaper(ctx, q.Reap, interval, q.opts.Logger)
}

// memRunners is when each pool's runners were last seen.
type memRunners struct {
	seen     map[string]time.Time // pool -> Options.Now when a runner was last seen
	claiming map[string]int       // pool -> Claims waiting on it now
}

func (r *memRunners) reset() {
	r.seen = make(map[string]time.Time)
	if r.claiming == nil {
		r.claiming = make(map[string]int)
	}
}

// mark records that a runner of pool was seen at now.
func (r *memRunners) mark(pool string, now time.Time) { r.seen[pool] = now }

// enter and leave count the Claims waiting on pool: such a runner is seen
// all the time it waits.
func (r *memRunners) enter(pool string) { r.claiming[pool]++ }

func (r *memRunners) leave(pool string) {
	r.claiming[pool]--
	if r.claiming[pool] == 0 {
		delete(r.claiming, pool)
	}
}

// list returns the runners of every pool in pools or seen, sorted by name.
func (r *memRunners) list(pools []string, now time.Time) []Runner {
	names := make(map[string]bool)
	for _, name := range pools {
		names[name] = true
	}
	for name := range r.seen {
		names[name] = true
	}
	out := make([]Runner, 0, len(names))
	for _, name := range slices.Sorted(maps.Keys(names)) {
		rn := Runner{Pool: name, Seen: r.seen[name]}
		if r.claiming[name] > 0 {
			rn.Seen = now
		}
		out = append(out, rn)
	}
	return out
}

func cloneJob(j Job) Job {
	j.Frameworks = slices.Clone(j.Frameworks)
	j.Tests = slices.Clone(j.Tests)
	j.Rows = slices.Clone(j.Rows)
	j.Payload = slices.Clone(j.Payload)
	j.Result = slices.Clone(j.Result)
	return j
}

// amend applies a to j and reports whether what the status comment shows
// changed.
func amend(j *Job, a Amendment) (visible bool) {
	if a.StatusCommentID != 0 && a.StatusCommentID != j.StatusCommentID {
		j.StatusCommentID = a.StatusCommentID
		visible = true
	}
	if a.HeadMoved != nil && *a.HeadMoved != j.HeadMoved {
		j.HeadMoved = *a.HeadMoved
		visible = true
	}
	if a.ETag != nil {
		j.ETag = *a.ETag
	}
	if a.Shown != nil {
		j.Shown = *a.Shown
	}
	if a.Check != nil {
		j.Check = *a.Check
	}
	return visible
}

// listed applies a filter to the lines, the jobs awaiting approval and the
// recent terminal jobs.
func listed(lines []Line, awaiting, recent []Job, f Filter) []Job {
	var out []Job
	seen := make(map[string]bool)
	for _, l := range lines {
		for _, p := range l.Places {
			if f.match(p.Job) {
				out = append(out, p.Job)
			}
			seen[p.Job.ID] = true
		}
	}
	for _, j := range awaiting {
		if !seen[j.ID] && f.match(j) {
			out = append(out, j)
		}
		seen[j.ID] = true
	}
	for _, j := range recent {
		if !seen[j.ID] && f.match(j) {
			out = append(out, j)
		}
	}
	return out
}

func newToken() string { return newID() + newID() }
