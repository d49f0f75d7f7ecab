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
// is to run again, since GitHub keeps a completed run completed; otherwise it is updated.
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
	if id == 0 || status == "completed" && c.Status != "completed" {
		id, err = rp.cfg.Checks.CreateCheckRun(ctx, j.InstallationID, j.Repo, run)
	} else {
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

// parseCheck reads queue.Job.Check: "<id> <status> <digest>"; zero values for none.
func parseCheck(s string) (id int64, status, digest string) {
	f := strings.Fields(s)
	if len(f) != 3 {
		return 0, "", ""
	}
	id, _ = strconv.ParseInt(f[0], 10, 64)
	return id, f[1], f[2]
}
