package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/arenabot/arenabot/internal/clock"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/text"
)

// A job with many rows is split over the live hosts of its pool: its runner deals the
// rows into shares, one per host, and enqueues each as a job of its own (queue.Job.Parent),
// which an idle host of the pool claims like any job. A row (with its base, interleaved)
// runs wholly within one share, so every Δ compares runs from one host. The job's runner
// then takes back, one at a time, the shares no other host took, waits for the others, and
// finishes the job with their reports merged. A share's runner that is lost gives the share
// back to the line (the queue's retry rule, per share); a retried job finds its shares as
// they are and goes on from there.

// splitRows deals rows into at most n shares: whole entries when there are as many as
// shares, else whole (entry, test) runs, else single rows; each unit goes to the share
// with the fewest rows so far, so the shares take about the same time. Fewer than two
// units, or n below 2, give nil: the job runs alone.
func splitRows(rows []profile.Row, n int) [][]profile.Row {
	if n < 2 {
		return nil
	}
	units := unitsBy(rows, func(r profile.Row) string { return r.Entry })
	if len(units) < n {
		units = unitsBy(rows, func(r profile.Row) string { return r.Entry + "\x00" + r.Test })
	}
	if len(units) < n {
		units = unitsBy(rows, func(r profile.Row) string { return fmt.Sprint(r) })
	}
	if len(units) < 2 {
		return nil
	}
	shares := make([][]profile.Row, min(n, len(units)))
	for _, u := range units {
		k := 0
		for i := range shares {
			if len(shares[i]) < len(shares[k]) {
				k = i
			}
		}
		shares[k] = append(shares[k], u...)
	}
	return shares
}

// unitsBy groups rows by key, in the order of each key's first row.
func unitsBy(rows []profile.Row, key func(profile.Row) string) [][]profile.Row {
	at := map[string]int{}
	var units [][]profile.Row
	for _, r := range rows {
		k := key(r)
		i, ok := at[k]
		if !ok {
			i = len(units)
			at[k] = i
			units = append(units, nil)
		}
		units[i] = append(units[i], r)
	}
	return units
}

// shareQueue is the queue as the shares of split jobs use it: the pool's hosts and line,
// the shares' records and their events.
type shareQueue struct {
	q    WorkQueue
	pool string
	log  *slog.Logger
}

// shares is the worker's shareQueue.
func (w *Worker) shares() shareQueue { return shareQueue{q: w.q, pool: w.cfg.Pool, log: w.log} }

// poolHosts counts the live hosts of the worker's pool, this one included: the hosts a job
// may be split over. An error counts one, so the job runs alone.
func (sq shareQueue) poolHosts(ctx context.Context) int {
	hosts, err := sq.q.Hosts(ctx)
	if err != nil {
		sq.log.Warn("live hosts unknown; the job runs on this host alone", "err", err)
		return 1
	}
	n := 0
	for _, h := range hosts {
		if h.Pool == sq.pool {
			n++
		}
	}
	return max(n, 1)
}

// shareJobs returns the shares of parent: those enqueued by an earlier attempt of it, as
// they are, or else new ones dealt from its rows over the pool's live hosts, enqueued now.
// nil means the job runs alone.
func (w *Worker) shareJobs(ctx context.Context, parent queue.Job) ([]string, error) {
	sq := w.shares()
	ids, err := sq.shareIDs(ctx, parent.ID)
	if err != nil || len(ids) > 0 {
		return ids, err
	}
	n := sq.poolHosts(ctx)
	if parent.Kind == queue.BenchmarkSweep {
		// A sweep's shares are small, so that each stays well inside a job's time limit and
		// the hosts that finish first take the next.
		n = max(n, (len(parent.Rows)+SweepShareRows-1)/SweepShareRows)
	}
	split := splitRows(parent.Rows, n)
	if split == nil && parent.Kind == queue.BenchmarkSweep && len(parent.Rows) > 0 {
		split = [][]profile.Row{parent.Rows} // one share, so that it can yield between rows
	}
	for n, rows := range split {
		s := shareOf(parent, n+1, len(split), rows)
		if _, _, err := w.q.Enqueue(ctx, s); err != nil && !errors.Is(err, queue.ErrExists) {
			return nil, fmt.Errorf("enqueue share %s: %w", s.ID, err)
		}
		ids = append(ids, s.ID)
	}
	return ids, nil
}

