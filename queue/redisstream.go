package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisDeliveries is the Redis queue's webhook delivery IDs, one key each
// with a TTL, for de-duplication.
type redisDeliveries struct {
	rdb redis.UniversalClient
	k   redisKeys
}

// defaultDeliveryTTL is how long a delivery ID is remembered when the caller
// gives no TTL.
const defaultDeliveryTTL = 24 * time.Hour

func (q redisDeliveries) SeenDelivery(ctx context.Context, id string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		ttl = defaultDeliveryTTL
	}
	first, err := q.rdb.SetNX(ctx, q.k.key("delivery", id), 1, ttl).Result()
	if err != nil {
		return false, fmt.Errorf("delivery %s: %w", id, err)
	}
	return first, nil
}

func (q redisDeliveries) ForgetDelivery(ctx context.Context, id string) error {
	if err := q.rdb.Del(ctx, q.k.key("delivery", id)).Err(); err != nil {
		return fmt.Errorf("forget delivery %s: %w", id, err)
	}
	return nil
}

// redisStream is the Redis queue's event stream and its consumer groups.
type redisStream struct {
	rdb    redis.UniversalClient
	k      redisKeys
	opts   Options
	groups sync.Map // consumer groups known to exist
}

func (q *redisStream) Publish(ctx context.Context, e Event) error {
	if e.Time.IsZero() {
		e.Time = q.opts.Now()
	}
	err := q.rdb.XAdd(ctx, &redis.XAddArgs{
		Stream: q.k.key("events"),
		MaxLen: int64(q.opts.MaxEvents),
		Approx: true,
		Values: []string{"job", e.Job, "kind", e.Kind, "time", formatTime(e.Time), "data", string(e.Data)},
	}).Err()
	if err != nil {
		return fmt.Errorf("publish %s event of %s: %w", e.Kind, e.Job, err)
	}
	return nil
}

func (q *redisStream) ensureGroup(ctx context.Context, group string, force bool) error {
	if _, ok := q.groups.Load(group); ok && !force {
		return nil
	}
	err := q.rdb.XGroupCreateMkStream(ctx, q.k.key("events"), group, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return err
	}
	q.groups.Store(group, true)
	return nil
}

// eventsPoll bounds each blocking read of Events, so a cancelled ctx is seen.
const eventsPoll = time.Second

func (q *redisStream) Events(ctx context.Context, group, consumer string, max int, block time.Duration) ([]Delivery, error) {
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
			Streams:  []string{q.k.key("events"), id},
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
func (q *redisStream) deliveries(ctx context.Context, group string, msgs []redis.XMessage) ([]Delivery, error) {
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

func (q *redisStream) Ack(ctx context.Context, group string, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := q.rdb.XAck(ctx, q.k.key("events"), group, ids...).Err(); err != nil {
		return fmt.Errorf("ack events of %s: %w", group, err)
	}
	return nil
}
