package queue

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Host is a live runner's machine as the runner announces it: its pool and
// name, the facts of the machine the benchmarks ran on, how its CPUs are
// split between the server and the load generator, and what it runs now.
// The runner copies the fields from its own record of the host.
type Host struct {
	Pool string
	Name string // the bench host's name, or the machine's hostname

	CPU     string // CPU model
	Cores   string // physical cores, "64"
	Threads string // online CPUs, "128"
	Kernel  string
	Docker  string // Docker server version

	ServerCPUs  string // cpuset of the framework's server ("0-3"); "" unpinned
	LoadgenCPUs string // cpuset of the load generator
	// Lite is a runner in --lite mode: it scales every row down to its lite counts and
	// pins nothing, so it runs any profile whatever its CPUs.
	Lite bool `json:",omitempty"`

	Job  string    // the job it runs now; "" idle
	Seen time.Time // Options.Now of its last Announce
}

// An Announcer keeps the registry of live runner hosts.
type Announcer interface {
	// Announce records h as live until Options.Now plus ttl (<= 0 means a
	// minute), replacing what its pool and name announced before. The queue
	// fills in Seen.
	Announce(ctx context.Context, h Host, ttl time.Duration) error
}

const defaultHostTTL = time.Minute

// hostKey names a host in the registry: its pool and name.
func hostKey(h Host) string { return h.Pool + "\x00" + h.Name }

func compareHosts(a, b Host) int {
	return cmp.Or(cmp.Compare(a.Pool, b.Pool), cmp.Compare(a.Name, b.Name))
}

func prepareHost(h Host, now time.Time, ttl time.Duration) (Host, time.Time) {
	if h.Pool == "" {
		h.Pool = DefaultPool
	}
	if ttl <= 0 {
		ttl = defaultHostTTL
	}
	h.Seen = now
	return h, now.Add(ttl)
}

// memHosts gives a Memory Announce and Hosts. A Disk keeps its hosts in
// memory only: they live for seconds and every runner announces again
// within its heartbeat, so a restarted process learns them anew.
type memHosts struct{ c *memCore }

// memHost is a host in the registry and when it expires.
type memHost struct {
	Host
	until time.Time
}

func (m memHosts) Announce(ctx context.Context, h Host, ttl time.Duration) error {
	q := m.c
	if err := q.lock(ctx); err != nil {
		return err
	}
	defer q.mu.Unlock()
	h, until := prepareHost(h, q.opts.Now(), ttl)
	if q.hosts == nil {
		q.hosts = make(map[string]memHost)
	}
	q.hosts[hostKey(h)] = memHost{Host: h, until: until}
	return nil
}

func (m memHosts) Hosts(ctx context.Context) ([]Host, error) {
	q := m.c
	if err := q.lock(ctx); err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	now := q.opts.Now()
	out := []Host{}
	for _, k := range slices.Collect(maps.Keys(q.hosts)) {
		h := q.hosts[k]
		if !h.until.After(now) {
			delete(q.hosts, k)
			continue
		}
		out = append(out, h.Host)
	}
	slices.SortFunc(out, compareHosts)
	return out, nil
}

// redisHosts gives a Redis Announce and Hosts: the hash P hosts maps a host's
// pool and name to its record (JSON), which carries its expiry by
// Options.Now; Hosts drops the expired ones.
type redisHosts struct {
	rdb  redis.UniversalClient
	k    redisKeys
	opts Options
}

// redisHost is a host's record in the hash.
type redisHost struct {
	Host
	Until time.Time
}

func (q redisHosts) Announce(ctx context.Context, h Host, ttl time.Duration) error {
	h, until := prepareHost(h, q.opts.Now(), ttl)
	data, err := json.Marshal(redisHost{Host: h, Until: until})
	if err != nil {
		return fmt.Errorf("announce %s: %w", h.Name, err)
	}
	if err := q.rdb.HSet(ctx, q.k.key("hosts"), hostKey(h), data).Err(); err != nil {
		return fmt.Errorf("announce %s: %w", h.Name, err)
	}
	return nil
}

func (q redisHosts) Hosts(ctx context.Context) ([]Host, error) {
	key := q.k.key("hosts")
	now := q.opts.Now()
	out := []Host{}
	err := q.rdb.Watch(ctx, func(tx *redis.Tx) error {
		out = out[:0]
		all, err := tx.HGetAll(ctx, key).Result()
		if err != nil {
			return err
		}
		var expired []string
		for field, v := range all {
			var r redisHost
			if err := json.Unmarshal([]byte(v), &r); err != nil || !r.Until.After(now) {
				expired = append(expired, field)
				continue
			}
			out = append(out, r.Host)
		}
		if len(expired) == 0 {
			return nil
		}
		// Prune unless a host announced itself meanwhile.
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HDel(ctx, key, expired...)
			return nil
		})
		return err
	}, key)
	if err != nil && !errors.Is(err, redis.TxFailedErr) {
		return nil, fmt.Errorf("hosts: %w", err)
	}
	slices.SortFunc(out, compareHosts)
	return out, nil
}
