package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arenabot/arenabot/bot/command"
	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/hook"
	"github.com/arenabot/arenabot/bot/plan"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
)

// Intake takes webhook deliveries in (Webhook, Run) and turns their comments into queue
// records and transitions (HandleComment, HandlePullRequest). It posts no status comment:
// the Reporter renders those from the records.
type Intake struct {
	*core
	inbox Inbox
	// inflight counts the deliveries this Intake pushed and has not handled yet (tests
	// wait on it).
	inflight inflight
	// recovering is how many deliveries Run recovered and holds for Config.RecoverGrace.
	recovering atomic.Int64
	// popMu makes a Pop and the claim of its pull request's lane one step, so the lanes
	// see deliveries in the order the inbox gave them out.
	popMu sync.Mutex
	lanes lanes
	// foreignSeen counts the events dropped because their repository is not served.
	foreignSeen atomic.Int64
}

func newIntake(c *core) *Intake {
	return &Intake{core: c, inbox: c.cfg.InboxStore, inflight: inflight{ids: map[string]int{}}}
}

// NewIntake returns the intake alone, for a process that only takes requests in.
func NewIntake(cfg Config, gh GitHub, q queue.Queue) *Intake {
	return New(cfg, gh, q, nil).Intake
}

// HandleComment handles an issue_comment event. Edits, deletions, comments on plain
// issues, comments by bots and comments in repositories the bot does not serve
// (Config.Repos) are ignored without any call.
func (in *Intake) HandleComment(ctx context.Context, c hook.Comment) error {
	if !in.mayAct(c) || in.foreign("", "issue_comment", c.Repo) {
		return nil
	}
	cmd, found, err := command.Parse(c.Body)
	if !found {
		return nil
	}
	if err != nil {
		problem, fix := err.Error(), "comment `/benchmark-help` for the grammar"
		if ue, ok := errors.AsType[*command.UsageError](err); ok {
			problem, fix = ue.Problem, ue.Fix
		}
		return in.replyOnce(ctx, c, problemText(cmd.Line, problem, fix))
	}
	handle, ok := handlers[cmd.Kind]
	if !ok { // a command of the grammar the bot has no handler for: TestEveryCommandHandled
		return fmt.Errorf("no handler for %s", cmd.Kind.Word())
	}
	return handle(in, ctx, c, cmd)
}

// A handler answers one command of a comment.
type handler func(in *Intake, ctx context.Context, c hook.Comment, cmd command.Command) error

// handlers is what the bot does for each command of command.Specs (its word, flags, help
// and who may use it): the grammar is data there, the behaviour here, and
// TestEveryCommandHandled keeps the two tables the same set.
var handlers = map[command.Kind]handler{
	command.KindBenchmark: (*Intake).request,
	command.KindMultiple:  (*Intake).request,
	command.KindTest:      (*Intake).request,
	command.KindSweep:     (*Intake).request,
	command.KindCancel:    (*Intake).cancelCommand,
	command.KindApprove:   (*Intake).approveCommand,
	command.KindHelp:      (*Intake).helpCommand,
}

// helpCommand replies with the grammar, the tests a request may name and the settings in
// force: the settings file on the pull request's base branch (the default branch when the
// pull request cannot be read).
func (in *Intake) helpCommand(ctx context.Context, c hook.Comment, _ command.Command) error {
	ref := ""
	if pr, err := in.gh.PullRequest(ctx, c.Installation, c.Repo, c.Number); err == nil {
		ref = pr.BaseRef
	}
	st := in.settings(ctx, c.Installation, c.Repo, ref)
	return in.replyOnce(ctx, c, command.Help()+"\n"+plan.HelpTests()+"\n"+settingsHelp(st, in.operator()))
}

// replyMarker keys a reply to the comment it answers, so a retried event never
// posts it twice.
func replyMarker(commentID int64) string {
	return fmt.Sprintf("<!-- arenabot:reply comment=%d -->", commentID)
}

