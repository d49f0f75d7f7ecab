package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/result"

	"github.com/arenabot/arenabot/internal/clock"
)

// EventGroup is the consumer group through which the bot reads the queue's event stream.
const EventGroup = "bot"

// EventLanes is how many consumer names RunEvents reads the stream through (see RunEvents).
const EventLanes = 4

// MaxFinalRetry bounds the wait between two attempts at a final event.
const MaxFinalRetry = 5 * time.Minute

const (
	eventBatch = 50
	// maxEventWait bounds one blocking read, so throttled progress is flushed and parked
	// events are retried on time even with a clock that does not follow the wall clock.
	maxEventWait = time.Second
	// finalTimeout bounds the handling of one final event: a results commit of many files
	// with writes spaced a second apart takes minutes.
	finalTimeout = 15 * time.Minute
	// forgetAfter is how long the state of a job without events is kept.
	forgetAfter = 24 * time.Hour
)

// LaneName returns the consumer name of lane i (0 ≤ i < EventLanes) for the stable
// consumer name consumer: consumer itself for lane 0, "consumer~i" for the others.
func LaneName(consumer string, i int) string {
	if i == 0 {
		return consumer
	}
	return consumer + "~" + strconv.Itoa(i)
}

// Reporter consumes the queue's event stream and is the one writer of the status comments
// and the final replies (see RunEvents).
type Reporter struct {
	*core
	fin finisher // the final replies and the results commit
	// evMu serialises the passes over the event stream (HandleEvents) and guards ev.
	evMu sync.Mutex
	ev   eventState
}

func newReporter(c *core) *Reporter {
	return &Reporter{core: c, fin: finisher{core: c}, ev: newEventState()}
}

// NewReporter returns the reporter alone, for a process that only reports.
func NewReporter(cfg Config, gh GitHub, q queue.Queue, log *slog.Logger) *Reporter {
	return New(cfg, gh, q, log).Reporter
}

// eventState is what the event loop remembers between passes; Reporter.evMu guards it.
type eventState struct {
	// read marks the lanes whose un-acknowledged deliveries were read since the start (or
	// since an ack on them failed).
	read map[string]bool
	// parked holds the final events that failed, by lane and delivery id.
	parked map[parkKey]*parked
	// jobs holds the running jobs' progress.
	jobs map[string]*jobProgress
	// dirty holds the open records whose status comment is to be rendered again, with
	// when: at once for a transition, after Config.ProgressEvery for progress, later
	// again after a failed write.
	dirty map[string]*dirtyJob
	// ended holds the jobs whose final reply was posted, with when.
	ended map[string]time.Time
	// swept is Config.Now at the last sweep over the open records.
	swept time.Time
}

type parkKey struct{ lane, id string }

// parked is a final event that is not acknowledged, waiting for its next attempt.
type parked struct {
	attempt  int       // attempts made
	first    time.Time // Config.Now at the first failure
	next     time.Time // Config.Now from which it is tried again
	received time.Time // wall clock of the first read, for ReplyTiming
	// saved is the reply as built by the last attempt when its --save step reached a
	// final answer (a commit, a refusal, nothing to save): later attempts post it as it is
	// instead of committing again.
	saved *report.Results
	err   error
}

// jobProgress is what the runner said of a running job.
type jobProgress struct {
	entries   int       // frameworks the job measures
	progress  string    // "baseline 4096c — 3 of 24"
	done      int       // rows finished
	total     int       // rows in all
	base      int       // rows finished at the last progress event
	rowsSince int       // row events since the last progress event
	lastEdit  time.Time // Config.Now of the last progress edit attempt
	updated   time.Time // Config.Now of the last event
	// hosts, for a job split over several hosts, is each host's progress on its share,
	// by host name; done and progress then add them up.
	hosts map[string]*hostProgress
}

// hostProgress is one host's progress on its share of a split job.
type hostProgress struct {
	text                     string
	done, total, base, since int
}

// shareProgress takes a share's progress event (p.Host set) into jp.
func (jp *jobProgress) shareProgress(p result.Progress) {
	if jp.hosts == nil {
		jp.hosts = map[string]*hostProgress{}
	}
	hp := jp.hosts[p.Host]
	if hp == nil {
		hp = &hostProgress{}
		jp.hosts[p.Host] = hp
	}
	hp.text = progressText(jp.entries, p)
	hp.total, hp.base, hp.since = max(p.Rows, 0), p.Done, 0
	hp.done = min(max(p.Done, 0), hp.total)
	jp.addHosts()
}

