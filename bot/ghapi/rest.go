package ghapi

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/google/go-github/v60/github"
)

// PR is what the bot reads of a pull request.
type PR struct {
	Number  int
	HeadSHA string
	HeadRef string
	// HeadRepo is the head repository's full name, "" when the fork was deleted.
	HeadRepo            string
	BaseRef             string
	Author              string
	MaintainerCanModify bool
	State               string // open or closed
}

// Reaction is one reaction on a comment.
type Reaction struct {
	ID      int64
	User    string
	Content string // +1, -1, laugh, confused, heart, hooray, rocket, eyes
}

// PullRequest reads pull request n of repo ("owner/name").
func (c *Client) PullRequest(ctx context.Context, inst int64, repo string, n int) (PR, error) {
	owner, name, gh, err := c.prep(inst, repo)
	if err != nil {
		return PR{}, err
	}
	pr, _, err := gh.PullRequests.Get(ctx, owner, name, n)
	if err != nil {
		return PR{}, wrap(err, "pull request %s#%d", repo, n)
	}
	return PR{
		Number:              pr.GetNumber(),
		HeadSHA:             pr.GetHead().GetSHA(),
		HeadRef:             pr.GetHead().GetRef(),
		HeadRepo:            pr.GetHead().GetRepo().GetFullName(),
		BaseRef:             pr.GetBase().GetRef(),
		Author:              pr.GetUser().GetLogin(),
		MaintainerCanModify: pr.GetMaintainerCanModify(),
		State:               pr.GetState(),
	}, nil
}