// replyOnce posts body as the one reply to comment c, unless it exists already.
func (in *Intake) replyOnce(ctx context.Context, c hook.Comment, body string) error {
	marker := replyMarker(c.CommentID)
	if _, _, found, err := in.gh.FindComment(ctx, c.Installation, c.Repo, c.Number, marker); err != nil {
		return fmt.Errorf("find reply: %w", err)
	} else if found {
		return nil
	}
	if _, err := in.gh.CreateComment(ctx, c.Installation, c.Repo, c.Number, replyBody(c.Author, body)+"\n\n"+marker); err != nil {
		return fmt.Errorf("reply: %w", err)
	}
	return nil
}

// failReply tells the requester that the request failed for a reason of the bot's.
func (in *Intake) failReply(ctx context.Context, c hook.Comment, line, problem string) {
	if err := in.replyOnce(ctx, c, problemText(line, problem, "comment the command again in a few minutes")); err != nil {
		in.log.Error("reply", "repo", c.Repo, "pr", c.Number, "err", err)
	}
}

// request handles /benchmark, /benchmark-multiple, /benchmark-test and /benchmark-sweep: the plan is
// resolved at the PR head and the request recorded. A requester with write access is
// approved at once, so its status comment never asks for approval.
func (in *Intake) request(ctx context.Context, c hook.Comment, cmd command.Command) error {
	if err := in.gh.React(ctx, c.Installation, c.Repo, c.CommentID, "eyes"); err != nil {
		in.log.Warn("react", "repo", c.Repo, "comment", c.CommentID, "err", err)
	}
	if cmd.Kind == command.KindSweep {
		// A sweep measures every enabled entry: maintainers only, approved by whoever asks
		// (below), its results always committed, its Δ against the committed results.
		if perm, err := in.permission(ctx, c.Installation, c.Repo, c.Author); err != nil || !canApprove(perm) {
			return in.replyOnce(ctx, c, sweepRefusal(cmd.Line, err))
		}
		cmd.Save, cmd.Baseline = true, command.BaselineCommitted
	}
	pr, err := in.gh.PullRequest(ctx, c.Installation, c.Repo, c.Number)
	if err != nil {
		return &failure{c, cmd.Line, "could not read the pull request from GitHub", fmt.Errorf("pull request: %w", err)}
	}
	if pr.State != "" && pr.State != "open" {
		return in.replyOnce(ctx, c, problemText(cmd.Line, "this pull request is "+pr.State, "benchmarks run on open pull requests only; reopen it and comment again"))
	}
	st := in.settings(ctx, c.Installation, c.Repo, pr.BaseRef)
	src := source{gh: in.gh, inst: c.Installation, repo: c.Repo, pr: c.Number, sha: pr.HeadSHA}
	p, err := plan.Options{Lite: in.cfg.Lite}.Resolve(ctx, src, cmd)
	if err != nil {
		if re, ok := errors.AsType[*plan.ResolveError](err); ok {
			return in.replyOnce(ctx, c, problemText(cmd.Line, re.Problem, re.Fix))
		}
		return &failure{c, cmd.Line, "could not read the pull request's files from GitHub", fmt.Errorf("resolve: %w", err)}
	}
	pools := in.cfg.Pools
	if st.File.Pools != nil {
		pools = st.File.Pools
	}
	dec := pickPool(ctx, in.q, pools, in.log, p)
	if p = p.Keep(dec.Runs); p.Rows() == 0 {
		return in.replyOnce(ctx, c, problemText(cmd.Line, "no live runner host can run this request: "+dec.Reasons(),
			"ask a maintainer to add a runner host with that many CPUs to a pool, or request other tests with `-t`"))
	}
	perm, _ := in.permission(ctx, c.Installation, c.Repo, c.Author) // unknown: it waits for approval
	pl := payload{Command: cmd, Plan: p, RouteNote: dec.Note(), Gate: st.File.Gate, SettingsWarning: st.Warning}
	switch short := st.File.Short(); {
	case st.Source != "" && len(short) > 0:
		pl.Settings = st.Source + ": " + strings.Join(short, ", ")
	case st.Source != "":
		pl.Settings = st.Source + " sets nothing: the bot's defaults (" + codeSpan("/benchmark-help") + " lists them)"
	case st.Warning == "": // no file: the warning says what applies when there is a bad one
		pl.Settings = "the bot's defaults (" + codeSpan("/benchmark-help") + " lists them)"
	}
	if cmd.Save && forkWithoutEdits(pr, c.Repo) {
		pl.ForkNote = "This pull request comes from a fork that does not allow edits by maintainers, so `--save` cannot commit to it: the result files will be posted as a patch instead. Tick \"Allow edits by maintainers\" to have them committed."
	}
	raw, err := json.Marshal(pl)
	if err != nil {
		return fmt.Errorf("request payload: %w", err)
	}
	now := in.cfg.Now()
	frameworks := make([]string, 0, len(p.Targets))
	var rows []profile.Row // what the ack promises: the runner measures exactly these
	for _, t := range p.Targets {
		frameworks = append(frameworks, t.Entry)
		rows = append(rows, t.Rows...)
	}
	j := queue.Job{
		ID: requestID(c.CommentID), Repo: c.Repo, PR: c.Number, Requester: c.Author,
		Command: cmd.Line, Kind: queue.Kind(cmd.Kind), Frameworks: frameworks, Tests: cmd.Tests, Rows: rows,
		Save: cmd.Save, Compare: cmd.Compare, Baseline: cmd.Baseline, SHA: pr.HeadSHA, Pool: dec.Pool,
		CPUProfile:     p.CPUProfile,
		InstallationID: c.Installation, CommentID: c.CommentID, Estimate: p.Estimate,
		Created: now, Expires: now.Add(in.cfg.ApprovalTTL), Payload: raw,
		Tuning: st.File.Tuning(), Depth: st.File.Depth,
	}
	if canApprove(perm) || st.File.IsTrusted(c.Author) {
		if err := in.enqueueApproved(ctx, j); err != nil {
			return &failure{c, cmd.Line, "could not queue the request", err}
		}
		return nil
	}
	if _, _, err := in.q.Submit(ctx, j); err != nil && !errors.Is(err, queue.ErrExists) {
		return &failure{c, cmd.Line, "could not record the request", fmt.Errorf("submit: %w", err)}
	}
	return nil
}

