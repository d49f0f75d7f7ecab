package githubtest

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-github/v60/github"
)

// client returns a go-github v60 client for s, as the bot builds one from
// ARENA_GITHUB_API_URL.
func client(t *testing.T, s *Server) *github.Client {
	t.Helper()
	c := github.NewClient(nil).WithAuthToken("test-token")
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	c.BaseURL, c.UploadURL = u, u
	return c
}

func TestGoGitHubEnterpriseURLs(t *testing.T) {
	s := newRepo(t)
	s.SetPermission(repoName, "m", "maintain")
	c, err := github.NewClient(nil).WithEnterpriseURLs(s.URL, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := c.Repositories.GetPermissionLevel(context.Background(), "octo", "arena", "m")
	if err != nil {
		t.Fatal(err)
	}
	if p.GetPermission() != "write" || p.GetUser().GetRoleName() != "maintain" || !p.GetUser().GetPermissions()["maintain"] {
		t.Errorf("permission = %+v", p)
	}
	if calls := s.Calls(); calls[0].Path != "/repos/octo/arena/collaborators/m/permission" {
		t.Errorf("recorded path = %q", calls[0].Path)
	}
}

func TestGoGitHubComments(t *testing.T) {
	ctx := context.Background()
	s := newRepo(t)
	c := client(t, s)
	created, resp, err := c.Issues.CreateComment(ctx, "octo", "arena", 3, &github.IssueComment{Body: github.String("hello")})
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("CreateComment: %v %v", resp, err)
	}
	if created.GetUser().GetLogin() != BotLogin || created.GetUser().GetType() != "Bot" || created.GetHTMLURL() == "" || created.GetCreatedAt().IsZero() {
		t.Errorf("created = %+v", created)
	}
	edited, _, err := c.Issues.EditComment(ctx, "octo", "arena", created.GetID(), &github.IssueComment{Body: github.String("edited")})
	if err != nil || edited.GetBody() != "edited" {
		t.Fatalf("EditComment: %v %v", edited, err)
	}
	_, _, err = c.Issues.CreateComment(ctx, "octo", "arena", 3, &github.IssueComment{Body: github.String(strings.Repeat("x", MaxCommentLength+1))})
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response.StatusCode != http.StatusUnprocessableEntity || len(er.Errors) != 1 || er.Errors[0].Field != "body" {
		t.Errorf("too long: %v", err)
	}
	for range 4 {
		s.AddComment(repoName, 3, "alice", "more")
	}
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 2}}
	var n int
	for {
		list, resp, err := c.Issues.ListComments(ctx, "octo", "arena", 3, opts)
		if err != nil {
			t.Fatal(err)
		}
		n += len(list)
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if n != 5 {
		t.Errorf("listed %d comments, want 5", n)
	}
}

func TestGoGitHubReactionsConditional(t *testing.T) {
	ctx := context.Background()
	s := newRepo(t)
	c := client(t, s)
	id := s.AddComment(repoName, 1, BotLogin, "status")
	_, resp, err := c.Reactions.CreateIssueCommentReaction(ctx, "octo", "arena", id, "eyes")
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("first reaction: %v %v", resp, err)
	}
	_, resp, err = c.Reactions.CreateIssueCommentReaction(ctx, "octo", "arena", id, "eyes")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("second reaction: %v %v", resp, err)
	}

	// The bot's poll: go-github has no ETag field, so it sends If-None-Match itself.
	poll := func(etag string) ([]*github.Reaction, *github.Response, error) {
		req, err := c.NewRequest("GET", "repos/octo/arena/issues/comments/"+strconv.FormatInt(id, 10)+"/reactions", nil)
		if err != nil {
			t.Fatal(err)
		}
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		var out []*github.Reaction
		resp, err := c.Do(ctx, req, &out)
		return out, resp, err
	}
	list, resp, err := poll("")
	if err != nil || len(list) != 1 || list[0].GetContent() != "eyes" {
		t.Fatalf("list: %v %v", list, err)
	}
	etag := resp.Header.Get("ETag")
	_, _, err = poll(etag)
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response.StatusCode != http.StatusNotModified {
		t.Fatalf("conditional poll: %v", err)
	}
	s.React(repoName, id, "alice", "+1")
	list, resp, err = poll(etag)
	if err != nil || len(list) != 2 || list[1].GetUser().GetLogin() != "alice" || resp.Header.Get("ETag") == etag {
		t.Fatalf("after React: %v %v", list, err)
	}
}

