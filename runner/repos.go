package runner

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// checkRepo refuses a job of a repository this worker does not run: one outside
// WorkerConfig.Repos (ARENA_REPOS) when set, or, when the clone's remote is a repository
// URL, any other than that repository, whose refs/pull/N the job would otherwise fetch and
// measure in place of the PR it was approved for. With neither known it accepts (arenabot
// work refuses to start so).
func (w *Worker) checkRepo(ctx context.Context, pr int, name string) error {
	if len(w.cfg.Repos) > 0 && !containsFold(w.cfg.Repos, name) {
		return fmt.Errorf("job for repository `%s` refused: this runner runs the jobs of `%s` only (ARENA_REPOS); add the repository to the runner's ARENA_REPOS, or run its jobs on another runner pool",
			name, strings.Join(w.cfg.Repos, ", "))
	}
	if origin := RemoteRepo(ctx, w.cfg.RepoDir, w.cfg.Remote); origin != "" && !strings.EqualFold(origin, name) {
		return fmt.Errorf("job for repository `%s` refused: this runner's clone fetches pull requests from `%s` (remote %s), whose pull request #%d is another one; run the jobs of `%s` on a runner whose clone is of that repository",
			name, origin, w.cfg.Remote, pr, name)
	}
	return nil
}

// RemoteRepo returns the repository ("owner/name") that remote of the clone dir points at,
// "" when its URL names none (a local path, a bundle) or git cannot tell.
func RemoteRepo(ctx context.Context, dir, remote string) string {
	out, err := repo{dir: dir, remote: remote}.git(ctx, nil, "remote", "get-url", "--", remote)
	if err != nil {
		return ""
	}
	return repoOfURL(strings.TrimSpace(string(out)))
}

// repoOfURL returns owner/name of a git remote URL: https://host/owner/name(.git),
// ssh://git@host/owner/name.git or git@host:owner/name.git; "" for anything else.
func repoOfURL(raw string) string {
	var p string
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && u.Host != "" {
		switch u.Scheme {
		case "https", "http", "ssh", "git":
			p = u.Path
		default:
			return ""
		}
	} else if at, rest, ok := strings.Cut(raw, ":"); ok && strings.Contains(at, "@") && !strings.Contains(at, "/") {
		p = rest // scp-like: git@github.com:owner/name.git
	} else {
		return ""
	}
	p = strings.TrimSuffix(strings.TrimSuffix(strings.Trim(p, "/"), ".git"), "/")
	owner, name, ok := strings.Cut(p, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return ""
	}
	return owner + "/" + name
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
