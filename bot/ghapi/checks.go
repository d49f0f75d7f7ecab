package ghapi

import (
	"context"
	"time"

	"github.com/google/go-github/v60/github"
)

// A CheckRun is what the bot's check run on a commit shows (the Checks API).
type CheckRun struct {
	Name       string // "arenabot"
	HeadSHA    string // the commit it is on; create only
	ExternalID string // the request's ID
	DetailsURL string // where its full record is: the request's status comment or reply
	Status     string // "queued", "in_progress" or "completed"
	// Conclusion, when completed: "success", "failure", "neutral", "cancelled", "timed_out"
	// or "action_required".
	Conclusion string
	Title      string // the output's title: one line
	Summary    string // the output's summary: Markdown, at most 65535 characters
}

// checkTextMax is the most characters GitHub keeps in a check run output's summary.
const checkTextMax = 65535

func (r CheckRun) output() *github.CheckRunOutput {
	summary := r.Summary
	if len(summary) > checkTextMax {
		summary = summary[:checkTextMax-20] + "\n\n(cut)"
	}
	return &github.CheckRunOutput{Title: github.String(r.Title), Summary: github.String(summary)}
}

// Checks writes check runs through a Client (the Checks API).
type Checks struct{ c *Client }

// NewChecks returns the check-run writer of c.
func NewChecks(c *Client) Checks { return Checks{c: c} }

// CreateCheckRun creates a check run on r.HeadSHA and returns its ID.
func (k Checks) CreateCheckRun(ctx context.Context, inst int64, repo string, r CheckRun) (int64, error) {
	owner, name, gh, err := k.c.prep(inst, repo)
	if err != nil {
		return 0, err
	}
	opts := github.CreateCheckRunOptions{
		Name: r.Name, HeadSHA: r.HeadSHA, Status: github.String(r.Status), Output: r.output(),
	}
	if r.ExternalID != "" {
		opts.ExternalID = github.String(r.ExternalID)
	}
	if r.DetailsURL != "" {
		opts.DetailsURL = github.String(r.DetailsURL)
	}
	if r.Status == "completed" {
		opts.Conclusion = github.String(r.Conclusion)
		opts.CompletedAt = &github.Timestamp{Time: time.Now()}
	}
	run, _, err := gh.Checks.CreateCheckRun(ctx, owner, name, opts)
	if err != nil {
		return 0, wrap(err, "create check run on %s@%s", repo, r.HeadSHA)
	}
	return run.GetID(), nil
}

// UpdateCheckRun sets check run id to r (its name, status, conclusion and output).
func (k Checks) UpdateCheckRun(ctx context.Context, inst int64, repo string, id int64, r CheckRun) error {
	owner, name, gh, err := k.c.prep(inst, repo)
	if err != nil {
		return err
	}
	opts := github.UpdateCheckRunOptions{Name: r.Name, Status: github.String(r.Status), Output: r.output()}
	if r.DetailsURL != "" {
		opts.DetailsURL = github.String(r.DetailsURL)
	}
	if r.Status == "completed" {
		opts.Conclusion = github.String(r.Conclusion)
		opts.CompletedAt = &github.Timestamp{Time: time.Now()}
	}
	if _, _, err := gh.Checks.UpdateCheckRun(ctx, owner, name, id, opts); err != nil {
		return wrap(err, "update check run %d of %s", id, repo)
	}
	return nil
}

// FindCheckRun returns the newest check run named name on sha whose external ID is
// externalID and whose ID is above after: one a create made although its answer was lost.
// found is false when there is none.
func (k Checks) FindCheckRun(ctx context.Context, inst int64, repo, sha, name, externalID string, after int64) (id int64, found bool, err error) {
	owner, repoName, gh, err := k.c.prep(inst, repo)
	if err != nil {
		return 0, false, err
	}
	opts := &github.ListCheckRunsOptions{CheckName: github.String(name), Filter: github.String("all"), ListOptions: github.ListOptions{PerPage: 100}}
	for {
		runs, resp, err := gh.Checks.ListCheckRunsForRef(ctx, owner, repoName, sha, opts)
		if err != nil {
			return 0, false, wrap(err, "list check runs on %s@%s", repo, sha)
		}
		for _, r := range runs.CheckRuns {
			if r.GetExternalID() == externalID && r.GetID() > after && r.GetID() > id {
				id, found = r.GetID(), true
			}
		}
		if resp.NextPage == 0 {
			return id, found, nil
		}
		opts.Page = resp.NextPage
	}
}
