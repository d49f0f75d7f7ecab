package bot

import (
	"context"
	"errors"
	"fmt"

	"github.com/arenabot/arenabot/bot/report"
)

// PollOnce walks the pending requests once (GitHub sends no webhook for reactions):
// an expired request ends as expired; otherwise the reactions of its status comment
// are read with the ETag of the last read (an unchanged list costs nothing), and the
// first 👍 or 👎 of a human with write, maintain or admin permission approves or
// rejects it. The requester's own 👍 counts only with such a permission. Approval
// measures the SHA shown in the ack.
func (b *Bot) PollOnce(ctx context.Context) error {
	reqs, err := b.pending.List(ctx)
	if err != nil {
		return fmt.Errorf("pending: %w", err)
	}
	var errs []error
	for _, req := range reqs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.poll(ctx, req); err != nil {
			errs = append(errs, fmt.Errorf("request %s: %w", req.ID, err))
		}
	}
	return errors.Join(errs...)
}

func (b *Bot) poll(ctx context.Context, req Request) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	// Read it again under the lock: a comment may have approved or replaced it.
	cur, ok, err := b.pending.Get(ctx, req.Repo, req.PR)
	if err != nil || !ok || cur.ID != req.ID {
		return err
	}
	req = cur
	if !b.cfg.Now().Before(req.Expires) {
		if err := b.take(ctx, req); err != nil {
			return err
		}
		s := b.status(req, report.PhaseExpired)
		s.Expires = req.Expires
		s.Reason = "nobody with write permission approved it in time"
		b.edit(ctx, req.Installation, req.Repo, req.StatusCommentID, s)
		return nil
	}
	rs, etag, notModified, err := b.gh.Reactions(ctx, req.Installation, req.Repo, req.StatusCommentID, req.ETag)
	if err != nil {
		return fmt.Errorf("reactions: %w", err)
	}
	if notModified {
		return nil
	}
	for _, r := range rs {
		if r.Content != "+1" && r.Content != "-1" {
			continue
		}
		if r.User == "" || b.isBot(r.User) {
			continue
		}
		if !canApprove(b.permission(ctx, req.Installation, req.Repo, r.User)) {
			continue
		}
		if err := b.take(ctx, req); err != nil {
			return err
		}
		if r.Content == "-1" {
			s := b.status(req, report.PhaseRejected)
			s.Approver = r.User
			s.Reason = "declined by @" + r.User
			b.edit(ctx, req.Installation, req.Repo, req.StatusCommentID, s)
			return nil
		}
		if err := b.approve(ctx, req, r.User); err != nil {
			b.putBack(ctx, req) // with the old ETag, so the 👍 is read again
			return err
		}
		return nil
	}
	// No decision: remember the ETag so the next poll of an unchanged list is free.
	req.ETag = etag
	if err := b.pending.Put(ctx, req); err != nil {
		return fmt.Errorf("pending: %w", err)
	}
	return nil
}
