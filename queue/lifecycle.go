package queue

import (
	"errors"
	"slices"
	"time"
)

// The request lifecycle, written once. transition is a pure function: given
// the part of the queue's state a command reads (a scene) and the command,
// it returns what changes (a change) or why the command is refused. It does
// no I/O and reads no clock: the store passes the time, the new IDs and
// tokens in. Memory applies it under its mutex; Redis applies it inside an
// optimistic transaction (WATCH the keys it read, compute, MULTI/EXEC).

// An op names a lifecycle command.
type op string

const (
	opSubmit    op = "submit"    // a request that waits for approval
	opApprove   op = "approve"   // awaiting approval -> queued, at the back of its line
	opReject    op = "reject"    // awaiting approval -> rejected
	opExpire    op = "expire"    // awaiting approval, past Expires -> expired
	opAmend     op = "amend"     // the bot's fields on the record, in any state
	opEnqueue   op = "enqueue"   // an approved job, at the back of its line
	opClaim     op = "claim"     // the next job of a pool -> running
	opHeartbeat op = "heartbeat" // the running job's lease, extended
	opFinish    op = "finish"    // running -> done, failed or cancelled
	opCancel    op = "cancel"    // awaiting or waiting -> cancelled; running -> cancel flag
	opDrain     op = "drain"     // one waiting job of a drained pool -> cancelled
	opReap      op = "reap"      // running with a lapsed lease -> retried, failed or cancelled
)

// ops lists every command, for tests that go through all of them.
var ops = []op{opSubmit, opApprove, opReject, opExpire, opAmend, opEnqueue, opClaim, opHeartbeat, opFinish, opCancel, opDrain, opReap}

// Refusals the stores act on (Claim waits, Expire, Drain and Reap skip the
// job) rather than return; errNoRecord and errBadCommand are faults.
var (
	errBusy       = errors.New("the jobs waiting wait for their PR's running job") // claim: wait
	errEmpty      = errors.New("no job waits in the pool")                         // claim: wait
	errNotDue     = errors.New("request not expired")                              // expire: skip it
	errNotWaiting = errors.New("job is not waiting in its line")                   // drain: skip it
	errLeaseLive  = errors.New("every running job's lease is live")                // reap: skip the pool
	errNotRunning = errors.New("no job of the pool runs")                          // reap: skip the pool
	errNoRecord   = errors.New("job in line has no record")                        // claim: the store lost a record
	errBadCommand = errors.New("queue: command without what it acts on")           // a store's bug
)

// A command is what a caller asks of the lifecycle.
type command struct {
	Op        op
	ID        string    // the job acted on; for submit and enqueue Job.ID; for claim the parent whose share it takes (ClaimShare), "" any job; for reap unused (the line says)
	Job       Job       // submit, enqueue: the job as prepared (prepareSubmit, prepare)
	By        string    // approve, reject, cancel, drain: who
	Amendment Amendment // amend
	Token     string    // claim: the new claim's token; heartbeat, finish: the lease's
	Outcome   Outcome   // finish (checked by checkOutcome)
	Nonce     string    // Redis: this call's nonce, so a call repeated after a lost reply is answered as the first; "" none
}

// A scene is what a command reads: the time, the jobs involved and the line
// of their pool.
type scene struct {
	Now   time.Time
	Depth int             // waiting places per pull request in a pool's line
	Fence int64           // the last fencing number given out
	Jobs  map[string]*Job // by ID: the job acted on, the same owner's request awaiting approval, the first retried and the first waiting job of the line, the job a claim starts, the running jobs, the waiting job a lineup displaces; missing: unknown
	Owner string          // submit: the ID of the request of the same owner awaiting approval; "" none
	Line  lineState       // the pool of the job acted on (or of claim and reap)
	Op    string          // the nonce of the last call that changed the job acted on (Redis); "" none
	// PRs holds, for approve and enqueue, the pull request (prKey) of each job waiting in
	// the line, by ID; for claim, of each job running, retried or waiting. A job missing
	// here shares its place (and its turn) with no other.
	PRs map[string]string
}

// A lineState is one pool's line: its running claims (one per runner host that took a
// job) and the jobs waiting.
type lineState struct {
	Pool    string
	Runs    []runClaim // the running claims, the oldest first
	Retry   []string   // jobs retried after a lost runner, the next first; they run before waiting ones
	Waiting []string   // the next first
}

