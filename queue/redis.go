package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is the Queue on a Redis server (standalone or Sentinel-managed; not
// Cluster). Several processes may share one prefix: every change of a job
// is the lifecycle's transition (lifecycle.go) computed in Go inside an
// optimistic transaction, which WATCHes the keys it read and writes the
// change, with the events it publishes, in one MULTI/EXEC, trying again when
// another process changed those keys meanwhile. The key layout is in the
// package documentation. The reads are redisReads, the event stream
// redisStream, the delivery IDs redisDeliveries and the live runner hosts
// redisHosts.
type Redis struct {
	rdb  redis.UniversalClient
	opts Options
	k    redisKeys
	redisReads
	*redisStream
	redisDeliveries
	redisHosts
	redisLeases
}

var _ Queue = (*Redis)(nil)

// NewRedis returns a queue on rdb under o.Prefix. The caller owns rdb.
func NewRedis(rdb redis.UniversalClient, o Options) *Redis {
	o = o.withDefaults()
	k := redisKeys(o.Prefix)
	return &Redis{
		rdb: rdb, opts: o, k: k,
		redisReads:      redisReads{rdb: rdb, k: k, opts: o},
		redisStream:     &redisStream{rdb: rdb, k: k, opts: o},
		redisDeliveries: redisDeliveries{rdb: rdb, k: k},
		redisHosts:      redisHosts{rdb: rdb, k: k, opts: o},
		redisLeases:     redisLeases{rdb: rdb, k: k},
	}
}

// apply runs one command on the job id in a transaction; name prefixes its
// errors.
func (q *Redis) apply(ctx context.Context, name, id string, cmd command) (change, error) {
	ch, err := q.transact(ctx, cmd, id, "", nil)
	if err != nil {
		return ch, fmt.Errorf("%s %s: %w", name, id, err)
	}
	return ch, nil
}

func (q *Redis) Enqueue(ctx context.Context, j Job) (Job, *Job, error) {
	j = prepare(j, q.opts.Now())
	ch, err := q.apply(ctx, "enqueue", j.ID, command{Op: opEnqueue, Job: j, Nonce: newID()})
	if err != nil {
		return Job{}, nil, err
	}
	return ch.Reply, ch.Other, nil
}

func (q *Redis) Submit(ctx context.Context, j Job) (Job, *Job, error) {
	j = prepareSubmit(j, q.opts.Now())
	ch, err := q.apply(ctx, "submit", j.ID, command{Op: opSubmit, Job: j, Nonce: newID()})
	if err != nil {
		return Job{}, nil, err
	}
	return ch.Reply, ch.Other, nil
}

func (q *Redis) Approve(ctx context.Context, id, by string) (Job, *Job, error) {
	ch, err := q.apply(ctx, "approve", id, command{Op: opApprove, ID: id, By: by, Nonce: newID()})
	return ch.Reply, ch.Other, err
}

func (q *Redis) Reject(ctx context.Context, id, by string) (Job, error) {
	ch, err := q.apply(ctx, "reject", id, command{Op: opReject, ID: id, By: by, Nonce: newID()})
	return ch.Reply, err
}

func (q *Redis) Expire(ctx context.Context) ([]Job, error) {
	ids, err := q.rdb.LRange(ctx, q.k.key("awaiting"), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("expire: %w", err)
	}
	jobs, err := q.records(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("expire: %w", err)
	}
	var out []Job
	for i, id := range ids {
		if jobs[i] == nil {
			// A record gone from under the list: tidy up.
			if err := q.rdb.LRem(ctx, q.k.key("awaiting"), 0, id).Err(); err != nil {
				return nil, fmt.Errorf("expire: %w", err)
			}
			continue
		}
		// Only a request that is due is worth a transaction.
		s := scene{Now: q.opts.Now(), Jobs: map[string]*Job{id: jobs[i]}}
		if _, err := transition(s, command{Op: opExpire, ID: id}); err != nil {
			continue
		}
		ch, err := q.transact(ctx, command{Op: opExpire, ID: id}, id, "", nil)
		switch {
		case err == nil:
			out = append(out, ch.Reply)
		case errors.Is(err, errNotDue), errors.Is(err, ErrNotAwaiting), errors.Is(err, ErrFinished), errors.Is(err, ErrNotFound):
		default:
			return out, fmt.Errorf("expire: %w", err)
		}
	}
	return out, nil
}

func (q *Redis) Amend(ctx context.Context, id string, a Amendment) (Job, error) {
	ch, err := q.apply(ctx, "amend", id, command{Op: opAmend, ID: id, Amendment: a})
	if err != nil {
		return Job{}, err
	}
	return ch.Reply, nil
}

// claimPoll bounds each wait of Claim for a signal: Redis blocks in whole
// seconds, and go-redis does not interrupt a blocked command when ctx ends.
const claimPoll = time.Second

func (q *Redis) Claim(ctx context.Context, pool string) (Lease, error) {
	if pool == "" {
		pool = DefaultPool
	}
	for {
		if err := ctx.Err(); err != nil {
			return Lease{}, err
		}
		token := newToken()
		seen := func(p redis.Pipeliner) { p.HSet(ctx, q.k.key("runners"), pool, formatTime(q.opts.Now())) }
		ch, err := q.transact(ctx, command{Op: opClaim, Token: token}, "", pool, seen)
		switch {
		case err == nil:
			return Lease{Job: ch.Reply, Token: token, Fence: ch.Reply.Fence}, nil
		case errors.Is(err, errBusy), errors.Is(err, errEmpty):
			// The runner waits: it is seen.
			if _, err := q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error { seen(p); return nil }); err != nil {
				return Lease{}, fmt.Errorf("claim from %s: %w", pool, err)
			}
		default:
			return Lease{}, fmt.Errorf("claim from %s: %w", pool, err)
		}
		// Wait for Enqueue, Finish or Reap to signal the pool, or poll.
		err = q.rdb.BLPop(ctx, claimPoll, q.k.pool(pool, "signal")).Err()
		if err != nil && !errors.Is(err, redis.Nil) {
			if ctx.Err() != nil {
				return Lease{}, ctx.Err()
			}
			return Lease{}, fmt.Errorf("claim from %s: wait: %w", pool, err)
		}
	}
}

