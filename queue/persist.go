package queue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
)

// A memStore keeps a Memory's state durable (Disk keeps it in a bbolt file).
// Memory calls save at the end of every operation that changed its state,
// under its mutex and before the operation returns, with only what changed;
// load reads the whole state back.
type memStore interface {
	save(c *memChange) error
	load() (*memSnapshot, error)
}

// A memChange is what one operation changed.
type memChange struct {
	Jobs       map[string]*memJobRecord // changed jobs; nil: deleted
	Deliveries map[string]time.Time     // delivery ID -> when it is forgotten; zero: deleted
	Events     []memEntryRecord         // appended to the stream, in order
	TrimBelow  uint64                   // events numbered below it were trimmed; 0: none
	Meta       []byte                   // the new meta record (JSON of memMeta); nil: unchanged
}

func (c *memChange) empty() bool {
	return len(c.Jobs) == 0 && len(c.Deliveries) == 0 && len(c.Events) == 0 && c.TrimBelow == 0 && c.Meta == nil
}

// A memSnapshot is a Memory's whole state as a store keeps it.
type memSnapshot struct {
	Jobs       map[string]*memJobRecord
	Deliveries map[string]time.Time
	Events     []memEntryRecord // oldest first
	Meta       []byte
}

// memDirty is what was saved last (the jobs and deliveries changed since
// are in memLife.touched and memSeen.touched).
type memDirty struct {
	savedSeq   uint64 // the last event number saved
	savedFirst uint64 // the first event number saved and not trimmed
	meta       []byte // the meta record as saved
}

type memJobRecord struct {
	Job     Job       `json:"job"`
	Expires time.Time `json:"expires,omitzero"` // wall clock: when a terminal job is forgotten
}

type memEntryRecord struct {
	N    uint64    `json:"n"`
	ID   string    `json:"id"`
	Job  string    `json:"job"`
	Kind string    `json:"kind"`
	Data []byte    `json:"data,omitempty"` // as published: not necessarily JSON
	Time time.Time `json:"time"`
}

// memMeta is everything but the jobs, the deliveries and the stream: small,
// and written whole when it changes.
type memMeta struct {
	Pools    map[string]memPoolRecord  `json:"pools,omitempty"`
	Awaiting []string                  `json:"awaiting,omitempty"`
	Fence    int64                     `json:"fence,omitempty"`
	EvSeq    uint64                    `json:"evseq,omitempty"`
	Groups   map[string]memGroupRecord `json:"groups,omitempty"`
	Runners  map[string]time.Time      `json:"runners,omitempty"`
}

type memPoolRecord struct {
	Runs []memRunRecord `json:"runs,omitempty"`
	// Run is the one running claim of a file written before a pool could run several;
	// read, never written.
	Run     *memRunRecord `json:"run,omitempty"`
	Retry   []string      `json:"retry,omitempty"`
	Waiting []string      `json:"waiting,omitempty"`
}

type memRunRecord struct {
	Job      string    `json:"job"`
	Token    string    `json:"token"`
	Deadline time.Time `json:"deadline"` // wall clock, so a reopened queue sees a lapsed lease
}

type memGroupRecord struct {
	Last    uint64              `json:"last,omitempty"`
	Pending map[string][]uint64 `json:"pending,omitempty"`
}

func (c *memCore) metaLocked() []byte {
	l := &c.life
	m := memMeta{Awaiting: l.awaiting, Fence: l.fence, EvSeq: c.stream.seq, Runners: c.runners.seen}
	if len(l.pools) > 0 {
		m.Pools = make(map[string]memPoolRecord, len(l.pools))
		for name, p := range l.pools {
			r := memPoolRecord{Retry: p.retry, Waiting: p.waiting}
			for _, run := range p.runs {
				r.Runs = append(r.Runs, memRunRecord{Job: run.id, Token: run.token, Deadline: run.deadline})
			}
			m.Pools[name] = r
		}
	}
	if len(c.stream.groups) > 0 {
		m.Groups = make(map[string]memGroupRecord, len(c.stream.groups))
		for name, g := range c.stream.groups {
			m.Groups[name] = memGroupRecord{Last: g.last, Pending: g.pending}
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("queue: encode state: %v", err)) // plain data: cannot fail
	}
	return b
}

