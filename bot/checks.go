package bot

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/queue"
)

// CheckName is the name of the bot's check run on a request's commit, which branch
// protection can require.
const CheckName = "arenabot"

// writeCheck makes the check run of j on its commit show c, unless it does already: the
// first time it is created, and so is a new one when a completed run (awaiting approval)
// is to run again, since GitHub keeps a completed run completed (createCheck); otherwise it
// is updated.
// The record keeps the run's ID, status and digest (queue.Job.Check).
func (rp *core) writeCheck(ctx context.Context, j queue.Job, c report.Check) error {
	if rp.cfg.Checks == nil || j.SHA == "" || j.Parent != "" {
		return nil
	}
	run := ghapi.CheckRun{Name: CheckName, HeadSHA: j.SHA, ExternalID: j.ID, Status: c.Status, Conclusion: c.Conclusion,
		Title: c.Title, Summary: c.Summary}
	if j.StatusCommentID != 0 {
		run.DetailsURL = rp.commentURL(j.Repo, j.PR, j.StatusCommentID)
	}
	d := digest(fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%s", run.Status, run.Conclusion, run.Title, run.Summary, run.DetailsURL))
	id, status, shown := parseCheck(j.Check)
	if shown == d {
		return nil
	}
	var err error
	switch {
	case id == 0 || status == checkCreating || status == "completed" && c.Status != "completed":
		var created int64
		if created, err = rp.createCheck(ctx, j, run, id, status == checkCreating); err != nil {
			// The create may have been made and only its answer lost: the next write
			// looks for the run before it creates one.
			rec := fmt.Sprintf("%d %s -", id, checkCreating)
			if _, aerr := rp.q.Amend(ctx, j.ID, queue.Amendment{Check: &rec}); aerr != nil {
				rp.log.Warn("check run: record the create", "job", j.ID, "err", aerr)
			}
		}
		id = created
	default:
		err = rp.cfg.Checks.UpdateCheckRun(ctx, j.InstallationID, j.Repo, id, run)
	}
	if err != nil {
		return fmt.Errorf("check run of %s: %w", j.ID, err)
	}
	rec := fmt.Sprintf("%d %s %s", id, c.Status, d)
	if _, err := rp.q.Amend(ctx, j.ID, queue.Amendment{Check: &rec}); err != nil {
		return fmt.Errorf("check run of %s: record: %w", j.ID, err)
	}
	return nil
}

// checkCreating, as the status of queue.Job.Check, says that a create of the job's check run
// failed after the recorded run (its ID; 0 for none): GitHub may have made it all the same.
const checkCreating = "creating"

// createCheck creates j's check run showing run. After a failed create (lost true) it first
// looks for the run that create may have made, one of j's external ID newer than the
// recorded one (last), and updates that instead, so that no run is left behind never
// completed.
func (rp *core) createCheck(ctx context.Context, j queue.Job, run ghapi.CheckRun, last int64, lost bool) (int64, error) {
	if lost {
		id, found, err := rp.cfg.Checks.FindCheckRun(ctx, j.InstallationID, j.Repo, j.SHA, CheckName, j.ID, last)
		if err != nil {
			return 0, err
		}
		if found {
			return id, rp.cfg.Checks.UpdateCheckRun(ctx, j.InstallationID, j.Repo, id, run)
		}
	}
	return rp.cfg.Checks.CreateCheckRun(ctx, j.InstallationID, j.Repo, run)
}

// parseCheck reads queue.Job.Check: "<id> <status> <digest>"; zero values for none.
func parseCheck(s string) (id int64, status, digest string) {
	f := strings.Fields(s)
	if len(f) != 3 {
		return 0, "", ""
	}
	id, _ = strconv.ParseInt(f[0], 10, 64)
	return id, f[1], f[2]
}