func (q *Redis) ClaimShare(ctx context.Context, pool, parent string) (Lease, error) {
	if pool == "" {
		pool = DefaultPool
	}
	token := newToken()
	seen := func(p redis.Pipeliner) { p.HSet(ctx, q.k.key("runners"), pool, formatTime(q.opts.Now())) }
	ch, err := q.transact(ctx, command{Op: opClaim, ID: parent, Token: token}, "", pool, seen)
	switch {
	case errors.Is(err, errEmpty), errors.Is(err, errBusy):
		return Lease{}, fmt.Errorf("claim a share of %s: %w", parent, ErrNoShare)
	case err != nil:
		return Lease{}, fmt.Errorf("claim a share of %s: %w", parent, err)
	}
	return Lease{Job: ch.Reply, Token: token, Fence: ch.Reply.Fence}, nil
}

func (q *Redis) Heartbeat(ctx context.Context, l Lease) (bool, error) {
	seen := func(p redis.Pipeliner) { p.HSet(ctx, q.k.key("runners"), l.Job.Pool, formatTime(q.opts.Now())) }
	ch, err := q.transact(ctx, command{Op: opHeartbeat, ID: l.Job.ID, Token: l.Token}, l.Job.ID, l.Job.Pool, seen)
	if errors.Is(err, ErrLeaseLost) {
		// The runner was seen, though its job is no longer its own.
		_, _ = q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error { seen(p); return nil })
	}
	if err != nil {
		return false, fmt.Errorf("heartbeat %s: %w", l.Job.ID, err)
	}
	return ch.Cancelled, nil
}