// commitLocked saves what changed since the last save, when the queue has a
// store. When the save fails, the state is loaded again from the store, so
// it never differs from what the store holds, and the error is returned: the
// operation did not happen. When that load fails too, the queue is broken
// and every later operation fails.
func (c *memCore) commitLocked() error {
	if c.store == nil {
		c.life.touched, c.seen.touched = nil, nil
		return nil
	}
	ch := &memChange{}
	if len(c.life.touched) > 0 {
		ch.Jobs = make(map[string]*memJobRecord, len(c.life.touched))
		for id := range c.life.touched {
			var r *memJobRecord
			if j := c.life.jobs[id]; j != nil {
				r = &memJobRecord{Job: j.Job, Expires: j.expires}
			}
			ch.Jobs[id] = r
		}
	}
	if len(c.seen.touched) > 0 {
		ch.Deliveries = make(map[string]time.Time, len(c.seen.touched))
		for id := range c.seen.touched {
			ch.Deliveries[id] = c.seen.until[id]
		}
	}
	entries := c.stream.entries
	i := len(entries)
	for i > 0 && entries[i-1].n > c.dirty.savedSeq {
		i--
	}
	for _, e := range entries[i:] {
		ch.Events = append(ch.Events, memEntryRecord{N: e.n, ID: e.id, Job: e.ev.Job, Kind: e.ev.Kind, Data: e.ev.Data, Time: e.ev.Time})
	}
	first := c.stream.seq + 1
	if len(entries) > 0 {
		first = entries[0].n
	}
	if first > c.dirty.savedFirst && c.dirty.savedSeq > 0 {
		ch.TrimBelow = first
	}
	meta := c.metaLocked()
	if !bytes.Equal(meta, c.dirty.meta) {
		ch.Meta = meta
	}
	if ch.empty() {
		return nil
	}
	if err := c.store.save(ch); err != nil {
		if lerr := c.loadLocked(); lerr != nil {
			c.err = fmt.Errorf("queue state unusable: saving failed (%v) and loading it again failed: %w", err, lerr)
		}
		return fmt.Errorf("save queue state: %w", err)
	}
	c.life.touched, c.seen.touched = nil, nil
	c.dirty.savedSeq, c.dirty.savedFirst, c.dirty.meta = c.stream.seq, first, meta
	return nil
}

// loadLocked replaces the state with the store's. Blocked Claims and
// Events are woken to look again.
func (c *memCore) loadLocked() error {
	s, err := c.store.load()
	if err != nil {
		return err
	}
	var m memMeta
	if len(s.Meta) > 0 {
		if err := json.Unmarshal(s.Meta, &m); err != nil {
			return fmt.Errorf("queue state: %w", err)
		}
	}
	c.resetLocked()
	l := &c.life
	var ended []*memJob
	for id, r := range s.Jobs {
		if r == nil {
			continue
		}
		j := &memJob{Job: r.Job, expires: r.Expires}
		l.jobs[id] = j
		if !j.expires.IsZero() {
			ended = append(ended, j)
		}
	}
	// Jobs end in the order of their expiry (now plus Options.Retain).
	slices.SortFunc(ended, func(a, b *memJob) int { return a.expires.Compare(b.expires) })
	for _, j := range ended {
		l.expiry = append(l.expiry, j.ID)
	}
	for i := len(ended) - 1; i >= 0 && len(l.recent) < c.opts.Recent; i-- {
		l.recent = append(l.recent, ended[i].ID)
	}
	for name, r := range m.Pools {
		p := &memPool{retry: r.Retry, waiting: r.Waiting}
		if r.Run != nil {
			r.Runs = append([]memRunRecord{*r.Run}, r.Runs...)
		}
		for _, run := range r.Runs {
			p.runs = append(p.runs, memRun{id: run.Job, token: run.Token, deadline: run.Deadline})
		}
		l.pools[name] = p
	}
	l.awaiting = m.Awaiting
	l.fence, c.stream.seq = m.Fence, m.EvSeq
	for name, g := range m.Groups {
		if g.Pending == nil {
			g.Pending = make(map[string][]uint64)
		}
		c.stream.groups[name] = &memGroup{last: g.Last, pending: g.Pending}
	}
	if m.Runners != nil {
		c.runners.seen = m.Runners
	}
	for _, e := range s.Events {
		c.stream.entries = append(c.stream.entries, memEntry{n: e.N, id: e.ID, ev: Event{Job: e.Job, Kind: e.Kind, Data: e.Data, Time: e.Time}})
		c.stream.seq = max(c.stream.seq, e.N)
	}
	maps.Copy(c.seen.until, s.Deliveries)
	c.dirty = memDirty{savedSeq: c.stream.seq, savedFirst: c.stream.seq + 1, meta: c.metaLocked()}
	if len(c.stream.entries) > 0 {
		c.dirty.savedFirst = c.stream.entries[0].n
	}
	l.prune()
	return nil
}
