// Package bot wires the webhook, the command parser, the planner, the GitHub
// client and the queue together: it turns benchmark commands in pull-request
// comments into approved queue jobs (the README's `arenabot serve` section: commands, ack
// and approval).
//
// The flow of one request: the webhook verifies and de-duplicates the delivery
// records it in the Inbox and answers 202; a worker pops it and hands the comment
// to HandleComment (then acks it), which reacts 👀,
// resolves the plan at the PR head, and creates one status comment (found again
// by its hidden marker on a retry). A requester with write, maintain or admin
// permission is approved at once; other requests wait in Pending until such a
// user reacts 👍 to the status comment (PollOnce) or comments /benchmark-approve.
// Approval enqueues a queue.Job measuring the SHA shown in the ack.
//
// RunEvents consumes the queue's event stream (the run and the reply of a request): it edits the status comment of a running job with its progress, at most every
// Config.ProgressEvery, and gives every job that ends exactly one final reply, after
// committing the result files for --save (or attaching them as a patch when the push is
// refused).
package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/arenabot/arenabot/bot/command"
	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/hook"
	"github.com/arenabot/arenabot/bot/plan"
	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/queue"
)

// Defaults of Config.
const (
	DefaultBotLogin     = "arenabot[bot]"
	DefaultApprovalTTL  = 72 * time.Hour
	DefaultApprovalPoll = 15 * time.Second
	DefaultWorkers      = 4
	DefaultInbox        = 64
	DefaultEventTimeout = 2 * time.Minute
	// DefaultProgressEvery is the least time between two progress edits of one status
	// comment.
	DefaultProgressEvery = 5 * time.Second
	// DefaultFinalRetry is the first wait before a final event whose reply could not be
	// posted is handled again; the wait doubles up to MaxFinalRetry.
	DefaultFinalRetry = 5 * time.Second
	// DefaultFinalRetryFor is how long such an event is retried before it is given up.
	DefaultFinalRetryFor = 24 * time.Hour
)

// Config configures a Bot. Zero values take the defaults above.
type Config struct {
	// BotLogin is the bot's own login, whose comments and reactions are ignored.
	BotLogin string
	// ApprovalTTL is how long a request waits for approval (ARENA_APPROVAL_TTL).
	ApprovalTTL time.Duration
	// ApprovalPoll is how often Run calls PollOnce (ARENA_APPROVAL_POLL).
	ApprovalPoll time.Duration
	// Pool is the runner pool of the jobs; "" means queue.DefaultPool.
	Pool string
	// WebhookSecret verifies deliveries (ARENA_WEBHOOK_SECRET); the webhook answers 500
	// to everything without it.
	WebhookSecret []byte
	// MaxBody limits a delivery's body; 0 means hook.MaxBody.
	MaxBody int64
	// Workers process webhook events concurrently; Inbox bounds the events accepted and
	// not yet processed by the default in-memory InboxStore (beyond it the webhook
	// answers 503 and GitHub may redeliver).
	Workers, Inbox int
	// InboxStore holds the accepted deliveries until a worker has handled them; nil means
	// NewMemoryInbox(Inbox), which a restart empties. A RedisInbox makes them durable.
	InboxStore Inbox
	// DeliveryTTL is how long delivery ids are remembered; 0 means the queue's default.
	DeliveryTTL time.Duration
	// EventTimeout bounds the processing of one event.
	EventTimeout time.Duration
	// Pending stores the requests waiting for approval; nil means NewMemoryPending(). A
	// RedisPending keeps them across restarts.
	Pending Pending
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// WebURL is the web root links point at; "" means https://github.com/ (set it for
	// GitHub Enterprise).
	WebURL string

	// ProgressEvery is the least time between two edits of a running job's status comment
	// by RunEvents (a few seconds: progress, not a live feed).
	ProgressEvery time.Duration
	// FinalRetry is the first wait before RunEvents handles again a final event whose
	// reply or status edit failed; each failure doubles it, up to MaxFinalRetry.
	FinalRetry time.Duration
	// FinalRetryFor is how long such an event is retried; after that it is acknowledged
	// and logged as an error, so no event holds a consumer lane forever.
	FinalRetryFor time.Duration
	// OnReply, when set, is called by RunEvents after each final reply, with how long it
	// took; tests and metrics hook in here. It must not block.
	OnReply func(ReplyTiming)
}

