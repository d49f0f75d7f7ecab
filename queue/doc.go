// Package queue owns a benchmark request's life, from the ack (awaiting
// approval) through its line to its end: the job model, one Queue interface
// and implementations with the same behaviour: Redis (several processes
// share it), Disk (the embedded default when no Redis URL is set: one
// process, its state in a bbolt file that survives restarts and crashes)
// and Memory (in process, for tests; Disk is Memory's state machine with a
// file under it).
//
// A request is submitted awaiting approval; Approve puts it in its pool's
// line, Reject and Expire end it. The same requester's newer request on a
// pull request replaces an older one that still awaits approval.
//
// Each runner pool has one line: its running jobs, one per runner that
// claimed one (each runner host takes one job at a time), and behind them
// the waiting jobs, at most Options.Depth (one by default) per pull request,
// as the arena's queue is one deep per pull request. A claim takes the first
// retried, then the first waiting, job whose pull request has none running:
// a pull request's jobs run one at a time, in order. Jobs of different pull
// requests wait in the order they were approved and never displace each
// other; a pull request's newer job takes the place of that pull request's
// waiting one, which ends as superseded (with Depth > 1, its oldest waiting
// one), so the pull request keeps its turn. The running job is never
// displaced, nor is a job retried after a lost runner; a job of no pull
// request (PR 0) shares its place with none. A
// runner keeps its claim alive with Heartbeat; when it stops, Reap puts the
// job back at the front of its line once, and fails it the second time.
// Every transition the queue makes on its own, and every claim and finish,
// is published on the event stream in the same atomic step, so the bot
// reports each exactly once.
//
// The lifecycle is written once, in Go: transition (lifecycle.go) takes the
// part of the state a command reads (the job records, the pool's line and
// running claims, the clock) and the command (submit, approve, reject,
// expire, amend, enqueue, claim, heartbeat, finish, cancel, drain, reap)
// and returns the change with the events to publish, or a refusal
// (ErrNotFound, ErrExists, ErrFinished, ErrNotAwaiting, ErrLeaseLost). It
// does no I/O. Memory (and so Disk) applies it under its mutex; Redis
// applies it in an optimistic transaction: it WATCHes the keys it read,
// computes the change in Go and writes it, with the events, in one
// MULTI/EXEC, and tries again when another process changed those keys
// first.
//
// Imports point one way: bot and runner import queue; queue imports only
// profile of this module (a job carries its profile.Rows), and go-redis and
// bbolt outside. queuetest holds the
// conformance suite and a real redis-server for tests.
//
// # Redis keys
//
// All keys live under Options.Prefix (P, "arena:" by default):
//
//	P job:<id>             hash: body (the job as submitted or enqueued, JSON),
//	                       pool, state, reason, attempt, fence and token of the
//	                       latest claim, started, finished, approved, queued
//	                       (RFC 3339 with nine fraction digits, so they sort as
//	                       strings), approver, result, cancel (present when a
//	                       running job was cancelled), superseded_by,
//	                       cancelled_by, rejected_by, the fields Amend changes
//	                       (status_comment_id, head_moved, etag, shown), for a
//	                       submitted request owner (repository, PR and requester,
//	                       lower case) and expires_at, and op (a nonce of the
//	                       last Submit, Approve, Reject, Enqueue, Cancel or
//	                       Finish, so a call tried again after a lost reply
//	                       succeeds once), pr (the pull request the job waits
//	                       in line for: repository in lower case, "#", number; a
//	                       record without it, written before records had one, is
//	                       read from its body); the hash fields override
//	                       the body's; expires Options.Retain after the job ends
//	P active               set of the IDs of jobs not yet ended
//	P awaiting             list of the IDs of requests awaiting approval, the
//	                       oldest first
//	P owners               hash: owner of a request awaiting approval -> its ID,
//	                       so the same requester's next request replaces it
//	P runners              hash: pool -> when a runner of it last claimed, waited
//	                       in Claim (about every second) or heart-beat
//	P hosts                hash: pool NUL host name -> the live host's Announce
//	                       (JSON, with its expiry by Options.Now; Hosts prunes)
//	P recent               list of ended job IDs, the latest first (Options.Recent)
//	P pools                set of pool names ever used
//	P pool:<pool>:waiting  list of waiting job IDs, the next first (Options.Depth
//	                       per pull request)
//	P pool:<pool>:retry    list of retried job IDs; they run before waiting ones
//	P pool:<pool>:runs     hash: token of a running claim -> its job
//	P pool:<pool>:lease:<token>
//	                       the claim's token, with a TTL of Options.LeaseTTL that
//	                       Heartbeat renews; a claim without its lease means a
//	                       lost runner
//	P pool:<pool>:run, P pool:<pool>:lease
//	                       the one running claim and its lease as a store written
//	                       before a pool could run several jobs kept them: read as
//	                       a claim, moved to runs by the next change of the line
//	P pool:<pool>:signal   list of at most one wake-up token, popped by a blocked Claim
//	P fence                counter of claims: each claim's fencing number
//	P events               stream of events (about Options.MaxEvents kept)
//	P delivery:<id>        webhook delivery ID, with the TTL SeenDelivery was given
//	P lease:<name>         the holder of a Leader's lease, with its TTL
//
// Every state change is one MULTI/EXEC guarded by WATCH on the keys its
// transition read; the one script left is the read-only snapshot of the
// lines behind Status, List and Position. Keys are derived from IDs read
// from other keys, so the queue needs a standalone Redis or a
// Sentinel-managed primary, not Redis Cluster. Run Redis with appendonly yes
// and appendfsync always (or everysec, accepting a second of loss) so a
// restart loses no job.
//
// # The Disk file
//
// A bbolt file whose bucket "queue" holds the queue's state; other buckets
// belong to the rest of the service (Disk.DB):
//
//	queue/jobs/<id>        a job (JSON) with, once it ended, when it is forgotten
//	queue/events/<n>       the stream entry numbered n (8 bytes, big-endian)
//	queue/deliveries/<id>  webhook delivery ID -> when it is forgotten
//	queue/meta             the rest (JSON): every pool's running claims (job,
//	                       token, wall-clock lease deadline), retry and waiting
//	                       lines; the requests awaiting approval in order; the
//	                       fence and event counters; the consumer groups with
//	                       their pending entries; when runners were last seen
//
// Each change writes only the records it touched, in one transaction. The
// live runner hosts are not in the file: a Disk keeps them in memory.
package queue
