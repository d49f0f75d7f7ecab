package githubtest

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// CheckRun is a check run as the fake holds it (the Checks API): created by POST
// /repos/{owner}/{repo}/check-runs, changed by PATCH /repos/{owner}/{repo}/check-runs/{id},
// listed by GET /repos/{owner}/{repo}/commits/{sha}/check-runs.
type CheckRun struct {
	ID         int64
	Name       string
	HeadSHA    string
	ExternalID string
	DetailsURL string
	Status     string // queued, in_progress, completed
	Conclusion string // set when completed
	Title      string
	Summary    string
	Updates    int // PATCHes applied
}

var (
	checkStatuses    = []string{"queued", "in_progress", "completed"}
	checkConclusions = []string{"action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out"}
)

const checksDocs = "https://docs.github.com/rest/checks/runs"

// shaPattern is a full commit SHA.
var shaPattern = regexp.MustCompile(`^[0-9a-f]{40}$`)

// checkInput is the body of a create or update, every field optional on update.
type checkInput struct {
	Name       *string `json:"name"`
	HeadSHA    *string `json:"head_sha"`
	ExternalID *string `json:"external_id"`
	DetailsURL *string `json:"details_url"`
	Status     *string `json:"status"`
	Conclusion *string `json:"conclusion"`
	Output     *struct {
		Title   *string `json:"title"`
		Summary *string `json:"summary"`
	} `json:"output"`
}

// apply checks in against GitHub's rules and applies it to c: a status GitHub knows, a
// conclusion it knows exactly when the run is completed, an output with a title and a
// summary of at most 65535 characters.
func (in checkInput) apply(c *CheckRun) *response {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&c.Name, in.Name)
	set(&c.ExternalID, in.ExternalID)
	set(&c.DetailsURL, in.DetailsURL)
	set(&c.Status, in.Status)
	set(&c.Conclusion, in.Conclusion)
	if in.Conclusion != nil && in.Status == nil {
		c.Status = "completed" // GitHub completes a run given a conclusion
	}
	if out := in.Output; out != nil {
		if out.Title == nil || out.Summary == nil {
			return validationFailed("CheckRun", "output", "missing_field", "output needs a title and a summary", checksDocs)
		}
		if len([]rune(*out.Summary)) > 65535 {
			return validationFailed("CheckRun", "output", "invalid", "summary is too long (maximum is 65535 characters)", checksDocs)
		}
		c.Title, c.Summary = *out.Title, *out.Summary
	}
	switch {
	case c.Name == "":
		return validationFailed("CheckRun", "name", "missing_field", "", checksDocs)
	case !slices.Contains(checkStatuses, c.Status):
		return validationFailed("CheckRun", "status", "invalid", "", checksDocs)
	case c.Status == "completed" && !slices.Contains(checkConclusions, c.Conclusion):
		return validationFailed("CheckRun", "conclusion", "missing_field", "a completed check run needs a conclusion", checksDocs)
	case c.Status != "completed" && c.Conclusion != "":
		return unprocessable("Conclusion can only be set when status is completed", checksDocs)
	}
	return nil
}

// checkRuns answers POST .../check-runs and PATCH .../check-runs/{id}.
func (s *Server) checkRuns(r *repo, method string, rest []string, body []byte) *response {
	var in checkInput
	if !decode(body, &in) {
		return answer(http.StatusBadRequest, errorBody("Problems parsing JSON", checksDocs))
	}
	switch {
	case len(rest) == 1 && method == http.MethodPost:
		c := &CheckRun{Status: "queued"}
		if in.HeadSHA == nil || !shaPattern.MatchString(*in.HeadSHA) {
			return validationFailed("CheckRun", "head_sha", "invalid", "", checksDocs)
		}
		c.HeadSHA = *in.HeadSHA
		if resp := in.apply(c); resp != nil {
			return resp
		}
		s.nextID++
		c.ID = s.nextID
		r.checks = append(r.checks, c)
		return answer(http.StatusCreated, s.checkJSON(r, c))
	case len(rest) == 2 && method == http.MethodPatch:
		id, err := strconv.ParseInt(rest[1], 10, 64)
		if err != nil {
			return notFound()
		}
		i := slices.IndexFunc(r.checks, func(c *CheckRun) bool { return c.ID == id })
		if i < 0 {
			return notFound()
		}
		c := *r.checks[i]
		if in.HeadSHA != nil {
			return validationFailed("CheckRun", "head_sha", "invalid", "head_sha cannot be changed", checksDocs)
		}
		if resp := in.apply(&c); resp != nil {
			return resp
		}
		c.Updates++
		*r.checks[i] = c
		return answer(http.StatusOK, s.checkJSON(r, &c))
	}
	return notFound()
}

// listCheckRuns answers GET .../commits/{sha}/check-runs[?check_name=]: the runs on the
// commit, the newest first, as GitHub lists them.
func (s *Server) listCheckRuns(r *repo, sha, name string) *response {
	runs := []any{}
	for i := len(r.checks) - 1; i >= 0; i-- {
		if c := r.checks[i]; c.HeadSHA == sha && (name == "" || c.Name == name) {
			runs = append(runs, s.checkJSON(r, c))
		}
	}
	return answer(http.StatusOK, map[string]any{"total_count": len(runs), "check_runs": runs})
}

func (s *Server) checkJSON(r *repo, c *CheckRun) map[string]any {
	full := r.owner + "/" + r.name
	var completed any
	var conclusion any
	if c.Status == "completed" {
		completed, conclusion = s.now().UTC().Format(time.RFC3339), c.Conclusion
	}
	return map[string]any{
		"id": c.ID, "name": c.Name, "head_sha": c.HeadSHA, "external_id": c.ExternalID, "details_url": c.DetailsURL,
		"status": c.Status, "conclusion": conclusion, "started_at": s.now().UTC().Format(time.RFC3339), "completed_at": completed,
		"url":      fmt.Sprintf("%srepos/%s/check-runs/%d", s.URL, full, c.ID),
		"html_url": fmt.Sprintf("https://github.com/%s/runs/%d", full, c.ID),
		"output": map[string]any{"title": c.Title, "summary": c.Summary, "text": nil, "annotations_count": 0,
			"annotations_url": fmt.Sprintf("%srepos/%s/check-runs/%d/annotations", s.URL, full, c.ID)},
		"check_suite": map[string]any{"id": c.ID + 1000000},
		"app":         map[string]any{"slug": DefaultAppSlug},
	}
}

// CheckRuns returns the check runs of a repository as they are now, the oldest first.
func (s *Server) CheckRuns(repoName string) []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CheckRun
	for _, c := range s.mustRepo(repoName).checks {
		out = append(out, *c)
	}
	return out
}
