package bot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/arenabot/arenabot/bot/command"
	"github.com/arenabot/arenabot/bot/plan"
	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
)

// payload is what the bot keeps on a request's queue record (queue.Job.Payload) for its
// status comment: the command as parsed, the plan as resolved at the ack, and the notes.
type payload struct {
	Command  command.Command `json:"command"`
	Plan     plan.Plan       `json:"plan"`
	ForkNote string          `json:"fork_note,omitempty"`
	// RouteNote names the tests the ack refused because no live runner host can run them.
	RouteNote string `json:"route_note,omitempty"`
	// Gate is what the request's check is judged on, from the repository's settings file
	// in force at the ack; nil is profile.DefaultGate.
	Gate profile.Gate `json:"gate,omitempty"`
	// Settings says what the settings file in force sets (settings.File.Short), after the
	// file's name; SettingsWarning that the file on the base branch is not valid and what
	// applies instead.
	Settings        string `json:"settings,omitempty"`
	SettingsWarning string `json:"settings_warning,omitempty"`
}

// payloadOf decodes a record's payload; a record without one (an operator's job) gives
// the zero payload.
func payloadOf(j queue.Job) payload {
	var p payload
	if len(j.Payload) > 0 {
		_ = json.Unmarshal(j.Payload, &p)
	}
	return p
}

// phaseOf is the status comment's phase of a record's state. The two share one
// vocabulary (TestOneVocabulary): a phase is the state's own word; a request being
// received shows as awaiting approval.
func phaseOf(s queue.State) report.Phase {
	if s == queue.Received {
		return report.PhaseAwaitingApproval
	}
	return report.Phase(s)
}

// baseStatus is what every rendering of j's status comment shows, whatever its phase.
func baseStatus(j queue.Job) report.Status {
	p := payloadOf(j)
	s := report.Status{
		RequestID: j.ID, Phase: phaseOf(j.State), Command: j.Command, Requester: j.Requester,
		Approver: j.Approver, SHA: j.SHA, HeadMoved: j.HeadMoved, Estimate: j.Estimate,
		ForkNote: p.ForkNote, RouteNote: p.RouteNote, Frameworks: j.Frameworks, Tests: j.Tests,
		Settings: p.Settings, SettingsWarning: p.SettingsWarning, Gate: p.Gate,
	}
	if len(p.Plan.Targets) > 0 {
		s.Frameworks, s.Tests = nil, nil
		seen := map[string]bool{}
		for _, t := range p.Plan.Targets {
			s.Frameworks = append(s.Frameworks, t.Entry)
			for _, tt := range t.Tests {
				if !seen[tt] {
					seen[tt] = true
					s.Tests = append(s.Tests, tt)
				}
			}
			for _, r := range t.Rows {
				r.Entry = t.Entry // a plan recorded before its rows named their entry
				s.Rows = append(s.Rows, r)
			}
		}
	}
	if len(j.Rows) > 0 { // the rows the job carries, which the runner measures
		s.Rows = append(s.Rows[:0], j.Rows...)
	}
	switch j.State {
	case queue.AwaitingApproval:
		s.Expires = j.Expires
	case queue.Expired:
		s.Expires = j.Expires
	case queue.Rejected:
		s.Approver = j.RejectedBy
		s.Reason = "declined by @" + j.RejectedBy
	case queue.Cancelled:
		s.CancelledBy = j.CancelledBy
	case queue.Failed:
		s.Reason = j.Reason
	}
	if s.Approver == "" && (j.State == queue.Queued || j.State == queue.Running || j.State == queue.Done || j.State == queue.Failed) {
		s.Approver = j.Requester
	}
	return s
}

// openStatus renders the status comment of a record that has not ended: its place in
// line, its progress, and a note when its pool has no live runner.
func (rp *Reporter) openStatus(ctx context.Context, j queue.Job) report.Status {
	s := baseStatus(j)
	switch j.State {
	case queue.Queued:
		if place, err := rp.q.Position(ctx, j.ID); err == nil {
			// Rounded up to five minutes, so that the sweep does not edit the comment
			// every time the wait shrinks a little.
			s.Position, s.ETA = place.Position, (place.ETA + etaStep - 1).Truncate(etaStep)
			s.Ahead = aheadOf(place.Ahead, j)
		}
		s.RunnerNote = rp.runnerNote(ctx, j.Pool)
		if j.Attempt > 1 && j.Reason != "" { // the queue's own words: back in line after a lost runner
			s.RunnerNote = strings.TrimSpace(j.Reason + ". " + s.RunnerNote)
		}
	case queue.Running:
		if jp := rp.ev.jobs[j.ID]; jp != nil {
			s.Progress, s.Done, s.Total, s.Hosts = jp.progress, jp.done, jp.total, len(jp.hosts)
		}
		if j.Attempt > 1 && s.Progress == "" {
			s.Progress = "second attempt: the runner stopped responding during the first"
		}
		s.RunnerNote = rp.runnerNote(ctx, j.Pool)
	}
	return s
}

