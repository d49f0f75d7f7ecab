package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Memory is the in-process Queue: the twin of Redis for tests, and the state
// machine of Disk, which keeps the same state in a file. On its own its state
// lives and dies with the process. One mutex guards it all.
type Memory struct {
	opts Options

	mu       sync.Mutex
	jobs     map[string]*memJob
	pools    map[string]*memPool
	awaiting []string             // IDs of jobs awaiting approval, the oldest first
	recent   []string             // terminal job IDs, the latest first, at most opts.Recent
	expiry   []string             // terminal job IDs in the order they became terminal, for pruning
	fence    int64                // the last fencing number given out
	wake     chan struct{}        // closed and replaced when a blocked Claim may proceed
	evwake   chan struct{}        // closed and replaced when an event is appended
	seen     map[string]time.Time // delivery ID -> when it is forgotten
	sweepAt  int                  // sweep seen when it grows to this size
	entries  []memEntry           // the event stream, oldest first
	evseq    uint64
	groups   map[string]*memGroup
	runners  map[string]time.Time // pool -> Options.Now when a runner was last seen
	claiming map[string]int       // pool -> Claims waiting on it now

	store memStore // nil for a Memory of its own; see persist.go
	dirty memDirty
	err   error // set when the store failed and the state could not be loaded again
}

type memJob struct {
	Job
	expires time.Time // zero until terminal
}

type memPool struct {
	run     *memRun
	retry   []string // jobs retried after a lost runner: they run before waiting ones
	waiting []string
}

type memRun struct {
	id, token string
	deadline  time.Time
}

type memEntry struct {
	n  uint64
	id string
	ev Event
}

type memGroup struct {
	last    uint64              // the last entry delivered to the group
	pending map[string][]uint64 // consumer -> delivered, unacknowledged entries in order
}

var _ Queue = (*Memory)(nil)

// NewMemory returns an empty in-memory queue. Options.Prefix is ignored.
func NewMemory(o Options) *Memory {
	q := &Memory{opts: o.withDefaults()}
	q.resetLocked()
	return q
}

// resetLocked empties the queue.
func (q *Memory) resetLocked() {
	q.jobs = make(map[string]*memJob)
	q.pools = make(map[string]*memPool)
	q.awaiting, q.recent, q.expiry, q.entries = nil, nil, nil, nil
	q.fence, q.evseq, q.sweepAt = 0, 0, 0
	q.seen = make(map[string]time.Time)
	q.groups = make(map[string]*memGroup)
	q.runners = make(map[string]time.Time)
	if q.claiming == nil {
		q.claiming = make(map[string]int)
	}
	if q.wake != nil {
		close(q.wake)
		close(q.evwake)
	}
	q.wake = make(chan struct{})
	q.evwake = make(chan struct{})
}

// lock locks the queue for an operation under ctx. It fails, unlocked, when
// ctx is done or the queue is broken.
func (q *Memory) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.Lock()
	if q.err != nil {
		q.mu.Unlock()
		return q.err
	}
	return nil
}

// changedLocked wakes every blocked Claim.
func (q *Memory) changedLocked() {
	close(q.wake)
	q.wake = make(chan struct{})
}

func (q *Memory) poolLocked(name string) *memPool {
	p := q.pools[name]
	if p == nil {
		p = &memPool{}
		q.pools[name] = p
	}
	return p
}

// getLocked returns a job, or nil when unknown or expired.
func (q *Memory) getLocked(id string) *memJob {
	j := q.jobs[id]
	if j == nil || !j.expires.IsZero() && time.Now().After(j.expires) {
		return nil
	}
	return j
}

func (q *Memory) pruneLocked() {
	now := time.Now()
	for len(q.expiry) > 0 {
		id := q.expiry[0]
		j := q.jobs[id]
		ended := j != nil && !j.expires.IsZero() // not a job enqueued again under the same ID
		if ended && now.Before(j.expires) {
			break
		}
		if ended {
			delete(q.jobs, id)
			q.touchLocked(id)
		}
		q.expiry = q.expiry[1:]
	}
}

