package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Leader elects, per name, one holder among the processes that share a
// queue: the replicas of serve each run a periodic loop only while they hold
// its lease, so exactly one runs it and a replica that dies hands it on
// within one ttl. Leases run on the store's clock (Redis's, or the wall
// clock of a Memory), not Options.Now.
type Leader interface {
	// Lead takes lease name for holder for ttl when nobody holds it, or
	// extends it when holder does, and reports whether holder holds it now.
	Lead(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	// Resign gives lease name up when holder holds it, so another takes it
	// at once rather than after its ttl.
	Resign(ctx context.Context, name, holder string) error
}

// memLeases gives a Memory Lead and Resign. A Disk keeps its leases in
// memory: it is one process's store (OpenDisk refuses a second).
type memLeases struct{ c *memCore }

type memLease struct {
	holder string
	until  time.Time // wall clock
}

func (m memLeases) Lead(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	if err := checkLease(name, holder, ttl); err != nil {
		return false, err
	}
	q := m.c
	if err := q.lock(ctx); err != nil {
		return false, err
	}
	defer q.mu.Unlock()
	now := time.Now()
	if l, ok := q.leases[name]; ok && l.holder != holder && now.Before(l.until) {
		return false, nil
	}
	if q.leases == nil {
		q.leases = make(map[string]memLease)
	}
	q.leases[name] = memLease{holder: holder, until: now.Add(ttl)}
	return true, nil
}

func (m memLeases) Resign(ctx context.Context, name, holder string) error {
	q := m.c
	if err := q.lock(ctx); err != nil {
		return err
	}
	defer q.mu.Unlock()
	if l, ok := q.leases[name]; ok && l.holder == holder {
		delete(q.leases, name)
	}
	return nil
}

// redisLeases gives a Redis Lead and Resign: the key P lease:<name> holds its
// holder with a TTL, set or extended in a transaction that WATCHes it.
type redisLeases struct {
	rdb redis.UniversalClient
	k   redisKeys
}

func (q redisLeases) Lead(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	if err := checkLease(name, holder, ttl); err != nil {
		return false, err
	}
	key := q.k.key("lease", name)
	held := false
	err := q.rdb.Watch(ctx, func(tx *redis.Tx) error {
		v, err := tx.Get(ctx, key).Result()
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil:
			return err
		case v != holder:
			held = false
			return nil
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, key, holder, ttl)
			return nil
		})
		held = err == nil
		return err
	}, key)
	if errors.Is(err, redis.TxFailedErr) {
		return false, nil // another replica took or extended it meanwhile
	}
	if err != nil {
		return false, fmt.Errorf("lease %s: %w", name, err)
	}
	return held, nil
}

func (q redisLeases) Resign(ctx context.Context, name, holder string) error {
	key := q.k.key("lease", name)
	err := q.rdb.Watch(ctx, func(tx *redis.Tx) error {
		v, err := tx.Get(ctx, key).Result()
		if errors.Is(err, redis.Nil) || err == nil && v != holder {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, key)
			return nil
		})
		return err
	}, key)
	if err != nil && !errors.Is(err, redis.TxFailedErr) {
		return fmt.Errorf("resign lease %s: %w", name, err)
	}
	return nil
}

func checkLease(name, holder string, ttl time.Duration) error {
	if name == "" || holder == "" || ttl < time.Millisecond {
		return fmt.Errorf("lease %q for %q: want a name, a holder and a ttl of at least 1ms, got %v", name, holder, ttl)
	}
	return nil
}
