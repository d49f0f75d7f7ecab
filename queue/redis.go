package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is the Queue on a Redis server (standalone or Sentinel-managed; not
// Cluster). Several processes may share one prefix: every state change is one
// Lua script. The key layout is in the package documentation.
type Redis struct {
	rdb    redis.UniversalClient
	opts   Options
	groups sync.Map // consumer groups known to exist
}

var _ Queue = (*Redis)(nil)

// NewRedis returns a queue on rdb under o.Prefix. The caller owns rdb.
func NewRedis(rdb redis.UniversalClient, o Options) *Redis {
	return &Redis{rdb: rdb, opts: o.withDefaults()}
}

func (q *Redis) key(parts ...string) string { return q.opts.Prefix + strings.Join(parts, ":") }

func (q *Redis) poolKey(pool, what string) string { return q.key("pool", pool, what) }

// run runs a script with the common arguments and returns its reply after
// the status word.
func (q *Redis) run(ctx context.Context, s *redis.Script, args ...any) (string, []any, error) {
	all := append([]any{
		q.opts.Prefix,
		formatTime(q.opts.Now()),
		q.opts.MaxEvents,
		q.opts.Retain.Milliseconds(),
		q.opts.Recent,
	}, args...)
	v, err := s.Run(ctx, q.rdb, nil, all...).Result()
	if err != nil {
		return "", nil, err
	}
	reply, ok := v.([]any)
	if !ok || len(reply) == 0 {
		return "", nil, fmt.Errorf("unexpected script reply %T", v)
	}
	status, _ := reply[0].(string)
	return status, reply[1:], nil
}

// amendable returns the fields Amend changes, as the scripts' create
// takes them.
func amendable(j Job) []any {
	scid := ""
	if j.StatusCommentID != 0 {
		scid = strconv.FormatInt(j.StatusCommentID, 10)
	}
	return []any{scid, j.HeadMoved, j.ETag, j.Shown}
}

// jobAndOther decodes a reply of a job record and an optional second one
// (a displaced or replaced job).
func jobAndOther(reply []any) (Job, *Job, error) {
	stored, err := decodeRecord(reply[0])
	if err != nil {
		return Job{}, nil, err
	}
	if len(reply) < 2 {
		return stored, nil, nil
	}
	rec, _ := reply[1].([]any)
	if len(rec) == 0 {
		return stored, nil, nil
	}
	o, err := decodeRecord(rec)
	if err != nil {
		return stored, nil, fmt.Errorf("job %s: %w", stored.ID, err)
	}
	return stored, &o, nil
}

func (q *Redis) Enqueue(ctx context.Context, j Job) (Job, *Job, error) {
	j = prepare(j, q.opts.Now())
	body, err := json.Marshal(j)
	if err != nil {
		return Job{}, nil, fmt.Errorf("enqueue %s: %w", j.ID, err)
	}
	args := append([]any{j.ID, j.Pool, body, q.opts.Depth, newID()}, amendable(j)...)
	status, reply, err := q.run(ctx, enqueueScript, args...)
	if err != nil {
		return Job{}, nil, fmt.Errorf("enqueue %s: %w", j.ID, err)
	}
	if status == "exists" {
		return Job{}, nil, fmt.Errorf("enqueue %s: %w", j.ID, ErrExists)
	}
	stored, displaced, err := jobAndOther(reply)
	if err != nil {
		return stored, nil, fmt.Errorf("enqueue %s: %w", j.ID, err)
	}
	return stored, displaced, nil
}

func (q *Redis) Submit(ctx context.Context, j Job) (Job, *Job, error) {
	j = prepareSubmit(j, q.opts.Now())
	body, err := json.Marshal(j)
	if err != nil {
		return Job{}, nil, fmt.Errorf("submit %s: %w", j.ID, err)
	}
	expires := ""
	if !j.Expires.IsZero() {
		expires = formatTime(j.Expires)
	}
	args := append([]any{j.ID, j.Pool, body, owner(j), expires, newID()}, amendable(j)...)
	status, reply, err := q.run(ctx, submitScript, args...)
	if err != nil {
		return Job{}, nil, fmt.Errorf("submit %s: %w", j.ID, err)
	}
	if status == "exists" {
		return Job{}, nil, fmt.Errorf("submit %s: %w", j.ID, ErrExists)
	}
	stored, replaced, err := jobAndOther(reply)
	if err != nil {
		return stored, nil, fmt.Errorf("submit %s: %w", j.ID, err)
	}
	return stored, replaced, nil
}

// awaitingError turns the status of a script that needs a job awaiting
// approval into an error, with the job when known.
func awaitingError(op, id, status string, reply []any) (Job, error) {
	var j Job
	if len(reply) > 0 {
		j, _ = decodeRecord(reply[0])
	}
	switch status {
	case "notfound":
		return Job{}, fmt.Errorf("%s %s: %w", op, id, ErrNotFound)
	case "finished":
		return j, fmt.Errorf("%s %s: %w", op, id, ErrFinished)
	case "notawaiting":
		return j, fmt.Errorf("%s %s: %w", op, id, ErrNotAwaiting)
	}
	return j, nil
}

func (q *Redis) Approve(ctx context.Context, id, by string) (Job, *Job, error) {
	status, reply, err := q.run(ctx, approveScript, id, by, q.opts.Depth, newID())
	if err != nil {
		return Job{}, nil, fmt.Errorf("approve %s: %w", id, err)
	}
	if status != "ok" {
		j, err := awaitingError("approve", id, status, reply)
		return j, nil, err
	}
	stored, displaced, err := jobAndOther(reply)
	if err != nil {
		return stored, nil, fmt.Errorf("approve %s: %w", id, err)
	}
	return stored, displaced, nil
}

func (q *Redis) Reject(ctx context.Context, id, by string) (Job, error) {
	status, reply, err := q.run(ctx, rejectScript, id, by, newID())
	if err != nil {
		return Job{}, fmt.Errorf("reject %s: %w", id, err)
	}
	if status != "ok" {
		return awaitingError("reject", id, status, reply)
	}
	j, err := decodeRecord(reply[0])
	if err != nil {
		return Job{}, fmt.Errorf("reject %s: %w", id, err)
	}
	return j, nil
}

func (q *Redis) Expire(ctx context.Context) ([]Job, error) {
	_, reply, err := q.run(ctx, expireScript)
	if err != nil {
		return nil, fmt.Errorf("expire: %w", err)
	}
	jobs, err := decodeRecords(reply[0])
	if err != nil {
		return nil, fmt.Errorf("expire: %w", err)
	}
	return jobs, nil
}

func (q *Redis) Amend(ctx context.Context, id string, a Amendment) (Job, error) {
	scid := ""
	if a.StatusCommentID != 0 {
		scid = strconv.FormatInt(a.StatusCommentID, 10)
	}
	opt := func(s *string) (string, string) {
		if s == nil {
			return "0", ""
		}
		return "1", *s
	}
	hmSet, hm := opt(a.HeadMoved)
	etagSet, etag := opt(a.ETag)
	shownSet, shown := opt(a.Shown)
	status, reply, err := q.run(ctx, amendScript, id, scid, hmSet, hm, etagSet, etag, shownSet, shown)
	if err != nil {
		return Job{}, fmt.Errorf("amend %s: %w", id, err)
	}
	if status == "notfound" {
		return Job{}, fmt.Errorf("amend %s: %w", id, ErrNotFound)
	}
	j, err := decodeRecord(reply[0])
	if err != nil {
		return Job{}, fmt.Errorf("amend %s: %w", id, err)
	}
	return j, nil
}

func (q *Redis) Runners(ctx context.Context) ([]Runner, error) {
	var seen *redis.MapStringStringCmd
	var pools *redis.StringSliceCmd
	_, err := q.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		seen = p.HGetAll(ctx, q.key("runners"))
		pools = p.SMembers(ctx, q.key("pools"))
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
		status, reply, err := q.run(ctx, claimScript, pool, token, q.opts.LeaseTTL.Milliseconds())
		if err != nil {
			return Lease{}, fmt.Errorf("claim from %s: %w", pool, err)
		}
		if status == "ok" {
			j, err := decodeRecord(reply[0])
			if err != nil {
				return Lease{}, fmt.Errorf("claim from %s: %w", pool, err)
			}
			return Lease{Job: j, Token: token, Fence: j.Fence}, nil
		}
		// Wait for Enqueue, Finish or Reap to signal the pool, or poll.
		err = q.rdb.BLPop(ctx, claimPoll, q.poolKey(pool, "signal")).Err()
		if err != nil && !errors.Is(err, redis.Nil) {
			if ctx.Err() != nil {
				return Lease{}, ctx.Err()
			}
			return Lease{}, fmt.Errorf("claim from %s: wait: %w", pool, err)
		}
	}
}

