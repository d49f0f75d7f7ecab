// Package bot turns benchmark commands in pull-request comments into queue records and
// reports their lives on the pull request (docs/operating.md, "`arenabot serve`: settings and behaviour":
// commands, ack, approval and replies).
//
// The queue owns a request's life from the ack to its end; the bot has three parts along
// the seams of that life, each usable alone:
//
//   - Intake (webhook.go, intake.go): the webhook verifies and de-duplicates a delivery,
//     records it in the Inbox and answers 202; workers pop it and handle the comment:
//     👀, the plan resolved at the PR head, and a queue record (Submit; a requester with
//     write access is approved at once). Commands that act on requests (approve,
//     cancel) are queue transitions.
//   - Approvals (approvals.go): the poller reads the reactions of the status comments of
//     the requests awaiting approval (GitHub sends no webhook for reactions) and ends the
//     requests nobody approved in time.
//   - Reporter (events.go, status.go, results.go): the consumer of the queue's event
//     stream and the one writer of every status comment and final reply. It renders each
//     status comment from the record (an unchanged rendering writes nothing), retries an
//     edit until it lands, sweeps the open records so the comments converge after any
//     failure or restart, and gives every request exactly one final reply titled by its
//     outcome, after committing the result files for --save.
//
// No GitHub call is made under a lock that other requests wait on: every transition is
// one atomic queue operation, and of two racing approvals exactly one succeeds.
package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/arenabot/arenabot/bot/hook"
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
	// DefaultRecoverGrace is how long a restarted bot waits before it handles the
	// deliveries the stopped one was handling: GitHub's own limit on a request (10 s), so
	// that a reply the stopped process had sent and not heard back about has been posted
	// (or not) before the handler looks for it.
	DefaultRecoverGrace = 10 * time.Second
	// DefaultProgressEvery is the least time between two progress edits of one status
	// comment.
	DefaultProgressEvery = 5 * time.Second
	// DefaultFinalRetry is the first wait before a final event whose reply could not be
	// posted is handled again; the wait doubles up to MaxFinalRetry.
	DefaultFinalRetry = 5 * time.Second
	// DefaultFinalRetryFor is how long such an event is retried before it is given up.
	DefaultFinalRetryFor = 24 * time.Hour
	// DefaultSweepEvery is how often the reporter renders every open record again.
	DefaultSweepEvery = 30 * time.Second
	// DefaultRunnerStale is how long a pool's runner may go unseen before the status
	// comments of its queued jobs say that no runner is live.
	DefaultRunnerStale = 2 * time.Minute
)