// shareRow counts a row a share's host finished.
func (jp *jobProgress) shareRow(host string) bool {
	hp := jp.hosts[host]
	if hp == nil {
		return false
	}
	hp.since++
	if done := min(hp.base+hp.since, hp.total); done > hp.done {
		hp.done = done
		jp.addHosts()
		return true
	}
	return false
}

// addHosts sets done and progress from the hosts' shares: "on 3 hosts — h1: gin
// baseline 512c — 3 of 8; h2: …".
func (jp *jobProgress) addHosts() {
	done, total := 0, 0
	var parts []string
	for _, h := range slices.Sorted(maps.Keys(jp.hosts)) {
		hp := jp.hosts[h]
		done += hp.done
		total += hp.total
		parts = append(parts, h+": "+hp.text)
	}
	jp.total = max(jp.total, total)
	jp.done = min(done, jp.total)
	jp.progress = fmt.Sprintf("on %d hosts — %s", len(jp.hosts), strings.Join(parts, "; "))
	if len(jp.hosts) == 1 {
		jp.progress = "on 1 host — " + strings.Join(parts, "; ")
	}
}

// dirtyJob is a status comment to render again.
type dirtyJob struct {
	due      time.Time
	failures int
}

func newEventState() eventState {
	return eventState{
		read:   map[string]bool{},
		parked: map[parkKey]*parked{},
		jobs:   map[string]*jobProgress{},
		dirty:  map[string]*dirtyJob{},
		ended:  map[string]time.Time{},
	}
}

// lanePending reports whether lane holds a parked event, and whether one is due at now.
func (st *eventState) lanePending(lane string, now time.Time) (holds, due bool) {
	for k, p := range st.parked {
		if k.lane == lane {
			holds = true
			if !now.Before(p.next) {
				due = true
			}
		}
	}
	return holds, due
}

// RunEvents consumes the queue's event stream until ctx is done and returns ctx's error.
// It renders the status comment of every open request from its record after each of its
// events (a running job's progress at most every Config.ProgressEvery), and posts the one
// final reply of every request that ends (see HandleEvents). consumer is a name stable
// across restarts ("arenabot", the host name), so the deliveries a previous run read and
// did not acknowledge are handled again: handling is idempotent.
//
// Acknowledgement: an event is acknowledged once handled. The events of open requests
// are acknowledged at once: their status comment is marked to be rendered, and a failed
// write is retried with backoff until it lands; every Config.SweepEvery every open record
// is rendered again, so a comment converges on its record even after a lost event or a
// restart (an unchanged rendering writes nothing). A final event whose reply or status edit failed
// stays unacknowledged and is tried again after Config.FinalRetry, doubling up to
// MaxFinalRetry, for up to Config.FinalRetryFor; a failure that retrying cannot mend (the
// pull request or the comment is gone: ghapi.ErrNotFound) is logged and acknowledged.
//
// Because the stream hands a consumer its unacknowledged deliveries before any new one,
// a failed final event would stop every later event behind it. RunEvents therefore reads
// through EventLanes consumer names (LaneName): a lane that holds a failed final event is
// left alone until its retry is due, and new events are read through the first lane that
// holds none. Only when every lane holds one (GitHub refusing replies for that long) do
// new events wait; each lane is freed by a success, a permanent failure or
// Config.FinalRetryFor. At start every lane's unacknowledged deliveries are read first.
func (rp *Reporter) RunEvents(ctx context.Context, consumer string) error {
	if consumer == "" {
		return errors.New("events: empty consumer name")
	}
	failures := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, err := rp.HandleEvents(ctx, consumer, rp.nextEventWait())
		if err == nil || ctx.Err() != nil {
			failures = 0
			continue
		}
		failures++
		wait := min(time.Second<<min(failures-1, 5), 30*time.Second)
		rp.log.Error("events", "consumer", consumer, "err", err, "wait", wait)
		if clock.Sleep(ctx, wait) != nil {
			return ctx.Err()
		}
	}
}

