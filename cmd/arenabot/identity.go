package main

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/bot/ghapi"
)

// repoName is a GitHub repository's full name: an owner (letters, digits, hyphens) and a
// name (letters, digits, '.', '-', '_').
var repoName = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?/[A-Za-z0-9._-]+$`)

// reposFlag registers --repos (ARENA_REPOS) for cmd's flag set; parseRepos reads it.
func reposFlag(fs *pflag.FlagSet, getenv func(string) string, v *string, what string) {
	fs.StringVar(v, "repos", getenv("ARENA_REPOS"), what+"; owner/name, separated by commas or spaces (ARENA_REPOS)")
}

// parseRepos splits an ARENA_REPOS value ("octo/arena, octo/arena-next") into full names,
// each once; "" gives none.
func parseRepos(cmd, s string) ([]string, error) {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		if !repoName.MatchString(f) || strings.HasSuffix(f, ".git") {
			return nil, fmt.Errorf("%s: ARENA_REPOS entry %q is not a repository; want owner/name, e.g. ARENA_REPOS=octo/arena", cmd, f)
		}
		if !containsFold(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// servedScope learns, before serve takes any delivery, the bot's own login (which every
// marker search filters by) and the repositories it serves, or says why serve must not
// start:
//
//   - the login comes from GitHub (GET /app with App auth, GET /user with a token); an API
//     error, an empty answer or an ARENA_BOT_LOGIN that differs from it refuses;
//   - the repositories are ARENA_REPOS; unset, they are the one repository the App is
//     installed on. An App installed on several (or none), and token auth, whose token
//     reaches every repository its user can, refuse without ARENA_REPOS.
func servedScope(ctx context.Context, c serveConfig, gh *ghapi.Client, log *slog.Logger) (login string, repos []string, err error) {
	login, err = gh.ResolveLogin(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("cannot tell the bot's own login, which its comment searches filter by: %w", err)
	}
	if c.AppID == 0 {
		if len(c.Repos) == 0 {
			return "", nil, fmt.Errorf("ARENA_REPOS is not set: with token auth (ARENA_GITHUB_TOKEN) serve cannot tell which repositories' deliveries to act on, as the token reaches every repository %s can; set ARENA_REPOS to the arena repository, e.g. ARENA_REPOS=octo/arena", login)
		}
		return login, c.Repos, nil
	}
	installed, err := gh.InstalledRepos(ctx)
	if len(c.Repos) > 0 {
		// A name the App is not installed on is most likely a typo: its deliveries would
		// never come. Said, not refused: the App may be installed there later.
		if err != nil {
			log.Warn("could not list the repositories the GitHub App is installed on, to check ARENA_REPOS against them", "err", err)
		}
		for _, r := range c.Repos {
			if err == nil && !containsFold(installed, r) {
				log.Warn("the GitHub App is not installed on a repository ARENA_REPOS names; its deliveries will not come until it is", "repo", r)
			}
		}
		return login, c.Repos, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("ARENA_REPOS is not set, and listing the repositories the GitHub App is installed on failed: %w; set ARENA_REPOS to the repositories the bot serves, e.g. ARENA_REPOS=octo/arena", err)
	}
	switch len(installed) {
	case 0:
		return "", nil, fmt.Errorf("ARENA_REPOS is not set and the GitHub App %s is installed on no repository; install it on the arena repository, or set ARENA_REPOS", login)
	case 1:
		return login, installed, nil
	}
	shown := installed[:min(len(installed), 5)]
	more := ""
	if len(installed) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(installed)-len(shown))
	}
	return "", nil, fmt.Errorf("ARENA_REPOS is not set and the GitHub App %s is installed on %d repositories (%s%s), each of which could queue jobs on this host; set ARENA_REPOS to those the bot serves, e.g. ARENA_REPOS=%s", login, len(installed), strings.Join(shown, ", "), more, installed[0])
}
