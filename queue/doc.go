// Package queue holds approved benchmark jobs until a runner measures them:
// the job model, one Queue interface and two implementations with the same
// behaviour, Redis (several processes share it) and Memory (the embedded
// default when no Redis URL is set).
//
// Each runner pool has one line: at most one running job and Options.Depth
// waiting ones (one by default). A newer job takes the waiting place and the
// oldest waiting job is displaced (superseded), never the running one. A
// runner keeps its claim alive with Heartbeat; when it stops, Reap puts the
// job back at the front of its line once, and fails it the second time.
// Every transition the queue makes on its own, and every claim and finish,
// is published on the event stream in the same atomic step, so the bot
// reports each exactly once.
//
// Imports point one way: bot and runner import queue; queue imports nothing
// from this module (go-redis outside). queuetest holds the conformance suite
// and a real redis-server for tests.
//
// # Redis keys
//
// All keys live under Options.Prefix (P, "arena:" by default):
//
//	P job:<id>             hash: body (the job as enqueued, JSON), pool, state,
//	                       reason, attempt, fence and token of the latest claim,
//	                       started, finished (RFC 3339), result, cancel (present
//	                       when a running job was cancelled), op (a nonce of the
//	                       last Enqueue, Cancel or Finish, so a call that go-redis
//	                       retries after a lost reply is not applied twice); expires
//	                       Options.Retain after the job ends
//	P active               set of the IDs of jobs not yet ended
//	P recent               list of ended job IDs, the latest first (Options.Recent)
//	P pools                set of pool names ever used
//	P pool:<pool>:waiting  list of waiting job IDs, the next first (Options.Depth)
//	P pool:<pool>:retry    list of retried job IDs; they run before waiting ones
//	P pool:<pool>:run      hash: job, token of the running job's claim
//	P pool:<pool>:lease    the claim's token, with a TTL of Options.LeaseTTL that
//	                       Heartbeat renews; run without lease means a lost runner
//	P pool:<pool>:signal   list of at most one wake-up token, popped by a blocked Claim
//	P fence                counter of claims: each claim's fencing number
//	P events               stream of events (about Options.MaxEvents kept)
//	P delivery:<id>        webhook delivery ID, with the TTL SeenDelivery was given
//
// Every state change is one Lua script, so the queue needs a standalone Redis
// or a Sentinel-managed primary (scripts derive keys from IDs they read,
// which Redis Cluster does not allow). Run Redis with appendonly yes and
// appendfsync always (or everysec, accepting a second of loss) so a restart
// loses no job.
package queue
