package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/arenabot/arenabot/bot/command"
	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/plan"
	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/text"
)

// A finisher ends what the event loop reports: the one final reply of a job (its results
// tables, or why it ended without), the results commit of a --save job, and the status
// comment's final phase. The Reporter hands it each final event.
type finisher struct {
	*core
}

// A ReplyTiming says how long the final reply of one job took, measured on the wall clock
// from the first read of its final event (the final reply). RunEvents logs it and hands
// it to Config.OnReply.
type ReplyTiming struct {
	Job     string      // job ID
	Event   string      // queue.EventOutcome, EventSuperseded, EventCancelled or EventLost
	State   queue.State // how the job ended
	Attempt int         // 1 when the first attempt succeeded
	// Commit is the time until the --save step ended (the results commit made, found
	// unnecessary, refused or failed); 0 without --save or when an earlier attempt did it.
	Commit    time.Duration
	CommitSHA string
	// Reply is the time until the last part of the reply was posted, Total until the status
	// comment showed the final phase.
	Reply, Total time.Duration
	Parts        int // comments of the reply
}

// finalReply posts the one final reply of job j, which ended with event kind, and edits
// its status comment to the final phase. With --save on a done job (or a cancelled one
// with measured rows) it first commits the result files to the PR head (saveResults), so
// the reply links the commit. Every step is idempotent: the commit is skipped when the
// head holds the files already, each part of the reply is found again by its marker, and
// edits are repeated harmlessly; so a redelivered event or a retry after a failure posts
// nothing twice. It returns the reply as built when its --save step reached a final
// answer, for the next attempt to reuse.
func (rp *finisher) finalReply(ctx context.Context, kind string, j queue.Job, p *parked) (*report.Results, error) {
	tm := ReplyTiming{Job: j.ID, Event: kind, State: j.State, Attempt: p.attempt + 1}
	if err := rp.findStatus(ctx, &j); err != nil {
		return nil, err
	}
	if !ranToResults(kind, j) {
		return nil, rp.endingReply(ctx, kind, j, p, tm)
	}
	var res report.Results
	var settled *report.Results
	if p.saved != nil {
		res, settled = *p.saved, p.saved
	} else {
		res = rp.results(kind, j)
		if j.Save {
			start := time.Now()
			if rp.saveResults(ctx, j, &res) {
				settled = &res
			}
			tm.Commit = time.Since(p.received)
			rp.log.Info("results commit", "job", j.ID, "sha", res.CommitSHA, "took", time.Since(start), "patch_files", len(res.Patch))
		}
	}
	tm.CommitSHA = res.CommitSHA

	parts := rp.renderResults(res)
	firstID, err := rp.postResults(ctx, j, parts)
	if err != nil {
		return settled, err
	}
	tm.Reply, tm.Parts = time.Since(p.received), len(parts)

	s := rp.finalStatus(ctx, kind, j, res)
	if firstID != 0 {
		s.ResultsURL = rp.commentURL(j.Repo, j.PR, firstID)
	}
	if j.StatusCommentID != 0 {
		if err := rp.writeStatus(ctx, j, report.RenderStatus(s)); err != nil {
			return settled, err
		}
	}
	if err := rp.writeCheck(ctx, j, report.CheckOf(s, &res, rp.recordURL(j))); err != nil {
		return settled, err
	}
	tm.Total = time.Since(p.received)
	rp.log.Info("final reply", "job", j.ID, "event", kind, "state", j.State, "repo", j.Repo, "pr", j.PR,
		"parts", tm.Parts, "commit", tm.CommitSHA, "commit_after", tm.Commit, "reply_after", tm.Reply,
		"total", tm.Total, "attempt", tm.Attempt)
	if rp.cfg.OnReply != nil {
		rp.cfg.OnReply(tm)
	}
	return settled, nil
}

