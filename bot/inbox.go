package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/arenabot/arenabot/bot/hook"
	"github.com/redis/go-redis/v9"
)

// An Inbox holds the webhook deliveries accepted and not yet processed (the webhook
// answers at once, the work runs from a durable record). The webhook Pushes a verified, non-duplicate delivery before it answers 202;
// Run's workers Pop, handle and ack it. A delivery popped and never acked (the bot died
// while handling it) is handled again after Recover, which the handlers tolerate: they
// find their comments again by hidden markers and the queue refuses a second job id.
type Inbox interface {
	// Push adds d at the tail. An error means d was not stored (the webhook answers 503).
	Push(ctx context.Context, d hook.Delivery) error
	// Pop takes the delivery at the head, waiting up to block for one (block <= 0 does
	// not wait). With none it returns ErrInboxEmpty. The delivery stays recorded until
	// ack succeeds.
	Pop(ctx context.Context, block time.Duration) (d hook.Delivery, ack func(context.Context) error, err error)
}

// A Recoverer is an Inbox that keeps popped deliveries until they are acked. Recover
// puts the unacked ones back at the head of the inbox and returns how many; Run calls
// it once before its workers start.
type Recoverer interface {
	Recover(ctx context.Context) (int, error)
}

// Inbox errors.
var (
	ErrInboxEmpty = errors.New("bot: inbox empty")
	ErrInboxFull  = errors.New("bot: inbox full")
)

// MemoryInbox is the in-process Inbox: a bounded FIFO. It is not durable, so a delivery
// accepted just before a restart is lost; ack does nothing.
type MemoryInbox struct {
	ch chan hook.Delivery
}

var _ Inbox = (*MemoryInbox)(nil)

// NewMemoryInbox returns a MemoryInbox holding up to size deliveries (<= 0 means
// DefaultInbox); Push beyond that returns ErrInboxFull.
func NewMemoryInbox(size int) *MemoryInbox {
	if size <= 0 {
		size = DefaultInbox
	}
	return &MemoryInbox{ch: make(chan hook.Delivery, size)}
}

func noAck(context.Context) error { return nil }

// Push implements Inbox.
func (m *MemoryInbox) Push(ctx context.Context, d hook.Delivery) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case m.ch <- d:
		return nil
	default:
		return ErrInboxFull
	}
}

// Pop implements Inbox. It returns ctx's error when ctx is done first.
func (m *MemoryInbox) Pop(ctx context.Context, block time.Duration) (hook.Delivery, func(context.Context) error, error) {
	select {
	case d := <-m.ch:
		return d, noAck, nil
	default:
	}
	if block <= 0 {
		return hook.Delivery{}, nil, ErrInboxEmpty
	}
	t := time.NewTimer(block)
	defer t.Stop()
	select {
	case d := <-m.ch:
		return d, noAck, nil
	case <-ctx.Done():
		return hook.Delivery{}, nil, ctx.Err()
	case <-t.C:
		return hook.Delivery{}, nil, ErrInboxEmpty
	}
}

// Len returns the number of deliveries waiting.
func (m *MemoryInbox) Len() int { return len(m.ch) }

// RedisInbox is the durable Inbox on a Redis server (standalone or Sentinel-managed; not
// Cluster). Under its prefix P it keeps two lists of deliveries as JSON:
//
//	P inbox             waiting; Push adds on the left, Pop takes from the right
//	P inbox-processing  popped and not acked; Pop moves a delivery here atomically
//	                    (LMOVE/BLMOVE), ack removes it (LREM)
//
// Recover moves what processing holds back to the inbox: call it when no other process
// pops from this prefix (Run calls it at start, and a deployment runs one bot). Every
// delivery is distinct (its id is unique after de-duplication), so LREM removes exactly
// the one acked.
type RedisInbox struct {
	rdb    redis.UniversalClient
	prefix string
}

var (
	_ Inbox     = (*RedisInbox)(nil)
	_ Recoverer = (*RedisInbox)(nil)
)

// NewRedisInbox returns the Inbox under prefix on rdb (e.g. "arena:"). The caller owns
// rdb.
func NewRedisInbox(rdb redis.UniversalClient, prefix string) *RedisInbox {
	return &RedisInbox{rdb: rdb, prefix: prefix}
}

func (r *RedisInbox) inboxKey() string      { return r.prefix + "inbox" }
func (r *RedisInbox) processingKey() string { return r.prefix + "inbox-processing" }

// Push implements Inbox.
func (r *RedisInbox) Push(ctx context.Context, d hook.Delivery) error {
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("inbox: encode %s: %w", d.ID, err)
	}
	if err := r.rdb.LPush(ctx, r.inboxKey(), b).Err(); err != nil {
		return fmt.Errorf("inbox: push %s: %w", d.ID, err)
	}
	return nil
}

