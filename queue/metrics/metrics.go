// Package metrics reads the queue's gauges for Prometheus at scrape time: the jobs per pool
// and state (and apart, the shares of split jobs), the requests awaiting approval and how long ago each pool's runner was seen. It
// is apart from queue so that the queue itself depends on its stores' clients only.
package metrics

import (
	"context"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/arenabot/arenabot/queue"
)

// A Collector reads a queue's gauges when it is scraped.
type Collector struct {
	q                           queue.Reader
	now                         func() time.Time
	jobs, shares, pending, seen *prometheus.Desc
}

var _ prometheus.Collector = Collector{}

// NewCollector returns the collector of q's gauges; now is the clock the runners' last
// heartbeat is measured against.
func NewCollector(q queue.Reader, now func() time.Time) Collector {
	return Collector{
		q: q, now: now,
		jobs:    prometheus.NewDesc("arena_queue_jobs", "Requests in the queue by pool and state (not counting the shares of split jobs).", []string{"pool", "state"}, nil),
		shares:  prometheus.NewDesc("arena_queue_shares", "Shares of split jobs in the queue by pool and state.", []string{"pool", "state"}, nil),
		pending: prometheus.NewDesc("arena_pending_requests", "Requests awaiting approval.", nil, nil),
		seen:    prometheus.NewDesc("arena_runner_last_seen_seconds", "Seconds since a runner of the pool last claimed or heart-beat; +Inf when none ever was.", []string{"pool"}, nil),
	}
}

// Describe sends the descriptions of the four gauges.
func (c Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobs
	ch <- c.shares
	ch <- c.pending
	ch <- c.seen
}

// Collect reads the queue, at most 2 s; a read that fails is sent as an invalid metric.
func (c Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if lines, err := c.q.Status(ctx); err != nil {
		ch <- prometheus.NewInvalidMetric(c.jobs, err)
	} else {
		for _, l := range lines {
			jobs, shares := map[queue.State]int{}, map[queue.State]int{}
			for _, p := range l.Places {
				if p.Job.Parent != "" {
					shares[p.Job.State]++
				} else {
					jobs[p.Job.State]++
				}
			}
			for _, st := range []queue.State{queue.Queued, queue.Running} {
				ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(jobs[st]), l.Pool, string(st))
				ch <- prometheus.MustNewConstMetric(c.shares, prometheus.GaugeValue, float64(shares[st]), l.Pool, string(st))
			}
		}
	}
	if pending, err := c.q.List(ctx, queue.Filter{States: []queue.State{queue.AwaitingApproval}}); err != nil {
		ch <- prometheus.NewInvalidMetric(c.pending, err)
	} else {
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(len(pending)))
	}
	runners, err := c.q.Runners(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.seen, err)
		return
	}
	now := c.now()
	for _, r := range runners {
		ago := math.Inf(1)
		if !r.Seen.IsZero() {
			ago = max(now.Sub(r.Seen).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(c.seen, prometheus.GaugeValue, ago, r.Pool)
	}
}