func (q *Redis) Heartbeat(ctx context.Context, l Lease) (bool, error) {
	status, reply, err := q.run(ctx, heartbeatScript, l.Job.Pool, l.Job.ID, l.Token, q.opts.LeaseTTL.Milliseconds())
	if err != nil {
		return false, fmt.Errorf("heartbeat %s: %w", l.Job.ID, err)
	}
	if status == "lost" {
		return false, fmt.Errorf("heartbeat %s: %w", l.Job.ID, ErrLeaseLost)
	}
	cancelled, _ := reply[0].(int64)
	return cancelled == 1, nil
}

func (q *Redis) Finish(ctx context.Context, l Lease, o Outcome) (Job, error) {
	if err := checkOutcome(o); err != nil {
		return Job{}, err
	}
	status, reply, err := q.run(ctx, finishScript, l.Job.Pool, l.Job.ID, l.Token, string(o.State), o.Reason, string(o.Result), newID())
	if err != nil {
		return Job{}, fmt.Errorf("finish %s: %w", l.Job.ID, err)
	}
	if status == "lost" {
		return Job{}, fmt.Errorf("finish %s: %w", l.Job.ID, ErrLeaseLost)
	}
	j, err := decodeRecord(reply[0])
	if err != nil {
		return Job{}, fmt.Errorf("finish %s: %w", l.Job.ID, err)
	}
	return j, nil
}