// HandleEvents makes one pass over the event stream for consumer (see RunEvents) and
// returns how many deliveries it handled: it reads the unacknowledged deliveries of every
// lane not read yet and of every lane whose parked event is due, then new events through
// the first free lane, waiting up to block for one, handles and acknowledges them in
// stream order, and edits the status comments whose throttled progress is due. An error
// means the queue could not be read or acknowledged; GitHub failures are logged, or park
// their event.
func (rp *Reporter) HandleEvents(ctx context.Context, consumer string, block time.Duration) (int, error) {
	rp.evMu.Lock()
	defer rp.evMu.Unlock()
	st := &rp.ev
	n := 0
	free := ""
	for i := range EventLanes {
		lane := LaneName(consumer, i)
		holds, due := st.lanePending(lane, rp.cfg.Now())
		if !st.read[lane] || due {
			ds, err := rp.q.Events(ctx, EventGroup, lane, eventBatch, 0)
			if err != nil {
				return n, fmt.Errorf("events of %s: %w", lane, err)
			}
			st.read[lane] = true
			m, err := rp.handleBatch(ctx, lane, ds)
			n += m
			if err != nil {
				return n, err
			}
			holds, _ = st.lanePending(lane, rp.cfg.Now())
		}
		if !holds && free == "" {
			free = lane
		}
	}
	if free == "" {
		// Every lane holds a final event that waits for its retry.
		if err := clock.Sleep(ctx, min(block, rp.nextEventWaitLocked())); err != nil {
			return n, err
		}
	} else {
		ds, err := rp.q.Events(ctx, EventGroup, free, eventBatch, block)
		if err != nil {
			return n, fmt.Errorf("events of %s: %w", free, err)
		}
		m, err := rp.handleBatch(ctx, free, ds)
		n += m
		if err != nil {
			return n, err
		}
	}
	rp.flush(ctx)
	return n, nil
}

// handleBatch handles deliveries read through lane, in order, acknowledging each one that
// is done with.
func (rp *Reporter) handleBatch(ctx context.Context, lane string, ds []queue.Delivery) (int, error) {
	n := 0
	for _, d := range ds {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		ack, handled := rp.handleDelivery(ctx, lane, d)
		if handled {
			n++
		}
		if !ack {
			continue
		}
		if err := rp.q.Ack(ctx, EventGroup, d.ID); err != nil {
			// Read the lane's pending deliveries again next pass; handling is idempotent.
			rp.ev.read[lane] = false
			return n, fmt.Errorf("ack %s: %w", d.ID, err)
		}
	}
	return n, nil
}

// finalKinds are the events that end a job.
var finalKinds = map[string]bool{
	queue.EventOutcome: true, queue.EventSuperseded: true, queue.EventCancelled: true, queue.EventLost: true,
	queue.EventRejected: true, queue.EventExpired: true,
}

// handleDelivery handles one delivery and says whether to acknowledge it; handled is
// false for a parked event whose retry is not due.
func (rp *Reporter) handleDelivery(ctx context.Context, lane string, d queue.Delivery) (ack, handled bool) {
	st := &rp.ev
	if parent := shareOf(d); parent != "" {
		// A share of a split job: nothing is posted for it; its job's comment counts its
		// rows (the runner sends them as the job's events).
		rp.markDirty(parent, rp.cfg.Now())
		return true, true
	}
	if !finalKinds[d.Kind] {
		rp.handleRunning(ctx, d)
		return true, true
	}
	key := parkKey{lane, d.ID}
	p := st.parked[key]
	now := rp.cfg.Now()
	if p != nil && now.Before(p.next) {
		return false, false
	}
	if p == nil && d.Kind != queue.EventRejected && d.Kind != queue.EventExpired {
		// A job left its line (ended, cancelled, displaced): the places behind it moved.
		rp.markPool(ctx, d, now)
	}
	if p == nil {
		p = &parked{received: time.Now()}
	}
	var j queue.Job
	if err := json.Unmarshal(d.Data, &j); err != nil || j.ID == "" {
		rp.log.Error("event: undecodable job dropped", "event", d.ID, "kind", d.Kind, "job", d.Job, "err", err)
		delete(st.parked, key)
		return true, true
	}
	fctx, cancel := context.WithTimeout(ctx, finalTimeout)
	defer cancel()
	// The record as it is now: it ended, so only what the bot amends (its status
	// comment) may be newer than the event's snapshot.
	if cur, err := rp.q.Get(fctx, j.ID); err == nil && cur.State.Terminal() {
		j = cur
	}
	saved, err := rp.fin.finalReply(fctx, d.Kind, j, p)
	p.attempt++
	switch {
	case err == nil:
		delete(st.parked, key)
		st.ended[j.ID] = now
		delete(st.jobs, j.ID)
		delete(st.dirty, j.ID)
		return true, true
	case ctx.Err() != nil:
		// Stopping: the delivery stays pending and is handled by the next run.
		return false, true
	case errors.Is(err, ghapi.ErrNotFound):
		rp.log.Error("final reply impossible, event dropped", "job", j.ID, "kind", d.Kind, "repo", j.Repo, "pr", j.PR, "err", err)
		delete(st.parked, key)
		st.ended[j.ID] = now
		delete(st.jobs, j.ID)
		return true, true
	}
	if p.first.IsZero() {
		p.first = now
	}
	if now.Sub(p.first) >= rp.cfg.FinalRetryFor {
		rp.log.Error("final reply given up", "job", j.ID, "kind", d.Kind, "repo", j.Repo, "pr", j.PR,
			"attempts", p.attempt, "err", err)
		delete(st.parked, key)
		return true, true
	}
	wait := min(rp.cfg.FinalRetry<<min(p.attempt-1, 20), MaxFinalRetry)
	p.next, p.err, p.saved = now.Add(wait), err, saved
	st.parked[key] = p
	rp.log.Warn("final reply failed, will retry", "job", j.ID, "kind", d.Kind, "lane", lane,
		"attempt", p.attempt, "wait", wait, "err", err)
	return false, true
}