// endLocked moves a job to a terminal state.
func (q *Memory) endLocked(j *memJob, s State, reason string) {
	j.State = s
	j.Reason = reason
	j.Finished = q.opts.Now()
	j.expires = time.Now().Add(q.opts.Retain)
	q.touchLocked(j.ID)
	q.recent = slices.Insert(q.recent, 0, j.ID)
	if len(q.recent) > q.opts.Recent {
		q.recent = q.recent[:q.opts.Recent]
	}
	q.expiry = append(q.expiry, j.ID)
	q.pruneLocked()
}

// emitLocked publishes one of the queue's own events, the job as its data.
func (q *Memory) emitLocked(j *memJob, kind string) {
	q.touchLocked(j.ID)
	data, _ := json.Marshal(j.Job)
	q.appendLocked(Event{Job: j.ID, Kind: kind, Data: data, Time: q.opts.Now()})
}

func (q *Memory) appendLocked(e Event) {
	q.evseq++
	e.Data = slices.Clone(e.Data)
	id := fmt.Sprintf("%d-%d", time.Now().UnixMilli(), q.evseq)
	q.entries = append(q.entries, memEntry{n: q.evseq, id: id, ev: e})
	if over := len(q.entries) - q.opts.MaxEvents; over > 0 {
		q.entries = slices.Delete(q.entries, 0, over)
	}
	close(q.evwake)
	q.evwake = make(chan struct{})
}

// unawaitLocked takes a job out of the jobs awaiting approval.
func (q *Memory) unawaitLocked(id string) {
	q.awaiting = slices.DeleteFunc(q.awaiting, func(s string) bool { return s == id })
}

// lineUpLocked puts a queued job at the back of its pool's line and returns
// the waiting job it displaced, if any.
func (q *Memory) lineUpLocked(j *memJob) *Job {
	p := q.poolLocked(j.Pool)
	p.waiting = append(p.waiting, j.ID)
	var displaced *Job
	if len(p.waiting) > q.opts.Depth {
		old := q.jobs[p.waiting[0]]
		p.waiting = p.waiting[1:]
		old.SupersededBy = j.ID
		q.endLocked(old, Superseded, "")
		q.emitLocked(old, EventSuperseded)
		d := cloneJob(old.Job)
		displaced = &d
	}
	q.changedLocked()
	return displaced
}

func (q *Memory) Submit(ctx context.Context, j Job) (Job, *Job, error) {
	if err := q.lock(ctx); err != nil {
		return Job{}, nil, err
	}
	defer q.mu.Unlock()
	j = prepareSubmit(j, q.opts.Now())
	if q.getLocked(j.ID) != nil {
		return Job{}, nil, fmt.Errorf("submit %s: %w", j.ID, ErrExists)
	}
	var old *memJob
	for _, id := range q.awaiting {
		if o := q.jobs[id]; owner(o.Job) == owner(j) {
			old = o
			break
		}
	}
	n := &memJob{Job: cloneJob(j)}
	q.jobs[j.ID] = n
	q.awaiting = append(q.awaiting, j.ID)
	q.emitLocked(n, EventSubmitted)
	var replaced *Job
	if old != nil {
		q.unawaitLocked(old.ID)
		old.SupersededBy = j.ID
		q.endLocked(old, Superseded, "")
		q.emitLocked(old, EventSuperseded)
		r := cloneJob(old.Job)
		replaced = &r
	}
	if err := q.commitLocked(); err != nil {
		return Job{}, nil, fmt.Errorf("submit %s: %w", j.ID, err)
	}
	return cloneJob(j), replaced, nil
}