// A runClaim is a running job of a line and its runner's claim.
type runClaim struct {
	Job   string // the running job's ID
	Token string // the claim's token
	Live  bool   // the claim's lease has not lapsed
}

// claim returns the index of the running claim with token, or -1.
func (l lineState) claim(token string) int {
	return slices.IndexFunc(l.Runs, func(r runClaim) bool { return token != "" && r.Token == token })
}

// next returns the job a claim would start: the first retried, then the first waiting,
// job whose pull request (prs) has no job running; then, when none may start, the first
// share (Job.Parent) of a running job, which waits for no pull request. With parent set
// (ClaimShare) it is the first share of that job. "" when none may start.
func (l lineState) next(prs map[string]string, parent string) string {
	queued := slices.Concat(l.Retry, l.Waiting)
	if parent != "" {
		if i := slices.IndexFunc(queued, func(id string) bool { return prs[id] == shareKey(parent) }); i >= 0 {
			return queued[i]
		}
		return ""
	}
	busy := map[string]bool{}
	for _, r := range l.Runs {
		if k, ok := prs[r.Job]; ok && !isShare(k) {
			busy[k] = true
		}
	}
	for _, id := range queued {
		if k, ok := prs[id]; !ok || !isShare(k) && !busy[k] {
			return id
		}
	}
	for _, id := range queued {
		if isShare(prs[id]) {
			return id
		}
	}
	return ""
}

// A change is what a transition does. The stores write it in one atomic step.
type change struct {
	Reply     Job     // the job acted on as the caller gets it (the claimed job for claim)
	Other     *Job    // the job a submit replaced or a lineup displaced (superseded); nil none
	Put       []Job   // records written, created ones included, each once, as they are after the change
	Created   string  // the ID of a new record (submit, enqueue); "" none
	Events    []event // published in this order, each with its job's record as in Put
	Ended     []string
	Awaits    string   // a job that now awaits approval (submit)
	Unawaited []string // jobs that no longer await approval
	Line      *lineState
	Fence     int64  // the new fencing number (claim); 0 unchanged
	Renew     string // the token of the running claim whose lease starts or is extended by LeaseTTL; "" none
	Wake      bool   // a Claim of the pool that waits may now get a job
	Again     bool   // the same call was already applied: nothing to write
	Cancelled bool   // heartbeat: the runner should stop
}

// An event is one of the queue's own events: a kind about a job.
type event struct {
	Job  string
	Kind string
}

// transition applies c to s. The error is one of the package's sentinels
// (ErrNotFound, ErrExists, ErrFinished, ErrNotAwaiting, ErrLeaseLost) or a
// store's refusal (errBusy, errEmpty, ...); with it, Reply is the job when it
// is known.
func transition(s scene, c command) (change, error) {
	t := &step{s: s, put: map[string]int{}}
	f := transitions[c.Op]
	if f == nil {
		return change{}, errBadCommand
	}
	err := f(t, c)
	if err != nil {
		return change{Reply: t.ch.Reply}, err
	}
	for i := range t.ch.Put {
		t.ch.Put[i] = cloneJob(t.ch.Put[i])
	}
	if t.ch.Other != nil {
		o := t.record(t.ch.Other.ID)
		t.ch.Other = &o
	}
	if !t.ch.Again && t.ch.Reply.ID != "" {
		t.ch.Reply = t.record(t.ch.Reply.ID)
	}
	return t.ch, nil
}

// transitions are the commands' rules, one function each.
var transitions = map[op]func(*step, command) error{
	opSubmit: onSubmit, opApprove: onApprove, opReject: onReject, opExpire: onExpire,
	opAmend: onAmend, opEnqueue: onEnqueue, opClaim: onClaim, opHeartbeat: onHeartbeat,
	opFinish: onFinish, opCancel: onCancel, opDrain: onDrain, opReap: onReap,
}

// A step is one transition being worked out.
type step struct {
	s   scene
	ch  change
	put map[string]int // job ID -> index in ch.Put
}

// job returns a copy of a job of the scene, or nil.
func (t *step) job(id string) *Job {
	j := t.s.Jobs[id]
	if id == "" || j == nil {
		return nil
	}
	c := cloneJob(*j)
	return &c
}

