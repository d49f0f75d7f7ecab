package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
// own 👍 counts only with such a permission. A 👍 approves only while the PR's head is the
// acked commit (read from GitHub before approving): once it moved, the status comment says
// so and only /benchmark-approve <sha> approves. A reaction whose author's permission, or
// a 👍 whose PR head, could not be read is looked at again at the next poll: the ETag is
// then not kept.
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
	head := headCheck{ap: ap, j: j}
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
		if r.Content == "+1" {
			// A 👍 approves what the reviewer saw: the PR's head must still be the acked
			// commit. Otherwise only /benchmark-approve <sha> approves; a 👎 still declines.
			moved, err := head.moved(ctx)
			if err != nil {
				return err // undecided: looked at again at the next poll (the ETag is not kept)
			}
			if moved {
				continue
			}
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

// headCheck reads a request's PR once, when a 👍 is about to approve it, and says whether
// the PR's head moved from the acked commit. GitHub sends no event the poller could rely
// on (the synchronize delivery may be lost), so the PR itself is read; it is read only when
// a collaborator's 👍 is found on a changed reaction list (the list's ETag is kept after a
// 👍 refused for a moved head), so an unchanged request costs no read.
type headCheck struct {
	ap   *Approvals
	j    queue.Job
	done bool
	head string
}

// moved reports whether the PR's head is no longer the acked commit, recording the new
// head on the request (the status comment then says a 👍 no longer approves it).
func (h *headCheck) moved(ctx context.Context) (bool, error) {
	if !h.done {
		pr, err := h.ap.gh.PullRequest(ctx, h.j.InstallationID, h.j.Repo, h.j.PR)
		if err != nil {
			return false, fmt.Errorf("read the pull request's head before approving: %w", err)
		}
		h.done, h.head = true, pr.HeadSHA
		if headMoved(h.j, h.head) {
			h.ap.log.Info("👍 not counted: the head moved after the ack", "request", h.j.ID, "acked", h.j.SHA, "head", h.head)
		}
		if err := h.ap.noteHead(ctx, h.j, h.head); err != nil {
			return headMoved(h.j, h.head), err
		}
	}
	return headMoved(h.j, h.head), nil
}

// headMoved reports whether head, the PR's head now, is not the commit j was acked at.
// An unknown head (GitHub did not say) or an unknown acked commit is not a move.
func headMoved(j queue.Job, head string) bool {
	return head != "" && j.SHA != "" && !strings.EqualFold(head, j.SHA)
}

// noteHead records on j the PR's head now: as the head it moved to when it is not the
// acked commit, and no move when it is (a force-push back to the acked commit), unless j
// says so already. An unknown head changes nothing.
func (c *core) noteHead(ctx context.Context, j queue.Job, head string) error {
	moved := ""
	if headMoved(j, head) {
		moved = head
	}
	if head == "" || j.SHA == "" || moved == j.HeadMoved {
		return nil
	}
	if _, err := c.q.Amend(ctx, j.ID, queue.Amendment{HeadMoved: &moved}); err != nil && !errors.Is(err, queue.ErrNotFound) {
		return fmt.Errorf("amend %s: %w", j.ID, err)
	}
	return nil
}