// awaitingLocked returns a job awaiting approval, or the error for op
// ("approve") when it does not await approval, with the job when known.
func (q *Memory) awaitingLocked(op, id string) (*memJob, error) {
	j := q.getLocked(id)
	switch {
	case j == nil:
		return nil, fmt.Errorf("%s %s: %w", op, id, ErrNotFound)
	case j.State.Terminal():
		return j, fmt.Errorf("%s %s: %w", op, id, ErrFinished)
	case j.State != AwaitingApproval:
		return j, fmt.Errorf("%s %s: %w", op, id, ErrNotAwaiting)
	}
	return j, nil
}

func (q *Memory) Approve(ctx context.Context, id, by string) (Job, *Job, error) {
	if err := q.lock(ctx); err != nil {
		return Job{}, nil, err
	}
	defer q.mu.Unlock()
	j, err := q.awaitingLocked("approve", id)
	if err != nil {
		return jobOf(j), nil, err
	}
	now := q.opts.Now()
	q.unawaitLocked(id)
	j.State = Queued
	j.Approver, j.Approved, j.Queued = by, now, now
	j.Attempt = 1
	q.emitLocked(j, EventQueued)
	displaced := q.lineUpLocked(j)
	if err := q.commitLocked(); err != nil {
		return Job{}, nil, fmt.Errorf("approve %s: %w", id, err)
	}
	return cloneJob(j.Job), displaced, nil
}

func (q *Memory) Reject(ctx context.Context, id, by string) (Job, error) {
	if err := q.lock(ctx); err != nil {
		return Job{}, err
	}
	defer q.mu.Unlock()
	j, err := q.awaitingLocked("reject", id)
	if err != nil {
		return jobOf(j), err
	}
	q.unawaitLocked(id)
	j.RejectedBy = by
	q.endLocked(j, Rejected, "")
	q.emitLocked(j, EventRejected)
	if err := q.commitLocked(); err != nil {
		return Job{}, fmt.Errorf("reject %s: %w", id, err)
	}
	return cloneJob(j.Job), nil
}

func (q *Memory) Expire(ctx context.Context) ([]Job, error) {
	if err := q.lock(ctx); err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	now := q.opts.Now()
	var out []Job
	for _, id := range slices.Clone(q.awaiting) {
		j := q.jobs[id]
		if j.Expires.IsZero() || j.Expires.After(now) {
			continue
		}
		q.unawaitLocked(id)
		q.endLocked(j, Expired, "")
		q.emitLocked(j, EventExpired)
		out = append(out, cloneJob(j.Job))
	}
	if err := q.commitLocked(); err != nil {
		return nil, fmt.Errorf("expire: %w", err)
	}
	return out, nil
}

func (q *Memory) Amend(ctx context.Context, id string, a Amendment) (Job, error) {
	if err := q.lock(ctx); err != nil {
		return Job{}, err
	}
	defer q.mu.Unlock()
	j := q.getLocked(id)
	if j == nil {
		return Job{}, fmt.Errorf("amend %s: %w", id, ErrNotFound)
	}
	if amend(&j.Job, a) {
		q.emitLocked(j, EventUpdated)
	}
	q.touchLocked(id)
	if err := q.commitLocked(); err != nil {
		return Job{}, fmt.Errorf("amend %s: %w", id, err)
	}
	return cloneJob(j.Job), nil
}

func (q *Memory) Runners(ctx context.Context) ([]Runner, error) {
	if err := q.lock(ctx); err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	now := q.opts.Now()
	names := make(map[string]bool)
	for name := range q.pools {
		names[name] = true
	}
	for name := range q.runners {
		names[name] = true
	}
	out := make([]Runner, 0, len(names))
	for _, name := range slices.Sorted(maps.Keys(names)) {
		r := Runner{Pool: name, Seen: q.runners[name]}
		if q.claiming[name] > 0 {
			r.Seen = now
		}
		out = append(out, r)
	}
	return out, nil
}

