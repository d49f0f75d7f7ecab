package queue

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A Queue holds approved jobs: per pool one running per runner and, behind
// them, Depth waiting per pull request. Redis
// and Memory implement it with the same behaviour; queuetest.Conformance
// checks both. It is the union of seven roles of a few methods each; consumers
// should declare the role, or the few methods, they use.
type Queue interface {
	Requests
	Pools
	Reader
	Deliveries
	Stream
	Announcer
	Leader
}

// Requests are the requests awaiting approval: recorded, approved into a line, rejected or
// expired, and the fields the bot keeps on a record.
type Requests interface {
	// Submit records a request that waits for approval, in state
	// awaiting_approval, and returns it as stored (ID, Pool, Created filled
	// in; Expires is the caller's). It publishes EventSubmitted. An older
	// request of the same requester on the same pull request (repository and
	// login compared without case) that still awaits approval is replaced: it
	// ends as superseded with SupersededBy naming the new job, an
	// EventSuperseded is published for it in the same step, and it is
	// returned. Requests of other requesters are never touched. Submit of an
	// ID that exists gives ErrExists.
	Submit(ctx context.Context, j Job) (stored Job, replaced *Job, err error)

	// Approve moves a job awaiting approval to the back of its pool's line,
	// approved by by ("alice"; the requester for a request approved at once),
	// as Enqueue does (the displaced job, if any, is returned), and publishes
	// EventQueued. A terminal job gives ErrFinished; a job already approved
	// gives ErrNotAwaiting, so of two racing approvals exactly one succeeds.
	Approve(ctx context.Context, id, by string) (stored Job, displaced *Job, err error)

	// Reject ends a job awaiting approval as rejected, declined by by, and
	// publishes EventRejected. Errors as Approve.
	Reject(ctx context.Context, id, by string) (Job, error)

	// Expire ends as expired every job awaiting approval whose Expires is not
	// after Options.Now, publishing EventExpired for each, and returns them.
	Expire(ctx context.Context) ([]Job, error)

	// Amend changes the fields of a job that the bot keeps on the record
	// (status comment, the PR's moved head, the reactions' ETag, the digest of
	// the status comment as last written) and returns the job. A change to the
	// status comment or the moved head publishes EventUpdated, so the status
	// comment is rendered again; the others publish nothing. An unknown job
	// gives ErrNotFound.
	Amend(ctx context.Context, id string, a Amendment) (Job, error)
}

// Pools are the pools' lines of approved jobs, one running per runner and Depth waiting per pull request in each: the runners' claims,
// lease and outcome, cancels, and the recovery of jobs whose runner was lost.
type Pools interface {
	// Enqueue adds an approved job to its pool's line, in state queued, and
	// returns it as stored (ID, Pool, Attempt and Queued filled in), and
	// publishes EventQueued for it. The job waits at the back of the line,
	// unless its pull request (repository compared without case, and number)
	// has Depth jobs waiting already: then that pull request's oldest waiting
	// job is displaced and the new job takes the last of the pull request's
	// places (its other jobs move up one), so a pull request keeps its turn.
	// The displaced job ends as superseded, with SupersededBy naming the new
	// job, an EventSuperseded is published for it in the same step, and it is
	// returned so its requester can be told. Jobs of other pull requests, the
	// running job and a job retried after its runner was lost are never
	// displaced; a job of no pull request (PR 0) displaces none and is
	// displaced by none. Enqueue of an ID that exists gives ErrExists.
	Enqueue(ctx context.Context, j Job) (stored Job, displaced *Job, err error)

	// Claim blocks until a job of pool waits whose pull request has no job
	// running (the pool runs one job per runner that claims), then marks it
	// running, publishes EventStarted and returns a lease on it.
	// Keep the lease with Heartbeat. Cancelling ctx ends the wait (within
	// about a second for Redis) with ctx's error.
	Claim(ctx context.Context, pool string) (Lease, error)

	// ClaimShare claims, as Claim does, the first waiting share of job parent (a job whose
	// Parent is parent) of pool, without waiting: ErrNoShare when none waits. The runner of
	// a job it split takes back the shares no other host took.
	ClaimShare(ctx context.Context, pool, parent string) (Lease, error)

	// Heartbeat extends the lease by LeaseTTL and reports whether the job was
	// cancelled, in which case the runner should stop and Finish it as
	// Cancelled. Beat every few seconds (at least every LeaseTTL/3) so a
	// cancel is seen quickly. ErrLeaseLost means the job is no longer the
	// runner's: stop at once. A runner that cannot reach the queue for
	// LeaseTTL must assume the same and stop, since the job may be retried.
	Heartbeat(ctx context.Context, l Lease) (cancelled bool, err error)

	// Finish ends a claimed job with an outcome (Done, Failed or Cancelled),
	// stores its result, publishes EventOutcome in the same step and lets the
	// next job of the pool run. ErrLeaseLost means the job was taken back.
	Finish(ctx context.Context, l Lease, o Outcome) (Job, error)

	// Cancel cancels a job for by ("alice"), who is recorded in CancelledBy. A
	// job awaiting approval or waiting in line ends as cancelled at once (it
	// leaves its line) and an EventCancelled is published; a running job
	// gets a cancel flag that its runner sees through Heartbeat, and is
	// returned still running. A terminal job gives ErrFinished.
	Cancel(ctx context.Context, id, by string) (Job, error)

	// Drain cancels every waiting job of pool, as Cancel does, and returns
	// them. The running job is left to finish, and jobs awaiting approval
	// are left alone.
	Drain(ctx context.Context, pool, by string) ([]Job, error)

	// Reap recovers the jobs whose runner stopped heart-beating: the first
	// time, the job is put back at the front of its pool's line with Attempt
	// incremented (EventRetried); the second time it fails with ReasonLost
	// (EventLost); a job cancelled meanwhile ends as cancelled
	// (EventCancelled). It returns the jobs it changed. Several processes may
	// reap at once: each job is recovered by exactly one of them.
	Reap(ctx context.Context) ([]Job, error)

	// RunReaper calls Reap every interval until ctx is done, logging errors.
	// It returns nil when ctx is done.
	RunReaper(ctx context.Context, interval time.Duration) error
}

