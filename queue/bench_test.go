package queue_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/queuetest"
	"github.com/redis/go-redis/v9"
)

// benchQueues returns the queues to compare: memory, and Redis with the
// durable setting the tests use (appendfsync always) and with everysec.
func benchQueues(b *testing.B, o queue.Options) map[string]func(*testing.B) queue.Queue {
	redisQueue := func(args ...string) func(*testing.B) queue.Queue {
		return func(b *testing.B) queue.Queue {
			srv := queuetest.StartRedis(b, queuetest.Args(args...))
			rdb := srv.Client(b)
			o := o
			o.Prefix = queuetest.Prefix(b, rdb)
			return queue.NewRedis(rdb, o)
		}
	}
	return map[string]func(*testing.B) queue.Queue{
		"memory":               func(*testing.B) queue.Queue { return queue.NewMemory(o) },
		"redis-fsync-always":   redisQueue(),
		"redis-fsync-everysec": redisQueue("--appendfsync", "everysec"),
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// BenchmarkEnqueueClaim measures the time from the start of Enqueue until a
// runner blocked in Claim has the job.
func BenchmarkEnqueueClaim(b *testing.B) {
	queues := benchQueues(b, queue.Options{})
	for _, name := range sortedKeys(queues) {
		b.Run(name, func(b *testing.B) {
			q := queues[name](b)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			claimed := make(chan queue.Lease)
			go func() {
				for {
					l, err := q.Claim(ctx, "bench")
					if err != nil {
						return
					}
					claimed <- l
				}
			}()
			var lat []time.Duration
			j := queuetest.Job(1, "bench")
			for b.Loop() {
				start := time.Now()
				if _, _, err := q.Enqueue(ctx, j); err != nil {
					b.Fatal(err)
				}
				l := <-claimed
				lat = append(lat, time.Since(start))
				if _, err := q.Finish(ctx, l, queue.Outcome{State: queue.Done}); err != nil {
					b.Fatal(err)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkSeenDelivery measures webhook dedupe checks, from many goroutines.
func BenchmarkSeenDelivery(b *testing.B) {
	queues := benchQueues(b, queue.Options{})
	for _, name := range sortedKeys(queues) {
		b.Run(name, func(b *testing.B) {
			q := queues[name](b)
			var n atomic.Int64
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := "delivery-" + strconv.FormatInt(n.Add(1), 10)
					if first, err := q.SeenDelivery(context.Background(), id, time.Hour); err != nil || !first {
						b.Errorf("SeenDelivery = %v, %v", first, err)
						return
					}
				}
			})
			b.ReportMetric(float64(n.Load())/time.Since(start).Seconds(), "checks/s")
		})
	}
}

// BenchmarkWaitingJobMemory enqueues b.N jobs that all wait (Depth is
// raised) and reports what one waiting job costs in Redis: the growth of
// used_memory per job, and MEMORY USAGE of one job record. Run it with
// -benchtime=10000x.
func BenchmarkWaitingJobMemory(b *testing.B) {
	srv := queuetest.StartRedis(b)
	rdb := srv.Client(b)
	ctx := context.Background()
	prefix := queuetest.Prefix(b, rdb)
	q := queue.NewRedis(rdb, queue.Options{Prefix: prefix, Depth: 1 << 30})
	before := usedMemory(b, rdb)
	var id string
	i := 0
	for b.Loop() {
		i++
		j, _, err := q.Enqueue(ctx, queuetest.Job(i, "bench"))
		if err != nil {
			b.Fatal(err)
		}
		id = j.ID
	}
	after := usedMemory(b, rdb)
	b.ReportMetric(float64(after-before)/float64(i), "bytes/job")
	usage, err := rdb.MemoryUsage(ctx, prefix+"job:"+id).Result()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(usage), "record-bytes")
}

func usedMemory(b *testing.B, rdb *redis.Client) int64 {
	info, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		b.Fatal(err)
	}
	for l := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal(fmt.Errorf("no used_memory in INFO memory"))
	return 0
}