func (q *Memory) Enqueue(ctx context.Context, j Job) (Job, *Job, error) {
	if err := q.lock(ctx); err != nil {
		return Job{}, nil, err
	}
	defer q.mu.Unlock()
	j = prepare(j, q.opts.Now())
	if q.getLocked(j.ID) != nil {
		return Job{}, nil, fmt.Errorf("enqueue %s: %w", j.ID, ErrExists)
	}
	n := &memJob{Job: cloneJob(j)}
	q.jobs[j.ID] = n
	q.touchLocked(j.ID)
	q.emitLocked(n, EventQueued)
	displaced := q.lineUpLocked(n)
	if err := q.commitLocked(); err != nil {
		return Job{}, nil, fmt.Errorf("enqueue %s: %w", j.ID, err)
	}
	return cloneJob(j), displaced, nil
}

// claimLocked starts the next job of pool, if it may.
func (q *Memory) claimLocked(pool string) (Lease, bool) {
	p := q.pools[pool]
	if p == nil || p.run != nil {
		return Lease{}, false
	}
	var id string
	switch {
	case len(p.retry) > 0:
		id, p.retry = p.retry[0], p.retry[1:]
	case len(p.waiting) > 0:
		id, p.waiting = p.waiting[0], p.waiting[1:]
	default:
		return Lease{}, false
	}
	j := q.jobs[id]
	q.fence++
	j.State = Running
	j.Started = q.opts.Now()
	j.Fence = q.fence
	token := newToken()
	p.run = &memRun{id: id, token: token, deadline: time.Now().Add(q.opts.LeaseTTL)}
	q.emitLocked(j, EventStarted)
	return Lease{Job: cloneJob(j.Job), Token: token, Fence: q.fence}, true
}

func (q *Memory) Claim(ctx context.Context, pool string) (Lease, error) {
	if pool == "" {
		pool = DefaultPool
	}
	if err := q.lock(ctx); err != nil {
		return Lease{}, err
	}
	q.claiming[pool]++
	q.mu.Unlock()
	claimed := false
	defer func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		q.claiming[pool]--
		if q.claiming[pool] == 0 {
			delete(q.claiming, pool)
		}
		if !claimed && q.err == nil {
			// The runner waited until now. Saving this is best effort: the
			// Claim ends with ctx's error anyway.
			q.runners[pool] = q.opts.Now()
			_ = q.commitLocked()
		}
	}()
	for {
		if err := q.lock(ctx); err != nil {
			return Lease{}, err
		}
		q.runners[pool] = q.opts.Now()
		l, ok := q.claimLocked(pool)
		err := q.commitLocked()
		wake := q.wake
		q.mu.Unlock()
		if err != nil {
			return Lease{}, fmt.Errorf("claim from %s: %w", pool, err)
		}
		if ok {
			claimed = true
			return l, nil
		}
		select {
		case <-ctx.Done():
			return Lease{}, ctx.Err()
		case <-wake:
		}
	}
}

// leaseLocked returns the pool and job of a lease that is still held.
func (q *Memory) leaseLocked(l Lease) (*memPool, *memJob, error) {
	p := q.pools[l.Job.Pool]
	if p == nil || p.run == nil || p.run.id != l.Job.ID || p.run.token != l.Token {
		return nil, nil, fmt.Errorf("job %s: %w", l.Job.ID, ErrLeaseLost)
	}
	return p, q.jobs[l.Job.ID], nil
}

func (q *Memory) Heartbeat(ctx context.Context, l Lease) (bool, error) {
	if err := q.lock(ctx); err != nil {
		return false, err
	}
	defer q.mu.Unlock()
	q.runners[l.Job.Pool] = q.opts.Now()
	p, j, err := q.leaseLocked(l)
	if err == nil {
		p.run.deadline = time.Now().Add(q.opts.LeaseTTL)
	}
	if err := q.commitLocked(); err != nil {
		return false, fmt.Errorf("heartbeat %s: %w", l.Job.ID, err)
	}
	if err != nil {
		return false, err
	}
	return j.CancelRequested, nil
}