// SweepShareRows is about the most rows a share of a sweep holds: a sweep is split into at
// least its rows over this many shares, whatever the number of hosts.
const SweepShareRows = 24

// shareIDs lists the shares of job parent that exist: ShareID 1, 2, … until one is not
// found. A share that yielded its host added the next.
func (sq shareQueue) shareIDs(ctx context.Context, parent string) ([]string, error) {
	return sq.shareIDsFrom(ctx, parent, 1)
}

// shareIDsFrom lists the shares of job parent from ShareID n on, until one is not found.
func (sq shareQueue) shareIDsFrom(ctx context.Context, parent string, from int) ([]string, error) {
	var ids []string
	for n := from; ; n++ {
		id := queue.ShareID(parent, n)
		if _, err := sq.q.Get(ctx, id); errors.Is(err, queue.ErrNotFound) {
			return ids, nil
		} else if err != nil {
			return nil, fmt.Errorf("read share %s: %w", id, err)
		}
		ids = append(ids, id)
	}
}

// shareOf is share n of m of parent, measuring rows.
func shareOf(parent queue.Job, n, m int, rows []profile.Row) queue.Job {
	s := queue.Job{
		ID: queue.ShareID(parent.ID, n), Parent: parent.ID,
		Repo: parent.Repo, PR: parent.PR, Requester: parent.Requester, Approver: parent.Approver,
		Command: fmt.Sprintf("share %d of %d of %s", n, m, parent.Command),
		Kind:    parent.Kind, Tests: parent.Tests, Save: parent.Save, Compare: parent.Compare,
		Baseline: parent.Baseline, CPUProfile: parent.CPUProfile, SHA: parent.SHA, Pool: parent.Pool,
		InstallationID: parent.InstallationID, Rows: rows, Created: parent.Created, Approved: parent.Approved,
		Tuning: parent.Tuning,
	}
	for _, r := range rows {
		if !slices.Contains(s.Frameworks, r.Entry) {
			s.Frameworks = append(s.Frameworks, r.Entry)
		}
	}
	if len(parent.Rows) > 0 {
		s.Estimate = parent.Estimate * time.Duration(len(rows)) / time.Duration(len(parent.Rows))
	}
	return s
}

