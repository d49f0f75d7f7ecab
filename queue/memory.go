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

// Memory is the in-process Queue, the embedded default when no Redis URL is
// set. Its state lives and dies with the process. One mutex guards it all.
type Memory struct {
	opts Options

	mu      sync.Mutex
	jobs    map[string]*memJob
	pools   map[string]*memPool
	recent  []string             // terminal job IDs, the latest first, at most opts.Recent
	expiry  []string             // terminal job IDs in the order they became terminal, for pruning
	fence   int64                // the last fencing number given out
	wake    chan struct{}        // closed and replaced when a blocked Claim may proceed
	evwake  chan struct{}        // closed and replaced when an event is appended
	seen    map[string]time.Time // delivery ID -> when it is forgotten
	sweepAt int                  // sweep seen when it grows to this size
	entries []memEntry           // the event stream, oldest first
	evseq   uint64
	groups  map[string]*memGroup
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
	return &Memory{
		opts:   o.withDefaults(),
		jobs:   make(map[string]*memJob),
		pools:  make(map[string]*memPool),
		wake:   make(chan struct{}),
		evwake: make(chan struct{}),
		seen:   make(map[string]time.Time),
		groups: make(map[string]*memGroup),
	}
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
	q.recent = slices.Insert(q.recent, 0, j.ID)
	if len(q.recent) > q.opts.Recent {
		q.recent = q.recent[:q.opts.Recent]
	}
	q.expiry = append(q.expiry, j.ID)
	q.pruneLocked()
}

