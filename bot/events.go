package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/runner/result"
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

// eventState is what the event loop remembers between passes; Bot.evMu guards it.
type eventState struct {
	// read marks the lanes whose un-acknowledged deliveries were read since the start (or
	// since an ack on them failed).
	read map[string]bool
	// parked holds the final events that failed, by lane and delivery id.
	parked map[parkKey]*parked
	// jobs holds the running jobs' progress.
	jobs map[string]*jobProgress
	// ended holds the jobs whose final reply was posted, with when.
	ended map[string]time.Time
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

// jobProgress is the status comment of a running job as the event loop last saw it.
type jobProgress struct {
	job       queue.Job
	status    report.Status // the latest status to show
	shown     bool          // the comment shows status
	lastEdit  time.Time     // Config.Now of the last edit attempt
	done      int           // rows finished at the last progress event
	rowsSince int           // row events since the last progress event
	updated   time.Time     // Config.Now of the last event
}

func newEventState() eventState {
	return eventState{
		read:   map[string]bool{},
		parked: map[parkKey]*parked{},
		jobs:   map[string]*jobProgress{},
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
// It edits the status comments of running jobs (at most every Config.ProgressEvery per
// job) and posts the one final reply of every job that ends (see HandleEvents). consumer
// is a name stable across restarts ("arenabot", the host name), so the deliveries a
// previous run read and did not acknowledge are handled again: handling is idempotent.
//
// Acknowledgement: an event is acknowledged once handled. Progress, row, started and
// retried events are acknowledged even when their edit failed (a later event or the
// final reply edits the comment again). A final event whose reply or status edit failed
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
func (b *Bot) RunEvents(ctx context.Context, consumer string) error {
	if consumer == "" {
		return errors.New("events: empty consumer name")
	}
	failures := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, err := b.HandleEvents(ctx, consumer, b.nextEventWait())
		if err == nil || ctx.Err() != nil {
			failures = 0
			continue
		}
		failures++
		wait := min(time.Second<<min(failures-1, 5), 30*time.Second)
		b.log.Error("events", "consumer", consumer, "err", err, "wait", wait)
		if sleepCtx(ctx, wait) != nil {
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
func (b *Bot) HandleEvents(ctx context.Context, consumer string, block time.Duration) (int, error) {
	b.evMu.Lock()
	defer b.evMu.Unlock()
	st := &b.ev
	n := 0
	free := ""
	for i := range EventLanes {
		lane := LaneName(consumer, i)
		holds, due := st.lanePending(lane, b.cfg.Now())
		if !st.read[lane] || due {
			ds, err := b.q.Events(ctx, EventGroup, lane, eventBatch, 0)
			if err != nil {
				return n, fmt.Errorf("events of %s: %w", lane, err)
			}
			st.read[lane] = true
			m, err := b.handleBatch(ctx, lane, ds)
			n += m
			if err != nil {
				return n, err
			}
			holds, _ = st.lanePending(lane, b.cfg.Now())
		}
		if !holds && free == "" {
			free = lane
		}
	}
	if free == "" {
		// Every lane holds a final event that waits for its retry.
		if err := sleepCtx(ctx, min(block, b.nextEventWaitLocked())); err != nil {
			return n, err
		}
	} else {
		ds, err := b.q.Events(ctx, EventGroup, free, eventBatch, block)
		if err != nil {
			return n, fmt.Errorf("events of %s: %w", free, err)
		}
		m, err := b.handleBatch(ctx, free, ds)
		n += m
		if err != nil {
			return n, err
		}
	}
	b.flushProgress(ctx)
	return n, nil
}

// handleBatch handles deliveries read through lane, in order, acknowledging each one that
// is done with.
func (b *Bot) handleBatch(ctx context.Context, lane string, ds []queue.Delivery) (int, error) {
	n := 0
	for _, d := range ds {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		ack, handled := b.handleDelivery(ctx, lane, d)
		if handled {
			n++
		}
		if !ack {
			continue
		}
		if err := b.q.Ack(ctx, EventGroup, d.ID); err != nil {
			// Read the lane's pending deliveries again next pass; handling is idempotent.
			b.ev.read[lane] = false
			return n, fmt.Errorf("ack %s: %w", d.ID, err)
		}
	}
	return n, nil
}

// finalKinds are the events that end a job.
var finalKinds = map[string]bool{
	queue.EventOutcome: true, queue.EventSuperseded: true, queue.EventCancelled: true, queue.EventLost: true,
}

// handleDelivery handles one delivery and says whether to acknowledge it; handled is
// false for a parked event whose retry is not due.
func (b *Bot) handleDelivery(ctx context.Context, lane string, d queue.Delivery) (ack, handled bool) {
	st := &b.ev
	if !finalKinds[d.Kind] {
		b.handleRunning(ctx, d)
		return true, true
	}
	key := parkKey{lane, d.ID}
	p := st.parked[key]
	now := b.cfg.Now()
	if p != nil && now.Before(p.next) {
		return false, false
	}
	if p == nil {
		p = &parked{received: time.Now()}
	}
	var j queue.Job
	if err := json.Unmarshal(d.Data, &j); err != nil || j.ID == "" {
		b.log.Error("event: undecodable job dropped", "event", d.ID, "kind", d.Kind, "job", d.Job, "err", err)
		delete(st.parked, key)
		return true, true
	}
	fctx, cancel := context.WithTimeout(ctx, finalTimeout)
	defer cancel()
	saved, err := b.finalReply(fctx, d.Kind, j, p)
	p.attempt++
	switch {
	case err == nil:
		delete(st.parked, key)
		st.ended[j.ID] = now
		delete(st.jobs, j.ID)
		return true, true
	case ctx.Err() != nil:
		// Stopping: the delivery stays pending and is handled by the next run.
		return false, true
	case errors.Is(err, ghapi.ErrNotFound):
		b.log.Error("final reply impossible, event dropped", "job", j.ID, "kind", d.Kind, "repo", j.Repo, "pr", j.PR, "err", err)
		delete(st.parked, key)
		st.ended[j.ID] = now
		delete(st.jobs, j.ID)
		return true, true
	}
	if p.first.IsZero() {
		p.first = now
	}
	if now.Sub(p.first) >= b.cfg.FinalRetryFor {
		b.log.Error("final reply given up", "job", j.ID, "kind", d.Kind, "repo", j.Repo, "pr", j.PR,
			"attempts", p.attempt, "err", err)
		delete(st.parked, key)
		return true, true
	}
	wait := min(b.cfg.FinalRetry<<min(p.attempt-1, 20), MaxFinalRetry)
	p.next, p.err, p.saved = now.Add(wait), err, saved
	st.parked[key] = p
	b.log.Warn("final reply failed, will retry", "job", j.ID, "kind", d.Kind, "lane", lane,
		"attempt", p.attempt, "wait", wait, "err", err)
	return false, true
}

// handleRunning handles the events of a job that has not ended: started, progress, row,
// retried. Failures are logged: a later event edits the comment again.
func (b *Bot) handleRunning(ctx context.Context, d queue.Delivery) {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.EventTimeout)
	defer cancel()
	st := &b.ev
	now := b.cfg.Now()
	switch d.Kind {
	case queue.EventStarted, queue.EventRetried:
		var j queue.Job
		if err := json.Unmarshal(d.Data, &j); err != nil || j.ID == "" {
			b.log.Error("event: undecodable job", "event", d.ID, "kind", d.Kind, "err", err)
			return
		}
		s := runningStatus(j)
		switch {
		case d.Kind == queue.EventRetried:
			s.Progress = j.Reason
			if s.Progress == "" {
				s.Progress = queue.ReasonRetried
			}
		case j.Attempt > 1:
			s.Progress = "second attempt: the runner stopped responding during the first"
		}
		jp := &jobProgress{job: j, status: s, updated: now}
		st.jobs[j.ID] = jp
		b.showProgress(ctx, jp, now)
	case queue.EventProgress:
		var p result.Progress
		if err := json.Unmarshal(d.Data, &p); err != nil {
			b.log.Error("event: undecodable progress", "event", d.ID, "job", d.Job, "err", err)
			return
		}
		jp := b.progressOf(ctx, d.Job, now)
		if jp == nil {
			return
		}
		jp.status.Progress = progressText(jp.job, p)
		jp.status.Total = p.Rows
		jp.done, jp.rowsSince = p.Done, 0
		jp.status.Done = min(max(p.Done, 0), max(p.Rows, 0))
		jp.shown, jp.updated = false, now
		if !now.Before(jp.lastEdit.Add(b.cfg.ProgressEvery)) {
			b.showProgress(ctx, jp, now)
		}
	case queue.EventRow:
		var r result.Row
		if err := json.Unmarshal(d.Data, &r); err != nil {
			b.log.Error("event: undecodable row", "event", d.ID, "job", d.Job, "err", err)
			return
		}
		jp := b.progressOf(ctx, d.Job, now)
		if jp == nil {
			return
		}
		// A row event follows the progress event of its row: one more row finished.
		jp.rowsSince++
		if done := min(jp.done+jp.rowsSince, jp.status.Total); done > jp.status.Done {
			jp.status.Done = done
			jp.shown = false
		}
		jp.updated = now
	default:
		b.log.Debug("event ignored", "event", d.ID, "kind", d.Kind, "job", d.Job)
	}
}

// progressOf returns the progress of a running job, reading the job from the queue when
// the event loop has not seen it start (a restart mid-run); nil when it has ended.
func (b *Bot) progressOf(ctx context.Context, id string, now time.Time) *jobProgress {
	st := &b.ev
	if _, ok := st.ended[id]; ok {
		return nil
	}
	if jp := st.jobs[id]; jp != nil {
		return jp
	}
	j, err := b.q.Get(ctx, id)
	if err != nil {
		b.log.Warn("event of an unknown job", "job", id, "err", err)
		return nil
	}
	if j.State.Terminal() {
		return nil
	}
	jp := &jobProgress{job: j, status: runningStatus(j), updated: now}
	st.jobs[j.ID] = jp
	return jp
}

// runningStatus is the status of a job that runs, before any progress.
func runningStatus(j queue.Job) report.Status {
	s := jobStatus(j, report.PhaseRunning)
	s.Reason = ""
	if s.Approver == "" {
		s.Approver = j.Requester // as approve shows a request its requester could approve
	}
	return s
}

// showProgress edits a running job's status comment to jp.status, unless the job ended
// meanwhile: no progress edit ever follows the final one.
func (b *Bot) showProgress(ctx context.Context, jp *jobProgress, now time.Time) {
	jp.lastEdit = now
	if _, ok := b.ev.ended[jp.job.ID]; ok {
		return
	}
	if j, err := b.q.Get(ctx, jp.job.ID); err == nil && j.State.Terminal() {
		return // its final event follows
	}
	if jp.job.StatusCommentID == 0 {
		jp.shown = true
		return
	}
	if err := b.gh.EditComment(ctx, jp.job.InstallationID, jp.job.Repo, jp.job.StatusCommentID, report.RenderStatus(jp.status)); err != nil {
		b.log.Warn("edit status comment", "job", jp.job.ID, "comment", jp.job.StatusCommentID, "err", err)
		return // shown stays false: tried again after ProgressEvery
	}
	jp.shown = true
}

// flushProgress shows the progress that waited for its interval, and forgets idle jobs.
func (b *Bot) flushProgress(ctx context.Context) {
	st := &b.ev
	now := b.cfg.Now()
	for id, jp := range st.jobs {
		if now.Sub(jp.updated) > forgetAfter {
			delete(st.jobs, id)
			continue
		}
		if !jp.shown && !now.Before(jp.lastEdit.Add(b.cfg.ProgressEvery)) {
			ectx, cancel := context.WithTimeout(ctx, b.cfg.EventTimeout)
			b.showProgress(ectx, jp, now)
			cancel()
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
func (b *Bot) nextEventWait() time.Duration {
	b.evMu.Lock()
	defer b.evMu.Unlock()
	return b.nextEventWaitLocked()
}

func (b *Bot) nextEventWaitLocked() time.Duration {
	now := b.cfg.Now()
	wait := maxEventWait
	for _, jp := range b.ev.jobs {
		if !jp.shown {
			wait = min(wait, jp.lastEdit.Add(b.cfg.ProgressEvery).Sub(now))
		}
	}
	for _, p := range b.ev.parked {
		wait = min(wait, p.next.Sub(now))
	}
	return max(wait, 0)
}

// progressText renders a progress event for the status comment: "baseline 4096c — 3 of
// 24", with the entry first when the job measures several.
func progressText(j queue.Job, p result.Progress) string {
	s := ""
	if p.Entry != "" && len(j.Frameworks) != 1 {
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

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
