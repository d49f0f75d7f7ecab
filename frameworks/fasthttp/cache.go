package main

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// cacheTTL bounds how stale a cached item can be: the crud load reads and
// writes the same ids.
const cacheTTL = 200 * time.Millisecond

// itemCache holds items' JSON by id for cacheTTL. A failing cache behaves as
// an empty one: reads miss and go to Postgres.
type itemCache interface {
	get(ctx context.Context, id int) ([]byte, bool)
	set(ctx context.Context, id int, body []byte)
	drop(ctx context.Context, id int)
	close()
}

// newCache is a Redis cache when redisURL is set, else an in-process one.
func newCache(redisURL string) (itemCache, error) {
	if redisURL == "" {
		return newMemCache(), nil
	}
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		return nil, err
	}
	return redisCache{redis.NewClient(opts)}, nil
}

type redisCache struct{ rdb *redis.Client }

func cacheKey(id int) string { return "item:" + strconv.Itoa(id) }

func (c redisCache) get(ctx context.Context, id int) ([]byte, bool) {
	body, err := c.rdb.Get(ctx, cacheKey(id)).Bytes()
	if err != nil && !errors.Is(err, redis.Nil) {
		logError("redis", err)
	}
	return body, err == nil
}

func (c redisCache) set(ctx context.Context, id int, body []byte) {
	if err := c.rdb.Set(ctx, cacheKey(id), body, cacheTTL).Err(); err != nil {
		logError("redis", err)
	}
}

func (c redisCache) drop(ctx context.Context, id int) {
	if err := c.rdb.Del(ctx, cacheKey(id)).Err(); err != nil {
		logError("redis", err)
	}
}

func (c redisCache) close() { c.rdb.Close() }

// memCache is the in-process cache. Expired entries are skipped when read
// and swept out at most once a second when writing.
type memCache struct {
	mu        sync.RWMutex
	entries   map[int]memEntry
	nextSweep time.Time
}

type memEntry struct {
	body    []byte
	expires time.Time
}

func newMemCache() *memCache { return &memCache{entries: map[int]memEntry{}} }

func (c *memCache) get(_ context.Context, id int) ([]byte, bool) {
	c.mu.RLock()
	e, ok := c.entries[id]
	c.mu.RUnlock()
	if !ok || !time.Now().Before(e.expires) {
		return nil, false
	}
	return e.body, true
}

func (c *memCache) set(_ context.Context, id int, body []byte) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.After(c.nextSweep) {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		c.nextSweep = now.Add(time.Second)
	}
	c.entries[id] = memEntry{body: body, expires: now.Add(cacheTTL)}
}

func (c *memCache) drop(_ context.Context, id int) {
	c.mu.Lock()
	delete(c.entries, id)
	c.mu.Unlock()
}

func (c *memCache) close() {}