// write records j as changed.
func (t *step) write(j Job) {
	if i, ok := t.put[j.ID]; ok {
		t.ch.Put[i] = j
		return
	}
	t.put[j.ID] = len(t.ch.Put)
	t.ch.Put = append(t.ch.Put, j)
}

// record returns a job as this step leaves it.
func (t *step) record(id string) Job {
	if i, ok := t.put[id]; ok {
		return cloneJob(t.ch.Put[i])
	}
	if j := t.job(id); j != nil {
		return *j
	}
	return Job{}
}

func (t *step) emit(j Job, kind string) {
	t.write(j)
	t.ch.Events = append(t.ch.Events, event{Job: j.ID, Kind: kind})
}

// end moves j to a terminal state.
func (t *step) end(j *Job, s State, reason string) {
	j.State = s
	j.Reason = reason
	j.Finished = t.s.Now
	t.ch.Ended = append(t.ch.Ended, j.ID)
}

// line returns the line to change, copied from the scene on first use.
func (t *step) line() *lineState {
	if t.ch.Line == nil {
		l := t.s.Line
		l.Runs, l.Retry, l.Waiting = slices.Clone(l.Runs), slices.Clone(l.Retry), slices.Clone(l.Waiting)
		t.ch.Line = &l
	}
	return t.ch.Line
}

// again reports whether the job's record was last changed by this very call.
func (t *step) again(c command) bool {
	return c.Nonce != "" && t.s.Op == c.Nonce
}

// awaiting returns the job c acts on when it awaits approval, else the error
// for it.
func (t *step) awaiting(c command) (*Job, error) {
	j := t.job(c.ID)
	switch {
	case j == nil:
		return nil, ErrNotFound
	case j.State == AwaitingApproval:
		return j, nil
	}
	t.ch.Reply = *j
	switch {
	case t.again(c):
		t.ch.Again = true
		return nil, nil
	case j.State.Terminal():
		return nil, ErrFinished
	}
	return nil, ErrNotAwaiting
}

// create adds the new job of c, unless its ID is taken.
func (t *step) create(c command) (*Job, error) {
	if old := t.job(c.Job.ID); old != nil {
		if t.again(c) {
			t.ch.Reply, t.ch.Again = *old, true
			return nil, nil
		}
		return nil, ErrExists
	}
	j := cloneJob(c.Job)
	t.ch.Created = j.ID
	t.ch.Reply = j
	return &j, nil
}

// lineup puts a queued job in its pool's line. Each pull request has at most
// Depth jobs waiting: while it has fewer, j waits at the back of the line
// (jobs of different pull requests wait in the order they were approved and
// never displace each other); when it has Depth already, its oldest waiting
// job is displaced (superseded by j), its others move up one place each, and
// j takes the last of its places, so the pull request keeps its turn. The
// running job and a job retried after a lost runner are never displaced.
func (t *step) lineup(j Job) {
	l := t.line()
	same := sameWaiting(l.Waiting, t.s.PRs, prKey(j))
	if len(same) < max(depthOf(j, t.s.Depth), 1) || j.Parent != "" { // a share displaces none
		l.Waiting = append(l.Waiting, j.ID)
	} else {
		oldID := l.Waiting[same[0]]
		for k := 0; k+1 < len(same); k++ {
			l.Waiting[same[k]] = l.Waiting[same[k+1]]
		}
		l.Waiting[same[len(same)-1]] = j.ID
		if old := t.job(oldID); old != nil {
			old.SupersededBy = j.ID
			t.end(old, Superseded, "")
			t.emit(*old, EventSuperseded)
			t.ch.Other = old
		}
	}
	t.ch.Wake = true // a runner of the pool waiting in Claim may take it
}

// sameWaiting returns the indexes in waiting of the jobs of pull request key
// (prs gives each waiting job's), in line order.
func sameWaiting(waiting []string, prs map[string]string, key string) []int {
	var out []int
	for i, id := range waiting {
		if k, ok := prs[id]; ok && k == key {
			out = append(out, i)
		}
	}
	return out
}

// lineupJob returns the job that approve or enqueue would line up: the job
// given to enqueue, the job of the scene that approve names; nil for other
// commands or an unknown job.
func lineupJob(c command, s scene) *Job {
	switch c.Op {
	case opEnqueue:
		return &c.Job
	case opApprove:
		return s.Jobs[c.ID]
	}
	return nil
}