func (q *Memory) Finish(ctx context.Context, l Lease, o Outcome) (Job, error) {
	if err := checkOutcome(o); err != nil {
		return Job{}, err
	}
	if err := q.lock(ctx); err != nil {
		return Job{}, err
	}
	defer q.mu.Unlock()
	p, j, err := q.leaseLocked(l)
	if err != nil {
		return Job{}, err
	}
	p.run = nil
	j.Result = slices.Clone(o.Result)
	q.endLocked(j, o.State, o.Reason)
	q.emitLocked(j, EventOutcome)
	q.changedLocked()
	if err := q.commitLocked(); err != nil {
		return Job{}, fmt.Errorf("finish %s: %w", l.Job.ID, err)
	}
	return cloneJob(j.Job), nil
}

func (q *Memory) Cancel(ctx context.Context, id, by string) (Job, error) {
	if err := q.lock(ctx); err != nil {
		return Job{}, err
	}
	defer q.mu.Unlock()
	j := q.getLocked(id)
	if j == nil {
		return Job{}, fmt.Errorf("cancel %s: %w", id, ErrNotFound)
	}
	switch {
	case j.State.Terminal():
		return cloneJob(j.Job), fmt.Errorf("cancel %s: %w", id, ErrFinished)
	case j.State == Running:
		j.CancelRequested = true
		j.CancelledBy = by
		q.touchLocked(id)
	case j.State == AwaitingApproval:
		q.unawaitLocked(id)
		q.cancelLocked(j, by)
	default:
		p := q.poolLocked(j.Pool)
		p.retry = slices.DeleteFunc(p.retry, func(s string) bool { return s == id })
		p.waiting = slices.DeleteFunc(p.waiting, func(s string) bool { return s == id })
		q.cancelLocked(j, by)
	}
	if err := q.commitLocked(); err != nil {
		return Job{}, fmt.Errorf("cancel %s: %w", id, err)
	}
	return cloneJob(j.Job), nil
}

// cancelLocked ends a job that no runner holds as cancelled by by.
func (q *Memory) cancelLocked(j *memJob, by string) {
	j.CancelledBy = by
	q.endLocked(j, Cancelled, "")
	q.emitLocked(j, EventCancelled)
}

func (q *Memory) Drain(ctx context.Context, pool, by string) ([]Job, error) {
	if err := q.lock(ctx); err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	p := q.pools[pool]
	if p == nil {
		return nil, nil
	}
	var out []Job
	for _, id := range slices.Concat(p.retry, p.waiting) {
		j := q.jobs[id]
		q.cancelLocked(j, by)
		out = append(out, cloneJob(j.Job))
	}
	p.retry, p.waiting = nil, nil
	if err := q.commitLocked(); err != nil {
		return nil, fmt.Errorf("drain %s: %w", pool, err)
	}
	return out, nil
}

func (q *Memory) lineLocked(pool string) Line {
	p := q.pools[pool]
	var running *Job
	if p.run != nil {
		r := cloneJob(q.jobs[p.run.id].Job)
		running = &r
	}
	var waiting []Job
	for _, id := range slices.Concat(p.retry, p.waiting) {
		waiting = append(waiting, cloneJob(q.jobs[id].Job))
	}
	return line(pool, running, waiting, q.opts.Now())
}