func (q *Redis) Finish(ctx context.Context, l Lease, o Outcome) (Job, error) {
	if err := checkOutcome(o); err != nil {
		return Job{}, err
	}
	cmd := command{Op: opFinish, ID: l.Job.ID, Token: l.Token, Outcome: o, Nonce: newID()}
	ch, err := q.transact(ctx, cmd, l.Job.ID, l.Job.Pool, nil)
	if err != nil {
		return Job{}, fmt.Errorf("finish %s: %w", l.Job.ID, err)
	}
	return ch.Reply, nil
}

func (q *Redis) Cancel(ctx context.Context, id, by string) (Job, error) {
	ch, err := q.apply(ctx, "cancel", id, command{Op: opCancel, ID: id, By: by, Nonce: newID()})
	return ch.Reply, err
}

func (q *Redis) Drain(ctx context.Context, pool, by string) ([]Job, error) {
	var retry, waiting *redis.StringSliceCmd
	_, err := q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		retry = p.LRange(ctx, q.k.pool(pool, "retry"), 0, -1)
		waiting = p.LRange(ctx, q.k.pool(pool, "waiting"), 0, -1)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("drain %s: %w", pool, err)
	}
	var out []Job
	for _, id := range slices.Concat(retry.Val(), waiting.Val()) {
		ch, err := q.transact(ctx, command{Op: opDrain, ID: id, By: by}, id, pool, nil)
		switch {
		case err == nil:
			out = append(out, ch.Reply)
		case errors.Is(err, errNotWaiting), errors.Is(err, ErrNotFound):
		default:
			return out, fmt.Errorf("drain %s: %w", pool, err)
		}
	}
	return out, nil
}

func (q *Redis) Reap(ctx context.Context) ([]Job, error) {
	pools, err := q.rdb.SMembers(ctx, q.k.key("pools")).Result()
	if err != nil {
		return nil, fmt.Errorf("reap: %w", err)
	}
	slices.Sort(pools)
	// Only a pool with a running claim whose lease lapsed is worth a
	// transaction: one round trip reads the claims, another their leases.
	runs := make([]*redis.MapStringStringCmd, len(pools))
	legacy := make([]*redis.IntCmd, len(pools))
	_, err = q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, pool := range pools {
			runs[i] = p.HGetAll(ctx, q.k.pool(pool, "runs"))
			legacy[i] = p.Exists(ctx, q.k.pool(pool, "run"), q.k.pool(pool, "lease"))
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("reap: %w", err)
	}
	leases := make([][]*redis.IntCmd, len(pools))
	_, err = q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, pool := range pools {
			for token := range runs[i].Val() {
				leases[i] = append(leases[i], p.Exists(ctx, q.k.leaseKey(pool, token)))
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("reap: %w", err)
	}
	var out []Job
	for i, pool := range pools {
		lapsed := legacy[i].Val() == 1 // a claim in run without its lease
		for _, l := range leases[i] {
			lapsed = lapsed || l.Val() == 0
		}
		if !lapsed {
			continue
		}
		// One claim at a time, until every running claim is live.
	reap:
		for range len(runs[i].Val()) + 1 {
			ch, err := q.transact(ctx, command{Op: opReap}, "", pool, nil)
			switch {
			case err == nil:
				out = append(out, ch.Reply)
			case errors.Is(err, errLeaseLive), errors.Is(err, errNotRunning):
				break reap
			default:
				return out, fmt.Errorf("reap: %w", err)
			}
		}
	}
	return out, nil
}

func (q *Redis) RunReaper(ctx context.Context, interval time.Duration) error {
	return runReaper(ctx, q.Reap, interval, q.opts.Logger)
}

// redisReads is the Redis queue's reads: a job, its place, the lines, the
// list, the runners.
type redisReads struct {
	rdb  redis.UniversalClient
	k    redisKeys
	opts Options
}

// records reads job records; a missing one is nil.
func (q redisReads) records(ctx context.Context, ids []string) ([]*Job, error) {
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	_, err := q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, q.k.job(id))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]*Job, len(ids))
	for i, c := range cmds {
		if len(c.Val()) == 0 {
			continue
		}
		j, err := recordJob(c.Val())
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", ids[i], err)
		}
		out[i] = &j
	}
	return out, nil
}

