package queue

import (
	"cmp"
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

// redisKeys is a key prefix ("arena:") and the keys under it.
type redisKeys string

func (k redisKeys) key(parts ...string) string { return string(k) + strings.Join(parts, ":") }

func (k redisKeys) pool(pool, what string) string { return k.key("pool", pool, what) }

func (k redisKeys) job(id string) string { return k.key("job", id) }

// lineOps are the commands that read their pool's line when they are given
// the pool; approve and cancel learn it from their job.
var lineOps = map[op]bool{opEnqueue: true, opClaim: true, opHeartbeat: true, opFinish: true, opDrain: true, opReap: true}

// A redisTxn is one attempt of an optimistic transaction: it WATCHes every
// key it reads, builds the scene of a command from what it read, and writes
// the transition's change in MULTI/EXEC, which fails when any watched key
// changed meanwhile (then the attempt is made again).
type redisTxn struct {
	k      redisKeys
	opts   Options
	tx     *redis.Tx
	raw    map[string]map[string]string // job ID -> its record as read
	owners map[string]string            // owner (see owner) -> the ID the owners hash gave
	s      scene
	old    lineState // the line as read
	legacy bool      // the line's claim was read from the keys run and lease of a store written before a pool could run several jobs
}

// watch WATCHes keys and runs reads in one pipeline.
func (t *redisTxn) watch(ctx context.Context, keys []string, reads func(p redis.Pipeliner)) error {
	_, err := t.tx.Pipelined(ctx, func(p redis.Pipeliner) error {
		if len(keys) > 0 {
			args := []any{"watch"}
			for _, k := range keys {
				args = append(args, k)
			}
			p.Do(ctx, args...)
		}
		reads(p)
		return nil
	})
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	return err
}

// load reads the scene of cmd: the job it names (id), the line of pool (""
// for the job's pool) when the command changes one, and the jobs that the
// line's next steps involve, WATCHing every key it reads. It takes two round
// trips after the WATCH when the pool is known, one more when only the job
// tells it.
func (t *redisTxn) load(ctx context.Context, cmd command, id, pool string) error {
	t.raw = make(map[string]map[string]string)
	t.owners = make(map[string]string)
	t.s = scene{Now: t.opts.Now(), Depth: t.opts.Depth, Jobs: make(map[string]*Job)}
	if cmd.Op == opSubmit || cmd.Op == opEnqueue {
		pool = cmd.Job.Pool
	}
	// The first WATCH goes through Tx.Watch, so the Tx knows to UNWATCH
	// when the attempt ends before EXEC; later ones join the reads.
	var keys []string
	if id != "" {
		keys = append(keys, t.k.job(id))
	}
	lineNow := pool != "" && lineOps[cmd.Op]
	if lineNow {
		keys = append(keys, t.lineKeys(pool)...)
	}
	if cmd.Op == opClaim {
		keys = append(keys, t.k.key("fence"))
	}
	if cmd.Op == opSubmit {
		keys = append(keys, t.k.key("owners"))
	}
	if err := t.tx.Watch(ctx, keys...).Err(); err != nil {
		return err
	}
	var job *redis.MapStringStringCmd
	var fill func()
	var fence, own *redis.StringCmd
	err := t.watch(ctx, nil, func(p redis.Pipeliner) {
		if id != "" {
			job = p.HGetAll(ctx, t.k.job(id))
		}
		if lineNow {
			fill = t.readLine(ctx, p, pool)
		}
		if cmd.Op == opClaim {
			fence = p.Get(ctx, t.k.key("fence"))
		}
		if cmd.Op == opSubmit {
			own = p.HGet(ctx, t.k.key("owners"), owner(cmd.Job))
		}
	})
	if err != nil {
		return err
	}
	if job != nil {
		if err := t.record(id, job.Val()); err != nil {
			return err
		}
		t.s.Op = t.raw[id]["op"]
	}
	if j := t.s.Jobs[id]; j != nil && pool == "" {
		pool = j.Pool
	}
	t.s.Line = lineState{Pool: pool}
	if fence != nil {
		t.s.Fence, _ = strconv.ParseInt(fence.Val(), 10, 64)
	}
	if own != nil && own.Val() != "" {
		t.s.Owner = own.Val()
		t.owners[owner(cmd.Job)] = own.Val()
	}
	// Approve and cancel learn the pool from the job; approve changes the
	// line only of a job awaiting approval, cancel only of one waiting in it.
	j := t.s.Jobs[id]
	if !lineNow && j != nil && (cmd.Op == opApprove && j.State == AwaitingApproval || cmd.Op == opCancel && j.State == Queued) {
		err := t.watch(ctx, t.lineKeys(pool), func(p redis.Pipeliner) { fill = t.readLine(ctx, p, pool) })
		if err != nil {
			return err
		}
	}
	if fill != nil {
		fill()
		if err := t.readLeases(ctx); err != nil {
			return err
		}
	}
	t.old = t.s.Line
	t.old.Runs = slices.Clone(t.s.Line.Runs)
	switch l := t.s.Line; {
	case fill != nil && (cmd.Op == opApprove || cmd.Op == opEnqueue):
		if err := t.linePRs(ctx, l.Waiting); err != nil {
			return err
		}
	case fill != nil && cmd.Op == opClaim:
		if err := t.linePRs(ctx, slices.Concat(l.Retry, l.Waiting, runJobs(l.Runs))); err != nil {
			return err
		}
	}
	return t.others(ctx, cmd)
}

// linePRs reads the pull request of each job of ids (the line's) into the
// scene: the pr field of its record, or, for a record written before records
// had one, its body. A job's pull request never changes, so the reads are not
// WATCHed: the line itself is.
func (t *redisTxn) linePRs(ctx context.Context, waiting []string) error {
	t.s.PRs = make(map[string]string, len(waiting))
	if len(waiting) == 0 {
		return nil
	}
	keys := make([]*redis.StringCmd, len(waiting))
	if err := t.watch(ctx, nil, func(p redis.Pipeliner) {
		for i, id := range waiting {
			keys[i] = p.HGet(ctx, t.k.job(id), "pr")
		}
	}); err != nil {
		return err
	}
	var old []string
	for i, id := range waiting {
		if k := keys[i].Val(); k != "" {
			t.s.PRs[id] = k
		} else {
			old = append(old, id)
		}
	}
	if len(old) == 0 {
		return nil
	}
	bodies := make([]*redis.StringCmd, len(old))
	if err := t.watch(ctx, nil, func(p redis.Pipeliner) {
		for i, id := range old {
			bodies[i] = p.HGet(ctx, t.k.job(id), "body")
		}
	}); err != nil {
		return err
	}
	for i, id := range old {
		var j Job
		if b := bodies[i].Val(); b != "" && json.Unmarshal([]byte(b), &j) == nil {
			j.ID = id
			t.s.PRs[id] = prKey(j)
		}
	}
	return nil
}

func (t *redisTxn) lineKeys(pool string) []string {
	return []string{t.k.pool(pool, "runs"), t.k.pool(pool, "run"), t.k.pool(pool, "lease"), t.k.pool(pool, "retry"), t.k.pool(pool, "waiting")}
}

// leaseKey is the key of a running claim's lease: its token, with a TTL.
func (k redisKeys) leaseKey(pool, token string) string { return k.pool(pool, "lease:"+token) }

// readLine queues the reads of a pool's line in p; the function it returns
// puts what they read in the scene, the leases of the running claims still to
// be read (readLeases). A claim in the keys run and lease, as a store written
// before a pool could run several jobs keeps it, is read too.
func (t *redisTxn) readLine(ctx context.Context, p redis.Pipeliner, pool string) func() {
	runs := p.HGetAll(ctx, t.k.pool(pool, "runs"))
	run := p.HMGet(ctx, t.k.pool(pool, "run"), "job", "token")
	lease := p.Exists(ctx, t.k.pool(pool, "lease"))
	retry := p.LRange(ctx, t.k.pool(pool, "retry"), 0, -1)
	waiting := p.LRange(ctx, t.k.pool(pool, "waiting"), 0, -1)
	return func() {
		l := lineState{Pool: pool, Retry: retry.Val(), Waiting: waiting.Val()}
		for token, job := range runs.Val() {
			l.Runs = append(l.Runs, runClaim{Job: job, Token: token})
		}
		slices.SortFunc(l.Runs, func(a, b runClaim) int {
			return cmp.Or(strings.Compare(a.Job, b.Job), strings.Compare(a.Token, b.Token))
		})
		if v := run.Val(); len(v) == 2 && v[0] != nil {
			job, _ := v[0].(string)
			token, _ := v[1].(string)
			l.Runs = append([]runClaim{{Job: job, Token: token, Live: lease.Val() == 1}}, l.Runs...)
			t.legacy = true
		}
		t.s.Line = l
	}
}

// readLeases reads, WATCHing them, whether the leases of the line's running
// claims are live.
func (t *redisTxn) readLeases(ctx context.Context) error {
	l := &t.s.Line
	first := 0
	if t.legacy {
		first = 1 // its lease was read with the line
	}
	if len(l.Runs) <= first {
		return nil
	}
	var keys []string
	for _, r := range l.Runs[first:] {
		keys = append(keys, t.k.leaseKey(l.Pool, r.Token))
	}
	live := make([]*redis.IntCmd, len(keys))
	if err := t.watch(ctx, keys, func(p redis.Pipeliner) {
		for i, k := range keys {
			live[i] = p.Exists(ctx, k)
		}
	}); err != nil {
		return err
	}
	for i := range keys {
		l.Runs[first+i].Live = live[i].Val() == 1
	}
	return nil
}

// record decodes a job record read into the scene; an empty one is no job.
func (t *redisTxn) record(id string, m map[string]string) error {
	if len(m) == 0 {
		return nil
	}
	j, err := recordJob(m)
	if err != nil {
		return fmt.Errorf("job %s: %w", id, err)
	}
	t.raw[id], t.s.Jobs[id] = m, &j
	return nil
}

// others reads, in one round trip, the records the command's next steps
// involve (the job a claim starts, the one a lineup displaces, the one a
// reap recovers, the same owner's request a submit replaces) and, for every job
// awaiting approval, the ID that the owners hash gives for its owner, so the
// change removes only the entry that is the job's own.
func (t *redisTxn) others(ctx context.Context, cmd command) error {
	l := t.s.Line
	var heads []string
	switch cmd.Op {
	case opClaim:
		heads = []string{first(l.Retry), first(l.Waiting), l.next(t.s.PRs, cmd.ID)}
		if i := l.claim(cmd.Token); i >= 0 {
			heads = append(heads, l.Runs[i].Job) // the same claim again
		}
	case opApprove, opEnqueue:
		if j := lineupJob(cmd, t.s); j != nil && t.s.PRs != nil {
			heads = []string{displaced(l.Waiting, t.s.PRs, prKey(*j), depthOf(*j, t.s.Depth))}
		}
	case opReap:
		for _, r := range l.Runs {
			if !r.Live {
				heads = []string{r.Job}
				break
			}
		}
	case opSubmit:
		heads = []string{t.s.Owner}
	}
	var ids []string
	for _, id := range heads {
		if _, ok := t.raw[id]; id != "" && !ok && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	var owns []string
	for id, j := range t.s.Jobs {
		if o := t.raw[id]["owner"]; j.State == AwaitingApproval && o != "" && !slices.Contains(owns, o) {
			if _, ok := t.owners[o]; !ok {
				owns = append(owns, o)
			}
		}
	}
	if len(ids) == 0 && len(owns) == 0 {
		return nil
	}
	var watch []string
	for _, id := range ids {
		watch = append(watch, t.k.job(id))
	}
	if len(owns) > 0 {
		watch = append(watch, t.k.key("owners"))
	}
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	var got *redis.SliceCmd
	err := t.watch(ctx, watch, func(p redis.Pipeliner) {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, t.k.job(id))
		}
		if len(owns) > 0 {
			got = p.HMGet(ctx, t.k.key("owners"), owns...)
		}
	})
	if err != nil {
		return err
	}
	for i, id := range ids {
		if err := t.record(id, cmds[i].Val()); err != nil {
			return err
		}
	}
	if got != nil {
		for i, v := range got.Val() {
			s, _ := v.(string)
			t.owners[owns[i]] = s
		}
	}
	return nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// write queues the writes of ch in p (inside MULTI). nonce is the call's,
// written to the job acted on (id).
func (t *redisTxn) write(ctx context.Context, p redis.Pipeliner, ch change, id, nonce string) {
	now := formatTime(t.s.Now)
	final := make(map[string]map[string]string)
	for _, j := range ch.Put {
		k := t.k.job(j.ID)
		var fields []string
		if j.ID == ch.Created {
			body, _ := json.Marshal(j)
			enc := recordFields(j)
			fields = []string{"body", string(body), "status_comment_id", enc["status_comment_id"], "head_moved", j.HeadMoved,
				"etag", j.ETag, "shown", j.Shown, "state", string(j.State), "attempt", strconv.Itoa(j.Attempt), "pool", j.Pool,
				"pr", prKey(j)}
			if j.State == AwaitingApproval {
				fields = append(fields, "owner", owner(j))
				if !j.Expires.IsZero() {
					fields = append(fields, "expires_at", formatTime(j.Expires))
				}
			}
			p.SAdd(ctx, t.k.key("active"), j.ID)
		} else {
			was := recordFields(*t.s.Jobs[j.ID])
			for f, v := range recordFields(j) {
				if was[f] != v {
					fields = append(fields, f, v)
				}
			}
		}
		if j.ID == id && nonce != "" {
			fields = append(fields, "op", nonce)
		}
		if ch.Line != nil {
			for _, r := range ch.Line.Runs {
				if r.Job == j.ID && t.old.claim(r.Token) < 0 {
					fields = append(fields, "token", r.Token)
				}
			}
		}
		m := make(map[string]string)
		for f, v := range t.raw[j.ID] {
			m[f] = v
		}
		for i := 0; i+1 < len(fields); i += 2 {
			m[fields[i]] = fields[i+1]
		}
		final[j.ID] = m
		if len(fields) > 0 {
			p.HSet(ctx, k, fields)
		}
	}
	for _, eid := range ch.Ended {
		p.SRem(ctx, t.k.key("active"), eid)
		p.LPush(ctx, t.k.key("recent"), eid)
		p.LTrim(ctx, t.k.key("recent"), 0, int64(t.opts.Recent)-1)
		p.PExpire(ctx, t.k.job(eid), t.opts.Retain)
	}
	for _, uid := range ch.Unawaited {
		p.LRem(ctx, t.k.key("awaiting"), 0, uid)
		if o := t.raw[uid]["owner"]; o != "" && t.owners[o] == uid {
			p.HDel(ctx, t.k.key("owners"), o)
		}
	}
	if a := ch.Awaits; a != "" {
		p.RPush(ctx, t.k.key("awaiting"), a)
		p.HSet(ctx, t.k.key("owners"), final[a]["owner"], a)
	}
	if ch.Fence > 0 {
		p.Set(ctx, t.k.key("fence"), ch.Fence, 0)
	}
	if l := ch.Line; l != nil {
		writeList(ctx, p, t.k.pool(l.Pool, "retry"), t.old.Retry, l.Retry)
		writeList(ctx, p, t.k.pool(l.Pool, "waiting"), t.old.Waiting, l.Waiting)
		t.writeRuns(ctx, p, l, ch.Renew)
		p.SAdd(ctx, t.k.key("pools"), l.Pool)
		if ch.Wake {
			// At most one wake-up token waits in the list.
			p.LPush(ctx, t.k.pool(l.Pool, "signal"), "1")
			p.LTrim(ctx, t.k.pool(l.Pool, "signal"), 0, 0)
		}
	}
	for _, e := range ch.Events {
		values := []string{"job", e.Job, "kind", e.Kind, "time", now}
		for f, v := range final[e.Job] {
			switch f {
			case "token", "op", "owner", "expires_at", "pr":
			default:
				values = append(values, "j."+f, v)
			}
		}
		p.XAdd(ctx, &redis.XAddArgs{Stream: t.k.key("events"), MaxLen: int64(t.opts.MaxEvents), Approx: true, Values: values})
	}
}

// writeList turns the list at key from was into now with few commands: the
// common changes (some popped at the front and some pushed at the back, one
// pushed at the front, one removed) have their own; anything else rewrites
// the list. The list is WATCHed, so it is still was.
func writeList(ctx context.Context, p redis.Pipeliner, key string, was, now []string) {
	if slices.Equal(was, now) {
		return
	}
	for k := 0; k <= len(was); k++ {
		if rest := len(was) - k; rest <= len(now) && slices.Equal(was[k:], now[:rest]) {
			if k > 0 {
				p.LTrim(ctx, key, int64(k), -1)
			}
			if tail := now[rest:]; len(tail) > 0 {
				p.RPush(ctx, key, toAny(tail)...)
			}
			return
		}
	}
	if len(now) == len(was)+1 && slices.Equal(now[1:], was) {
		p.LPush(ctx, key, now[0])
		return
	}
	if len(now) == len(was)-1 {
		for i := range now {
			if now[i] != was[i] {
				if slices.Equal(now[i:], was[i+1:]) {
					p.LRem(ctx, key, 0, was[i])
					return
				}
				break
			}
		}
	}
	p.Del(ctx, key)
	if len(now) > 0 {
		p.RPush(ctx, key, toAny(now)...)
	}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// recordFields returns the fields of a job record that override its body
// (see recordJob), as they encode j.
func recordFields(j Job) map[string]string {
	scid := ""
	if j.StatusCommentID != 0 {
		scid = strconv.FormatInt(j.StatusCommentID, 10)
	}
	cancel := ""
	if j.CancelRequested {
		cancel = "1"
	}
	return map[string]string{
		"status_comment_id": scid, "head_moved": j.HeadMoved, "etag": j.ETag, "shown": j.Shown, "check": j.Check,
		"approver": j.Approver, "superseded_by": j.SupersededBy, "cancelled_by": j.CancelledBy, "rejected_by": j.RejectedBy,
		"approved": timeField(j.Approved), "queued": timeField(j.Queued), "started": timeField(j.Started), "finished": timeField(j.Finished),
		"state": string(j.State), "reason": j.Reason, "attempt": strconv.Itoa(j.Attempt), "fence": strconv.FormatInt(j.Fence, 10),
		"cancel": cancel, "result": string(j.Result), "pool": j.Pool,
	}
}

func timeField(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return formatTime(t)
}

// txConflicts and txIOErrors bound how often a transaction is tried:
// against concurrent changes of the keys it read, and after a connection
// error. Trying again reads the state again, so a change that was applied
// but whose reply was lost is not applied twice (the call's nonce makes it
// count as this call's success).
const (
	txConflicts = 200
	txIOErrors  = 3
)

// transact applies cmd to the job id (or the line of pool) in an optimistic
// transaction, trying again while the keys it read change under it. also
// adds writes to a transaction that commits. The transition's refusal is
// returned as the error, with the change's Reply.
func (q *Redis) transact(ctx context.Context, cmd command, id, pool string, also func(redis.Pipeliner)) (change, error) {
	var out change
	var refusal error
	conflicts, ioErrors := 0, 0
	for {
		out, refusal = change{}, nil
		err := q.rdb.Watch(ctx, func(tx *redis.Tx) error {
			t := &redisTxn{k: q.k, opts: q.opts, tx: tx}
			if err := t.load(ctx, cmd, id, pool); err != nil {
				return err
			}
			ch, err := transition(t.s, cmd)
			out = ch
			if err != nil || ch.Again {
				refusal = err
				return nil
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				t.write(ctx, p, ch, id, cmd.Nonce)
				if also != nil {
					also(p)
				}
				return nil
			})
			return err
		})
		var rerr redis.Error
		switch {
		case err == nil:
			return out, refusal
		case errors.Is(err, redis.TxFailedErr):
			if conflicts++; conflicts >= txConflicts {
				return change{}, fmt.Errorf("%d conflicting transactions: %w", conflicts, err)
			}
			time.Sleep(time.Duration(conflicts%8) * 100 * time.Microsecond)
		case ctx.Err() != nil || errors.As(err, &rerr):
			return change{}, err
		default:
			if ioErrors++; ioErrors >= txIOErrors {
				return change{}, err
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// writeRuns queues the writes of the line's running claims: a new claim's
// token in the hash runs and its lease; an ended one's removed; the lease of
// renew (a token) extended. A claim read from the keys run and lease (a store
// written before a pool could run several jobs) moves to the hash, its lease
// kept when it is live.
func (t *redisTxn) writeRuns(ctx context.Context, p redis.Pipeliner, l *lineState, renew string) {
	old := t.old.Runs
	if t.legacy {
		p.Del(ctx, t.k.pool(l.Pool, "run"), t.k.pool(l.Pool, "lease"))
		if i := l.claim(old[0].Token); i >= 0 {
			p.HSet(ctx, t.k.pool(l.Pool, "runs"), old[0].Token, old[0].Job)
			if old[0].Live && renew != old[0].Token {
				p.Set(ctx, t.k.leaseKey(l.Pool, old[0].Token), old[0].Token, t.opts.LeaseTTL)
			}
		}
	}
	for _, r := range old {
		if l.claim(r.Token) < 0 {
			p.HDel(ctx, t.k.pool(l.Pool, "runs"), r.Token)
			p.Del(ctx, t.k.leaseKey(l.Pool, r.Token))
		}
	}
	for _, r := range l.Runs {
		isNew := t.old.claim(r.Token) < 0
		if isNew {
			p.HSet(ctx, t.k.pool(l.Pool, "runs"), r.Token, r.Job)
		}
		if isNew || r.Token == renew {
			p.Set(ctx, t.k.leaseKey(l.Pool, r.Token), r.Token, t.opts.LeaseTTL)
		}
	}
}