// depthOf is the number of waiting places of j's pull request: its own (the repository's
// settings), else the queue's.
func depthOf(j Job, depth int) int {
	if j.Depth > 0 {
		return j.Depth
	}
	return depth
}

// displaced returns the ID of the job that lining up a job of pull request key
// would displace from waiting, or "" when it would displace none.
func displaced(waiting []string, prs map[string]string, key string, depth int) string {
	if isShare(key) {
		return ""
	}
	if same := sameWaiting(waiting, prs, key); len(same) >= max(depth, 1) {
		return waiting[same[0]]
	}
	return ""
}

func (t *step) unawait(j *Job) { t.ch.Unawaited = append(t.ch.Unawaited, j.ID) }

func onSubmit(t *step, c command) error {
	j, err := t.create(c)
	if j == nil {
		return err
	}
	t.ch.Awaits = j.ID
	t.emit(*j, EventSubmitted)
	if old := t.job(t.s.Owner); old != nil && old.ID != j.ID && old.State == AwaitingApproval {
		t.unawait(old)
		old.SupersededBy = j.ID
		t.end(old, Superseded, "")
		t.emit(*old, EventSuperseded)
		t.ch.Other = old
	}
	return nil
}

func onApprove(t *step, c command) error {
	j, err := t.awaiting(c)
	if j == nil {
		return err
	}
	t.unawait(j)
	j.State = Queued
	j.Approver, j.Approved, j.Queued = c.By, t.s.Now, t.s.Now
	j.Attempt = 1
	t.ch.Reply = *j
	t.emit(*j, EventQueued)
	t.lineup(*j)
	return nil
}

func onReject(t *step, c command) error {
	j, err := t.awaiting(c)
	if j == nil {
		return err
	}
	t.unawait(j)
	j.RejectedBy = c.By
	t.end(j, Rejected, "")
	t.ch.Reply = *j
	t.emit(*j, EventRejected)
	return nil
}

// expire ends a request awaiting approval whose Expires is not after now.
func onExpire(t *step, c command) error {
	j, err := t.awaiting(c)
	if j == nil {
		if err == nil { // Again: expire carries no nonce
			err = ErrNotAwaiting
		}
		return err
	}
	t.ch.Reply = *j
	if j.Expires.IsZero() || j.Expires.After(t.s.Now) {
		return errNotDue
	}
	t.unawait(j)
	t.end(j, Expired, "")
	t.emit(*j, EventExpired)
	return nil
}

func onAmend(t *step, c command) error {
	j := t.job(c.ID)
	if j == nil {
		return ErrNotFound
	}
	t.ch.Reply = *j
	if amend(j, c.Amendment) {
		t.emit(*j, EventUpdated)
	}
	t.write(*j)
	return nil
}

func onEnqueue(t *step, c command) error {
	j, err := t.create(c)
	if j == nil {
		return err
	}
	t.emit(*j, EventQueued)
	t.lineup(*j)
	return nil
}

// claim starts the next job of the line, the retried ones first, beside the
// jobs running (a pool runs one job per runner that claims), skipping a job
// whose pull request has one running: that one waits for it.
func onClaim(t *step, c command) error {
	l := t.s.Line
	if i := l.claim(c.Token); i >= 0 {
		if j := t.job(l.Runs[i].Job); j != nil {
			t.ch.Reply, t.ch.Again = *j, true // the same claim again (Redis)
			return nil
		}
	}
	id := l.next(t.s.PRs, c.ID)
	switch {
	case id == "" && c.ID != "":
		return errEmpty // ClaimShare does not wait
	case id == "" && len(l.Retry)+len(l.Waiting) > 0:
		return errBusy
	case id == "":
		return errEmpty
	}
	j := t.job(id)
	if j == nil {
		return errNoRecord
	}
	nl := t.line()
	t.leave(id)
	t.ch.Fence = t.s.Fence + 1
	j.State = Running
	j.Started = t.s.Now
	j.Fence = t.ch.Fence
	nl.Runs = append(nl.Runs, runClaim{Job: id, Token: c.Token, Live: true})
	t.ch.Renew = c.Token
	t.ch.Reply = *j
	t.emit(*j, EventStarted)
	return nil
}

// held returns the index of the running claim of a lease and its job; -1 and
// nil when the lease is no longer a running claim.
func (t *step) held(c command) (int, *Job) {
	i := t.s.Line.claim(c.Token)
	if i < 0 || t.s.Line.Runs[i].Job != c.ID {
		return -1, nil
	}
	return i, t.job(c.ID)
}