// aheadOf is what j's status comment says of the job ahead of it in line; nil for none.
func aheadOf(a *queue.Job, j queue.Job) *report.Ahead {
	if a == nil {
		return nil
	}
	return &report.Ahead{
		Repo: a.Repo, PR: a.PR, Running: a.State == queue.Running,
		ThisPR: a.PR != 0 && a.PR == j.PR && strings.EqualFold(a.Repo, j.Repo),
	}
}

// etaStep is the granularity of the expected wait a status comment shows.
const etaStep = 5 * time.Minute

// runnerNote says so when no runner of pool has been seen for Config.RunnerStale.
func (rp *Reporter) runnerNote(ctx context.Context, pool string) string {
	rs, err := rp.q.Runners(ctx)
	if err != nil {
		return ""
	}
	now := rp.cfg.Now()
	for _, r := range rs {
		if r.Pool == pool && !r.Seen.IsZero() {
			if now.Sub(r.Seen) <= rp.cfg.RunnerStale {
				return ""
			}
			return fmt.Sprintf("No runner of pool %s has been seen since %s; the job runs when one is back.",
				codeSpan(pool), r.Seen.UTC().Format("2006-01-02 15:04 UTC"))
		}
	}
	return fmt.Sprintf("No runner of pool %s has been seen yet; the job runs when one starts.", codeSpan(pool))
}

// digest identifies a rendered status comment, kept on the record as Shown.
func digest(body string) string {
	h := sha256.Sum256([]byte(body))
	return hex.EncodeToString(h[:12])
}

// show makes the status comment of an open record show its current rendering: it posts
// the comment when the record has none (found again by its marker after a lost answer),
// edits it when the rendering differs from the one last written, and records what it
// wrote. A record that has ended is left to its final reply.
func (rp *Reporter) show(ctx context.Context, id string) error {
	j, err := rp.q.Get(ctx, id)
	if errors.Is(err, queue.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get %s: %w", id, err)
	}
	if j.State.Terminal() || j.Parent != "" { // a share has no comment: its job's shows it
		return nil
	}
	s := rp.openStatus(ctx, j)
	if err := rp.writeStatus(ctx, j, report.RenderStatus(s)); err != nil {
		return err
	}
	return rp.writeCheck(ctx, j, report.CheckOf(s, nil, rp.recordURL(j)))
}

// recordURL links the request's status comment, "" when it has none.
func (rp *core) recordURL(j queue.Job) string {
	if j.StatusCommentID == 0 {
		return ""
	}
	return rp.commentURL(j.Repo, j.PR, j.StatusCommentID)
}

// write puts body in j's status comment unless it shows it already, creating the comment
// when j has none, and records the digest.
func (rp *core) writeStatus(ctx context.Context, j queue.Job, body string) error {
	d := digest(body)
	if j.StatusCommentID != 0 && d == j.Shown {
		return nil
	}
	a := queue.Amendment{Shown: &d}
	if j.StatusCommentID == 0 {
		id, old, found, err := rp.gh.FindComment(ctx, j.InstallationID, j.Repo, j.PR, report.Marker(j.ID))
		if err != nil {
			return fmt.Errorf("find status comment: %w", err)
		}
		switch {
		case !found:
			if id, err = rp.gh.CreateComment(ctx, j.InstallationID, j.Repo, j.PR, body); err != nil {
				return fmt.Errorf("post status comment: %w", err)
			}
		case strings.TrimSpace(old) != strings.TrimSpace(body):
			if err := rp.gh.EditComment(ctx, j.InstallationID, j.Repo, id, body); err != nil {
				return fmt.Errorf("edit status comment: %w", err)
			}
		}
		a.StatusCommentID = id
	} else if err := rp.gh.EditComment(ctx, j.InstallationID, j.Repo, j.StatusCommentID, body); err != nil {
		return fmt.Errorf("edit status comment: %w", err)
	}
	if _, err := rp.q.Amend(ctx, j.ID, a); err != nil {
		return fmt.Errorf("amend %s: %w", j.ID, err)
	}
	return nil
}