// runShared runs a job split into shares: it takes back, and runs here, the shares no
// other host took, waits for the rest, and finishes the job with their reports merged. A
// cancel of the job cancels its shares; a lost lease stops the wait (the job is retried,
// and its next runner finds the shares as they are).
func (w *Worker) runShared(ctx context.Context, l queue.Lease, ids []string) (queue.Job, error) {
	start := time.Now()
	log, sq := w.log.With("job", l.Job.ID), w.shares()
	log.Info("job split into shares over the pool's hosts", "shares", len(ids), "rows", len(l.Job.Rows))
	jobCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopBeat := make(chan struct{})
	beatDone := make(chan struct{})
	go func() {
		defer close(beatDone)
		w.keepLease(ctx, l, cancel, stopBeat, log)
	}()
	stopBeating := sync.OnceFunc(func() { close(stopBeat); <-beatDone })
	defer stopBeating()
	// A cancel of the job cancels its shares at once, even while this runner measures one
	// of them (it sees the cancel of its share on the share's next heartbeat).
	go func() {
		<-jobCtx.Done()
		if errors.Is(context.Cause(jobCtx), errCancelRequested) {
			log.Info("cancel requested; cancelling the job's shares")
			all, err := sq.shareIDs(ctx, l.Job.ID) // read again: the loop adds to its own list
			if err != nil {
				log.Warn("read shares", "err", err)
			}
			sq.cancelShares(ctx, all, log)
		}
	}()
	sq.publishFor(ctx, l.Job.ID, queue.EventProgress, result.Progress{Rows: len(l.Job.Rows),
		Note: fmt.Sprintf("split into %d %s of at most %d rows, which the hosts of pool %s take as they come free",
			len(ids), map[bool]string{true: "share", false: "shares"}[len(ids) == 1], maxShare(l.Job.Rows, len(ids)), w.cfg.Pool)})

	for {
		cause := context.Cause(jobCtx)
		cancelled := errors.Is(cause, errCancelRequested)
		if cause != nil && !cancelled {
			log.Warn("job stopped while its shares run, not finished", "err", cause)
			return queue.Job{}, cause
		}
		if more, err := sq.shareIDsFrom(ctx, l.Job.ID, len(ids)+1); err == nil {
			ids = append(ids, more...) // a share that yielded its host queued its remaining rows
		}
		if !cancelled && l.Job.Kind == queue.BenchmarkSweep && sq.othersWait(ctx) {
			// A sweep yields this host to the jobs waiting: one of them runs here now.
			if ol, ok := sq.claimOther(ctx); ok {
				log.Info("the sweep yields this host to a job waiting", "other", ol.Job.ID)
				if _, err := w.RunJob(ctx, ol); err != nil && ctx.Err() == nil {
					log.Error("job not finished", "other", ol.Job.ID, "err", err)
				}
				continue
			}
		}
		if !cancelled {
			sl, err := w.q.ClaimShare(ctx, w.cfg.Pool, l.Job.ID)
			switch {
			case err == nil:
				if _, err := w.RunJob(ctx, sl); err != nil && ctx.Err() == nil {
					log.Error("share not finished", "share", sl.Job.ID, "err", err)
				}
				continue
			case ctx.Err() != nil:
				return queue.Job{}, ctx.Err()
			case !errors.Is(err, queue.ErrNoShare):
				log.Warn("claim a share", "err", err)
			}
		}
		shares, open, err := sq.readShares(ctx, ids)
		if err == nil && open == 0 {
			// A share that yielded queued its rest before it ended: read after its end,
			// the rest is found here.
			if more, merr := sq.shareIDsFrom(ctx, l.Job.ID, len(ids)+1); merr != nil || len(more) > 0 {
				ids = append(ids, more...)
				continue
			}
		}
		if err != nil {
			log.Warn("read shares", "err", err)
		} else if open == 0 {
			rep, state, reason := mergeShares(l.Job, shares, w.cfg.LogTail)
			if cancelled {
				state, reason = queue.Cancelled, ""
			}
			log.Info("job finished", "state", state, "reason", reason, "rows", len(rep.Rows), "failed", rep.Failed(), "duration", time.Since(start).Round(time.Second))
			body, err := json.Marshal(rep)
			if err != nil {
				return queue.Job{}, fmt.Errorf("job %s: report: %w", l.Job.ID, err)
			}
			done, err := w.finish(ctx, l, queue.Outcome{State: state, Reason: reason, Result: body})
			stopBeating()
			return done, err
		}
		if clock.Sleep(ctx, w.cfg.Heartbeat) != nil {
			return queue.Job{}, ctx.Err()
		}
	}
}

// maxShare is the rows of the largest of n shares of rows.
func maxShare(rows []profile.Row, n int) int {
	most := 0
	for _, s := range splitRows(rows, n) {
		most = max(most, len(s))
	}
	return max(most, len(rows)/max(n, 1))
}

// othersWait reports whether a job other than a share waits in the worker's pool that may
// start now (its pull request has no job running): a sweep yields its host to it between
// rows.
func (sq shareQueue) othersWait(ctx context.Context) bool {
	lines, err := sq.q.Status(ctx)
	if err != nil {
		return false
	}
	for _, ln := range lines {
		if ln.Pool != sq.pool {
			continue
		}
		busy := map[string]bool{}
		for _, j := range ln.Running() {
			if j.Parent == "" && j.PR != 0 {
				busy[strings.ToLower(j.Repo)+"#"+fmt.Sprint(j.PR)] = true
			}
		}
		for _, p := range ln.Places {
			if p.Job.State == queue.Queued && p.Job.Parent == "" && (p.Job.PR == 0 || !busy[strings.ToLower(p.Job.Repo)+"#"+fmt.Sprint(p.Job.PR)]) {
				return true
			}
		}
	}
	return false
}