// Pop implements Inbox. BLMOVE counts in whole seconds, so block is rounded up to one.
// A blocking Pop ends at that timeout even when ctx is cancelled earlier (go-redis does
// not interrupt a blocking command), so keep block short.
func (r *RedisInbox) Pop(ctx context.Context, block time.Duration) (hook.Delivery, func(context.Context) error, error) {
	var (
		s   string
		err error
	)
	if block <= 0 {
		s, err = r.rdb.LMove(ctx, r.inboxKey(), r.processingKey(), "RIGHT", "LEFT").Result()
	} else {
		block = (block + time.Second - 1).Truncate(time.Second)
		s, err = r.rdb.BLMove(ctx, r.inboxKey(), r.processingKey(), "RIGHT", "LEFT", block).Result()
	}
	if errors.Is(err, redis.Nil) {
		return hook.Delivery{}, nil, ErrInboxEmpty
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return hook.Delivery{}, nil, ctxErr
		}
		return hook.Delivery{}, nil, fmt.Errorf("inbox: pop: %w", err)
	}
	ack := func(ctx context.Context) error {
		if err := r.rdb.LRem(ctx, r.processingKey(), 1, s).Err(); err != nil {
			return fmt.Errorf("inbox: ack: %w", err)
		}
		return nil
	}
	var d hook.Delivery
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		// Not a delivery: drop it, or it would come back after every Recover.
		_ = ack(ctx)
		return hook.Delivery{}, nil, fmt.Errorf("inbox: decode: %w", err)
	}
	return d, ack, nil
}

// Recover implements Recoverer: it moves every delivery of the processing list back to
// the head of the inbox, the oldest popped first in line, one atomic LMOVE each (a crash
// halfway loses nothing).
func (r *RedisInbox) Recover(ctx context.Context) (int, error) {
	n := 0
	for {
		err := r.rdb.LMove(ctx, r.processingKey(), r.inboxKey(), "LEFT", "RIGHT").Err()
		if errors.Is(err, redis.Nil) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("inbox: recover: %w", err)
		}
		n++
	}
}

// Len returns the number of deliveries waiting and being processed.
func (r *RedisInbox) Len(ctx context.Context) (waiting, processing int64, err error) {
	pipe := r.rdb.Pipeline()
	w := pipe.LLen(ctx, r.inboxKey())
	p := pipe.LLen(ctx, r.processingKey())
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("inbox: len: %w", err)
	}
	return w.Val(), p.Val(), nil
}

// prKey names the pull request (or issue) a delivery is about, "owner/name#N" with the
// repository in lower case, or "" for an event about none. Deliveries with the same key
// are handled one at a time, in the order they were popped (lanes).
func prKey(ev any) string {
	switch e := ev.(type) {
	case hook.Comment:
		return fmt.Sprintf("%s#%d", strings.ToLower(e.Repo), e.Number)
	case hook.PullRequest:
		return fmt.Sprintf("%s#%d", strings.ToLower(e.Repo), e.Number)
	}
	return ""
}

// A popped delivery waiting in a lane, with the ack that removes it from the inbox.
type popped struct {
	d   hook.Delivery
	ack func(context.Context) error
}

// lanes serialises the handling of deliveries per pull request: Run's workers handle
// different pull requests at once, but a command is never applied before one that was
// popped earlier for the same pull request (a /benchmark-approve before the request it
// approves, a /benchmark-cancel before the request it cancels). A worker that pops a
// delivery for a pull request another worker is handling leaves it in that pull request's
// lane and pops the next; the worker handling the pull request takes its lane, in order,
// before it pops again. The deliveries in a lane stay unacked in the inbox meanwhile, so a
// bot that dies gets them back through Recover, in the order they were popped.
type lanes struct {
	mu   sync.Mutex
	busy map[string][]popped // a key being handled → the deliveries popped behind it
}

// enter claims key for the calling worker and reports true, or, when another worker
// handles key, appends p to key's lane and reports false.
func (l *lanes) enter(key string, p popped) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.busy == nil {
		l.busy = map[string][]popped{}
	}
	if q, ok := l.busy[key]; ok {
		l.busy[key] = append(q, p)
		return false
	}
	l.busy[key] = nil
	return true
}

// next returns the first delivery of key's lane, or releases key and reports false when
// the lane is empty.
func (l *lanes) next(key string) (popped, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.busy[key]
	if len(q) == 0 {
		delete(l.busy, key)
		return popped{}, false
	}
	p := q[0]
	q[0] = popped{}
	l.busy[key] = q[1:]
	return p, true
}