// Config configures a Bot. Zero values take the defaults above.
type Config struct {
	// BotLogin is the bot's own login, whose comments and reactions are ignored.
	BotLogin string
	// Repos are the repositories ("owner/name", ARENA_REPOS) whose deliveries the bot acts
	// on; a delivery from any other is logged, counted and dropped before any GitHub call
	// or queue write. Empty means every repository: serve always sets it.
	Repos []string
	// ApprovalTTL is how long a request waits for approval (ARENA_APPROVAL_TTL).
	ApprovalTTL time.Duration
	// ApprovalPoll is how often Run calls PollOnce (ARENA_APPROVAL_POLL).
	ApprovalPoll time.Duration
	// Pool is the runner pool of the jobs; "" means queue.DefaultPool.
	Pool string
	// Pools are the runner pools a request may go to, in preference order (ARENA_POOLS):
	// each request goes to the first whose live hosts can run its rows (bot/route); empty
	// means Pool alone.
	Pools []string
	// Lite plans requests with the --lite connection counts (plan.Options.Lite), as the
	// pool's runners measure with --lite (serve --runner --lite, or ARENA_LITE): the ack
	// shows, and the job carries, the rows they will measure.
	Lite bool
	// WebhookSecret verifies deliveries (ARENA_WEBHOOK_SECRET); the webhook answers 500
	// to everything without it.
	WebhookSecret []byte
	// MaxBody limits a delivery's body; 0 means hook.MaxBody.
	MaxBody int64
	// Workers process webhook events concurrently, the events of one pull request one at a
	// time in the order the inbox gave them out; Inbox bounds the events accepted and
	// not yet processed by the default in-memory InboxStore (beyond it the webhook
	// answers 503 and GitHub may redeliver).
	Workers, Inbox int
	// InboxStore holds the accepted deliveries until a worker has handled them; nil means
	// NewMemoryInbox(Inbox), which a restart empties (tests only). RedisInbox and
	// BoltInbox are durable.
	InboxStore Inbox
	// DeliveryTTL is how long delivery ids are remembered; 0 means the queue's default.
	DeliveryTTL time.Duration
	// EventTimeout bounds the processing of one event.
	EventTimeout time.Duration
	// RecoverGrace is how long Run holds the deliveries an earlier run was handling when
	// it stopped before it handles them again; negative means not at all (tests).
	RecoverGrace time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// WebURL is the web root links point at; "" means https://github.com/ (set it for
	// GitHub Enterprise).
	WebURL string
	// QueueDepth is the queue's Options.Depth (ARENA_QUEUE_DEPTH), which the settings in
	// force show where a repository's settings file does not set queue_depth.
	QueueDepth int
	// Checks writes each request's check run on its commit (ghapi.NewChecks of the client);
	// nil writes none.
	Checks CheckRuns

	// ProgressEvery is the least time between two edits of a running job's status comment
	// by RunEvents (a few seconds: progress, not a live feed).
	ProgressEvery time.Duration
	// SweepEvery is how often RunEvents renders every open record again, so that status
	// comments converge on their records whatever failed meanwhile.
	SweepEvery time.Duration
	// RunnerStale is how long a pool's runner may go unseen before its queued jobs' status
	// comments say that no runner is live.
	RunnerStale time.Duration
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

func (cfg Config) withDefaults() Config {
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
	if cfg.QueueDepth <= 0 {
		cfg.QueueDepth = 1
	}
	if len(cfg.Pools) == 0 {
		cfg.Pools = []string{cfg.Pool}
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
	if cfg.RecoverGrace == 0 {
		cfg.RecoverGrace = DefaultRecoverGrace
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
	if cfg.SweepEvery <= 0 {
		cfg.SweepEvery = DefaultSweepEvery
	}
	if cfg.RunnerStale <= 0 {
		cfg.RunnerStale = DefaultRunnerStale
	}
	if cfg.FinalRetry <= 0 {
		cfg.FinalRetry = DefaultFinalRetry
	}
	if cfg.FinalRetryFor <= 0 {
		cfg.FinalRetryFor = DefaultFinalRetryFor
	}
	return cfg
}

// core is what the three parts share: the configuration, GitHub, the queue and the log.
type core struct {
	cfg  Config
	gh   GitHub
	q    queue.Queue
	log  *slog.Logger
	good goodSettings // each repository's last valid settings file
}

// Bot is the three parts wired together, as serve runs them. Its methods are safe for
// concurrent use.
type Bot struct {
	Intake    *Intake
	Approvals *Approvals
	Reporter  *Reporter
}

// New returns a Bot. log nil discards.
func New(cfg Config, gh GitHub, q queue.Queue, log *slog.Logger) *Bot {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &core{cfg: cfg.withDefaults(), gh: gh, q: q, log: log}
	return &Bot{Intake: newIntake(c), Approvals: &Approvals{core: c}, Reporter: newReporter(c)}
}

// Inbox returns the store of accepted webhook deliveries.
func (b *Bot) Inbox() Inbox { return b.Intake.inbox }

// Webhook is Intake.Webhook.
func (b *Bot) Webhook() http.Handler { return b.Intake.Webhook() }

// HandleComment is Intake.HandleComment.
func (b *Bot) HandleComment(ctx context.Context, c hook.Comment) error {
	return b.Intake.HandleComment(ctx, c)
}

// HandlePullRequest is Intake.HandlePullRequest.
func (b *Bot) HandlePullRequest(ctx context.Context, p hook.PullRequest) error {
	return b.Intake.HandlePullRequest(ctx, p)
}

// PollOnce is Approvals.PollOnce.
func (b *Bot) PollOnce(ctx context.Context) error { return b.Approvals.PollOnce(ctx) }

// HandleEvents is Reporter.HandleEvents.
func (b *Bot) HandleEvents(ctx context.Context, consumer string, block time.Duration) (int, error) {
	return b.Reporter.HandleEvents(ctx, consumer, block)
}

// RunEvents is Reporter.RunEvents.
func (b *Bot) RunEvents(ctx context.Context, consumer string) error {
	return b.Reporter.RunEvents(ctx, consumer)
}

// Run runs the intake's workers and the approval poller until ctx is done, and returns
// ctx's error once both stopped.
func (b *Bot) Run(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Approvals.Run(ctx)
	}()
	err := b.Intake.Run(ctx)
	<-done
	return err
}

// canApprove reports whether a repository role may approve benchmark runs.
func canApprove(perm string) bool {
	switch perm {
	case "admin", "maintain", "write":
		return true
	}
	return false
}

func (c *core) isBot(login string) bool {
	return strings.EqualFold(login, c.cfg.BotLogin) || strings.HasSuffix(login, "[bot]")
}

// permission returns user's role on repo. An error is logged and returned: callers that
// cannot tell decide again later rather than take it as "none".
func (c *core) permission(ctx context.Context, inst int64, repo, user string) (string, error) {
	p, err := c.gh.Permission(ctx, inst, repo, user)
	if err != nil {
		c.log.Warn("permission", "repo", repo, "user", user, "err", err)
		return "", err
	}
	return p, nil
}

// commentURL links to a comment on a pull request.
func (c *core) commentURL(repo string, pr int, id int64) string {
	return fmt.Sprintf("%s%s/pull/%d#issuecomment-%d", c.cfg.WebURL, repo, pr, id)
}

// requestID is the record id of the request made by comment commentID, also the key of
// its status comment's marker.
func requestID(commentID int64) string { return fmt.Sprintf("r%d", commentID) }

// ignorable reports whether a transition's error only says that another path got there
// first (the job was approved, ended or is unknown).
func ignorable(err error) bool {
	return errors.Is(err, queue.ErrNotAwaiting) || errors.Is(err, queue.ErrFinished) || errors.Is(err, queue.ErrNotFound)
}
