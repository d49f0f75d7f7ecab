package bot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/arenabot/arenabot/queue"
)

// Approvals decides the requests awaiting approval from the reactions on their status
// comments (GitHub sends no webhook for reactions), and ends those nobody approved in
// time. Every decision is one queue transition; the Reporter tells it.
type Approvals struct {
	*core
}

// NewApprovals returns the approval poller alone.
func NewApprovals(cfg Config, gh GitHub, q queue.Queue) *Approvals {
	return New(cfg, gh, q, nil).Approvals
}

// Run calls PollOnce every Config.ApprovalPoll until ctx is done.
func (ap *Approvals) Run(ctx context.Context) {
	t := time.NewTicker(ap.cfg.ApprovalPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := ap.PollOnce(ctx); err != nil && ctx.Err() == nil {
				ap.log.Error("approval poll", "err", err)
			}
		}
	}
}

// PollOnce walks the requests awaiting approval once: those past their expiry end as
// expired; for the others the reactions of the status comment are read with the ETag of
// the last read (an unchanged list costs nothing), and the first 👍 or 👎 of a human with
// write, maintain or admin permission approves or declines the request. The requester's
// own 👍 counts only with such a permission. A reaction whose author's permission could
// not be read is looked at again at the next poll: the ETag is then not kept.
func (ap *Approvals) PollOnce(ctx context.Context) error {
	var errs []error
	if _, err := ap.q.Expire(ctx); err != nil {
		errs = append(errs, fmt.Errorf("expire: %w", err))
	}
	js, err := ap.q.List(ctx, queue.Filter{States: []queue.State{queue.AwaitingApproval}})
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("list requests: %w", err))...)
	}
	for _, j := range js {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := ap.poll(ctx, j); err != nil {
			errs = append(errs, fmt.Errorf("request %s: %w", j.ID, err))
		}
	}
	return errors.Join(errs...)
}

func (ap *Approvals) poll(ctx context.Context, j queue.Job) error {
	if j.StatusCommentID == 0 {
		return nil // the reporter has not posted it yet
	}
	rs, etag, notModified, err := ap.gh.Reactions(ctx, j.InstallationID, j.Repo, j.StatusCommentID, j.ETag)
	if err != nil {
		return fmt.Errorf("reactions: %w", err)
	}
	if notModified {
		return nil
	}
	unsure := false
	for _, r := range rs {
		if r.Content != "+1" && r.Content != "-1" || r.User == "" || ap.isBot(r.User) {
			continue
		}
		perm, err := ap.permission(ctx, j.InstallationID, j.Repo, r.User)
		if err != nil {
			// Undecided: a later reaction must not decide before this one is known.
			unsure = true
			break
		}
		if !canApprove(perm) {
			continue
		}
		if r.Content == "-1" {
			_, err = ap.q.Reject(ctx, j.ID, r.User)
		} else {
			_, _, err = ap.q.Approve(ctx, j.ID, r.User)
		}
		if err != nil && !ignorable(err) {
			return fmt.Errorf("decide: %w", err)
		}
		return nil
	}
	if unsure || etag == j.ETag {
		return nil
	}
	// No decision: keep the ETag so the next poll of an unchanged list is free.
	if _, err := ap.q.Amend(ctx, j.ID, queue.Amendment{ETag: &etag}); err != nil && !errors.Is(err, queue.ErrNotFound) {
		return fmt.Errorf("amend: %w", err)
	}
	return nil
}
