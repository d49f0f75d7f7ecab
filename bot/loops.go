package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"
)

// Loops supervises a service's long-running loops (serve's intake, events, reaper and, with
// --runner, the worker): each runs until ctx ends, the first that stops early or fails is
// reported on Failed, and Wait lets the service wait for all of them, within a bound, before
// it closes what they use.
type Loops struct {
	ctx    context.Context
	log    *slog.Logger
	wrap   func(string, func(context.Context) error) func(context.Context) error
	failed chan error // a loop that stopped before ctx ended, or failed; buffered, first only
	wg     sync.WaitGroup

	mu      sync.Mutex
	running map[string]int
	err     error // the first loop's error
}

// NewLoops returns a supervisor whose loops run under ctx; wrap, when not nil, wraps each
// loop as it starts (tests inject faults with it).
func NewLoops(ctx context.Context, log *slog.Logger, wrap func(string, func(context.Context) error) func(context.Context) error) *Loops {
	return &Loops{ctx: ctx, log: log, wrap: wrap, failed: make(chan error, 1), running: map[string]int{}}
}

// Start runs loop in a goroutine under name.
func (g *Loops) Start(name string, loop func(context.Context) error) {
	if g.wrap != nil {
		loop = g.wrap(name, loop)
	}
	g.mu.Lock()
	g.running[name]++
	g.mu.Unlock()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		err := loop(g.ctx)
		if g.ctx.Err() != nil && errors.Is(err, g.ctx.Err()) {
			err = nil // the loop ended because the service stopped it
		}
		if err == nil && g.ctx.Err() == nil {
			err = errors.New("returned before the service stopped it")
		}
		if err != nil {
			err = fmt.Errorf("%s loop: %w", name, err)
		}
		g.mu.Lock()
		if g.running[name]--; g.running[name] == 0 {
			delete(g.running, name)
		}
		if err != nil && g.err == nil {
			g.err = err
		}
		g.mu.Unlock()
		if err != nil {
			select {
			case g.failed <- err:
			default:
			}
		}
	}()
}

// Wait waits for every loop to return, at most bound, and returns the names of those still
// running then (none: all returned). It logs what it waits for.
func (g *Loops) Wait(bound time.Duration) []string {
	done := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(done)
	}()
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	notice := time.NewTimer(min(100*time.Millisecond, bound/2))
	defer notice.Stop()
	for {
		select {
		case <-done:
			return nil
		case <-notice.C:
			g.log.Info("waiting for the loops to stop", "loops", g.Running(), "at_most", bound.String())
		case <-deadline.C:
			return g.Running()
		}
	}
}

// Running returns the loops still running, sorted.
func (g *Loops) Running() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Sorted(maps.Keys(g.running))
}

// Err returns the first error a loop returned.
func (g *Loops) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// Failed receives the first error of a loop that stopped before the service stopped it.
func (g *Loops) Failed() <-chan error { return g.failed }