// claimOther claims the next job of the pool, waiting a little for it (another host may
// have taken the job that waited).
func (sq shareQueue) claimOther(ctx context.Context) (queue.Lease, bool) {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	l, err := sq.q.Claim(cctx, sq.pool)
	return l, err == nil
}

// yieldRest queues the rows of share s that it did not report (done) as a new share of its
// job, which waits behind the jobs the share yielded its host to; it returns the new
// share's ID.
func (sq shareQueue) yieldRest(ctx context.Context, s queue.Job, done []result.Row) (string, error) {
	measured := map[profile.Row]bool{}
	for _, r := range done {
		measured[profile.Row{Entry: r.Entry, Test: r.Profile, Conns: r.Conns}] = true
	}
	var rest []profile.Row
	for _, r := range s.Rows {
		if !measured[r] {
			rest = append(rest, r)
		}
	}
	if len(rest) == 0 {
		return "", nil
	}
	for n := 1; n < 10000; n++ {
		next := shareOf(queue.Job{ID: s.Parent, Repo: s.Repo, PR: s.PR, Requester: s.Requester, Approver: s.Approver,
			Command: s.Command, Kind: s.Kind, Tests: s.Tests, Save: s.Save, Compare: s.Compare, Baseline: s.Baseline,
			CPUProfile: s.CPUProfile, SHA: s.SHA, Pool: s.Pool, InstallationID: s.InstallationID,
			Rows: s.Rows, Estimate: s.Estimate, Created: s.Created, Approved: s.Approved}, n, 0, rest)
		next.Command = "rest of " + s.Command
		if _, err := sq.q.Get(ctx, next.ID); err == nil {
			continue
		} else if !errors.Is(err, queue.ErrNotFound) {
			return "", err
		}
		_, _, err := sq.q.Enqueue(ctx, next)
		if errors.Is(err, queue.ErrExists) {
			continue
		}
		return next.ID, err
	}
	return "", errors.New("no free share ID")
}

// readShares reads the shares and counts those that have not ended.
func (sq shareQueue) readShares(ctx context.Context, ids []string) ([]queue.Job, int, error) {
	var out []queue.Job
	open := 0
	for _, id := range ids {
		s, err := sq.q.Get(ctx, id)
		if err != nil {
			return nil, 0, err
		}
		if !s.State.Terminal() {
			open++
		}
		out = append(out, s)
	}
	return out, open, nil
}

// cancelShares cancels the shares that have not ended: a waiting one ends at once, a
// running one's runner sees the cancel on its next heartbeat and finishes it.
func (sq shareQueue) cancelShares(ctx context.Context, ids []string, log *slog.Logger) {
	for _, id := range ids {
		if _, err := sq.q.Cancel(ctx, id, ""); err != nil && !errors.Is(err, queue.ErrFinished) {
			log.Warn("cancel share", "share", id, "err", err)
		}
	}
}

// publishFor sends an event for a job (best effort, as jobRun.publish).
func (sq shareQueue) publishFor(ctx context.Context, job, kind string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := sq.q.Publish(ctx, queue.Event{Job: job, Kind: kind, Data: data}); err != nil {
		sq.log.Warn("publish event", "job", job, "kind", kind, "err", err)
	}
}

// parentEnded says why a share is not run: the job it is a share of has ended (a share
// left in line by a job that was cancelled or failed). "" when the job still runs.
func (sq shareQueue) parentEnded(ctx context.Context, s queue.Job) string {
	p, err := sq.q.Get(ctx, s.Parent)
	switch {
	case errors.Is(err, queue.ErrNotFound):
		return "the job it is a share of is gone"
	case err != nil || !p.State.Terminal():
		return ""
	}
	return fmt.Sprintf("the job it is a share of ended (%s) before the share started", p.State)
}