// Bot handles GitHub events. Its methods are safe for concurrent use.
type Bot struct {
	cfg     Config
	gh      GitHub
	q       queue.Queue
	log     *slog.Logger
	pending Pending

	// mu serialises the transitions of pending requests (approve, reject, cancel,
	// expire, head moved), so a 👍 and a /benchmark-approve never both enqueue.
	mu sync.Mutex

	inbox Inbox
	// inflight counts the deliveries this Bot pushed and has not handled yet (tests wait
	// on it); tracked holds their ids, so a delivery recovered from an earlier run, which
	// was never added, is not subtracted.
	inflight sync.WaitGroup
	trackMu  sync.Mutex
	tracked  map[string]int

	// evMu serialises the passes over the queue's event stream (HandleEvents) and guards ev.
	evMu sync.Mutex
	ev   eventState
}

// New returns a Bot. log nil discards.
func New(cfg Config, gh GitHub, q queue.Queue, log *slog.Logger) *Bot {
	if cfg.BotLogin == "" {
		cfg.BotLogin = DefaultBotLogin
	}
	if cfg.ApprovalTTL <= 0 {
		cfg.ApprovalTTL = DefaultApprovalTTL
	}
	if cfg.ApprovalPoll <= 0 {
		cfg.ApprovalPoll = DefaultApprovalPoll
	}
	if cfg.Pool == "" {
		cfg.Pool = queue.DefaultPool
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Inbox <= 0 {
		cfg.Inbox = DefaultInbox
	}
	if cfg.EventTimeout <= 0 {
		cfg.EventTimeout = DefaultEventTimeout
	}
	if cfg.Pending == nil {
		cfg.Pending = NewMemoryPending()
	}
	if cfg.InboxStore == nil {
		cfg.InboxStore = NewMemoryInbox(cfg.Inbox)
	}
	if cfg.WebURL == "" {
		cfg.WebURL = "https://github.com/"
	}
	if !strings.HasSuffix(cfg.WebURL, "/") {
		cfg.WebURL += "/"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = DefaultProgressEvery
	}
	if cfg.FinalRetry <= 0 {
		cfg.FinalRetry = DefaultFinalRetry
	}
	if cfg.FinalRetryFor <= 0 {
		cfg.FinalRetryFor = DefaultFinalRetryFor
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Bot{
		cfg: cfg, gh: gh, q: q, log: log, pending: cfg.Pending, inbox: cfg.InboxStore,
		tracked: map[string]int{},
		ev:      newEventState(),
	}
}

// Pending returns the store of requests waiting for approval.
func (b *Bot) Pending() Pending { return b.pending }

// Inbox returns the store of accepted webhook deliveries.
func (b *Bot) Inbox() Inbox { return b.inbox }

// canApprove reports whether a repository role may approve benchmark runs.
func canApprove(perm string) bool {
	switch perm {
	case "admin", "maintain", "write":
		return true
	}
	return false
}

func (b *Bot) isBot(login string) bool {
	return strings.EqualFold(login, b.cfg.BotLogin) || strings.HasSuffix(login, "[bot]")
}

// permission returns user's role; an error is logged and counts as "none".
func (b *Bot) permission(ctx context.Context, inst int64, repo, user string) string {
	p, err := b.gh.Permission(ctx, inst, repo, user)
	if err != nil {
		b.log.Warn("permission", "repo", repo, "user", user, "err", err)
		return "none"
	}
	return p
}

// HandleComment handles an issue_comment event. Edits, deletions, comments on plain
// issues and comments by bots are ignored without any call.
func (b *Bot) HandleComment(ctx context.Context, c hook.Comment) error {
	if c.Action != "created" || !c.IsPR || c.FromBot() || b.isBot(c.Author) {
		return nil
	}
	cmd, found, err := command.Parse(c.Body)
	if !found {
		return nil
	}
	if err != nil {
		problem, fix := err.Error(), "comment /benchmark-help for the grammar"
		if ue, ok := errors.AsType[*command.UsageError](err); ok {
			problem, fix = ue.Problem, ue.Fix
		}
		return b.replyOnce(ctx, c, problemText(cmd.Line, problem, fix))
	}
	switch cmd.Kind {
	case command.KindHelp:
		return b.replyOnce(ctx, c, command.Help())
	case command.KindApprove:
		return b.approveCommand(ctx, c)
	case command.KindCancel:
		return b.cancelCommand(ctx, c)
	default:
		return b.request(ctx, c, cmd)
	}
}

// replyMarker keys a reply to the comment it answers, so a retried event never
// posts it twice.
func replyMarker(commentID int64) string {
	return fmt.Sprintf("<!-- arenabot:reply comment=%d -->", commentID)
}

// replyOnce posts body as the one reply to comment c, unless it exists already.
func (b *Bot) replyOnce(ctx context.Context, c hook.Comment, body string) error {
	marker := replyMarker(c.CommentID)
	if _, _, found, err := b.gh.FindComment(ctx, c.Installation, c.Repo, c.Number, marker); err != nil {
		return fmt.Errorf("find reply: %w", err)
	} else if found {
		return nil
	}
	body = fmt.Sprintf("@%s %s\n\n%s", c.Author, body, marker)
	if _, err := b.gh.CreateComment(ctx, c.Installation, c.Repo, c.Number, body); err != nil {
		return fmt.Errorf("reply: %w", err)
	}
	return nil
}

// problemText renders an error reply: the command as written, the problem and the fix.
func problemText(line, problem, fix string) string {
	var sb strings.Builder
	if line != "" {
		fmt.Fprintf(&sb, "%s\n\n", codeSpan(line))
	}
	fmt.Fprintf(&sb, "**Problem:** %s\n\n**Fix:** %s", oneLine(problem), oneLine(fix))
	return sb.String()
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// codeSpan renders s as inline code, with a fence longer than any backtick run in it.
func codeSpan(s string) string {
	s = oneLine(s)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	return fence + " " + s + " " + fence
}

func requestID(commentID int64) string { return fmt.Sprintf("r%d", commentID) }

// request handles /benchmark, /benchmark-multiple and /benchmark-test.
func (b *Bot) request(ctx context.Context, c hook.Comment, cmd command.Command) error {
	if err := b.gh.React(ctx, c.Installation, c.Repo, c.CommentID, "eyes"); err != nil {
		b.log.Warn("react", "repo", c.Repo, "comment", c.CommentID, "err", err)
	}
	pr, err := b.gh.PullRequest(ctx, c.Installation, c.Repo, c.Number)
	if err != nil {
		b.failReply(ctx, c, cmd, "could not read the pull request from GitHub")
		return fmt.Errorf("pull request: %w", err)
	}
	if pr.State != "" && pr.State != "open" {
		return b.replyOnce(ctx, c, problemText(cmd.Line, "this pull request is "+pr.State, "benchmarks run on open pull requests only; reopen it and comment again"))
	}
	src := source{gh: b.gh, inst: c.Installation, repo: c.Repo, pr: c.Number, sha: pr.HeadSHA}
	p, err := plan.Resolve(ctx, src, cmd)
	if err != nil {
		if re, ok := errors.AsType[*plan.ResolveError](err); ok {
			return b.replyOnce(ctx, c, problemText(cmd.Line, re.Problem, re.Fix))
		}
		b.failReply(ctx, c, cmd, "could not read the pull request's files from GitHub")
		return fmt.Errorf("resolve: %w", err)
	}
	now := b.cfg.Now()
	req := Request{
		ID: requestID(c.CommentID), Repo: c.Repo, PR: c.Number, Installation: c.Installation,
		Requester: c.Author, CommentID: c.CommentID, Command: cmd, Plan: p, SHA: pr.HeadSHA,
		Created: now, Expires: now.Add(b.cfg.ApprovalTTL),
	}
	if cmd.Save && forkWithoutEdits(pr, c.Repo) {
		req.ForkNote = "This pull request comes from a fork that does not allow edits by maintainers, so `--save` cannot commit to it: the result files will be posted as a patch instead. Tick \"Allow edits by maintainers\" to have them committed."
	}
	id, err := b.createStatus(ctx, req, b.status(req, report.PhaseAwaitingApproval))
	if err != nil {
		return err
	}
	req.StatusCommentID = id

	b.mu.Lock()
	defer b.mu.Unlock()
	if canApprove(b.permission(ctx, c.Installation, c.Repo, c.Author)) {
		return b.approve(ctx, req, "")
	}
	if old, ok, err := b.pending.Get(ctx, req.Repo, req.PR); err != nil {
		return fmt.Errorf("pending: %w", err)
	} else if ok && old.ID != req.ID {
		s := b.status(old, report.PhaseSuperseded)
		s.SupersededBy = b.commentURL(req.Repo, req.PR, req.StatusCommentID)
		s.Reason = "a newer request on this pull request replaces it"
		b.edit(ctx, old.Installation, old.Repo, old.StatusCommentID, s)
	}
	if err := b.pending.Put(ctx, req); err != nil {
		return fmt.Errorf("pending: %w", err)
	}
	return nil
}

// forkWithoutEdits reports whether pr comes from a fork of repo whose author did not allow
// edits by maintainers, so that the bot cannot push to its branch.
func forkWithoutEdits(pr ghapi.PR, repo string) bool {
	return pr.HeadRepo != "" && !strings.EqualFold(pr.HeadRepo, repo) && !pr.MaintainerCanModify
}

// failReply tells the requester that the request failed for a reason of the bot's.
func (b *Bot) failReply(ctx context.Context, c hook.Comment, cmd command.Command, problem string) {
	if err := b.replyOnce(ctx, c, problemText(cmd.Line, problem, "comment the command again in a few minutes")); err != nil {
		b.log.Error("reply", "repo", c.Repo, "pr", c.Number, "err", err)
	}
}

// createStatus posts the status comment of req, or finds the one a previous attempt posted.
func (b *Bot) createStatus(ctx context.Context, req Request, s report.Status) (int64, error) {
	id, _, found, err := b.gh.FindComment(ctx, req.Installation, req.Repo, req.PR, report.Marker(req.ID))
	if err != nil {
		return 0, fmt.Errorf("find status comment: %w", err)
	}
	if found {
		return id, nil
	}
	id, err = b.gh.CreateComment(ctx, req.Installation, req.Repo, req.PR, report.RenderStatus(s))
	if err != nil {
		return 0, fmt.Errorf("status comment: %w", err)
	}
	return id, nil
}

// edit replaces a status comment; a failure is logged (the next transition edits again).
func (b *Bot) edit(ctx context.Context, inst int64, repo string, id int64, s report.Status) {
	if id == 0 {
		return
	}
	if err := b.gh.EditComment(ctx, inst, repo, id, report.RenderStatus(s)); err != nil {
		b.log.Error("edit status comment", "repo", repo, "comment", id, "err", err)
	}
}

// status renders what the status comment of req shows in phase.
func (b *Bot) status(req Request, phase report.Phase) report.Status {
	s := report.Status{
		RequestID: req.ID, Phase: phase, Command: req.Command.Line, Requester: req.Requester,
		SHA: req.SHA, HeadMoved: req.HeadMoved, Estimate: req.Plan.Estimate, ForkNote: req.ForkNote,
	}
	seen := map[string]bool{}
	for _, t := range req.Plan.Targets {
		s.Frameworks = append(s.Frameworks, t.Entry)
		for _, tt := range t.Tests {
			if !seen[tt] {
				seen[tt] = true
				s.Tests = append(s.Tests, tt)
			}
		}
		for _, r := range t.Rows {
			s.Rows = append(s.Rows, report.StatusRow{Entry: t.Entry, Test: r.Test, Conns: r.Conns})
		}
	}
	if phase == report.PhaseAwaitingApproval {
		s.Expires = req.Expires
	}
	return s
}

// commentURL links to a comment on a pull request, so a displaced requester can follow the
// request that took their place.
func (b *Bot) commentURL(repo string, pr int, id int64) string {
	return fmt.Sprintf("%s%s/pull/%d#issuecomment-%d", b.cfg.WebURL, repo, pr, id)
}

// jobStatus renders the status of a job when its request is no longer at hand.
func jobStatus(j queue.Job, phase report.Phase) report.Status {
	return report.Status{
		RequestID: j.ID, Phase: phase, Command: j.Command, Requester: j.Requester,
		Approver: j.Approver, SHA: j.SHA, Frameworks: j.Frameworks, Tests: j.Tests,
		Estimate: j.Estimate, Reason: j.Reason,
	}
}

// approve enqueues req, approved by approver ("" when the requester may approve), and
// edits its status comment to queued. The caller holds b.mu and has removed req from
// Pending (or never put it there).
func (b *Bot) approve(ctx context.Context, req Request, approver string) error {
	frameworks := make([]string, 0, len(req.Plan.Targets))
	for _, t := range req.Plan.Targets {
		frameworks = append(frameworks, t.Entry)
	}
	now := b.cfg.Now()
	j := queue.Job{
		ID: req.ID, Repo: req.Repo, PR: req.PR, Requester: req.Requester, Approver: approver,
		Command: req.Command.Line, Kind: queue.Kind(req.Command.Kind), Frameworks: frameworks,
		Tests: req.Command.Tests, Save: req.Command.Save, Compare: req.Command.Compare,
		SHA: req.SHA, Pool: b.cfg.Pool, InstallationID: req.Installation,
		CommentID: req.CommentID, StatusCommentID: req.StatusCommentID, Estimate: req.Plan.Estimate,
		Created: req.Created, Approved: now,
	}
	stored, displaced, err := b.q.Enqueue(ctx, j)
	if errors.Is(err, queue.ErrExists) {
		stored, err = b.q.Get(ctx, j.ID)
	}
	if err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	if displaced != nil {
		s := jobStatus(*displaced, report.PhaseSuperseded)
		s.SupersededBy = b.commentURL(stored.Repo, stored.PR, stored.StatusCommentID)
		b.edit(ctx, displaced.InstallationID, displaced.Repo, displaced.StatusCommentID, s)
	}
	s := b.status(req, report.PhaseQueued)
	s.Approver = approver
	if s.Approver == "" {
		s.Approver = req.Requester
	}
	if place, err := b.q.Position(ctx, stored.ID); err == nil {
		s.Position, s.ETA = place.Position, place.ETA
		if place.Job.State == queue.Running {
			s.Phase = report.PhaseRunning
		}
	} else {
		b.log.Warn("position", "job", stored.ID, "err", err)
	}
	b.edit(ctx, req.Installation, req.Repo, req.StatusCommentID, s)
	return nil
}

// approveCommand handles /benchmark-approve.
func (b *Bot) approveCommand(ctx context.Context, c hook.Comment) error {
	if !canApprove(b.permission(ctx, c.Installation, c.Repo, c.Author)) {
		return b.replyOnce(ctx, c, problemText("/benchmark-approve",
			"only users with write, maintain or admin permission on this repository can approve benchmark runs",
			"ask a maintainer to react 👍 to the status comment or to comment /benchmark-approve"))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	req, ok, err := b.pending.Get(ctx, c.Repo, c.Number)
	if err != nil {
		return fmt.Errorf("pending: %w", err)
	}
	if !ok {
		return b.replyOnce(ctx, c, problemText("/benchmark-approve",
			"this pull request has no request waiting for approval",
			"comment a /benchmark command first (/benchmark-help lists them)"))
	}
	if err := b.take(ctx, req); err != nil {
		return err
	}
	if err := b.approve(ctx, req, c.Author); err != nil {
		b.putBack(ctx, req)
		return err
	}
	if err := b.gh.React(ctx, c.Installation, c.Repo, c.CommentID, "+1"); err != nil {
		b.log.Warn("react", "repo", c.Repo, "comment", c.CommentID, "err", err)
	}
	return nil
}

// take removes req from Pending before a transition; the caller holds b.mu.
func (b *Bot) take(ctx context.Context, req Request) error {
	if _, err := b.pending.Delete(ctx, req.ID); err != nil {
		return fmt.Errorf("pending: %w", err)
	}
	return nil
}

// putBack restores req after a failed approval, so it is tried again.
func (b *Bot) putBack(ctx context.Context, req Request) {
	if err := b.pending.Put(ctx, req); err != nil {
		b.log.Error("pending", "request", req.ID, "err", err)
	}
}

// cancelCommand handles /benchmark-cancel: the requester or a collaborator cancels the
// PR's pending request and its queued or running jobs.
func (b *Bot) cancelCommand(ctx context.Context, c hook.Comment) error {
	perm := ""
	allowed := func(requester string) bool {
		if strings.EqualFold(requester, c.Author) {
			return true
		}
		if perm == "" {
			perm = b.permission(ctx, c.Installation, c.Repo, c.Author)
		}
		return canApprove(perm)
	}
	reason := "cancelled by @" + c.Author
	b.mu.Lock()
	defer b.mu.Unlock()
	acted, denied := false, false
	req, ok, err := b.pending.Get(ctx, c.Repo, c.Number)
	if err != nil {
		return fmt.Errorf("pending: %w", err)
	}
	if ok {
		if allowed(req.Requester) {
			if err := b.take(ctx, req); err != nil {
				return err
			}
			s := b.status(req, report.PhaseCancelled)
			s.Reason = reason
			b.edit(ctx, req.Installation, req.Repo, req.StatusCommentID, s)
			acted = true
		} else {
			denied = true
		}
	}
	jobs, err := b.q.List(ctx, queue.Filter{Repo: c.Repo, PR: c.Number, States: []queue.State{queue.Queued, queue.Running}})
	if err != nil {
		return fmt.Errorf("list jobs: %w", err)
	}
	for _, j := range jobs {
		if !allowed(j.Requester) {
			denied = true
			continue
		}
		got, err := b.q.Cancel(ctx, j.ID, c.Author)
		if errors.Is(err, queue.ErrFinished) || errors.Is(err, queue.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("cancel %s: %w", j.ID, err)
		}
		acted = true
		if got.State == queue.Cancelled {
			s := jobStatus(got, report.PhaseCancelled)
			s.Reason = reason
			b.edit(ctx, got.InstallationID, got.Repo, got.StatusCommentID, s)
		}
		// A running job stops at its runner's next heartbeat; the outcome event edits
		// its status comment.
	}
	switch {
	case acted:
		if err := b.gh.React(ctx, c.Installation, c.Repo, c.CommentID, "+1"); err != nil {
			b.log.Warn("react", "repo", c.Repo, "comment", c.CommentID, "err", err)
		}
		return nil
	case denied:
		return b.replyOnce(ctx, c, problemText("/benchmark-cancel",
			"only the requester or a user with write permission can cancel this pull request's benchmark",
			"ask the requester or a maintainer"))
	default:
		return b.replyOnce(ctx, c, problemText("/benchmark-cancel",
			"this pull request has no waiting or running benchmark", "nothing to do"))
	}
}

// HandlePullRequest handles a pull_request event: on synchronize, the pending request of
// the PR is marked as acked at an older head (approval still measures the acked SHA).
func (b *Bot) HandlePullRequest(ctx context.Context, p hook.PullRequest) error {
	if p.Action != "synchronize" {
		return nil
	}
	head := p.After
	if head == "" {
		head = p.HeadSHA
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	req, ok, err := b.pending.Get(ctx, p.Repo, p.Number)
	if err != nil || !ok || head == "" || head == req.SHA || head == req.HeadMoved {
		return err
	}
	req.HeadMoved = head
	if err := b.pending.Put(ctx, req); err != nil {
		return fmt.Errorf("pending: %w", err)
	}
	b.edit(ctx, req.Installation, req.Repo, req.StatusCommentID, b.status(req, report.PhaseAwaitingApproval))
	return nil
}
