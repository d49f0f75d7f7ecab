package ghapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-github/v60/github"
)

// ResolveLogin asks GitHub who the client is and makes that the login FindComment filters
// by: with App auth the App's slug plus "[bot]" (GET /app, with the App's JSON web token),
// the login its comments are written under; with token auth the token's user (GET /user).
// An empty answer is an error. When Config.BotLogin is set it must be that login (case
// aside): otherwise the error names both and nothing changes.
func (c *Client) ResolveLogin(ctx context.Context) (string, error) {
	login, err := whoAmI(ctx, c)
	if err != nil {
		return "", err
	}
	if c.cfg.BotLogin != "" && !strings.EqualFold(c.cfg.BotLogin, login) {
		return "", fmt.Errorf("the bot's login is %q according to GitHub but ARENA_BOT_LOGIN says %q; unset ARENA_BOT_LOGIN or set it to %q", login, c.cfg.BotLogin, login)
	}
	c.mu.Lock()
	c.login = login
	c.mu.Unlock()
	return login, nil
}

// Login is the login FindComment filters by: the one ResolveLogin learnt, else
// Config.BotLogin; "" when neither is known.
func (c *Client) Login() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.login != "" {
		return c.login
	}
	return c.cfg.BotLogin
}

// InstalledRepos lists the repositories ("owner/name", sorted, each once) that the GitHub
// App is installed on: every installation (GET /app/installations) and the repositories
// each one grants (GET /installation/repositories). With token auth it returns ErrNoApp:
// a token has no installations.
func (c *Client) InstalledRepos(ctx context.Context) ([]string, error) {
	app, err := c.appClient()
	if err != nil {
		return nil, err
	}
	var insts []int64
	opts := &github.ListOptions{PerPage: 100}
	for {
		page, resp, err := app.Apps.ListInstallations(ctx, opts)
		if err != nil {
			return nil, wrap(err, "list the GitHub App's installations (GET /app/installations)")
		}
		for _, in := range page {
			insts = append(insts, in.GetID())
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	var repos []string
	for _, inst := range insts {
		gh, err := c.gh(inst)
		if err != nil {
			return nil, err
		}
		opts := &github.ListOptions{PerPage: 100}
		for {
			list, resp, err := gh.Apps.ListRepos(ctx, opts)
			if err != nil {
				return nil, wrap(err, "list the repositories of installation %d (GET /installation/repositories)", inst)
			}
			for _, r := range list.Repositories {
				repos = append(repos, r.GetFullName())
			}
			if resp.NextPage == 0 {
				break
			}
			opts.Page = resp.NextPage
		}
	}
	slices.SortFunc(repos, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	return slices.CompactFunc(repos, strings.EqualFold), nil
}

// whoAmI is ResolveLogin's question to GitHub.
func whoAmI(ctx context.Context, c *Client) (string, error) {
	if c.apps != nil {
		gh, err := c.appClient()
		if err != nil {
			return "", err
		}
		app, _, err := gh.Apps.Get(ctx, "")
		if err != nil {
			return "", wrap(err, "who is the GitHub App (GET /app)")
		}
		if app.GetSlug() == "" {
			return "", errors.New("who is the GitHub App (GET /app): the answer has no slug")
		}
		return app.GetSlug() + "[bot]", nil
	}
	gh, err := c.gh(0)
	if err != nil {
		return "", err
	}
	u, _, err := gh.Users.Get(ctx, "")
	if err != nil {
		return "", wrap(err, "who owns the GitHub token (GET /user)")
	}
	if u.GetLogin() == "" {
		return "", errors.New("who owns the GitHub token (GET /user): the answer has no login")
	}
	return u.GetLogin(), nil
}