// mergeShares is the report of a job from its shares' reports: the rows of every share in
// the job's order, each naming its host, the hosts listed, the logs one after the other. A
// share that ended without a report (lost twice, cancelled before it started) gives its
// rows as failed, with the share's reason.
func mergeShares(job queue.Job, shares []queue.Job, logTail int) (result.Report, queue.State, string) {
	var rep result.Report
	var hosts, errs []string
	got := false
	for _, s := range shares {
		var r result.Report
		if len(s.Result) == 0 || json.Unmarshal(s.Result, &r) != nil {
			why := text.Or(s.Reason, "the share "+string(s.State)+" without a report")
			for _, row := range s.Rows {
				rep.Rows = append(rep.Rows, result.Row{Entry: row.Entry, Profile: row.Test, Conns: row.Conns,
					Err: "not measured: " + why, Short: "not measured"})
			}
			errs = append(errs, fmt.Sprintf("%s: %s", s.ID, why))
			continue
		}
		if !got {
			got = true
			rows := rep.Rows
			rep = r
			rep.Rows, rep.Log, rep.Frameworks, rep.Tests, rep.Baselines = rows, nil, nil, nil, nil
			rep.ScoreBests = nil
		}
		if r.Host != "" && !slices.Contains(hosts, r.Host) {
			hosts = append(hosts, r.Host)
		}
		for _, row := range r.Rows {
			row.Host = text.Or(row.Host, r.Host)
			rep.Rows = append(rep.Rows, row)
		}
		for _, b := range r.Baselines {
			if !slices.ContainsFunc(rep.Baselines, func(o result.Baseline) bool { return o.Entry == b.Entry }) {
				rep.Baselines = append(rep.Baselines, b)
			}
		}
		for k, v := range r.ScoreBests {
			if rep.ScoreBests == nil {
				rep.ScoreBests = map[string]result.Bests{}
			}
			rep.ScoreBests[k] = v
		}
		if rep.FrameworksFile == nil {
			rep.FrameworksFile = r.FrameworksFile
		}
		if rep.Current == nil {
			rep.Current = r.Current
		}
		if r.Error != "" {
			errs = append(errs, fmt.Sprintf("%s on %s: %s", s.ID, text.Or(r.Host, "a host"), r.Error))
		}
		rep.Log = append(rep.Log, fmt.Sprintf("── %s on %s ──", s.ID, text.Or(r.Host, "a host")))
		rep.Log = append(rep.Log, r.Log...)
	}
	if len(rep.Log) > logTail && logTail > 0 {
		rep.Log = rep.Log[len(rep.Log)-logTail:]
	}
	rep.Commit = text.Or(rep.Commit, job.SHA)
	rep.Host = strings.Join(hosts, ", ")
	rank := map[profile.Row]int{}
	for i, r := range job.Rows {
		rank[r] = i + 1
	}
	entry := map[string]int{}
	for i, r := range job.Rows {
		if _, ok := entry[r.Entry]; !ok {
			entry[r.Entry] = i + 1
		}
	}
	slices.SortStableFunc(rep.Rows, func(a, b result.Row) int {
		if d := entry[a.Entry] - entry[b.Entry]; d != 0 {
			return d
		}
		return rank[profile.Row{Entry: a.Entry, Test: a.Profile, Conns: a.Conns}] - rank[profile.Row{Entry: b.Entry, Test: b.Profile, Conns: b.Conns}]
	})
	for _, r := range rep.Rows {
		if !slices.Contains(rep.Frameworks, r.Entry) {
			rep.Frameworks = append(rep.Frameworks, r.Entry)
		}
	}
	for _, p := range profile.Names() {
		if slices.ContainsFunc(rep.Rows, func(r result.Row) bool { return r.Profile == p }) {
			rep.Tests = append(rep.Tests, p)
		}
	}
	measured := len(rep.Rows) - rep.Failed()
	switch {
	case measured == 0 && len(errs) > 0:
		rep.Error = strings.Join(errs, "; ")
		return rep, queue.Failed, rep.Error
	case rep.Failed() > 0:
		return rep, queue.Done, fmt.Sprintf("%d of %d rows failed", rep.Failed(), len(rep.Rows))
	}
	return rep, queue.Done, ""
}