// renderResults is report.RenderResults, with a short fallback reply when it fails, so
// that a rendering bug can neither keep a job without its reply nor stop the event loop
// on an event that would fail again after every restart.
func (rp *finisher) renderResults(res report.Results) (parts []string) {
	defer func() {
		if r := recover(); r != nil || len(parts) == 0 {
			rp.log.Error("render results", "job", res.RequestID, "panic", r, "stack", string(debug.Stack()))
			var sb strings.Builder
			fmt.Fprintf(&sb, "## Benchmark ended\n\nThe job ended (%s), but its results could not be rendered; the bot's log has the details.\n",
				codeSpan(res.State))
			if res.CommitURL != "" {
				fmt.Fprintf(&sb, "\nThe results were committed: %s\n", res.CommitURL)
			}
			if res.StatusURL != "" {
				fmt.Fprintf(&sb, "\nStatus: %s\n", res.StatusURL)
			}
			sb.WriteString("\n" + report.ResultsMarker(res.RequestID, 1))
			parts = []string{report.Reply(res.Requester, sb.String())}
		}
	}()
	return report.RenderResults(res)
}

// results builds the reply of a job from the job and the runner's report it carries.
func (rp *finisher) results(kind string, j queue.Job) report.Results {
	res := report.Results{
		RequestID: j.ID, Command: j.Command, Requester: j.Requester, State: string(j.State),
		Reason: j.Reason, SHA: j.SHA, Compare: j.Compare,
	}
	if j.StatusCommentID != 0 {
		res.StatusURL = rp.commentURL(j.Repo, j.PR, j.StatusCommentID)
	}
	switch kind {
	case queue.EventLost:
		res.State = "lost"
	case queue.EventSuperseded:
		res.State = string(queue.Superseded)
	case queue.EventCancelled:
		res.State = string(queue.Cancelled)
	}
	if res.State == string(queue.Done) {
		res.Reason = ""
	}
	if len(j.Result) > 0 {
		if err := json.Unmarshal(j.Result, &res.Report); err != nil {
			rp.log.Error("runner report undecodable", "job", j.ID, "err", err)
			res.Report = result.Report{Error: "the runner's report could not be read"}
		}
	}
	if res.Reason == "" && res.State != string(queue.Done) {
		res.Reason = res.Report.Error
	}
	if res.Report.Commit == "" {
		res.Report.Commit = j.SHA
	}
	if j.Baseline == command.BaselineCommitted {
		res.Report.AgainstCommitted = true // asked for: the reply says so whatever the runner wrote
	}
	return res
}

// measured reports whether a report holds at least one measured row.
func measured(r result.Report) bool {
	return len(r.Rows) > r.Failed()
}

// saveResults carries out --save for a job that ended: one commit of all its result files
// on the PR head branch (in the head repository, a fork's for a fork), or, when that is
// refused or impossible, a note saying why and the files as a patch. It fills res's
// CommitSHA, CommitURL, SaveNote and Patch, and reports whether its answer is final (a
// failure other than a refusal may succeed on a later attempt).
func (rp *finisher) saveResults(ctx context.Context, j queue.Job, res *report.Results) bool {
	nothing := func(why string) bool {
		res.SaveNote = "`--save`: nothing was committed: " + why + "."
		return true
	}
	state := queue.State(res.State)
	switch {
	case state == queue.Failed || res.State == "lost":
		return nothing("the job failed")
	case state != queue.Done && state != queue.Cancelled:
		return nothing("the job did not run")
	case !measured(res.Report):
		return nothing("no measurement succeeded")
	}
	pr, err := rp.gh.PullRequest(ctx, j.InstallationID, j.Repo, j.PR)
	if err != nil {
		// The files are merged into the measured commit's, for a patch to apply there.
		files, final, ferr := rp.savedFiles(ctx, j.InstallationID, j.Repo, j.SHA, res.Report)
		if ferr != nil {
			nothing(ferr.Error())
			return final
		}
		res.SaveNote = "**The results were not committed:** the pull request could not be read from GitHub (" +
			errText(err) + "). Apply the patch below to save them."
		res.Patch = rp.resultPatches(ctx, j.InstallationID, j.Repo, j.SHA, files)
		return false
	}
	headRepo, ref := pr.HeadRepo, pr.HeadSHA
	from := headRepo
	if from == "" {
		from = j.Repo // a deleted fork's commits stay readable through the pull request
	}
	files, final, err := rp.savedFiles(ctx, j.InstallationID, from, ref, res.Report)
	if err != nil {
		nothing(err.Error())
		return final
	}
	patch := func(note string) {
		res.SaveNote = note
		res.Patch = rp.resultPatches(ctx, j.InstallationID, from, ref, files)
	}
	switch {
	case headRepo == "":
		patch("**The results were not committed:** the pull request's fork was deleted, so there is no branch to commit to. Apply the patch below to save them.")
		return true
	case pr.State != "" && pr.State != "open":
		patch(fmt.Sprintf("**The results were not committed:** the pull request is %s. Apply the patch below on a branch to save them.", pr.State))
		return true
	case forkWithoutEdits(pr, j.Repo):
		patch("**The results were not committed:** this pull request comes from a fork that does not allow edits by maintainers, so the bot cannot push to it. Apply the patch below and push it, or tick \"Allow edits by maintainers\" and run the command again.")
		return true
	}
	msg := commitMessage(j, res.Report, files, rp.commentURL(j.Repo, j.PR, j.StatusCommentID))
	sha, err := rp.gh.CommitFiles(ctx, j.InstallationID, headRepo, pr.HeadRef, msg, files)
	switch {
	case err == nil:
		res.CommitSHA = sha
		res.CommitURL = rp.cfg.WebURL + headRepo + "/commit/" + sha
		return true
	case errors.Is(err, ghapi.ErrPushDenied):
		rp.log.Warn("results commit refused", "job", j.ID, "repo", headRepo, "branch", pr.HeadRef, "err", err)
		patch(fmt.Sprintf("**The results were not committed:** GitHub refused the push to %s: the branch may be protected, "+
			"or the app may not write to that repository. Apply the patch below and push it to save them.",
			codeSpan(headRepo+":"+pr.HeadRef)))
		return true
	default:
		rp.log.Error("results commit", "job", j.ID, "repo", headRepo, "branch", pr.HeadRef, "err", err)
		patch(fmt.Sprintf("**The results commit failed:** %s. Apply the patch below and push it to save them.", errText(err)))
		return false
	}
}

