package queue

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/arenabot/arenabot/profile"
)

// A State is where a job is in its life. The values are the design's words;
// the strings are stored in Redis and shown to operators.
type State string

const (
	Received         State = "received"
	AwaitingApproval State = "awaiting_approval"
	Queued           State = "queued"
	Running          State = "running"
	Done             State = "done"
	Failed           State = "failed"
	Cancelled        State = "cancelled"
	Superseded       State = "superseded"
	Expired          State = "expired"
	Rejected         State = "rejected"
)

// Terminal reports whether s is a final state: done, failed, cancelled,
// superseded, expired or rejected. A job in a terminal state never changes again.
func (s State) Terminal() bool {
	switch s {
	case Done, Failed, Cancelled, Superseded, Expired, Rejected:
		return true
	}
	return false
}

// A Kind is the command a job came from, without the slash.
type Kind string

const (
	Benchmark         Kind = "benchmark"
	BenchmarkMultiple Kind = "benchmark-multiple"
	BenchmarkTest     Kind = "benchmark-test"
	// BenchmarkSweep measures every enabled entry on every test it subscribes to, for
	// maintainers; its runner yields its host to any other job between rows.
	BenchmarkSweep Kind = "benchmark-sweep"
)

// DefaultPool is the pool of a job enqueued without one.
const DefaultPool = "default"

// poolName is what a pool may be called: it names Redis keys and shows on the status page.
var poolName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// CheckPool says what is wrong with a pool's name, or nil.
func CheckPool(name string) error {
	if !poolName.MatchString(name) {
		return fmt.Errorf("pool %q is not a pool name: want letters, digits, '.', '_' or '-', at most 64, starting with a letter or digit, e.g. big-hosts", name)
	}
	return nil
}

// MaxAttempts is how many times a job is claimed at most: a job whose runner
// stops heart-beating is retried once, then failed.
const MaxAttempts = 2

// Reasons the queue writes itself. The bot may post them as they are.
const (
	ReasonRetried = "the runner stopped responding; the job was put back at the front of the line to run once more"
	ReasonLost    = "the runner stopped responding twice; the job was not retried again"
)

// BaselineCommitted is Job.Baseline for --baseline committed: Δ against the results
// committed on the base branch instead of the base measured in the job.
const BaselineCommitted = "committed"