func TestGoGitHubPullAndContents(t *testing.T) {
	ctx := context.Background()
	s := newRepo(t)
	c := client(t, s)
	s.AddPR(repoName, PR{Number: 12, HeadSHA: "h1", HeadRef: "x", HeadRepo: "eve/arena", User: "eve",
		MaintainerCanModify: true, Files: []string{"a", "b", "c"}})
	s.AddFile("eve/arena", "h1", "frameworks/go/meta.json", []byte(`{"name":"go"}`))

	pr, _, err := c.PullRequests.Get(ctx, "octo", "arena", 12)
	if err != nil {
		t.Fatal(err)
	}
	if pr.GetHead().GetSHA() != "h1" || pr.GetHead().GetRepo().GetFullName() != "eve/arena" || !pr.GetMaintainerCanModify() || pr.GetUser().GetLogin() != "eve" {
		t.Errorf("PR = %+v", pr)
	}
	var names []string
	opts := &github.ListOptions{PerPage: 2}
	for {
		files, resp, err := c.PullRequests.ListFiles(ctx, "octo", "arena", 12, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			names = append(names, f.GetFilename())
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, names); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}

	file, _, _, err := c.Repositories.GetContents(ctx, "eve", "arena", "frameworks/go/meta.json", &github.RepositoryContentGetOptions{Ref: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := file.GetContent(); err != nil || got != `{"name":"go"}` {
		t.Errorf("content = %q, %v", got, err)
	}
	_, dir, _, err := c.Repositories.GetContents(ctx, "eve", "arena", "frameworks", &github.RepositoryContentGetOptions{Ref: "h1"})
	if err != nil || len(dir) != 1 || dir[0].GetName() != "go" || dir[0].GetType() != "dir" {
		t.Errorf("directory = %v, %v", dir, err)
	}
}

func TestGoGitHubGitData(t *testing.T) {
	ctx := context.Background()
	s := newRepo(t)
	c := client(t, s)
	s.AddPR(repoName, PR{Number: 1, HeadSHA: "p1", HeadRef: "feat"})

	ref, _, err := c.Git.GetRef(ctx, "octo", "arena", "refs/heads/feat")
	if err != nil {
		t.Fatal(err)
	}
	head, _, err := c.Git.GetCommit(ctx, "octo", "arena", ref.GetObject().GetSHA())
	if err != nil {
		t.Fatal(err)
	}
	blob, _, err := c.Git.CreateBlob(ctx, "octo", "arena", &github.Blob{Content: github.String("r"), Encoding: github.String("utf-8")})
	if err != nil {
		t.Fatal(err)
	}
	tree, _, err := c.Git.CreateTree(ctx, "octo", "arena", head.GetTree().GetSHA(), []*github.TreeEntry{
		{Path: github.String("results/r.json"), Mode: github.String("100644"), Type: github.String("blob"), SHA: blob.SHA},
	})
	if err != nil {
		t.Fatal(err)
	}
	commit, _, err := c.Git.CreateCommit(ctx, "octo", "arena", &github.Commit{
		Message: github.String("results"), Tree: &github.Tree{SHA: tree.SHA}, Parents: []*github.Commit{{SHA: head.SHA}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref.Object.SHA = commit.SHA
	if _, _, err := c.Git.UpdateRef(ctx, "octo", "arena", ref, false); err != nil {
		t.Fatal(err)
	}

	s.SetHead(repoName, 1, "p2")
	stale, _, err := c.Git.CreateCommit(ctx, "octo", "arena", &github.Commit{
		Message: github.String("again"), Tree: &github.Tree{SHA: tree.SHA}, Parents: []*github.Commit{{SHA: commit.SHA}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref.Object.SHA = stale.SHA
	_, _, err = c.Git.UpdateRef(ctx, "octo", "arena", ref, false)
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response.StatusCode != http.StatusUnprocessableEntity || er.Message != "Update is not a fast forward" {
		t.Errorf("stale update: %v", err)
	}
}

func TestGoGitHubRateLimitErrors(t *testing.T) {
	ctx := context.Background()
	s := newRepo(t)
	s.RateLimitNext("", "", 2*time.Second)
	_, _, err := client(t, s).Issues.CreateComment(ctx, "octo", "arena", 1, &github.IssueComment{Body: github.String("x")})
	var abuse *github.AbuseRateLimitError
	if !errors.As(err, &abuse) || abuse.GetRetryAfter() != 2*time.Second {
		t.Errorf("secondary: %v", err)
	}

	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	s.PrimaryRateLimitNext("", "", http.StatusForbidden, reset)
	_, _, err = client(t, s).PullRequests.Get(ctx, "octo", "arena", 1)
	var rl *github.RateLimitError
	if !errors.As(err, &rl) || !rl.Rate.Reset.Time.Equal(reset) || rl.Rate.Remaining != 0 {
		t.Errorf("primary: %v", err)
	}

	s.FailNext("GET", "", 1, http.StatusBadGateway)
	_, _, err = client(t, s).PullRequests.Get(ctx, "octo", "arena", 1)
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response.StatusCode != http.StatusBadGateway {
		t.Errorf("FailNext: %v", err)
	}
}