func (q *Memory) Position(ctx context.Context, id string) (Place, error) {
	if err := q.lock(ctx); err != nil {
		return Place{}, err
	}
	defer q.mu.Unlock()
	j := q.getLocked(id)
	if j == nil {
		return Place{}, fmt.Errorf("position of %s: %w", id, ErrNotFound)
	}
	switch {
	case j.State.Terminal():
		return Place{Job: cloneJob(j.Job)}, fmt.Errorf("position of %s: %w", id, ErrFinished)
	case j.State == AwaitingApproval:
		return Place{Job: cloneJob(j.Job)}, fmt.Errorf("position of %s: in no line yet: %w", id, ErrNotAwaiting)
	}
	for _, pl := range q.lineLocked(j.Pool).Places {
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
	return q.statusLocked(), nil
}

func (q *Memory) statusLocked() []Line {
	lines := make([]Line, 0, len(q.pools))
	for _, name := range slices.Sorted(maps.Keys(q.pools)) {
		lines = append(lines, q.lineLocked(name))
	}
	return lines
}

func (q *Memory) List(ctx context.Context, f Filter) ([]Job, error) {
	if err := q.lock(ctx); err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	lines := q.statusLocked()
	awaiting := make([]Job, 0, len(q.awaiting))
	for _, id := range q.awaiting {
		awaiting = append(awaiting, cloneJob(q.jobs[id].Job))
	}
	var recent []Job
	for _, id := range q.recent {
		if j := q.getLocked(id); j != nil {
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
	j := q.getLocked(id)
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
	now := time.Now()
	var out []Job
	for _, name := range slices.Sorted(maps.Keys(q.pools)) {
		p := q.pools[name]
		if p.run == nil || now.Before(p.run.deadline) {
			continue
		}
		j := q.jobs[p.run.id]
		p.run = nil
		switch {
		case j.CancelRequested:
			q.endLocked(j, Cancelled, "")
			q.emitLocked(j, EventCancelled)
		case j.Attempt < MaxAttempts:
			j.Attempt++
			j.State = Queued
			j.Reason = ReasonRetried
			p.retry = slices.Insert(p.retry, 0, j.ID)
			q.emitLocked(j, EventRetried)
		default:
			q.endLocked(j, Failed, ReasonLost)
			q.emitLocked(j, EventLost)
		}
		out = append(out, cloneJob(j.Job))
	}
	if len(out) > 0 {
		q.changedLocked()
	}
	if err := q.commitLocked(); err != nil {
		return nil, fmt.Errorf("reap: %w", err)
	}
	return out, nil
}

func (q *Memory) RunReaper(ctx context.Context, interval time.Duration) error {
	return runReaper(ctx, q.Reap, interval, q.opts.Logger)
}

func (q *Memory) ForgetDelivery(ctx context.Context, id string) error {
	if err := q.lock(ctx); err != nil {
		return err
	}
	defer q.mu.Unlock()
	delete(q.seen, id)
	q.seenLocked(id)
	if err := q.commitLocked(); err != nil {
		return fmt.Errorf("forget delivery %s: %w", id, err)
	}
	return nil
}

func (q *Memory) SeenDelivery(ctx context.Context, id string, ttl time.Duration) (bool, error) {
	if err := q.lock(ctx); err != nil {
		return false, err
	}
	defer q.mu.Unlock()
	now := time.Now()
	if exp, ok := q.seen[id]; ok && now.Before(exp) {
		return false, nil
	}
	if ttl <= 0 {
		ttl = defaultDeliveryTTL
	}
	q.seen[id] = now.Add(ttl)
	q.seenLocked(id)
	if len(q.seen) >= q.sweepAt {
		for k, exp := range q.seen {
			if !now.Before(exp) {
				delete(q.seen, k)
				q.seenLocked(k)
			}
		}
		q.sweepAt = max(1024, 2*len(q.seen)) // amortised: each entry is swept O(1) times
	}
	if err := q.commitLocked(); err != nil {
		return false, fmt.Errorf("delivery %s: %w", id, err)
	}
	return true, nil
}

func (q *Memory) Publish(ctx context.Context, e Event) error {
	if e.Time.IsZero() {
		e.Time = q.opts.Now()
	}
	if err := q.lock(ctx); err != nil {
		return err
	}
	defer q.mu.Unlock()
	q.appendLocked(e)
	if err := q.commitLocked(); err != nil {
		return fmt.Errorf("publish %s event of %s: %w", e.Kind, e.Job, err)
	}
	return nil
}

// entryLocked returns the stream entry numbered n, or nil when trimmed.
func (q *Memory) entryLocked(n uint64) *memEntry {
	i, ok := slices.BinarySearchFunc(q.entries, n, func(e memEntry, n uint64) int {
		switch {
		case e.n < n:
			return -1
		case e.n > n:
			return 1
		}
		return 0
	})
	if !ok {
		return nil
	}
	return &q.entries[i]
}

// readLocked is one non-blocking read of Events.
func (q *Memory) readLocked(group, consumer string, max int) []Delivery {
	g := q.groups[group]
	if g == nil {
		g = &memGroup{pending: make(map[string][]uint64)}
		q.groups[group] = g
	}
	var out []Delivery
	pending := g.pending[consumer]
	kept := pending[:0]
	for _, n := range pending {
		e := q.entryLocked(n)
		if e == nil {
			continue // trimmed from the stream: nothing left to deliver
		}
		kept = append(kept, n)
		if len(out) < max {
			out = append(out, Delivery{ID: e.id, Event: cloneEvent(e.ev)})
		}
	}
	g.pending[consumer] = kept
	if len(out) > 0 {
		return out
	}
	for i := range q.entries {
		e := &q.entries[i]
		if e.n <= g.last {
			continue
		}
		out = append(out, Delivery{ID: e.id, Event: cloneEvent(e.ev)})
		g.pending[consumer] = append(g.pending[consumer], e.n)
		g.last = e.n
		if len(out) == max {
			break
		}
	}
	return out
}

func (q *Memory) Events(ctx context.Context, group, consumer string, max int, block time.Duration) ([]Delivery, error) {
	if max <= 0 {
		max = 100
	}
	var timeout <-chan time.Time
	if block > 0 {
		t := time.NewTimer(block)
		defer t.Stop()
		timeout = t.C
	}
	for {
		if err := q.lock(ctx); err != nil {
			return nil, err
		}
		out := q.readLocked(group, consumer, max)
		err := q.commitLocked()
		wake := q.evwake
		q.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("events of %s for %s: %w", group, consumer, err)
		}
		if len(out) > 0 || timeout == nil {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout:
			return nil, nil
		case <-wake:
		}
	}
}

func (q *Memory) Ack(ctx context.Context, group string, ids ...string) error {
	acked := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		n, err := entryNumber(id)
		if err != nil {
			return fmt.Errorf("ack %s: %w", id, err)
		}
		acked[n] = true
	}
	if err := q.lock(ctx); err != nil {
		return err
	}
	defer q.mu.Unlock()
	g := q.groups[group]
	if g == nil {
		return nil
	}
	for c, p := range g.pending {
		g.pending[c] = slices.DeleteFunc(p, func(n uint64) bool { return acked[n] })
	}
	if err := q.commitLocked(); err != nil {
		return fmt.Errorf("ack events of %s: %w", group, err)
	}
	return nil
}

func entryNumber(id string) (uint64, error) {
	_, seq, ok := strings.Cut(id, "-")
	if !ok {
		return 0, fmt.Errorf("malformed event ID")
	}
	return strconv.ParseUint(seq, 10, 64)
}

func cloneJob(j Job) Job {
	j.Frameworks = slices.Clone(j.Frameworks)
	j.Tests = slices.Clone(j.Tests)
	j.Rows = slices.Clone(j.Rows)
	j.Payload = slices.Clone(j.Payload)
	j.Result = slices.Clone(j.Result)
	return j
}

// jobOf returns a copy of j's job, or the zero Job for nil.
func jobOf(j *memJob) Job {
	if j == nil {
		return Job{}
	}
	return cloneJob(j.Job)
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
	return visible
}

func cloneEvent(e Event) Event {
	e.Data = slices.Clone(e.Data)
	return e
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