// A Job is one request: what to measure, for whom, and where it is in its
// life. The queue owns State, Reason, Attempt, Fence, Result, the endings
// (SupersededBy, CancelledBy, RejectedBy) and the Queued, Started and
// Finished times (and Approver and Approved for a submitted request, which
// Approve sets); the caller fills the rest before Submit or Enqueue.
type Job struct {
	ID              string        `json:"id"`                          // "3f9c2a7d10b4e8c1"; Enqueue assigns one when empty
	Repo            string        `json:"repo"`                        // "octo/arena"
	PR              int           `json:"pr"`                          // 42
	Requester       string        `json:"requester"`                   // "alice"
	Approver        string        `json:"approver,omitempty"`          // "bob"; empty when the requester could approve
	Command         string        `json:"command"`                     // "/benchmark -f gin -t baseline"
	Kind            Kind          `json:"kind"`                        // Benchmark
	Frameworks      []string      `json:"frameworks,omitempty"`        // ["gin"]
	Tests           []string      `json:"tests,omitempty"`             // ["baseline"]; empty means every subscribed test
	Save            bool          `json:"save,omitempty"`              // --save
	Compare         string        `json:"compare,omitempty"`           // --compare fiber
	Baseline        string        `json:"baseline,omitempty"`          // "": Δ against the base measured in the job; "committed": --baseline committed
	CPUProfile      string        `json:"cpu_profile,omitempty"`       // the rows profiled after their runs: profile.CPUProfileFirst ("first"), CPUProfileAll ("all"); "" none
	SHA             string        `json:"sha"`                         // the approved head commit
	Pool            string        `json:"pool"`                        // runner pool; empty means DefaultPool
	InstallationID  int64         `json:"installation_id,omitempty"`   // GitHub App installation that received the comment
	CommentID       int64         `json:"comment_id,omitempty"`        // the command comment
	StatusCommentID int64         `json:"status_comment_id,omitempty"` // the bot's status comment, edited through the job's life
	Estimate        time.Duration `json:"estimate,omitempty"`          // planned duration of the run
	Expires         time.Time     `json:"expires,omitzero"`            // awaiting approval: when Expire ends it

	// Parent, on a share, is the ID of the job whose rows it measures a part of: a runner
	// that took a job with many rows enqueued it (ShareID names it) so that another host of
	// the pool measures them. A share waits behind every job that can start (it takes an
	// idle host), waits for no pull request's turn and displaces none; the bot posts
	// nothing for it.
	Parent string `json:"parent,omitempty"`

	// Tuning is what the repository's settings file sets for the runner over its own
	// flags (the change-or-noise rule, the job budget); nil keeps the runner's.
	Tuning *Tuning `json:"tuning,omitempty"`
	// Depth is how many jobs the job's pull request may have waiting in its pool's line
	// (the repository's settings file); 0 means Options.Depth.
	Depth int `json:"depth,omitempty"`

	// Payload is the bot's own description of the request (its plan, notes for
	// the status comment), opaque to the queue.
	Payload json.RawMessage `json:"payload,omitempty"`

	// Rows are the measurements the ack promised, resolved by the bot at the SHA (in the
	// report's order), which the runner measures exactly. Empty (a job queued before jobs
	// carried them, or an operator's): the runner selects from Frameworks and Tests.
	Rows []profile.Row `json:"rows,omitempty"`

	// Set through Amend.
	HeadMoved string `json:"head_moved,omitempty"` // the PR's head when it moved after the ack
	ETag      string `json:"etag,omitempty"`       // of the status comment's reactions, for conditional polling
	Shown     string `json:"shown,omitempty"`      // digest of the status comment as last written
	Check     string `json:"check,omitempty"`      // the bot's check run on the commit as last written: "<id> <digest>"

	// How the job ended, as structured fields (the queue sets them).
	SupersededBy string `json:"superseded_by,omitempty"` // superseded: the ID of the job that took its place
	CancelledBy  string `json:"cancelled_by,omitempty"`  // cancelled: who cancelled it ("alice"); empty for an operator's drain without a name
	RejectedBy   string `json:"rejected_by,omitempty"`   // rejected: who declined it

	Created  time.Time `json:"created,omitzero"`  // the comment arrived
	Approved time.Time `json:"approved,omitzero"` // approval was given
	Queued   time.Time `json:"queued,omitzero"`   // set by Enqueue
	Started  time.Time `json:"started,omitzero"`  // set by Claim (the latest attempt)
	Finished time.Time `json:"finished,omitzero"` // set when the job reached a terminal state

	Attempt int    `json:"attempt,omitempty"` // 1 for the first run, 2 for the retry
	State   State  `json:"state"`
	Reason  string `json:"reason,omitempty"` // why the job ended as it did (or was retried), fit to post; the queue's own supersede and cancel leave it empty
	Fence   int64  `json:"fence,omitempty"`  // fencing number of the latest claim

	// CancelRequested is set when Cancel was called while the job ran; the
	// runner learns of it through Heartbeat.
	CancelRequested bool `json:"cancel_requested,omitempty"`

	// Result is what the runner reported through Finish (JSON, opaque to the queue).
	Result json.RawMessage `json:"result,omitempty"`
}

// Tuning is what an arena's settings file sets for its jobs over the runner's flags; a nil
// field keeps the runner's own.
type Tuning struct {
	MinEffect *float64       `json:"min_effect,omitempty"` // 0.02: a change is at least 2%
	Target    *float64       `json:"target,omitempty"`     // 0.02: a row stops at ±2%
	MinRuns   *int           `json:"min_runs,omitempty"`   // runs a side, at least
	MaxRuns   *int           `json:"max_runs,omitempty"`   // runs a side, at most
	Budget    *time.Duration `json:"budget,omitempty"`     // the job budget; 0: no limit
}

// A Lease is a runner's hold on its running job of a pool. Token proves
// ownership to Heartbeat and Finish; Fence increases with every claim across
// the whole queue, so a result can be checked against the latest claim.
type Lease struct {
	Job   Job
	Token string
	Fence int64
}

// An Outcome is how a run ended, given to Finish.
type Outcome struct {
	State  State           // Done, Failed or Cancelled
	Reason string          // why it failed or was cancelled; fit to post
	Result json.RawMessage // stored with the job and sent in the "outcome" event; nil for none
}