// Reader reads jobs, lines and runners without changing them.
type Reader interface {
	// Position returns a job's place in its pool's line. A terminal job gives
	// ErrFinished; a job awaiting approval is in no line yet and gives
	// ErrNotAwaiting (both with the job in Place.Job).
	Position(ctx context.Context, id string) (Place, error)

	// Status returns every pool's line, pools sorted by name. Jobs awaiting
	// approval are in no line.
	Status(ctx context.Context) ([]Line, error)

	// List returns the jobs f selects: the non-terminal ones in line order,
	// then those awaiting approval, the oldest first, then the recent
	// terminal ones, the latest first.
	List(ctx context.Context, f Filter) ([]Job, error)

	// Get returns a job, or ErrNotFound. Terminal jobs are kept for
	// Options.Retain.
	Get(ctx context.Context, id string) (Job, error)

	// Runners returns, per pool ever used, when a runner of the pool was last
	// seen (waiting in Claim, claiming or heart-beating), pools sorted by name.
	Runners(ctx context.Context) ([]Runner, error)

	// Hosts returns the live runner hosts, those whose last Announce has not
	// expired by Options.Now, sorted by pool, then name.
	Hosts(ctx context.Context) ([]Host, error)
}

// Deliveries de-duplicates webhook deliveries.
type Deliveries interface {
	// SeenDelivery records a webhook delivery ID for ttl (<= 0 means 24h)
	// and reports whether this was the first time it was seen.
	SeenDelivery(ctx context.Context, id string, ttl time.Duration) (first bool, err error)

	// ForgetDelivery removes a delivery ID recorded by SeenDelivery, for a delivery that
	// was recorded but could not be accepted: GitHub's redelivery then counts as new.
	ForgetDelivery(ctx context.Context, id string) error
}

// Stream is the event stream every transition publishes to, read through consumer groups.
type Stream interface {
	// Publish appends an event to the stream. The stream keeps about
	// Options.MaxEvents events.
	Publish(ctx context.Context, e Event) error

	// Events reads from the stream through consumer group group (created on
	// first use, starting at the oldest event kept). It returns the events
	// delivered to consumer and not yet acknowledged first, so a restarted
	// consumer resumes where it stopped; when there are none, up to max new
	// events, waiting up to block for one (block <= 0: do not wait).
	Events(ctx context.Context, group, consumer string, max int, block time.Duration) ([]Delivery, error)

	// Ack acknowledges deliveries of group, so they are not delivered again.
	Ack(ctx context.Context, group string, ids ...string) error
}

// Options configure a queue. The zero value is usable.
type Options struct {
	Prefix    string           // Redis key prefix, "arena:"; "" means "arena:". Memory ignores it.
	Depth     int              // waiting places per pull request in each pool's line; 0 means 1
	LeaseTTL  time.Duration    // how long a claim lives without a heartbeat; 0 means 30s
	Retain    time.Duration    // how long a terminal job stays readable by Get; 0 means 7 days
	Recent    int              // how many terminal jobs List shows; 0 means 100
	MaxEvents int              // approximate bound of the event stream; 0 means 10,000
	Now       func() time.Time // clock for timestamps and ETAs (not lease expiry); nil means time.Now
	Logger    *slog.Logger     // used by RunReaper; nil discards
}