// shareOf returns the job a queue event's share belongs to (queue.Job.Parent), "" when the
// event is not a share's.
func shareOf(d queue.Delivery) string {
	if d.Kind == queue.EventProgress || d.Kind == queue.EventRow {
		return ""
	}
	var j struct {
		Parent string `json:"parent"`
	}
	if json.Unmarshal(d.Data, &j) != nil {
		return ""
	}
	return j.Parent
}

// handleRunning handles the events of a job that has not ended: submitted, queued,
// updated, started, retried, progress and row. Each marks the job's status comment to be
// rendered again from its record: at once for a transition (and then the queued jobs of
// its pool, whose places changed), after Config.ProgressEvery for progress.
func (rp *Reporter) handleRunning(ctx context.Context, d queue.Delivery) {
	st := &rp.ev
	now := rp.cfg.Now()
	switch d.Kind {
	case queue.EventSubmitted, queue.EventQueued, queue.EventUpdated, queue.EventStarted, queue.EventRetried:
		if d.Kind == queue.EventStarted || d.Kind == queue.EventRetried {
			var j queue.Job
			_ = json.Unmarshal(d.Data, &j)
			jp := &jobProgress{entries: len(j.Frameworks), updated: now}
			if d.Kind == queue.EventRetried {
				jp.progress = queue.ReasonRetried
			}
			st.jobs[d.Job] = jp
		}
		rp.markDirty(d.Job, now)
		if d.Kind != queue.EventSubmitted && d.Kind != queue.EventUpdated {
			rp.markPool(ctx, d, now)
		}
	case queue.EventProgress:
		var p result.Progress
		if err := json.Unmarshal(d.Data, &p); err != nil {
			rp.log.Error("event: undecodable progress", "event", d.ID, "job", d.Job, "err", err)
			return
		}
		jp := rp.progressOf(ctx, d.Job, now)
		if jp == nil {
			return
		}
		if p.Host != "" {
			jp.shareProgress(p)
			jp.updated = now
			rp.markDirty(d.Job, jp.lastEdit.Add(rp.cfg.ProgressEvery))
			return
		}
		jp.progress = progressText(jp.entries, p)
		jp.total = p.Rows
		jp.base, jp.rowsSince = p.Done, 0
		jp.done = min(max(p.Done, 0), max(p.Rows, 0))
		jp.updated = now
		rp.markDirty(d.Job, jp.lastEdit.Add(rp.cfg.ProgressEvery))
	case queue.EventRow:
		jp := rp.progressOf(ctx, d.Job, now)
		if jp == nil {
			return
		}
		var row struct {
			Host string `json:"host"`
		}
		if _ = json.Unmarshal(d.Data, &row); row.Host != "" {
			if jp.shareRow(row.Host) {
				rp.markDirty(d.Job, jp.lastEdit.Add(rp.cfg.ProgressEvery))
			}
			jp.updated = now
			return
		}
		// A row event follows the progress event of its row: one more row finished.
		jp.rowsSince++
		if done := min(jp.base+jp.rowsSince, jp.total); done > jp.done {
			jp.done = done
			rp.markDirty(d.Job, jp.lastEdit.Add(rp.cfg.ProgressEvery))
		}
		jp.updated = now
	default:
		rp.log.Debug("event ignored", "event", d.ID, "kind", d.Kind, "job", d.Job)
	}
}

// markDirty asks for j's status comment to be rendered again at due (or earlier, when
// it was asked for earlier already).
func (rp *Reporter) markDirty(id string, due time.Time) {
	if _, ok := rp.ev.ended[id]; ok {
		return
	}
	if dj := rp.ev.dirty[id]; dj != nil {
		if due.Before(dj.due) && dj.failures == 0 {
			dj.due = due
		}
		return
	}
	rp.ev.dirty[id] = &dirtyJob{due: due}
}