func (q redisReads) Runners(ctx context.Context) ([]Runner, error) {
	var seen *redis.MapStringStringCmd
	var pools *redis.StringSliceCmd
	_, err := q.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		seen = p.HGetAll(ctx, q.k.key("runners"))
		pools = p.SMembers(ctx, q.k.key("pools"))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("runners: %w", err)
	}
	names := make(map[string]bool)
	for _, name := range pools.Val() {
		names[name] = true
	}
	for name := range seen.Val() {
		names[name] = true
	}
	out := make([]Runner, 0, len(names))
	for name := range names {
		out = append(out, Runner{Pool: name, Seen: parseTime(seen.Val()[name])})
	}
	slices.SortFunc(out, func(a, b Runner) int { return strings.Compare(a.Pool, b.Pool) })
	return out, nil
}

// snapshot reads the lines of pool ("" for every pool) and, when recent is
// set, the recent terminal jobs and the jobs awaiting approval, in one
// atomic step.
func (q redisReads) snapshot(ctx context.Context, pool string, recent bool) ([]Line, []Job, []Job, error) {
	flag := "0"
	if recent {
		flag = "1"
	}
	v, err := snapshotScript.Run(ctx, q.rdb, nil, string(q.k), pool, flag).Result()
	if err != nil {
		return nil, nil, nil, err
	}
	reply, ok := v.([]any)
	if !ok || len(reply) != 3 {
		return nil, nil, nil, fmt.Errorf("unexpected snapshot reply %T", v)
	}
	raw, _ := reply[0].([]any)
	now := q.opts.Now()
	lines := make([]Line, 0, len(raw))
	for _, r := range raw {
		pair, _ := r.([]any)
		if len(pair) != 2 {
			return nil, nil, nil, fmt.Errorf("unexpected line %v", r)
		}
		name, _ := pair[0].(string)
		jobs, err := decodeRecords(pair[1])
		if err != nil {
			return nil, nil, nil, err
		}
		n := 0 // the running jobs come first
		for n < len(jobs) && jobs[n].State == Running {
			n++
		}
		lines = append(lines, line(name, jobs[:n], jobs[n:], now))
	}
	slices.SortFunc(lines, func(a, b Line) int { return strings.Compare(a.Pool, b.Pool) })
	terminal, err := decodeRecords(reply[1])
	if err != nil {
		return nil, nil, nil, err
	}
	awaiting, err := decodeRecords(reply[2])
	if err != nil {
		return nil, nil, nil, err
	}
	return lines, awaiting, terminal, nil
}

func (q redisReads) Position(ctx context.Context, id string) (Place, error) {
	j, err := q.Get(ctx, id)
	if err != nil {
		return Place{}, err
	}
	for range 2 {
		switch {
		case j.State.Terminal():
			return Place{Job: j}, fmt.Errorf("position of %s: %w", id, ErrFinished)
		case j.State == AwaitingApproval:
			return Place{Job: j}, fmt.Errorf("position of %s: in no line yet: %w", id, ErrNotAwaiting)
		}
		lines, _, _, err := q.snapshot(ctx, j.Pool, false)
		if err != nil {
			return Place{}, fmt.Errorf("position of %s: %w", id, err)
		}
		for _, l := range lines {
			for _, p := range l.Places {
				if p.Job.ID == id {
					return p, nil
				}
			}
		}
		// It left the line between the two reads: it has ended.
		if j, err = q.Get(ctx, id); err != nil {
			return Place{}, err
		}
	}
	return Place{}, fmt.Errorf("position of %s: job in state %s is in no line", id, j.State)
}

func (q redisReads) Status(ctx context.Context) ([]Line, error) {
	lines, _, _, err := q.snapshot(ctx, "", false)
	if err != nil {
		return nil, fmt.Errorf("queue status: %w", err)
	}
	return lines, nil
}