// sweepRefusal is the reply to a /benchmark-sweep its author may not ask for: err is the
// permission lookup's failure, nil when the author lacks write access.
func sweepRefusal(line string, err error) string {
	if err != nil {
		return problemText(line, "GitHub did not say whether you may ask for a sweep here", "comment "+codeSpan(line)+" again in a minute")
	}
	return problemText(line,
		"a sweep measures every framework of the arena, so only maintainers (write access or more) may ask for one",
		"ask a maintainer to comment "+codeSpan(line)+", or measure the frameworks you need with "+codeSpan("/benchmark-multiple -f <framework>,..."))
}

// enqueueApproved queues the request of a user who may approve it, approved by
// themselves.
func (in *Intake) enqueueApproved(ctx context.Context, j queue.Job) error {
	j.Approver, j.Approved, j.Expires = j.Requester, j.Created, time.Time{} // approved: it never expires
	// Enqueue publishes EventQueued: the reporter posts the status comment, already
	// saying that the request is approved.
	_, _, err := in.q.Enqueue(ctx, j)
	if err != nil && !errors.Is(err, queue.ErrExists) { // ErrExists: a retry of the same delivery
		return fmt.Errorf("enqueue: %w", err)
	}
	return nil
}

// forkWithoutEdits reports whether pr comes from a fork of repo whose author did not allow
// edits by maintainers, so that the bot cannot push to its branch.
func forkWithoutEdits(pr ghapi.PR, repo string) bool {
	return pr.HeadRepo != "" && !strings.EqualFold(pr.HeadRepo, repo) && !pr.MaintainerCanModify
}

// openJobs lists the PR's requests in states; the shares of a split job (queue.Job.Parent)
// are not requests: they end with their job.
func (in *Intake) openJobs(ctx context.Context, repo string, pr int, states ...queue.State) ([]queue.Job, error) {
	js, err := in.q.List(ctx, queue.Filter{Repo: repo, PR: pr, States: states})
	if err != nil {
		return nil, fmt.Errorf("list requests: %w", err)
	}
	return slices.DeleteFunc(js, func(j queue.Job) bool { return j.Parent != "" }), nil
}

