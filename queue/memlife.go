package queue

import (
	"maps"
	"slices"
	"time"
)

// memLife is a Memory's jobs and lines: what the lifecycle's transitions
// read (scene) and change (apply). The Memory's mutex guards it.
type memLife struct {
	jobs     map[string]*memJob
	pools    map[string]*memPool
	awaiting []string // IDs of jobs awaiting approval, the oldest first
	recent   []string // terminal job IDs, the latest first, at most Options.Recent
	expiry   []string // terminal job IDs in the order they became terminal, for pruning
	fence    int64    // the last fencing number given out
	wake     chan struct{}
	touched  map[string]bool // jobs changed (or deleted) since the last save
}

type memJob struct {
	Job
	expires time.Time // zero until terminal
}

type memPool struct {
	runs    []memRun // the running claims, the oldest first
	retry   []string // jobs retried after a lost runner: they run before waiting ones
	waiting []string
}

type memRun struct {
	id, token string
	deadline  time.Time // wall clock
}

func (l *memLife) reset() {
	l.jobs = make(map[string]*memJob)
	l.pools = make(map[string]*memPool)
	l.awaiting, l.recent, l.expiry = nil, nil, nil
	l.fence = 0
	l.touched = nil
	if l.wake != nil {
		close(l.wake)
	}
	l.wake = make(chan struct{})
}

// changed wakes every blocked Claim.
func (l *memLife) changed() {
	close(l.wake)
	l.wake = make(chan struct{})
}

func (l *memLife) touch(id string) {
	if l.touched == nil {
		l.touched = make(map[string]bool)
	}
	l.touched[id] = true
}

// get returns a job, or nil when unknown or expired.
func (l *memLife) get(id string) *memJob {
	j := l.jobs[id]
	if j == nil || !j.expires.IsZero() && time.Now().After(j.expires) {
		return nil
	}
	return j
}

// scene returns what cmd reads: the job it names and the line of pool (""
// for the job's pool), with the jobs the line's next steps involve.
func (l *memLife) scene(cmd command, pool string, now time.Time, depth int) scene {
	s := scene{Now: now, Depth: depth, Fence: l.fence, Jobs: make(map[string]*Job)}
	add := func(id string) {
		if j := l.get(id); j != nil {
			s.Jobs[id] = &j.Job
		}
	}
	id := cmd.ID
	if cmd.Op == opSubmit || cmd.Op == opEnqueue {
		id = cmd.Job.ID
		if pool == "" {
			pool = cmd.Job.Pool
		}
	}
	if id != "" {
		add(id)
		if j := s.Jobs[id]; j != nil && pool == "" {
			pool = j.Pool
		}
	}
	if cmd.Op == opSubmit {
		for _, a := range l.awaiting {
			if o := l.jobs[a]; o != nil && owner(o.Job) == owner(cmd.Job) {
				s.Owner = a
				add(a)
				break
			}
		}
	}
	s.Line = lineState{Pool: pool}
	if p := l.pools[pool]; p != nil {
		s.Line.Retry, s.Line.Waiting = p.retry, p.waiting
		wall := time.Now()
		for _, r := range p.runs {
			s.Line.Runs = append(s.Line.Runs, runClaim{Job: r.id, Token: r.token, Live: wall.Before(r.deadline)})
			add(r.id)
		}
		if len(p.retry) > 0 {
			add(p.retry[0])
		}
		if len(p.waiting) > 0 {
			add(p.waiting[0])
		}
		if cmd.Op == opClaim {
			s.PRs = make(map[string]string)
			for _, id := range slices.Concat(s.Line.Retry, s.Line.Waiting, runJobs(s.Line.Runs)) {
				if j := l.get(id); j != nil {
					s.PRs[id] = prKey(j.Job)
				}
			}
			add(s.Line.next(s.PRs, cmd.ID))
		}
		if cmd.Op == opApprove || cmd.Op == opEnqueue {
			s.PRs = make(map[string]string, len(p.waiting))
			for _, w := range p.waiting {
				if j := l.get(w); j != nil {
					s.PRs[w] = prKey(j.Job)
				}
			}
			if j := lineupJob(cmd, s); j != nil {
				add(displaced(p.waiting, s.PRs, prKey(*j), depth))
			}
		}
	}
	return s
}

// apply writes what a transition changed. Lease deadlines and the
// forgetting of terminal jobs run on the wall clock.
func (l *memLife) apply(ch change, o Options) {
	wall := time.Now()
	for _, j := range ch.Put {
		if m := l.jobs[j.ID]; m != nil && j.ID != ch.Created {
			m.Job = j
		} else {
			l.jobs[j.ID] = &memJob{Job: j}
		}
		l.touch(j.ID)
	}
	for _, id := range ch.Unawaited {
		l.awaiting = slices.DeleteFunc(l.awaiting, func(s string) bool { return s == id })
	}
	if ch.Awaits != "" {
		l.awaiting = append(l.awaiting, ch.Awaits)
	}
	if ch.Fence > 0 {
		l.fence = ch.Fence
	}
	if nl := ch.Line; nl != nil {
		p := l.pools[nl.Pool]
		if p == nil {
			p = &memPool{}
			l.pools[nl.Pool] = p
		}
		p.retry, p.waiting = nl.Retry, nl.Waiting
		runs := make([]memRun, 0, len(nl.Runs))
		for _, r := range nl.Runs {
			i := slices.IndexFunc(p.runs, func(m memRun) bool { return m.token == r.Token && m.id == r.Job })
			switch {
			case i < 0 || ch.Renew == r.Token:
				runs = append(runs, memRun{id: r.Job, token: r.Token, deadline: wall.Add(o.LeaseTTL)})
			default:
				runs = append(runs, p.runs[i])
			}
		}
		p.runs = runs
		if ch.Wake || len(ch.Events) > 0 {
			l.changed()
		}
	}
	for _, id := range ch.Ended {
		l.jobs[id].expires = wall.Add(o.Retain)
		l.recent = slices.Insert(l.recent, 0, id)
		if len(l.recent) > o.Recent {
			l.recent = l.recent[:o.Recent]
		}
		l.expiry = append(l.expiry, id)
	}
	if len(ch.Ended) > 0 {
		l.prune()
	}
}

// prune forgets the terminal jobs kept for Options.Retain.
func (l *memLife) prune() {
	now := time.Now()
	for len(l.expiry) > 0 {
		id := l.expiry[0]
		j := l.jobs[id]
		ended := j != nil && !j.expires.IsZero() // not a job enqueued again under the same ID
		if ended && now.Before(j.expires) {
			break
		}
		if ended {
			delete(l.jobs, id)
			l.touch(id)
		}
		l.expiry = l.expiry[1:]
	}
}

// line returns a pool's line with positions and ETAs as of now.
func (l *memLife) line(pool string, now time.Time) Line {
	p := l.pools[pool]
	var running []Job
	for _, r := range p.runs {
		running = append(running, cloneJob(l.jobs[r.id].Job))
	}
	var waiting []Job
	for _, id := range slices.Concat(p.retry, p.waiting) {
		waiting = append(waiting, cloneJob(l.jobs[id].Job))
	}
	return line(pool, running, waiting, now)
}

// status returns every pool's line, pools sorted by name.
func (l *memLife) status(now time.Time) []Line {
	lines := make([]Line, 0, len(l.pools))
	for _, name := range slices.Sorted(maps.Keys(l.pools)) {
		lines = append(lines, l.line(name, now))
	}
	return lines
}