// savedFiles are the files of a results commit on repo at ref (result.Report.Saved): the
// job's rows merged into each framework's results file as it is at ref, which the arena's
// merge rule needs (a row replaces its key; the file's other keys stay). The error says why
// there are none, fit for "nothing was committed: …"; final is false when it was reading a
// file from GitHub that failed, which a later attempt may get past.
func (rp *finisher) savedFiles(ctx context.Context, inst int64, repo, ref string, r result.Report) (files map[string][]byte, final bool, err error) {
	var readErr error
	files, err = r.Saved(plan.Root, func(p string) ([]byte, error) {
		b, err := rp.gh.File(ctx, inst, repo, ref, p)
		if err != nil && !errors.Is(err, ghapi.ErrNotFound) {
			readErr = err
		}
		return b, mapNotFound(err)
	})
	switch {
	case err != nil && readErr != nil:
		return nil, false, fmt.Errorf("the results file could not be read from GitHub to merge the new rows into it (%s)", errText(readErr))
	case err != nil:
		return nil, true, fmt.Errorf("the result files could not be written (%s)", errText(err))
	}
	return files, true, nil
}

// commitMessage is "Benchmark results: nethttp, fasthttp (baseline)" and a body naming
// the request and the measured commit.
func commitMessage(j queue.Job, r result.Report, files map[string][]byte, statusURL string) string {
	entries, tests := map[string]bool{}, map[string]bool{}
	for _, row := range r.Rows {
		if row.Result != nil {
			entries[row.Entry] = true
			tests[row.Result.Profile] = true
		}
	}
	ordered := func(order []string, set map[string]bool) []string {
		var out []string
		for _, s := range order {
			if set[s] && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		for _, s := range slices.Sorted(maps.Keys(set)) {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out
	}
	fws, ts := ordered(r.Frameworks, entries), ordered(r.Tests, tests)
	subject := "Benchmark results: " + strings.Join(fws, ", ")
	if len(ts) > 0 {
		subject += " (" + strings.Join(ts, ", ") + ")"
	}
	if len(subject) > 72 {
		subject = fmt.Sprintf("Benchmark results: %d frameworks (%s)", len(fws), strings.Join(ts, ", "))
	}
	if len(subject) > 72 {
		subject = fmt.Sprintf("Benchmark results: %d frameworks, %d tests", len(fws), len(ts))
	}
	var sb strings.Builder
	sb.WriteString(subject + "\n\n")
	fmt.Fprintf(&sb, "Request: %s (%s)\n", j.ID, text.OneLine(j.Command))
	fmt.Fprintf(&sb, "Requested by: %s\n", j.Requester)
	if j.Approver != "" {
		fmt.Fprintf(&sb, "Approved by: %s\n", j.Approver)
	}
	measuredSHA := r.Commit
	if measuredSHA == "" {
		measuredSHA = j.SHA
	}
	fmt.Fprintf(&sb, "Measured commit: %s\n", measuredSHA)
	if r.Host != "" {
		fmt.Fprintf(&sb, "Host: %s\n", text.OneLine(r.Host))
	}
	if j.State == queue.Cancelled {
		sb.WriteString("The job was cancelled; these are the measurements made before it stopped.\n")
	}
	if j.StatusCommentID != 0 {
		fmt.Fprintf(&sb, "Status: %s\n", statusURL)
	}
	fmt.Fprintf(&sb, "\n%d result files:\n", len(files))
	for _, p := range slices.Sorted(maps.Keys(files)) {
		sb.WriteString("  " + p + "\n")
	}
	return sb.String()
}

// postResults posts the parts of a reply, each found again by its marker first so that
// nothing is posted twice, and returns the first part's comment id. A part found with
// other content (a retry whose reply changed) is edited to the new content.
func (rp *finisher) postResults(ctx context.Context, j queue.Job, parts []string) (int64, error) {
	var first int64
	for i, body := range parts {
		marker := report.ResultsMarker(j.ID, i+1)
		if !strings.Contains(body, marker) {
			body = strings.TrimRight(body, "\n") + "\n\n" + marker
		}
		id, old, found, err := rp.gh.FindComment(ctx, j.InstallationID, j.Repo, j.PR, marker)
		if err != nil {
			return 0, fmt.Errorf("find results part %d: %w", i+1, err)
		}
		if found && !strings.HasSuffix(strings.TrimSpace(old), marker) {
			// The marker is quoted inside another comment (a patch of a file holding it), not
			// the part itself: post the part.
			rp.log.Warn("results marker found inside another comment", "job", j.ID, "part", i+1, "comment", id)
			found = false
		}
		switch {
		case found && old != body:
			if err := rp.gh.EditComment(ctx, j.InstallationID, j.Repo, id, body); err != nil {
				return 0, fmt.Errorf("edit results part %d: %w", i+1, err)
			}
		case !found:
			id, err = rp.gh.CreateComment(ctx, j.InstallationID, j.Repo, j.PR, body)
			if err != nil {
				return 0, fmt.Errorf("post results part %d: %w", i+1, err)
			}
		}
		if i == 0 {
			first = id
		}
	}
	return first, nil
}

// findStatus fills in the status comment of a job that ended before the reporter learnt
// its id (the answer to the post was lost, then the job ended): the comment is found by its
// marker and recorded, so the final edit reaches it.
func (rp *finisher) findStatus(ctx context.Context, j *queue.Job) error {
	if j.StatusCommentID != 0 {
		return nil
	}
	id, _, found, err := rp.gh.FindComment(ctx, j.InstallationID, j.Repo, j.PR, report.Marker(j.ID))
	if err != nil {
		return fmt.Errorf("find status comment: %w", err)
	}
	if !found {
		return nil
	}
	if _, err := rp.q.Amend(ctx, j.ID, queue.Amendment{StatusCommentID: id}); err != nil {
		return fmt.Errorf("amend %s: %w", j.ID, err)
	}
	j.StatusCommentID = id
	return nil
}

// ranToResults reports whether the reply of a job that ended with event kind shows
// results: a job that ran and measured something, or that is done. Every other ending
// gets a reply titled by its outcome (report.RenderEnding).
func ranToResults(kind string, j queue.Job) bool {
	if kind != queue.EventOutcome && kind != queue.EventLost {
		return false
	}
	if j.State == queue.Done {
		return true
	}
	var r result.Report
	if len(j.Result) > 0 && json.Unmarshal(j.Result, &r) == nil {
		return len(r.Rows) > 0
	}
	return false
}

// endingReply posts the reply of a request that ended without results (declined,
// expired, cancelled, superseded, failed or lost before any row) and shows the end on its
// status comment.
func (rp *finisher) endingReply(ctx context.Context, kind string, j queue.Job, p *parked, tm ReplyTiming) error {
	e := report.Ending{
		RequestID: j.ID, Requester: j.Requester, Command: j.Command, Reason: j.Reason,
	}
	if j.StatusCommentID != 0 {
		e.StatusURL = rp.commentURL(j.Repo, j.PR, j.StatusCommentID)
	}
	switch {
	case kind == queue.EventLost:
		e.Outcome = report.OutcomeLost
	case j.State == queue.Rejected:
		e.Outcome, e.By = report.OutcomeDeclined, j.RejectedBy
	case j.State == queue.Expired:
		e.Outcome = report.OutcomeExpired
	case j.State == queue.Cancelled:
		e.Outcome, e.By = report.OutcomeCancelled, j.CancelledBy
	case j.State == queue.Superseded:
		e.Outcome = report.OutcomeSuperseded
		e.SupersededBy, e.SupersededHow = rp.supersededBy(ctx, j)
	default:
		e.Outcome = report.OutcomeFailed
		if e.Reason == "" && len(j.Result) > 0 {
			var r result.Report
			if json.Unmarshal(j.Result, &r) == nil {
				e.Reason = r.Error
			}
		}
	}
	body := report.RenderEnding(e)
	marker := report.EndingMarker(j.ID)
	_, old, found, err := rp.gh.FindComment(ctx, j.InstallationID, j.Repo, j.PR, marker)
	if err != nil {
		return fmt.Errorf("find final reply: %w", err)
	}
	if !found || !strings.HasSuffix(strings.TrimSpace(old), marker) {
		if _, err := rp.gh.CreateComment(ctx, j.InstallationID, j.Repo, j.PR, body); err != nil {
			return fmt.Errorf("post final reply: %w", err)
		}
	}
	tm.Reply, tm.Parts = time.Since(p.received), 1
	s := rp.finalStatus(ctx, kind, j, report.Results{})
	if j.StatusCommentID != 0 {
		if err := rp.writeStatus(ctx, j, report.RenderStatus(s)); err != nil {
			return err
		}
	}
	var res *report.Results
	if kind == queue.EventLost {
		res = &report.Results{State: "lost"}
	}
	if err := rp.writeCheck(ctx, j, report.CheckOf(s, res, rp.recordURL(j))); err != nil {
		return err
	}
	tm.Total = time.Since(p.received)
	rp.log.Info("final reply", "job", j.ID, "event", kind, "state", j.State, "repo", j.Repo, "pr", j.PR,
		"outcome", e.Outcome, "attempt", tm.Attempt)
	if rp.cfg.OnReply != nil {
		rp.cfg.OnReply(tm)
	}
	return nil
}

// finalStatus is what the status comment of a job shows once its reply is posted.
func (rp *finisher) finalStatus(ctx context.Context, kind string, j queue.Job, res report.Results) report.Status {
	s := baseStatus(j)
	switch {
	case j.State == queue.Superseded:
		s.SupersededBy, s.SupersededHow = rp.supersededBy(ctx, j)
	case kind == queue.EventLost || j.State == queue.Failed:
		s.Phase = report.PhaseFailed
		if res.Reason != "" {
			s.Reason = res.Reason
		}
	}
	s.CommitURL = res.CommitURL
	if n := len(res.Report.Rows); n > 0 && s.Phase == report.PhaseFailed {
		// The plan on the record says how many were to run, also after a restart.
		s.Done, s.Total = n, max(n, len(s.Rows))
	}
	return s
}

// supersededBy links to the request that took j's place: its status comment, or its
// command comment while it has none; and says how it took it (the same requester's newer
// request replaced j while it awaited approval, or a newer approved request took j's
// waiting place).
func (rp *finisher) supersededBy(ctx context.Context, j queue.Job) (string, report.SupersededHow) {
	how := report.SupersededDisplaced
	if j.Approved.IsZero() {
		how = report.SupersededReplaced
	}
	if j.SupersededBy == "" {
		return "", how
	}
	newer, err := rp.q.Get(ctx, j.SupersededBy)
	if err != nil {
		return "", how
	}
	id := newer.StatusCommentID
	if id == 0 {
		id = newer.CommentID
	}
	if id == 0 {
		return "", how
	}
	return rp.commentURL(newer.Repo, newer.PR, id), how
}

// errText renders an error for a reply: one line, at most 300 bytes, as inline code.
func errText(err error) string {
	s := text.OneLine(err.Error())
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:300], "") + "…"
	}
	return codeSpan(strings.ReplaceAll(s, "<!--", "< !--"))
}
