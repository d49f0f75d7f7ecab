package ghapi

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/go-github/v60/github"
)

// maxCommitAttempts bounds how often CommitFiles rebuilds its commit on a moved head.
const maxCommitAttempts = 5

// CommitFiles commits files (path → content, mode 100644) on top of branch of repo in one
// commit through the Git Data API and moves the branch to it without forcing. UTF-8 files
// are sent inside the tree, others as blobs, so a commit of text files costs three writes
// (tree, commit, ref) whatever their number. When the branch moved meanwhile (422 "not a
// fast forward"), the commit is rebuilt on the new head, a bounded number of times. When
// the head already holds exactly these files (the tree would not change, as when a call is
// repeated after its commit landed), no commit is made and the head's SHA is returned. A
// 403 or 404 on a write wraps ErrPushDenied; a missing branch wraps ErrNotFound.
func (c *Client) CommitFiles(ctx context.Context, inst int64, repo, branch, message string, files map[string][]byte) (sha string, err error) {
	owner, name, gh, err := c.prep(inst, repo)
	if err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "", fmt.Errorf("commit to %s:%s: no files", repo, branch)
	}
	paths := slices.Sorted(maps.Keys(files))
	blobs := map[string]string{} // path → blob SHA; blobs do not depend on the head
	for attempt := 1; ; attempt++ {
		ref, _, err := gh.Git.GetRef(ctx, owner, name, "heads/"+branch)
		if err != nil {
			return "", wrap(err, "commit to %s:%s: read branch", repo, branch)
		}
		head := ref.GetObject().GetSHA()
		parent, _, err := gh.Git.GetCommit(ctx, owner, name, head)
		if err != nil {
			return "", wrap(err, "commit to %s:%s: read head %s", repo, branch, head)
		}
		var entries []*github.TreeEntry
		for _, p := range paths {
			if utf8.Valid(files[p]) {
				// Text goes into the tree itself: one write instead of a blob per file.
				entries = append(entries, &github.TreeEntry{
					Path: github.String(p), Mode: github.String("100644"), Type: github.String("blob"),
					Content: github.String(string(files[p])),
				})
				continue
			}
			if blobs[p] == "" {
				b, _, err := gh.Git.CreateBlob(ctx, owner, name, &github.Blob{
					Content:  github.String(base64.StdEncoding.EncodeToString(files[p])),
					Encoding: github.String("base64"),
				})
				if err != nil {
					return "", writeErr(err, repo, branch, "create blob for "+p)
				}
				blobs[p] = b.GetSHA()
			}
			entries = append(entries, &github.TreeEntry{
				Path: github.String(p), Mode: github.String("100644"), Type: github.String("blob"), SHA: github.String(blobs[p]),
			})
		}
		tree, _, err := gh.Git.CreateTree(ctx, owner, name, parent.GetTree().GetSHA(), entries)
		if err != nil {
			return "", writeErr(err, repo, branch, "create tree")
		}
		if tree.GetSHA() != "" && tree.GetSHA() == parent.GetTree().GetSHA() {
			// The head holds these files already (a repeated call after a commit that
			// landed): an empty commit would add nothing.
			c.log.Info("files already at the branch head, no commit", "repo", repo, "branch", branch, "sha", head)
			return head, nil
		}
		commit, _, err := gh.Git.CreateCommit(ctx, owner, name, &github.Commit{
			Message: github.String(message),
			Tree:    &github.Tree{SHA: tree.SHA},
			Parents: []*github.Commit{{SHA: github.String(head)}},
		}, nil)
		if err != nil {
			return "", writeErr(err, repo, branch, "create commit")
		}
		_, _, err = gh.Git.UpdateRef(ctx, owner, name, &github.Reference{
			Ref:    github.String("refs/heads/" + branch),
			Object: &github.GitObject{SHA: commit.SHA},
		}, false)
		if err == nil {
			return commit.GetSHA(), nil
		}
		if !notFastForward(err) || attempt >= maxCommitAttempts {
			return "", writeErr(err, repo, branch, "update branch")
		}
		c.log.Info("branch moved during commit, rebuilding", "repo", repo, "branch", branch, "sha", head, "attempt", attempt)
	}
}

func writeErr(err error, repo, branch, what string) error {
	switch status(err) {
	case http.StatusForbidden, http.StatusNotFound:
		return fmt.Errorf("commit to %s:%s: %s: %w: %w", repo, branch, what, ErrPushDenied, err)
	}
	return fmt.Errorf("commit to %s:%s: %s: %w", repo, branch, what, err)
}

func notFastForward(err error) bool {
	if status(err) != http.StatusUnprocessableEntity {
		return false
	}
	return strings.Contains(strings.ToLower(err.Error()), "fast forward")
}