func (q *Redis) Cancel(ctx context.Context, id, by string) (Job, error) {
	status, reply, err := q.run(ctx, cancelScript, id, by, newID())
	if err != nil {
		return Job{}, fmt.Errorf("cancel %s: %w", id, err)
	}
	switch status {
	case "notfound":
		return Job{}, fmt.Errorf("cancel %s: %w", id, ErrNotFound)
	case "finished":
		j, _ := decodeRecord(reply[0])
		return j, fmt.Errorf("cancel %s: %w", id, ErrFinished)
	}
	j, err := decodeRecord(reply[0])
	if err != nil {
		return Job{}, fmt.Errorf("cancel %s: %w", id, err)
	}
	return j, nil
}

func (q *Redis) Drain(ctx context.Context, pool, by string) ([]Job, error) {
	_, reply, err := q.run(ctx, drainScript, pool, by)
	if err != nil {
		return nil, fmt.Errorf("drain %s: %w", pool, err)
	}
	jobs, err := decodeRecords(reply[0])
	if err != nil {
		return nil, fmt.Errorf("drain %s: %w", pool, err)
	}
	return jobs, nil
}

// snapshot reads the lines of pool ("" for every pool) and, when recent is
// set, the recent terminal jobs and the jobs awaiting approval, in one
// atomic step.
func (q *Redis) snapshot(ctx context.Context, pool string, recent bool) ([]Line, []Job, []Job, error) {
	flag := "0"
	if recent {
		flag = "1"
	}
	_, reply, err := q.run(ctx, snapshotScript, pool, flag)
	if err != nil {
		return nil, nil, nil, err
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
		var running *Job
		if len(jobs) > 0 && jobs[0].State == Running {
			running, jobs = &jobs[0], jobs[1:]
		}
		lines = append(lines, line(name, running, jobs, now))
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

func (q *Redis) Position(ctx context.Context, id string) (Place, error) {
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

func (q *Redis) Status(ctx context.Context) ([]Line, error) {
	lines, _, _, err := q.snapshot(ctx, "", false)
	if err != nil {
		return nil, fmt.Errorf("queue status: %w", err)
	}
	return lines, nil
}

func (q *Redis) List(ctx context.Context, f Filter) ([]Job, error) {
	lines, awaiting, recent, err := q.snapshot(ctx, f.Pool, true)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return listed(lines, awaiting, recent, f), nil
}

func (q *Redis) Get(ctx context.Context, id string) (Job, error) {
	m, err := q.rdb.HGetAll(ctx, q.key("job", id)).Result()
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

func (q *Redis) Reap(ctx context.Context) ([]Job, error) {
	_, reply, err := q.run(ctx, reapScript, MaxAttempts, ReasonRetried, ReasonLost)
	if err != nil {
		return nil, fmt.Errorf("reap: %w", err)
	}
	jobs, err := decodeRecords(reply[0])
	if err != nil {
		return nil, fmt.Errorf("reap: %w", err)
	}
	slices.SortFunc(jobs, func(a, b Job) int { return strings.Compare(a.Pool, b.Pool) })
	return jobs, nil
}

func (q *Redis) RunReaper(ctx context.Context, interval time.Duration) error {
	return runReaper(ctx, q.Reap, interval, q.opts.Logger)
}

// defaultDeliveryTTL is how long a delivery ID is remembered when the caller
// gives no TTL.
const defaultDeliveryTTL = 24 * time.Hour

func (q *Redis) SeenDelivery(ctx context.Context, id string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		ttl = defaultDeliveryTTL
	}
	first, err := q.rdb.SetNX(ctx, q.key("delivery", id), 1, ttl).Result()
	if err != nil {
		return false, fmt.Errorf("delivery %s: %w", id, err)
	}
	return first, nil
}

func (q *Redis) ForgetDelivery(ctx context.Context, id string) error {
	if err := q.rdb.Del(ctx, q.key("delivery", id)).Err(); err != nil {
		return fmt.Errorf("forget delivery %s: %w", id, err)
	}
	return nil
}

func (q *Redis) Publish(ctx context.Context, e Event) error {
	if e.Time.IsZero() {
		e.Time = q.opts.Now()
	}
	err := q.rdb.XAdd(ctx, &redis.XAddArgs{
		Stream: q.key("events"),
		MaxLen: int64(q.opts.MaxEvents),
		Approx: true,
		Values: []string{"job", e.Job, "kind", e.Kind, "time", formatTime(e.Time), "data", string(e.Data)},
	}).Err()
	if err != nil {
		return fmt.Errorf("publish %s event of %s: %w", e.Kind, e.Job, err)
	}
	return nil
}

func (q *Redis) ensureGroup(ctx context.Context, group string, force bool) error {
	if _, ok := q.groups.Load(group); ok && !force {
		return nil
	}
	err := q.rdb.XGroupCreateMkStream(ctx, q.key("events"), group, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return err
	}
	q.groups.Store(group, true)
	return nil
}

// eventsPoll bounds each blocking read of Events, so a cancelled ctx is seen.
const eventsPoll = time.Second

func (q *Redis) Events(ctx context.Context, group, consumer string, max int, block time.Duration) ([]Delivery, error) {
	if max <= 0 {
		max = 100
	}
	if err := q.ensureGroup(ctx, group, false); err != nil {
		return nil, fmt.Errorf("events of %s: %w", group, err)
	}
	read := func(id string, wait time.Duration) ([]redis.XMessage, error) {
		args := &redis.XReadGroupArgs{
			Group:    group,
			Consumer: consumer,
			Streams:  []string{q.key("events"), id},
			Count:    int64(max),
			Block:    -1,
		}
		if wait > 0 {
			args.Block = wait
		}
		for attempt := 0; ; attempt++ {
			res, err := q.rdb.XReadGroup(ctx, args).Result()
			if errors.Is(err, redis.Nil) {
				return nil, nil
			}
			if err != nil && attempt == 0 && strings.HasPrefix(err.Error(), "NOGROUP") {
				// The server lost the group (a restart without persistence).
				if err := q.ensureGroup(ctx, group, true); err != nil {
					return nil, err
				}
				continue
			}
			if err != nil || len(res) == 0 {
				return nil, err
			}
			return res[0].Messages, nil
		}
	}
	// First what was delivered to this consumer and not acknowledged.
	msgs, err := read("0", 0)
	if err != nil {
		return nil, fmt.Errorf("events of %s for %s: %w", group, consumer, err)
	}
	out, err := q.deliveries(ctx, group, msgs)
	if err != nil || len(out) > 0 {
		return out, err
	}
	deadline := time.Now().Add(block)
	for {
		wait := time.Duration(0)
		if block > 0 {
			wait = min(time.Until(deadline), eventsPoll)
			if wait < time.Millisecond {
				return nil, nil
			}
		}
		msgs, err := read(">", wait)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("events of %s for %s: %w", group, consumer, err)
		}
		if len(msgs) > 0 || block <= 0 {
			return q.deliveries(ctx, group, msgs)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// deliveries decodes stream entries. Entries trimmed from the stream while
// pending come back empty: they are acknowledged and dropped.
func (q *Redis) deliveries(ctx context.Context, group string, msgs []redis.XMessage) ([]Delivery, error) {
	var out []Delivery
	var gone []string
	for _, m := range msgs {
		if m.Values == nil {
			gone = append(gone, m.ID)
			continue
		}
		e, err := decodeEvent(m.Values)
		if err != nil {
			return nil, fmt.Errorf("event %s: %w", m.ID, err)
		}
		out = append(out, Delivery{ID: m.ID, Event: e})
	}
	if len(gone) > 0 {
		if err := q.Ack(ctx, group, gone...); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (q *Redis) Ack(ctx context.Context, group string, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := q.rdb.XAck(ctx, q.key("events"), group, ids...).Err(); err != nil {
		return fmt.Errorf("ack events of %s: %w", group, err)
	}
	return nil
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
		"head_moved": &j.HeadMoved, "etag": &j.ETag, "shown": &j.Shown, "approver": &j.Approver,
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
// the times do, which the scripts rely on.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