func onHeartbeat(t *step, c command) error {
	i, j := t.held(c)
	if j == nil {
		return ErrLeaseLost
	}
	t.line().Runs[i].Live = true
	t.ch.Renew = c.Token
	t.ch.Reply = *j
	t.ch.Cancelled = j.CancelRequested
	return nil
}

func onFinish(t *step, c command) error {
	i, j := t.held(c)
	if j == nil {
		if old := t.job(c.ID); old != nil && t.again(c) {
			t.ch.Reply, t.ch.Again = *old, true
			return nil
		}
		return ErrLeaseLost
	}
	l := t.line()
	l.Runs = slices.Delete(l.Runs, i, i+1)
	j.Result = slices.Clone(c.Outcome.Result)
	t.end(j, c.Outcome.State, c.Outcome.Reason)
	t.ch.Reply = *j
	t.emit(*j, EventOutcome)
	t.ch.Wake = len(l.Retry)+len(l.Waiting) > 0
	return nil
}

// leave takes a job out of its line's retried and waiting jobs and reports
// whether it was there.
func (t *step) leave(id string) bool {
	l := t.line()
	n := len(l.Retry) + len(l.Waiting)
	l.Retry = slices.DeleteFunc(l.Retry, func(s string) bool { return s == id })
	l.Waiting = slices.DeleteFunc(l.Waiting, func(s string) bool { return s == id })
	return len(l.Retry)+len(l.Waiting) < n
}

func onCancel(t *step, c command) error {
	j := t.job(c.ID)
	if j == nil {
		return ErrNotFound
	}
	t.ch.Reply = *j
	switch {
	case j.State.Terminal() && t.again(c):
		t.ch.Again = true
		return nil
	case j.State.Terminal():
		return ErrFinished
	case j.State == Running:
		// Its runner learns of it through Heartbeat and finishes it.
		j.CancelRequested = true
		j.CancelledBy = c.By
		t.write(*j)
		t.ch.Reply = *j
		return nil
	case j.State == AwaitingApproval:
		t.unawait(j)
	default:
		t.leave(j.ID)
	}
	j.CancelledBy = c.By
	t.end(j, Cancelled, "")
	t.ch.Reply = *j
	t.emit(*j, EventCancelled)
	return nil
}

// drain cancels one job waiting in its line; Drain does it for each.
func onDrain(t *step, c command) error {
	j := t.job(c.ID)
	if j == nil {
		return ErrNotFound
	}
	t.ch.Reply = *j
	if j.State != Queued || !t.leave(j.ID) {
		t.ch.Line = nil
		return errNotWaiting
	}
	j.CancelledBy = c.By
	t.end(j, Cancelled, "")
	t.ch.Reply = *j
	t.emit(*j, EventCancelled)
	return nil
}

// reap recovers a running job of the line whose lease lapsed (the oldest
// such claim): a cancelled job ends as cancelled; else it is put back at the
// front of the line once (Attempt incremented), and fails the second time.
func onReap(t *step, _ command) error {
	l := t.s.Line
	if len(l.Runs) == 0 {
		return errNotRunning
	}
	i := slices.IndexFunc(l.Runs, func(r runClaim) bool { return !r.Live })
	if i < 0 {
		return errLeaseLive
	}
	j := t.job(l.Runs[i].Job)
	if j == nil {
		return errNoRecord
	}
	t.ch.Reply = *j
	nl := t.line()
	nl.Runs = slices.Delete(nl.Runs, i, i+1)
	switch {
	case j.CancelRequested:
		t.end(j, Cancelled, "")
		t.emit(*j, EventCancelled)
	case j.Attempt < MaxAttempts:
		j.Attempt++
		j.State = Queued
		j.Reason = ReasonRetried
		nl.Retry = slices.Insert(nl.Retry, 0, j.ID)
		t.emit(*j, EventRetried)
	default:
		t.end(j, Failed, ReasonLost)
		t.emit(*j, EventLost)
	}
	t.ch.Reply = *j
	t.ch.Wake = len(nl.Retry)+len(nl.Waiting) > 0
	return nil
}

// runJobs returns the IDs of the running claims' jobs.
func runJobs(runs []runClaim) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.Job
	}
	return out
}
