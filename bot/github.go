package bot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/plan"
)

// GitHub is the part of *ghapi.Client the bot calls. Every method takes the
// installation id of the webhook event (0 with a token).
type GitHub interface {
	PullRequest(ctx context.Context, inst int64, repo string, n int) (ghapi.PR, error)
	ChangedFiles(ctx context.Context, inst int64, repo string, n int) ([]string, error)
	File(ctx context.Context, inst int64, repo, ref, path string) ([]byte, error)
	Dir(ctx context.Context, inst int64, repo, ref, path string) ([]string, error)
	Permission(ctx context.Context, inst int64, repo, user string) (string, error)
	React(ctx context.Context, inst int64, repo string, commentID int64, content string) error
	Reactions(ctx context.Context, inst int64, repo string, commentID int64, etag string) (rs []ghapi.Reaction, newETag string, notModified bool, err error)
	CreateComment(ctx context.Context, inst int64, repo string, n int, body string) (int64, error)
	EditComment(ctx context.Context, inst int64, repo string, id int64, body string) error
	FindComment(ctx context.Context, inst int64, repo string, n int, marker string) (id int64, body string, found bool, err error)
	// CommitFiles commits files on top of branch in one commit and returns its SHA, or the
	// head's when the head holds the files already (see ghapi.Client.CommitFiles).
	CommitFiles(ctx context.Context, inst int64, repo, branch, message string, files map[string][]byte) (sha string, err error)
}

// CheckRuns writes the bot's check runs (Config.Checks); ghapi.Checks implements it.
type CheckRuns interface {
	CreateCheckRun(ctx context.Context, inst int64, repo string, r ghapi.CheckRun) (int64, error)
	UpdateCheckRun(ctx context.Context, inst int64, repo string, id int64, r ghapi.CheckRun) error
	FindCheckRun(ctx context.Context, inst int64, repo, sha, name, externalID string, after int64) (id int64, found bool, err error)
}

var _ CheckRuns = ghapi.Checks{}

var _ GitHub = (*ghapi.Client)(nil)

// source reads one pull request at one SHA for plan.Resolve.
//
// ghapi's Dir returns bare names and does not say which are directories. The
// adapter therefore treats every name directly under plan.Root ("frameworks")
// as a directory (entries are directories; a stray file there is then offered
// as a candidate name only in suggestions, and fails as a missing meta.json if
// named), and every name inside an entry as a file (plan's go.mod check is
// shallow anyway; the runner repeats it on its checkout).
type source struct {
	gh   GitHub
	inst int64
	repo string
	pr   int
	sha  string
}

var _ plan.Source = source{}

// notExist wraps a GitHub "not found" so that errors.Is finds both ghapi.ErrNotFound
// and fs.ErrNotExist, which plan.Source promises.
type notExist struct{ err error }

func (e notExist) Error() string   { return e.err.Error() }
func (e notExist) Unwrap() []error { return []error{e.err, fs.ErrNotExist} }

func mapNotFound(err error) error {
	if err != nil && errors.Is(err, ghapi.ErrNotFound) && !errors.Is(err, fs.ErrNotExist) {
		return notExist{err}
	}
	return err
}

func (s source) ChangedFiles(ctx context.Context) ([]string, error) {
	files, err := s.gh.ChangedFiles(ctx, s.inst, s.repo, s.pr)
	return files, mapNotFound(err)
}

func (s source) File(ctx context.Context, path string) ([]byte, error) {
	b, err := s.gh.File(ctx, s.inst, s.repo, s.sha, path)
	return b, mapNotFound(err)
}

func (s source) Dir(ctx context.Context, path string) ([]string, error) {
	names, err := s.gh.Dir(ctx, s.inst, s.repo, s.sha, path)
	if err != nil {
		return nil, mapNotFound(err)
	}
	if strings.TrimSuffix(path, "/") != plan.Root {
		return names, nil
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		if !strings.HasSuffix(n, "/") {
			n += "/"
		}
		out = append(out, n)
	}
	return out, nil
}

func (s source) String() string { return fmt.Sprintf("%s#%d@%s", s.repo, s.pr, s.sha) }