// approveCommand handles /benchmark-approve: a user with write access approves every
// request of the PR that awaits approval. A bare /benchmark-approve approves a request only
// while the PR's head is the acked commit (read from GitHub), as a 👍 does; once the head
// moved, only /benchmark-approve <sha> naming the acked commit approves it, and the reply
// says so. A SHA that is not the acked commit of any waiting request approves nothing and
// the reply names both.
func (in *Intake) approveCommand(ctx context.Context, c hook.Comment, cmd command.Command) error {
	line := cmd.Line
	if line == "" {
		line = command.KindApprove.Word()
	}
	perm, err := in.permission(ctx, c.Installation, c.Repo, c.Author)
	if err != nil {
		return in.replyOnce(ctx, c, problemText(line,
			"GitHub did not say whether you may approve benchmark runs here",
			"comment "+codeSpan(line)+" again in a minute, or react 👍 to the status comment"))
	}
	if !canApprove(perm) {
		return in.replyOnce(ctx, c, problemText(line,
			"only users with write, maintain or admin permission on this repository can approve benchmark runs",
			"ask a maintainer to react 👍 to the status comment or to comment `/benchmark-approve`"))
	}
	// A request past its expiry ends as expired first, as the poller would end it: an
	// approval never revives it.
	if _, err := in.q.Expire(ctx); err != nil {
		return fmt.Errorf("expire: %w", err)
	}
	js, err := in.openJobs(ctx, c.Repo, c.Number, queue.AwaitingApproval)
	if err != nil {
		return err
	}
	head := ""
	if cmd.SHA == "" && len(js) > 0 {
		pr, err := in.gh.PullRequest(ctx, c.Installation, c.Repo, c.Number)
		if err != nil {
			return &failure{c, line, "could not read the pull request's head from GitHub", fmt.Errorf("pull request: %w", err)}
		}
		head = pr.HeadSHA
	}
	approved := 0
	var moved, other []queue.Job // not approved: the head moved (bare command), or another SHA named
	for _, j := range js {
		if cmd.SHA != "" && !strings.HasPrefix(strings.ToLower(j.SHA), cmd.SHA) {
			other = append(other, j)
			continue
		}
		if cmd.SHA == "" {
			if err := in.noteHead(ctx, j, head); err != nil {
				return err
			}
			if headMoved(j, head) {
				moved = append(moved, j)
				continue
			}
		}
		_, _, err := in.q.Approve(ctx, j.ID, c.Author)
		if ignorable(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("approve %s: %w", j.ID, err)
		}
		approved++
	}
	if approved > 0 {
		if err := in.gh.React(ctx, c.Installation, c.Repo, c.CommentID, "+1"); err != nil {
			in.log.Warn("react", "repo", c.Repo, "comment", c.CommentID, "err", err)
		}
	}
	switch {
	case len(moved) > 0:
		acked := ackedSHAs(moved)
		return in.replyOnce(ctx, c, problemText(line,
			fmt.Sprintf("the head of this pull request moved from %s to %s since the request was acknowledged, so %s alone no longer approves it (nor does a 👍): the commit it measures is not the one \"Files changed\" shows now",
				orList(acked), shortCode(head), codeSpan(command.KindApprove.Word())),
			fmt.Sprintf("comment %s to approve measuring the acknowledged commit, or comment the benchmark command again to measure the new head %s",
				approveLines(acked), shortCode(head))))
	case len(other) > 0 && approved == 0:
		acked := ackedSHAs(other)
		return in.replyOnce(ctx, c, problemText(line,
			fmt.Sprintf("%s is not the commit this pull request's waiting request was acknowledged at: it measures %s", codeSpan(cmd.SHA), orList(acked)),
			fmt.Sprintf("comment %s to approve measuring it, or comment the benchmark command again to measure another commit", approveLines(acked))))
	case approved == 0:
		return in.replyOnce(ctx, c, problemText(line,
			"this pull request has no request waiting for approval",
			"comment a benchmark command first (`/benchmark-help` lists them)"))
	}
	return nil
}