// emitLocked publishes one of the queue's own events, the job as its data.
func (q *Memory) emitLocked(j *memJob, kind string) {
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

func (q *Memory) Enqueue(ctx context.Context, j Job) (Job, *Job, error) {
	if err := ctx.Err(); err != nil {
		return Job{}, nil, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	j = prepare(j, q.opts.Now())
	if q.getLocked(j.ID) != nil {
		return Job{}, nil, fmt.Errorf("enqueue %s: %w", j.ID, ErrExists)
	}
	q.jobs[j.ID] = &memJob{Job: cloneJob(j)}
	p := q.poolLocked(j.Pool)
	p.waiting = append(p.waiting, j.ID)
	var displaced *Job
	if len(p.waiting) > q.opts.Depth {
		old := q.jobs[p.waiting[0]]
		p.waiting = p.waiting[1:]
		q.endLocked(old, Superseded, supersededReason(j))
		q.emitLocked(old, EventSuperseded)
		d := cloneJob(old.Job)
		displaced = &d
	}
	q.changedLocked()
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
	for {
		if err := ctx.Err(); err != nil {
			return Lease{}, err
		}
		q.mu.Lock()
		l, ok := q.claimLocked(pool)
		wake := q.wake
		q.mu.Unlock()
		if ok {
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
	if err := ctx.Err(); err != nil {
		return false, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	p, j, err := q.leaseLocked(l)
	if err != nil {
		return false, err
	}
	p.run.deadline = time.Now().Add(q.opts.LeaseTTL)
	return j.CancelRequested, nil
}

func (q *Memory) Finish(ctx context.Context, l Lease, o Outcome) (Job, error) {
	if err := checkOutcome(o); err != nil {
		return Job{}, err
	}
	if err := ctx.Err(); err != nil {
		return Job{}, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	p, j, err := q.leaseLocked(l)
	if err != nil {
		return Job{}, err
	}
	p.run = nil
	j.Result = slices.Clone(o.Result)
	reason := o.Reason
	if reason == "" && o.State == Cancelled && j.CancelRequested {
		reason = j.Reason
	}
	q.endLocked(j, o.State, reason)
	q.emitLocked(j, EventOutcome)
	q.changedLocked()
	return cloneJob(j.Job), nil
}

func (q *Memory) Cancel(ctx context.Context, id, by string) (Job, error) {
	if err := ctx.Err(); err != nil {
		return Job{}, err
	}
	q.mu.Lock()
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
		j.Reason = cancelledReason(by)
		return cloneJob(j.Job), nil
	}
	p := q.poolLocked(j.Pool)
	p.retry = slices.DeleteFunc(p.retry, func(s string) bool { return s == id })
	p.waiting = slices.DeleteFunc(p.waiting, func(s string) bool { return s == id })
	q.endLocked(j, Cancelled, cancelledReason(by))
	q.emitLocked(j, EventCancelled)
	return cloneJob(j.Job), nil
}

func (q *Memory) Drain(ctx context.Context, pool, by string) ([]Job, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	p := q.pools[pool]
	if p == nil {
		return nil, nil
	}
	var out []Job
	for _, id := range slices.Concat(p.retry, p.waiting) {
		j := q.jobs[id]
		q.endLocked(j, Cancelled, cancelledReason(by))
		q.emitLocked(j, EventCancelled)
		out = append(out, cloneJob(j.Job))
	}
	p.retry, p.waiting = nil, nil
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
	if err := ctx.Err(); err != nil {
		return Place{}, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	j := q.getLocked(id)
	if j == nil {
		return Place{}, fmt.Errorf("position of %s: %w", id, ErrNotFound)
	}
	if j.State.Terminal() {
		return Place{Job: cloneJob(j.Job)}, fmt.Errorf("position of %s: %w", id, ErrFinished)
	}
	for _, pl := range q.lineLocked(j.Pool).Places {
		if pl.Job.ID == id {
			return pl, nil
		}
	}
	return Place{}, fmt.Errorf("position of %s: job in state %s is in no line", id, j.State)
}

func (q *Memory) Status(ctx context.Context) ([]Line, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q.mu.Lock()
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
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	lines := q.statusLocked()
	var recent []Job
	for _, id := range q.recent {
		if j := q.getLocked(id); j != nil {
			recent = append(recent, cloneJob(j.Job))
		}
	}
	return listed(lines, recent, f), nil
}

func (q *Memory) Get(ctx context.Context, id string) (Job, error) {
	if err := ctx.Err(); err != nil {
		return Job{}, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	j := q.getLocked(id)
	if j == nil {
		return Job{}, fmt.Errorf("get %s: %w", id, ErrNotFound)
	}
	return cloneJob(j.Job), nil
}

func (q *Memory) Reap(ctx context.Context) ([]Job, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q.mu.Lock()
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
			q.endLocked(j, Cancelled, j.Reason)
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
	return out, nil
}

func (q *Memory) RunReaper(ctx context.Context, interval time.Duration) error {
	return runReaper(ctx, q.Reap, interval, q.opts.Logger)
}

func (q *Memory) ForgetDelivery(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.seen, id)
	return nil
}

func (q *Memory) SeenDelivery(ctx context.Context, id string, ttl time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	if exp, ok := q.seen[id]; ok && now.Before(exp) {
		return false, nil
	}
	if ttl <= 0 {
		ttl = defaultDeliveryTTL
	}
	q.seen[id] = now.Add(ttl)
	if len(q.seen) >= q.sweepAt {
		for k, exp := range q.seen {
			if !now.Before(exp) {
				delete(q.seen, k)
			}
		}
		q.sweepAt = max(1024, 2*len(q.seen)) // amortised: each entry is swept O(1) times
	}
	return true, nil
}

func (q *Memory) Publish(ctx context.Context, e Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.Time.IsZero() {
		e.Time = q.opts.Now()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.appendLocked(e)
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
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		q.mu.Lock()
		out := q.readLocked(group, consumer, max)
		wake := q.evwake
		q.mu.Unlock()
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
	if err := ctx.Err(); err != nil {
		return err
	}
	acked := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		n, err := entryNumber(id)
		if err != nil {
			return fmt.Errorf("ack %s: %w", id, err)
		}
		acked[n] = true
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	g := q.groups[group]
	if g == nil {
		return nil
	}
	for c, p := range g.pending {
		g.pending[c] = slices.DeleteFunc(p, func(n uint64) bool { return acked[n] })
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
	j.Result = slices.Clone(j.Result)
	return j
}

func cloneEvent(e Event) Event {
	e.Data = slices.Clone(e.Data)
	return e
}

// listed applies a filter to the lines and the recent terminal jobs.
func listed(lines []Line, recent []Job, f Filter) []Job {
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
	for _, j := range recent {
		if !seen[j.ID] && f.match(j) {
			out = append(out, j)
		}
	}
	return out
}

func newToken() string { return newID() + newID() }
