package queue

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// memStream is a Memory's event stream with its consumer groups. The
// Memory's mutex guards it.
type memStream struct {
	max     int        // about how many entries are kept (Options.MaxEvents)
	entries []memEntry // oldest first
	seq     uint64     // the last entry number given out
	groups  map[string]*memGroup
	wake    chan struct{} // closed and replaced when an entry is appended
}

type memEntry struct {
	n  uint64
	id string
	ev Event
}

type memGroup struct {
	last    uint64              // the last entry delivered to the group
	pending map[string][]uint64 // consumer -> delivered, unacknowledged entries in order
}

func (s *memStream) reset(max int) {
	s.max = max
	s.entries, s.seq = nil, 0
	s.groups = make(map[string]*memGroup)
	s.woken()
}

// woken wakes every blocked Events call.
func (s *memStream) woken() {
	if s.wake != nil {
		close(s.wake)
	}
	s.wake = make(chan struct{})
}

func (s *memStream) append(e Event) {
	s.seq++
	e.Data = slices.Clone(e.Data)
	id := fmt.Sprintf("%d-%d", time.Now().UnixMilli(), s.seq)
	s.entries = append(s.entries, memEntry{n: s.seq, id: id, ev: e})
	if over := len(s.entries) - s.max; over > 0 {
		s.entries = slices.Delete(s.entries, 0, over)
	}
	s.woken()
}

// entry returns the stream entry numbered n, or nil when trimmed.
func (s *memStream) entry(n uint64) *memEntry {
	i, ok := slices.BinarySearchFunc(s.entries, n, func(e memEntry, n uint64) int {
		switch {
		case e.n < n:
			return -1
		case e.n > n:
			return 1
		}
		return 0
	})
	if !ok {
		return nil
	}
	return &s.entries[i]
}

// read is one non-blocking read of Events.
func (s *memStream) read(group, consumer string, max int) []Delivery {
	g := s.groups[group]
	if g == nil {
		g = &memGroup{pending: make(map[string][]uint64)}
		s.groups[group] = g
	}
	var out []Delivery
	pending := g.pending[consumer]
	kept := pending[:0]
	for _, n := range pending {
		e := s.entry(n)
		if e == nil {
			continue // trimmed from the stream: nothing left to deliver
		}
		kept = append(kept, n)
		if len(out) < max {
			out = append(out, Delivery{ID: e.id, Event: cloneEvent(e.ev)})
		}
	}
	g.pending[consumer] = kept
	if len(out) > 0 {
		return out
	}
	for i := range s.entries {
		e := &s.entries[i]
		if e.n <= g.last {
			continue
		}
		out = append(out, Delivery{ID: e.id, Event: cloneEvent(e.ev)})
		g.pending[consumer] = append(g.pending[consumer], e.n)
		g.last = e.n
		if len(out) == max {
			break
		}
	}
	return out
}

// ack drops the entries numbered in acked from group's pending ones.
func (s *memStream) ack(group string, acked map[uint64]bool) {
	g := s.groups[group]
	if g == nil {
		return
	}
	for c, p := range g.pending {
		g.pending[c] = slices.DeleteFunc(p, func(n uint64) bool { return acked[n] })
	}
}

// memEvents gives a Memory Publish, Events and Ack on its stream.
type memEvents struct{ c *memCore }

func (m memEvents) Publish(ctx context.Context, e Event) error {
	q := m.c
	if e.Time.IsZero() {
		e.Time = q.opts.Now()
	}
	if err := q.lock(ctx); err != nil {
		return err
	}
	defer q.mu.Unlock()
	q.stream.append(e)
	if err := q.commitLocked(); err != nil {
		return fmt.Errorf("publish %s event of %s: %w", e.Kind, e.Job, err)
	}
	return nil
}

func (m memEvents) Events(ctx context.Context, group, consumer string, max int, block time.Duration) ([]Delivery, error) {
	q := m.c
	if max <= 0 {
		max = 100
	}
	var timeout <-chan time.Time
	if block > 0 {
		t := time.NewTimer(block)
		defer t.Stop()
		timeout = t.C
	}
	for {
		if err := q.lock(ctx); err != nil {
			return nil, err
		}
		out := q.stream.read(group, consumer, max)
		err := q.commitLocked()
		wake := q.stream.wake
		q.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("events of %s for %s: %w", group, consumer, err)
		}
		if len(out) > 0 || timeout == nil {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout:
			return nil, nil
		case <-wake:
		}
	}
}

func (m memEvents) Ack(ctx context.Context, group string, ids ...string) error {
	q := m.c
	acked := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		n, err := entryNumber(id)
		if err != nil {
			return fmt.Errorf("ack %s: %w", id, err)
		}
		acked[n] = true
	}
	if err := q.lock(ctx); err != nil {
		return err
	}
	defer q.mu.Unlock()
	q.stream.ack(group, acked)
	if err := q.commitLocked(); err != nil {
		return fmt.Errorf("ack events of %s: %w", group, err)
	}
	return nil
}

func entryNumber(id string) (uint64, error) {
	_, seq, ok := strings.Cut(id, "-")
	if !ok {
		return 0, fmt.Errorf("malformed event ID")
	}
	return strconv.ParseUint(seq, 10, 64)
}

func cloneEvent(e Event) Event {
	e.Data = slices.Clone(e.Data)
	return e
}

// memSeen is a Memory's webhook delivery IDs, for de-duplication.
type memSeen struct {
	until   map[string]time.Time // delivery ID -> when it is forgotten (wall clock)
	sweepAt int                  // sweep when it grows to this size
	touched map[string]bool      // IDs changed (or deleted) since the last save
}

func (s *memSeen) reset() {
	s.until = make(map[string]time.Time)
	s.sweepAt = 0
	s.touched = nil
}

func (s *memSeen) touch(id string) {
	if s.touched == nil {
		s.touched = make(map[string]bool)
	}
	s.touched[id] = true
}

// first records id for ttl and reports whether it was not known.
func (s *memSeen) first(id string, ttl time.Duration, now time.Time) bool {
	if exp, ok := s.until[id]; ok && now.Before(exp) {
		return false
	}
	s.until[id] = now.Add(ttl)
	s.touch(id)
	if len(s.until) >= s.sweepAt {
		for k, exp := range s.until {
			if !now.Before(exp) {
				delete(s.until, k)
				s.touch(k)
			}
		}
		s.sweepAt = max(1024, 2*len(s.until)) // amortised: each entry is swept O(1) times
	}
	return true
}

func (s *memSeen) forget(id string) {
	delete(s.until, id)
	s.touch(id)
}

// memDeliveries gives a Memory SeenDelivery and ForgetDelivery.
type memDeliveries struct{ c *memCore }

func (m memDeliveries) SeenDelivery(ctx context.Context, id string, ttl time.Duration) (bool, error) {
	q := m.c
	if err := q.lock(ctx); err != nil {
		return false, err
	}
	defer q.mu.Unlock()
	if ttl <= 0 {
		ttl = defaultDeliveryTTL
	}
	if !q.seen.first(id, ttl, time.Now()) {
		return false, nil
	}
	if err := q.commitLocked(); err != nil {
		return false, fmt.Errorf("delivery %s: %w", id, err)
	}
	return true, nil
}

func (m memDeliveries) ForgetDelivery(ctx context.Context, id string) error {
	q := m.c
	if err := q.lock(ctx); err != nil {
		return err
	}
	defer q.mu.Unlock()
	q.seen.forget(id)
	if err := q.commitLocked(); err != nil {
		return fmt.Errorf("forget delivery %s: %w", id, err)
	}
	return nil
}