func (o Options) withDefaults() Options {
	if o.Prefix == "" {
		o.Prefix = "arena:"
	}
	if o.Depth <= 0 {
		o.Depth = 1
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 30 * time.Second
	}
	if o.Retain <= 0 {
		o.Retain = 7 * 24 * time.Hour
	}
	// Redis keeps TTLs in milliseconds.
	o.LeaseTTL = max(o.LeaseTTL, time.Millisecond)
	o.Retain = max(o.Retain, time.Millisecond)
	if o.Recent <= 0 {
		o.Recent = 100
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = 10000
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// newID returns a random job ID of 16 hex digits.
func newID() string {
	var b [8]byte
	_, _ = io.ReadFull(rand.Reader, b[:])
	return hex.EncodeToString(b[:])
}

// prepare fills the fields Enqueue owns.
func prepare(j Job, now time.Time) Job {
	j = reset(j, now)
	j.Queued = now
	j.State = Queued
	j.Attempt = 1
	return j
}

// prepareSubmit fills the fields Submit owns: the request is not approved yet.
func prepareSubmit(j Job, now time.Time) Job {
	j = reset(j, now)
	j.Approver, j.Approved = "", time.Time{}
	j.State = AwaitingApproval
	return j
}

// reset fills ID, Pool and Created and clears the fields the queue owns.
func reset(j Job, now time.Time) Job {
	if j.ID == "" {
		j.ID = newID()
	}
	if j.Pool == "" {
		j.Pool = DefaultPool
	}
	if j.Created.IsZero() {
		j.Created = now
	}
	j.Queued, j.Started, j.Finished = time.Time{}, time.Time{}, time.Time{}
	j.Reason = ""
	j.Attempt = 0
	j.Fence = 0
	j.CancelRequested = false
	j.Result = nil
	j.SupersededBy, j.CancelledBy, j.RejectedBy = "", "", ""
	return j
}

// owner is the key under which a request awaiting approval replaces the
// same requester's older one on the same pull request.
func owner(j Job) string {
	return strings.ToLower(j.Repo) + "#" + strconv.Itoa(j.PR) + "#" + strings.ToLower(j.Requester)
}

// prKey is the pull request a job waits in line for: its repository (without
// case) and number. A job of no pull request (an operator's, PR 0) shares its
// place with no other job.
func prKey(j Job) string {
	if j.Parent != "" {
		return shareKey(j.Parent)
	}
	if j.Repo == "" || j.PR == 0 {
		return "job " + j.ID
	}
	return strings.ToLower(j.Repo) + "#" + strconv.Itoa(j.PR)
}

// shareKey is prKey of the shares of job parent: they wait for no pull request's turn, and
// take none.
func shareKey(parent string) string { return sharePrefix + parent }

const sharePrefix = "share of "

// isShare reports whether a prKey is a share's.
func isShare(key string) bool { return strings.HasPrefix(key, sharePrefix) }

// ShareID is the ID of share n (1-based) of job parent: the same on every attempt of
// the parent, so a retried parent finds the shares it enqueued before.
func ShareID(parent string, n int) string { return parent + "-share" + strconv.Itoa(n) }

func checkOutcome(o Outcome) error {
	switch o.State {
	case Done, Failed, Cancelled:
	default:
		return fmt.Errorf("finish with state %q: want done, failed or cancelled", o.State)
	}
	if len(o.Result) > 0 && !json.Valid(o.Result) {
		return fmt.Errorf("finish: result is not valid JSON")
	}
	return nil
}

// line builds a pool's line from its running jobs and its waiting jobs in
// order, with positions and ETAs as of now. The running jobs come first, the
// earliest started first. A waiting job's ETA is when a runner would be free
// for it, each running job holding one until its estimate is spent and the
// jobs ahead of it taking the first one free (one runner when none runs). The shares of
// running jobs wait behind the other jobs, as a claim takes them.
func line(pool string, running []Job, waiting []Job, now time.Time) Line {
	l := Line{Pool: pool}
	running = slices.Clone(running)
	slices.SortStableFunc(running, func(a, b Job) int {
		return cmp.Or(a.Started.Compare(b.Started), cmp.Compare(a.ID, b.ID))
	})
	free := []time.Duration{0} // when each runner is free, from now
	if len(running) > 0 {
		free = free[:0]
	}
	for _, r := range running {
		l.Places = append(l.Places, Place{Job: r, Position: len(l.Places) + 1})
		free = append(free, max(r.Started.Add(r.Estimate).Sub(now), 0))
	}
	// Shares of running jobs run after every job that can start (lineState.next).
	shares := slices.DeleteFunc(slices.Clone(waiting), func(j Job) bool { return j.Parent == "" })
	waiting = slices.Concat(slices.DeleteFunc(slices.Clone(waiting), func(j Job) bool { return j.Parent != "" }), shares)
	for _, j := range waiting {
		i := slices.Index(free, slices.Min(free))
		p := Place{Job: j, Position: len(l.Places) + 1, ETA: free[i]}
		if n := len(l.Places); n > 0 {
			ahead := l.Places[n-1].Job
			p.Ahead = &ahead
		}
		l.Places = append(l.Places, p)
		free[i] += j.Estimate
	}
	return l
}

// runReaper is RunReaper for both implementations.
func runReaper(ctx context.Context, reap func(context.Context) ([]Job, error), interval time.Duration, log *slog.Logger) error {
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		jobs, err := reap(ctx)
		if err != nil && ctx.Err() == nil {
			log.Error("reap", "err", err)
		}
		for _, j := range jobs {
			log.Info("job recovered", "job", j.ID, "pool", j.Pool, "state", j.State, "attempt", j.Attempt)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
