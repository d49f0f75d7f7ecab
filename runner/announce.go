package runner

import (
	"context"
	"sync"
	"time"

	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/host"
)

// minHostTTL is the least a host's announcement lives in the queue's registry.
const minHostTTL = 10 * time.Second

// A hostBeacon announces the worker's host to the queue's registry of live hosts
// (queue.Announcer) while Run runs: at once, every Heartbeat, and whenever the job it
// runs changes. The facts are gathered once. A failed announcement is logged; the next
// one tries again.
type hostBeacon struct {
	w     *Worker
	nudge chan struct{} // a job started or ended: announce now

	mu  sync.Mutex
	job string // the job running now; "" idle
}

func newHostBeacon(w *Worker) *hostBeacon {
	return &hostBeacon{w: w, nudge: make(chan struct{}, 1)}
}

// running records the job the worker runs now ("" when idle) and announces it soon.
func (b *hostBeacon) running(id string) {
	b.mu.Lock()
	b.job = id
	b.mu.Unlock()
	select {
	case b.nudge <- struct{}{}:
	default:
	}
}

// run announces until ctx is done.
func (b *hostBeacon) run(ctx context.Context) {
	cfg := b.w.cfg
	ttl := max(3*cfg.Heartbeat, minHostTTL)
	h := hostOf(cfg, b.w.facts(ctx))
	t := time.NewTicker(cfg.Heartbeat)
	defer t.Stop()
	failing := false
	for {
		b.mu.Lock()
		h.Job = b.job
		b.mu.Unlock()
		if err := b.w.q.Announce(ctx, h, ttl); err != nil && ctx.Err() == nil {
			if !failing {
				b.w.log.Warn("announce the host to the queue", "host", h.Name, "pool", h.Pool, "err", err)
			}
			failing = true
		} else if failing && err == nil {
			b.w.log.Info("announced the host to the queue again", "host", h.Name, "pool", h.Pool)
			failing = false
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-b.nudge:
		}
	}
}

// hostOf is what the worker announces of its host: its pool and name, the host's facts
// and the CPU split its measurements use (measure's default when the bench config sets
// none; unpinned in lite mode).
func hostOf(cfg WorkerConfig, f result.HostFacts) queue.Host {
	h := queue.Host{
		Pool: cfg.Pool, Name: cfg.Bench.Host,
		CPU: f.CPU, Cores: f.Cores, Threads: f.Threads, Kernel: f.Kernel, Docker: f.Docker,
		ServerCPUs: cfg.Bench.ServerCPUs, LoadgenCPUs: cfg.Bench.LoadgenCPUs, Lite: cfg.Bench.Lite,
	}
	if h.ServerCPUs == "" && h.LoadgenCPUs == "" && !cfg.Bench.Lite {
		h.ServerCPUs, h.LoadgenCPUs = host.SplitCPUs(host.NumCPU())
	}
	return h
}