func (q redisReads) List(ctx context.Context, f Filter) ([]Job, error) {
	lines, awaiting, recent, err := q.snapshot(ctx, f.Pool, true)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return listed(lines, awaiting, recent, f), nil
}

func (q redisReads) Get(ctx context.Context, id string) (Job, error) {
	m, err := q.rdb.HGetAll(ctx, q.k.job(id)).Result()
	if err != nil {
		return Job{}, fmt.Errorf("get %s: %w", id, err)
	}
	if len(m) == 0 {
		return Job{}, fmt.Errorf("get %s: %w", id, ErrNotFound)
	}
	j, err := recordJob(m)
	if err != nil {
		return Job{}, fmt.Errorf("get %s: %w", id, err)
	}
	return j, nil
}

// A job record is a hash: "body" holds the job as given to Submit or
// Enqueue (JSON); the fields that change later are kept beside it and
// override the body's.
func recordJob(m map[string]string) (Job, error) {
	var j Job
	if err := json.Unmarshal([]byte(m["body"]), &j); err != nil {
		return Job{}, fmt.Errorf("job record: %w", err)
	}
	if v := m["status_comment_id"]; v != "" {
		j.StatusCommentID, _ = strconv.ParseInt(v, 10, 64)
	}
	for field, p := range map[string]*string{
		"head_moved": &j.HeadMoved, "etag": &j.ETag, "shown": &j.Shown, "check": &j.Check, "approver": &j.Approver,
		"superseded_by": &j.SupersededBy, "cancelled_by": &j.CancelledBy, "rejected_by": &j.RejectedBy,
	} {
		if v, ok := m[field]; ok {
			*p = v
		}
	}
	if v := m["approved"]; v != "" {
		j.Approved = parseTime(v)
	}
	if v := m["queued"]; v != "" {
		j.Queued = parseTime(v)
	}
	j.State = State(m["state"])
	j.Reason = m["reason"]
	j.Attempt, _ = strconv.Atoi(m["attempt"])
	j.Fence, _ = strconv.ParseInt(m["fence"], 10, 64)
	j.Started = parseTime(m["started"])
	j.Finished = parseTime(m["finished"])
	j.CancelRequested = m["cancel"] != ""
	if r := m["result"]; r != "" {
		j.Result = json.RawMessage(r)
	}
	return j, nil
}

// decodeRecord decodes a flat HGETALL reply.
func decodeRecord(v any) (Job, error) {
	flat, _ := v.([]any)
	if len(flat) == 0 || len(flat)%2 != 0 {
		return Job{}, fmt.Errorf("unexpected job record %v", v)
	}
	m := make(map[string]string, len(flat)/2)
	for i := 0; i < len(flat); i += 2 {
		k, _ := flat[i].(string)
		val, _ := flat[i+1].(string)
		m[k] = val
	}
	return recordJob(m)
}

func decodeRecords(v any) ([]Job, error) {
	list, _ := v.([]any)
	jobs := make([]Job, 0, len(list))
	for _, r := range list {
		j, err := decodeRecord(r)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// decodeEvent decodes a stream entry: the queue's own events carry the job
// record in fields named "j.<field>", which become the job's JSON.
func decodeEvent(v map[string]any) (Event, error) {
	str := func(k string) string { s, _ := v[k].(string); return s }
	e := Event{Job: str("job"), Kind: str("kind"), Time: parseTime(str("time"))}
	if _, ok := v["j.body"]; !ok {
		if d := str("data"); d != "" {
			e.Data = json.RawMessage(d)
		}
		return e, nil
	}
	m := make(map[string]string)
	for k := range v {
		if f, ok := strings.CutPrefix(k, "j."); ok {
			m[f] = str(k)
		}
	}
	j, err := recordJob(m)
	if err != nil {
		return Event{}, err
	}
	if e.Data, err = json.Marshal(j); err != nil {
		return Event{}, err
	}
	return e, nil
}

// timeLayout is RFC 3339 with all nine fraction digits: its strings sort as
// the times do (records written before the transitions moved to Go compared
// them as strings; keep the layout so old and new records read alike).
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