// markPool marks the queued jobs of the pool of the event's job: their places changed.
func (rp *Reporter) markPool(ctx context.Context, d queue.Delivery, now time.Time) {
	var j queue.Job
	if err := json.Unmarshal(d.Data, &j); err != nil || j.Pool == "" {
		return
	}
	js, err := rp.q.List(ctx, queue.Filter{Pool: j.Pool, States: []queue.State{queue.Queued}})
	if err != nil {
		rp.log.Warn("list queued", "pool", j.Pool, "err", err)
		return
	}
	for _, o := range js {
		if o.ID != j.ID {
			rp.markDirty(o.ID, now)
		}
	}
}

// progressOf returns the progress of a running job, nil when it has ended.
func (rp *Reporter) progressOf(ctx context.Context, id string, now time.Time) *jobProgress {
	st := &rp.ev
	if _, ok := st.ended[id]; ok {
		return nil
	}
	if jp := st.jobs[id]; jp != nil {
		return jp
	}
	// A restart mid-run: read the record once.
	j, err := rp.q.Get(ctx, id)
	if err != nil || j.State.Terminal() {
		return nil
	}
	jp := &jobProgress{entries: len(j.Frameworks), updated: now}
	st.jobs[id] = jp
	return jp
}

// flush renders the status comments that are due, and forgets idle state. Every
// Config.SweepEvery it first marks every open record, so that a comment converges on its
// record after any failure, lost event or restart; rendering an unchanged state writes
// nothing.
func (rp *Reporter) flush(ctx context.Context) {
	st := &rp.ev
	now := rp.cfg.Now()
	if st.swept.IsZero() || !now.Before(st.swept.Add(rp.cfg.SweepEvery)) {
		st.swept = now
		js, err := rp.q.List(ctx, queue.Filter{States: []queue.State{queue.AwaitingApproval, queue.Queued, queue.Running}})
		if err != nil {
			rp.log.Warn("sweep", "err", err)
		}
		for _, j := range js {
			rp.markDirty(j.ID, now)
		}
	}
	for id, dj := range st.dirty {
		if now.Before(dj.due) {
			continue
		}
		ectx, cancel := context.WithTimeout(ctx, rp.cfg.EventTimeout)
		err := rp.show(ectx, id)
		cancel()
		if jp := st.jobs[id]; jp != nil {
			jp.lastEdit = now
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			dj.failures++
			wait := min(rp.cfg.ProgressEvery<<min(dj.failures-1, 10), time.Minute)
			dj.due = now.Add(wait)
			rp.log.Warn("status comment", "job", id, "attempt", dj.failures, "retry_in", wait, "err", err)
			continue
		}
		delete(st.dirty, id)
	}
	for id, jp := range st.jobs {
		if now.Sub(jp.updated) > forgetAfter {
			delete(st.jobs, id)
		}
	}
	for id, t := range st.ended {
		if now.Sub(t) > forgetAfter {
			delete(st.ended, id)
		}
	}
}

// nextEventWait is how long the next pass may block: until throttled progress or a
// parked event is due, at most maxEventWait.
func (rp *Reporter) nextEventWait() time.Duration {
	rp.evMu.Lock()
	defer rp.evMu.Unlock()
	return rp.nextEventWaitLocked()
}

func (rp *Reporter) nextEventWaitLocked() time.Duration {
	now := rp.cfg.Now()
	wait := maxEventWait
	for _, dj := range rp.ev.dirty {
		wait = min(wait, dj.due.Sub(now))
	}
	for _, p := range rp.ev.parked {
		wait = min(wait, p.next.Sub(now))
	}
	return max(wait, 0)
}

// progressText renders a progress event for the status comment: "baseline 4096c — 3 of
// 24", with the entry first when the job measures several.
func progressText(entries int, p result.Progress) string {
	s := ""
	if p.Entry != "" && entries != 1 {
		s = p.Entry + " · "
	}
	switch {
	case p.Profile != "" && p.Conns > 0:
		s += fmt.Sprintf("%s %dc", p.Profile, p.Conns)
	case p.Profile != "":
		s += p.Profile
	}
	if p.Rows > 0 && p.Row > 0 {
		s += fmt.Sprintf(" — %d of %d", p.Row, p.Rows)
	}
	if p.Failed > 0 {
		s += fmt.Sprintf(" (%d failed)", p.Failed)
	}
	if p.Note != "" {
		if s != "" {
			s += " · "
		}
		s += p.Note
	}
	return s
}
