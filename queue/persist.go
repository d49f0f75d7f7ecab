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

// memDirty is what changed since the last save.
type memDirty struct {
	jobs       map[string]bool
	deliveries map[string]bool
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

// touchLocked marks a job as changed (or deleted) for the next save.
func (q *Memory) touchLocked(id string) {
	if q.store == nil {
		return
	}
	if q.dirty.jobs == nil {
		q.dirty.jobs = make(map[string]bool)
	}
	q.dirty.jobs[id] = true
}

// seenLocked marks a delivery ID as changed (or deleted) for the next save.
func (q *Memory) seenLocked(id string) {
	if q.store == nil {
		return
	}
	if q.dirty.deliveries == nil {
		q.dirty.deliveries = make(map[string]bool)
	}
	q.dirty.deliveries[id] = true
}

func (q *Memory) metaLocked() []byte {
	m := memMeta{Awaiting: q.awaiting, Fence: q.fence, EvSeq: q.evseq, Runners: q.runners}
	if len(q.pools) > 0 {
		m.Pools = make(map[string]memPoolRecord, len(q.pools))
		for name, p := range q.pools {
			r := memPoolRecord{Retry: p.retry, Waiting: p.waiting}
			if p.run != nil {
				r.Run = &memRunRecord{Job: p.run.id, Token: p.run.token, Deadline: p.run.deadline}
			}
			m.Pools[name] = r
		}
	}
	if len(q.groups) > 0 {
		m.Groups = make(map[string]memGroupRecord, len(q.groups))
		for name, g := range q.groups {
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
func (q *Memory) commitLocked() error {
	if q.store == nil {
		return nil
	}
	c := &memChange{}
	if len(q.dirty.jobs) > 0 {
		c.Jobs = make(map[string]*memJobRecord, len(q.dirty.jobs))
		for id := range q.dirty.jobs {
			var r *memJobRecord
			if j := q.jobs[id]; j != nil {
				r = &memJobRecord{Job: j.Job, Expires: j.expires}
			}
			c.Jobs[id] = r
		}
	}
	if len(q.dirty.deliveries) > 0 {
		c.Deliveries = make(map[string]time.Time, len(q.dirty.deliveries))
		for id := range q.dirty.deliveries {
			c.Deliveries[id] = q.seen[id]
		}
	}
	i := len(q.entries)
	for i > 0 && q.entries[i-1].n > q.dirty.savedSeq {
		i--
	}
	for _, e := range q.entries[i:] {
		c.Events = append(c.Events, memEntryRecord{N: e.n, ID: e.id, Job: e.ev.Job, Kind: e.ev.Kind, Data: e.ev.Data, Time: e.ev.Time})
	}
	first := q.evseq + 1
	if len(q.entries) > 0 {
		first = q.entries[0].n
	}
	if first > q.dirty.savedFirst && q.dirty.savedSeq > 0 {
		c.TrimBelow = first
	}
	meta := q.metaLocked()
	if !bytes.Equal(meta, q.dirty.meta) {
		c.Meta = meta
	}
	if c.empty() {
		return nil
	}
	if err := q.store.save(c); err != nil {
		if lerr := q.loadLocked(); lerr != nil {
			q.err = fmt.Errorf("queue state unusable: saving failed (%v) and loading it again failed: %w", err, lerr)
		}
		return fmt.Errorf("save queue state: %w", err)
	}
	q.dirty.jobs, q.dirty.deliveries = nil, nil
	q.dirty.savedSeq, q.dirty.savedFirst, q.dirty.meta = q.evseq, first, meta
	return nil
}

// loadLocked replaces the state with the store's. Blocked Claims and
// Events are woken to look again.
func (q *Memory) loadLocked() error {
	s, err := q.store.load()
	if err != nil {
		return err
	}
	var m memMeta
	if len(s.Meta) > 0 {
		if err := json.Unmarshal(s.Meta, &m); err != nil {
			return fmt.Errorf("queue state: %w", err)
		}
	}
	q.resetLocked()
	var ended []*memJob
	for id, r := range s.Jobs {
		if r == nil {
			continue
		}
		j := &memJob{Job: r.Job, expires: r.Expires}
		q.jobs[id] = j
		if !j.expires.IsZero() {
			ended = append(ended, j)
		}
	}
	// Jobs end in the order of their expiry (now plus Options.Retain).
	slices.SortFunc(ended, func(a, b *memJob) int { return a.expires.Compare(b.expires) })
	for _, j := range ended {
		q.expiry = append(q.expiry, j.ID)
	}
	for i := len(ended) - 1; i >= 0 && len(q.recent) < q.opts.Recent; i-- {
		q.recent = append(q.recent, ended[i].ID)
	}
	for name, r := range m.Pools {
		p := &memPool{retry: r.Retry, waiting: r.Waiting}
		if r.Run != nil {
			p.run = &memRun{id: r.Run.Job, token: r.Run.Token, deadline: r.Run.Deadline}
		}
		q.pools[name] = p
	}
	q.awaiting = m.Awaiting
	q.fence, q.evseq = m.Fence, m.EvSeq
	for name, g := range m.Groups {
		if g.Pending == nil {
			g.Pending = make(map[string][]uint64)
		}
		q.groups[name] = &memGroup{last: g.Last, pending: g.Pending}
	}
	if m.Runners != nil {
		q.runners = m.Runners
	}
	for _, e := range s.Events {
		q.entries = append(q.entries, memEntry{n: e.N, id: e.ID, ev: Event{Job: e.Job, Kind: e.Kind, Data: e.Data, Time: e.Time}})
		q.evseq = max(q.evseq, e.N)
	}
	maps.Copy(q.seen, s.Deliveries)
	q.dirty = memDirty{savedSeq: q.evseq, savedFirst: q.evseq + 1, meta: q.metaLocked()}
	if len(q.entries) > 0 {
		q.dirty.savedFirst = q.entries[0].n
	}
	q.pruneLocked()
	return nil
}