// ChangedFiles lists the paths a pull request changes, all pages (GitHub stops at 3000).
func (c *Client) ChangedFiles(ctx context.Context, inst int64, repo string, n int) ([]string, error) {
	owner, name, gh, err := c.prep(inst, repo)
	if err != nil {
		return nil, err
	}
	var out []string
	opts := &github.ListOptions{PerPage: 100}
	for {
		files, resp, err := gh.PullRequests.ListFiles(ctx, owner, name, n, opts)
		if err != nil {
			return nil, wrap(err, "files of %s#%d", repo, n)
		}
		for _, f := range files {
			out = append(out, f.GetFilename())
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// File reads a file at ref (branch, tag or SHA; "" for the default branch) through the
// contents API. A missing file wraps ErrNotFound.
func (c *Client) File(ctx context.Context, inst int64, repo, ref, path string) ([]byte, error) {
	owner, name, gh, err := c.prep(inst, repo)
	if err != nil {
		return nil, err
	}
	f, _, _, err := gh.Repositories.GetContents(ctx, owner, name, path, &github.RepositoryContentGetOptions{Ref: ref})
	if err != nil {
		return nil, wrap(err, "file %s of %s@%s", path, repo, ref)
	}
	if f == nil {
		return nil, fmt.Errorf("file %s of %s@%s: is a directory", path, repo, ref)
	}
	if f.GetEncoding() == "none" && f.GetSHA() != "" {
		// Above 1 MB the contents API gives no content (a results file of a framework with
		// many rows may get there): the blob API gives it, up to 100 MB.
		b, _, err := gh.Git.GetBlob(ctx, owner, name, f.GetSHA())
		if err != nil {
			return nil, wrap(err, "file %s of %s@%s: blob %s", path, repo, ref, f.GetSHA())
		}
		if b.GetEncoding() != "base64" {
			return nil, fmt.Errorf("file %s of %s@%s: blob %s in encoding %q", path, repo, ref, f.GetSHA(), b.GetEncoding())
		}
		c, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(b.GetContent(), "\n", ""))
		if err != nil {
			return nil, fmt.Errorf("file %s of %s@%s: blob %s: %w", path, repo, ref, f.GetSHA(), err)
		}
		return c, nil
	}
	s, err := f.GetContent()
	if err != nil {
		return nil, fmt.Errorf("file %s of %s@%s: %w", path, repo, ref, err)
	}
	return []byte(s), nil
}

// Dir lists the names in a directory at ref. A missing directory wraps ErrNotFound.
func (c *Client) Dir(ctx context.Context, inst int64, repo, ref, path string) ([]string, error) {
	owner, name, gh, err := c.prep(inst, repo)
	if err != nil {
		return nil, err
	}
	_, list, _, err := gh.Repositories.GetContents(ctx, owner, name, path, &github.RepositoryContentGetOptions{Ref: ref})
	if err != nil {
		return nil, wrap(err, "directory %s of %s@%s", path, repo, ref)
	}
	if list == nil {
		return nil, fmt.Errorf("directory %s of %s@%s: is a file", path, repo, ref)
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		out = append(out, e.GetName())
	}
	return out, nil
}

// permissionLevel is the permission endpoint's answer. go-github v60's struct lacks
// role_name, which tells maintain from write and triage from read.
type permissionLevel struct {
	Permission string `json:"permission"`
	RoleName   string `json:"role_name"`
	User       struct {
		RoleName    string          `json:"role_name"`
		Permissions map[string]bool `json:"permissions"`
	} `json:"user"`
}

var roles = map[string]bool{"admin": true, "maintain": true, "write": true, "triage": true, "read": true, "none": true}

// Permission returns user's role on repo: admin, maintain, write, triage, read or none.
// Answers are cached for Config.PermissionTTL.
func (c *Client) Permission(ctx context.Context, inst int64, repo, user string) (string, error) {
	owner, name, gh, err := c.prep(inst, repo)
	if err != nil {
		return "", err
	}
	key := fmt.Sprintf("%d\x00%s\x00%s", inst, strings.ToLower(repo), strings.ToLower(user))
	c.mu.Lock()
	e, ok := c.perms[key]
	c.mu.Unlock()
	if ok && c.now().Before(e.expires) {
		return e.perm, nil
	}
	req, err := gh.NewRequest(http.MethodGet, fmt.Sprintf("repos/%s/%s/collaborators/%s/permission", owner, name, user), nil)
	if err != nil {
		return "", err
	}
	var p permissionLevel
	if _, err := gh.Do(ctx, req, &p); err != nil {
		return "", wrap(err, "permission of %s on %s", user, repo)
	}
	perm := p.Permission
	switch {
	case roles[p.RoleName]:
		perm = p.RoleName
	case roles[p.User.RoleName]:
		perm = p.User.RoleName
	case perm == "write" && p.User.Permissions["maintain"]:
		perm = "maintain"
	case perm == "read" && p.User.Permissions["triage"]:
		perm = "triage"
	}
	if !roles[perm] {
		return "", fmt.Errorf("permission of %s on %s: unknown permission %q", user, repo, perm)
	}
	if c.cfg.PermissionTTL > 0 {
		c.mu.Lock()
		c.perms[key] = permEntry{perm: perm, expires: c.now().Add(c.cfg.PermissionTTL)}
		c.mu.Unlock()
	}
	return perm, nil
}

// React adds the caller's reaction to an issue comment. Reacting twice is harmless.
func (c *Client) React(ctx context.Context, inst int64, repo string, commentID int64, content string) error {
	owner, name, gh, err := c.prep(inst, repo)
	if err != nil {
		return err
	}
	if _, _, err := gh.Reactions.CreateIssueCommentReaction(ctx, owner, name, commentID, content); err != nil {
		return wrap(err, "react %s to comment %d of %s", content, commentID, repo)
	}
	return nil
}

// Reactions lists the reactions on an issue comment with a conditional request: given the
// ETag of an earlier answer, an unchanged list answers notModified (and costs no rate
// limit). newETag is the first page's ETag; pass it next time.
func (c *Client) Reactions(ctx context.Context, inst int64, repo string, commentID int64, etag string) (rs []Reaction, newETag string, notModified bool, err error) {
	owner, name, gh, err := c.prep(inst, repo)
	if err != nil {
		return nil, "", false, err
	}
	for page := 1; page != 0; {
		u := fmt.Sprintf("repos/%s/%s/issues/comments/%d/reactions?per_page=100&page=%d", owner, name, commentID, page)
		req, err := gh.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			return nil, "", false, err
		}
		req.Header.Set("Accept", "application/vnd.github.squirrel-girl-preview+json")
		if page == 1 && etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		var list []*github.Reaction
		resp, err := gh.Do(ctx, req, &list)
		if page == 1 && resp != nil && resp.StatusCode == http.StatusNotModified {
			return nil, etag, true, nil
		}
		if err != nil {
			return nil, "", false, wrap(err, "reactions of comment %d of %s", commentID, repo)
		}
		if page == 1 {
			newETag = resp.Header.Get("ETag")
		}
		for _, r := range list {
			rs = append(rs, Reaction{ID: r.GetID(), User: r.GetUser().GetLogin(), Content: r.GetContent()})
		}
		page = resp.NextPage
	}
	return rs, newETag, false, nil
}

// markerRe finds a hidden marker such as "<!-- arenabot:job=abc -->".
var markerRe = regexp.MustCompile(`<!--\s*arenabot:[^>]*?-->`)

// CreateComment posts a comment on issue or pull request n and returns its id.
//
// Callers must put a unique hidden marker in body, "<!-- arenabot:job=<id> -->" (or any
// "<!-- arenabot:… -->"): when the create's outcome is unknown (a 5xx answer or a network
// error after the request may have been carried out), CreateComment looks for a comment
// holding the marker before trying again, and returns that comment's id when it finds one,
// so a retried create never posts twice. Without a marker such a failure is returned, not
// retried. Rate-limited creates are always retried (GitHub did not carry them out).
func (c *Client) CreateComment(ctx context.Context, inst int64, repo string, n int, body string) (id int64, err error) {
	owner, name, gh, err := c.prep(inst, repo)
	if err != nil {
		return 0, err
	}
	marker := markerRe.FindString(body)
	once := context.WithValue(ctx, noRetryUnknownKey{}, true)
	for attempt := 0; ; attempt++ {
		cm, resp, err := gh.Issues.CreateComment(once, owner, name, n, &github.IssueComment{Body: github.String(body)})
		if err == nil {
			return cm.GetID(), nil
		}
		unknown := ctx.Err() == nil && (resp == nil || resp.StatusCode >= 500)
		if !unknown || marker == "" || attempt >= c.cfg.MaxRetries {
			return 0, wrap(err, "comment on %s#%d", repo, n)
		}
		wait := backoff(attempt)
		c.log.Warn("github comment create failed, looking for it before retrying", "repo", repo, "pr", n, "err", err, "wait", wait)
		if err := c.cfg.Sleep(ctx, wait); err != nil {
			return 0, err
		}
		id, _, found, ferr := c.FindComment(ctx, inst, repo, n, marker)
		if ferr != nil {
			return 0, fmt.Errorf("comment on %s#%d: %w (and looking for it: %w)", repo, n, err, ferr)
		}
		if found {
			return id, nil
		}
	}
}

// EditComment replaces the body of an issue comment.
func (c *Client) EditComment(ctx context.Context, inst int64, repo string, id int64, body string) error {
	owner, name, gh, err := c.prep(inst, repo)
	if err != nil {
		return err
	}
	if _, _, err := gh.Issues.EditComment(ctx, owner, name, id, &github.IssueComment{Body: github.String(body)}); err != nil {
		return wrap(err, "edit comment %d of %s", id, repo)
	}
	return nil
}

// FindComment returns the first comment of issue or pull request n whose body contains
// marker and was written by the bot itself (Login), scanning all pages: a marker planted in
// anyone else's comment is not found. Without a known login it fails.
func (c *Client) FindComment(ctx context.Context, inst int64, repo string, n int, marker string) (id int64, body string, found bool, err error) {
	owner, name, gh, err := c.prep(inst, repo)
	if err != nil {
		return 0, "", false, err
	}
	if marker == "" {
		return 0, "", false, errors.New("find comment: empty marker")
	}
	login := c.Login()
	if login == "" {
		return 0, "", false, errors.New("find comment: the bot's own login is unknown, so a marker planted by anyone else would be taken for the bot's; set ghapi.Config.BotLogin or call ResolveLogin first")
	}
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		list, resp, err := gh.Issues.ListComments(ctx, owner, name, n, opts)
		if err != nil {
			return 0, "", false, wrap(err, "comments of %s#%d", repo, n)
		}
		for _, cm := range list {
			if !strings.EqualFold(cm.GetUser().GetLogin(), login) {
				continue
			}
			if strings.Contains(cm.GetBody(), marker) {
				return cm.GetID(), cm.GetBody(), true, nil
			}
		}
		if resp.NextPage == 0 {
			return 0, "", false, nil
		}
		opts.Page = resp.NextPage
	}
}

// prep splits repo and returns the installation's client.
func (c *Client) prep(inst int64, repo string) (owner, name string, gh *github.Client, err error) {
	if owner, name, err = splitRepo(repo); err != nil {
		return "", "", nil, err
	}
	gh, err = c.gh(inst)
	return owner, name, gh, err
}