// A Place is a job's position in its pool's line.
type Place struct {
	Job      Job
	Position int           // 1 is the first running job (or the next to run when none runs); the running jobs come first
	ETA      time.Duration // expected wait until the job starts: 0 when running
	Ahead    *Job          // the job just ahead in the line (running, retried or waiting); nil at position 1
}

// A Line is one pool: its running jobs (one per runner that claimed one) and the jobs
// waiting behind them.
type Line struct {
	Pool   string
	Places []Place // the running jobs first, then the waiting jobs in the order they will run
}

// Running returns the running jobs of the line, the earliest started first.
func (l Line) Running() []Job {
	var out []Job
	for _, p := range l.Places {
		if p.Job.State != Running {
			break
		}
		out = append(out, p.Job)
	}
	return out
}

// A Filter selects jobs for List. The zero Filter selects every job that is
// not terminal plus the recent terminal ones.
type Filter struct {
	Pool   string  // "" means any pool
	Repo   string  // "" means any repository
	PR     int     // 0 means any pull request
	States []State // nil means any state
}

func (f Filter) match(j Job) bool {
	if f.Pool != "" && j.Pool != f.Pool || f.Repo != "" && j.Repo != f.Repo || f.PR != 0 && j.PR != f.PR {
		return false
	}
	if f.States == nil {
		return true
	}
	for _, s := range f.States {
		if s == j.State {
			return true
		}
	}
	return false
}

// Event kinds. The queue publishes the first group itself, in the same atomic
// step as the transition, with the job (JSON of Job) as Data; runners publish
// the rest.
const (
	EventStarted    = "started"    // Claim gave the job to a runner
	EventOutcome    = "outcome"    // Finish: the job is done, failed or cancelled
	EventSuperseded = "superseded" // Submit replaced the request, or Enqueue or Approve displaced the job: its pull request's newer one took its place
	EventCancelled  = "cancelled"  // Cancel or Drain removed a waiting job, or Reap found a cancelled job's runner gone
	EventRetried    = "retried"    // Reap: the runner stopped responding; the job waits at the front again
	EventLost       = "lost"       // Reap: the runner stopped responding a second time; the job failed
	EventSubmitted  = "submitted"  // Submit: a request awaits approval
	EventQueued     = "queued"     // Approve or Enqueue: the request was approved and waits in line
	EventRejected   = "rejected"   // Reject: the request was declined
	EventExpired    = "expired"    // Expire: nobody approved the request in time
	EventUpdated    = "updated"    // Amend changed what the status comment shows

	EventProgress = "progress" // runner: a step began ("baseline 4096c — 3 of 24")
	EventRow      = "row"      // runner: one measured row
)

// An Event is a message on the durable stream from the queue and the
// runners to the bot.
type Event struct {
	Job  string          // job ID
	Kind string          // one of the Event* kinds
	Data json.RawMessage // for the queue's own events, the job as JSON; otherwise what the runner sent
	Time time.Time
}

// A Delivery is an event read through a consumer group. It is delivered again
// to the same consumer until it is acknowledged with Ack.
type Delivery struct {
	ID string // stream entry ID, for Ack
	Event
}

// An Amendment is what Amend changes; nil (or 0) fields are left as they are.
type Amendment struct {
	StatusCommentID int64
	HeadMoved       *string
	ETag            *string
	Shown           *string
	Check           *string
}

// A Runner is what the queue knows of a pool's runners.
type Runner struct {
	Pool string
	Seen time.Time // Options.Now when a runner of the pool was last seen; zero: never
}

// Errors callers branch on; check them with errors.Is.
var (
	ErrNotFound  = errors.New("job not found")
	ErrExists    = errors.New("job already exists")
	ErrFinished  = errors.New("job already finished")
	ErrLeaseLost = errors.New("lease lost")
	// ErrNoShare is ClaimShare's answer when no share of the job waits.
	ErrNoShare = errors.New("no share of the job waits")
	// ErrNotAwaiting is Approve's or Reject's answer for a job that was
	// approved already (it is queued or running), and Position's for a job
	// that still awaits approval (it is in no line yet).
	ErrNotAwaiting = errors.New("job is not awaiting approval")
)