// ackedSHAs lists the distinct commits js were acked at, in order.
func ackedSHAs(js []queue.Job) []string {
	var out []string
	for _, j := range js {
		if !slices.Contains(out, j.SHA) {
			out = append(out, j.SHA)
		}
	}
	return out
}

// shortLen is how many characters of a SHA replies show, as the status comment does.
const shortLen = 12

// shortCode renders the first shortLen characters of sha as code.
func shortCode(sha string) string { return codeSpan(sha[:min(len(sha), shortLen)]) }

// orList renders shas as code, joined with "or".
func orList(shas []string) string {
	parts := make([]string, len(shas))
	for i, s := range shas {
		parts[i] = shortCode(s)
	}
	return strings.Join(parts, " or ")
}

// approveLines renders the /benchmark-approve command naming each of shas, as code.
func approveLines(shas []string) string {
	parts := make([]string, len(shas))
	for i, s := range shas {
		parts[i] = codeSpan(command.KindApprove.Word() + " " + s[:min(len(s), shortLen)])
	}
	return strings.Join(parts, " or ")
}

// cancelCommand handles /benchmark-cancel: the requester cancels their own requests of the
// PR, a user with write access every request of the PR, whether it awaits approval, waits
// in line or runs. The reporter tells each one's end.
func (in *Intake) cancelCommand(ctx context.Context, c hook.Comment, _ command.Command) error {
	js, err := in.openJobs(ctx, c.Repo, c.Number, queue.AwaitingApproval, queue.Queued, queue.Running)
	if err != nil {
		return err
	}
	perm, permErr := "", error(nil)
	permChecked := false
	allowed := func(requester string) bool {
		if strings.EqualFold(requester, c.Author) {
			return true
		}
		if !permChecked {
			perm, permErr = in.permission(ctx, c.Installation, c.Repo, c.Author)
			permChecked = true
		}
		return canApprove(perm)
	}
	acted, denied := false, false
	for _, j := range js {
		if !allowed(j.Requester) {
			denied = true
			continue
		}
		if _, err := in.q.Cancel(ctx, j.ID, c.Author); err != nil {
			if ignorable(err) {
				continue
			}
			return fmt.Errorf("cancel %s: %w", j.ID, err)
		}
		acted = true
	}
	switch {
	case acted:
		if err := in.gh.React(ctx, c.Installation, c.Repo, c.CommentID, "+1"); err != nil {
			in.log.Warn("react", "repo", c.Repo, "comment", c.CommentID, "err", err)
		}
		return nil
	case denied && permErr != nil:
		return in.replyOnce(ctx, c, problemText("/benchmark-cancel",
			"GitHub did not say whether you may cancel other users' benchmarks here",
			"comment `/benchmark-cancel` again in a minute"))
	case denied:
		return in.replyOnce(ctx, c, problemText("/benchmark-cancel",
			"only the requester or a user with write permission can cancel this pull request's benchmark",
			"ask the requester or a maintainer"))
	default:
		return in.replyOnce(ctx, c, problemText("/benchmark-cancel",
			"this pull request has no waiting or running benchmark", "nothing to do"))
	}
}

// HandlePullRequest handles a pull_request event: on synchronize, each request of the PR
// that awaits approval is marked as acked at an older head (a 👍 no longer approves it,
// /benchmark-approve <acked sha> does and measures the acked SHA), or no longer so when
// the head is the acked commit again; the reporter shows it.
func (in *Intake) HandlePullRequest(ctx context.Context, p hook.PullRequest) error {
	if p.Action != "synchronize" || in.foreign("", "pull_request", p.Repo) {
		return nil
	}
	head := p.After
	if head == "" {
		head = p.HeadSHA
	}
	if head == "" {
		return nil
	}
	js, err := in.openJobs(ctx, p.Repo, p.Number, queue.AwaitingApproval)
	if err != nil {
		return err
	}
	var errs []error
	for _, j := range js {
		if err := in.noteHead(ctx, j, head); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
