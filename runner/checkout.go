package runner

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/text"
)

// Refs the worker fetches into its clone, so a job's commits stay reachable while it runs.
const (
	refPR   = "refs/arenabot/pr/" // + PR number
	refBase = "refs/arenabot/base"
)

// gitTimeout bounds one git command (a fetch of a large repository included).
const gitTimeout = 10 * time.Minute

// shaRE matches a full commit ID (SHA-1, or SHA-256 repositories).
var shaRE = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// entryNameRE is what an entry name must look like before it goes into a git path.
var entryNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// A repo is the worker's clone of the arena repository. It runs the git CLI; it only reads
// from the remote (fetch), so it needs no credentials beyond read access.
type repo struct {
	dir    string // the clone
	remote string // "origin"
}

// git runs git in the clone and returns its standard output; the error carries the last
// line of its standard error. stdout, when not nil, receives the output instead.
func (r repo) git(ctx context.Context, stdout io.Writer, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", r.dir}, args...)...)
	// Never prompt for credentials (a private remote fails instead of hanging), and keep
	// messages in English for the errors.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=", "LC_ALL=C")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdout != nil {
		cmd.Stdout = stdout
	}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("git %s: %w", args[0], ctx.Err())
		}
		return nil, fmt.Errorf("git %s: %w: %s", args[0], err, text.LastLine(errb.String()))
	}
	return out.Bytes(), nil
}

// fetch fetches the PR's head and the base branch into refs/arenabot/.
func (r repo) fetch(ctx context.Context, pr int, baseRef string) error {
	_, err := r.git(ctx, nil, "fetch", "--no-tags", "--force", "--", r.remote,
		fmt.Sprintf("+refs/pull/%d/head:%s%d", pr, refPR, pr),
		"+refs/heads/"+baseRef+":"+refBase)
	if err != nil {
		return fmt.Errorf("fetch refs/pull/%d/head and %s from %s: %w", pr, baseRef, r.remote, err)
	}
	return nil
}

// hasCommit reports whether the clone has the commit sha.
func (r repo) hasCommit(ctx context.Context, sha string) bool {
	_, err := r.git(ctx, nil, "cat-file", "-e", sha+"^{commit}")
	return err == nil
}

// resolve returns the commit a ref points at.
func (r repo) resolve(ctx context.Context, ref string) (string, error) {
	out, err := r.git(ctx, nil, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", ref, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// mergeBase returns the best common ancestor of two commits.
func (r repo) mergeBase(ctx context.Context, a, b string) (string, error) {
	out, err := r.git(ctx, nil, "merge-base", a, b)
	if err != nil {
		return "", fmt.Errorf("merge base of %s and %s: %w", short(a), short(b), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// tree returns the object ID of rev:p (a directory's tree), "" when there is none.
func (r repo) tree(ctx context.Context, rev, p string) string {
	out, err := r.git(ctx, nil, "rev-parse", "--verify", "--quiet", rev+":"+p)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// exists reports whether rev:p names a file or directory.
func (r repo) exists(ctx context.Context, rev, p string) bool {
	_, err := r.git(ctx, nil, "cat-file", "-e", rev+":"+p)
	return err == nil
}

// extract writes the paths of commit rev (directories or files, slash-separated, relative
// to the repository root) into dst, which it creates. Nothing outside dst is written.
func (r repo) extract(ctx context.Context, rev, dst string, paths ...string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := untar(pr, dst)
		if err == nil {
			io.Copy(io.Discard, pr) // the padding after the end of the archive
		}
		pr.CloseWithError(err) // stops git if the extraction failed
		done <- err
	}()
	_, gitErr := r.git(ctx, pw, append([]string{"archive", "--format=tar", rev, "--"}, paths...)...)
	pw.CloseWithError(gitErr)
	if err := <-done; err != nil && !errors.Is(err, gitErr) {
		return fmt.Errorf("extract %s of %s: %w", strings.Join(paths, " "), short(rev), err)
	}
	if gitErr != nil {
		return fmt.Errorf("extract %s of %s: %w", strings.Join(paths, " "), short(rev), gitErr)
	}
	return nil
}

// untar writes a tar stream into dir through an os.Root: a name that leaves dir (an
// absolute path, "..", or a path through a symlink) is refused; symlinks are kept only
// when they point inside dir. Only directories, regular files and symlinks are written.
func untar(r io.Reader, dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue // git archive's commit ID
		}
		name := path.Clean(strings.TrimSuffix(h.Name, "/"))
		if !filepath.IsLocal(filepath.FromSlash(name)) {
			return fmt.Errorf("refusing %q: it points outside the workspace", h.Name)
		}
		name = filepath.FromSlash(name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return err
			}
			f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fs.FileMode(h.Mode)&0o755|0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			target := filepath.Join(filepath.Dir(name), filepath.FromSlash(h.Linkname))
			if filepath.IsAbs(h.Linkname) || !filepath.IsLocal(target) {
				continue // a link out of the workspace is left out; builds cannot follow it
			}
			if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return err
			}
			if err := root.Symlink(h.Linkname, name); err != nil {
				return err
			}
		}
	}
}

// A checkout is one job's workspace: exactly the approved commit's frameworks directory.
type checkout struct {
	Root       string // the workspace; entries are under Root/frameworks
	Commit     string // the measured commit (the job's SHA)
	BaseCommit string // the base branch's commit
	Moved      string // the PR's head when it is no longer the measured commit, else ""
}

// checkout fetches the PR and the base branch, checks that the approved commit is there and
// writes its frameworks directory into dir, which must not exist yet. Its errors name the
// problem and the fix, fit to post.
func (r repo) checkout(ctx context.Context, pr int, sha, baseRef, dir string) (checkout, error) {
	co := checkout{Root: dir, Commit: sha}
	if pr <= 0 {
		return co, fmt.Errorf("the job has no pull request number (%d); this is a bug of the bot, which must set it", pr)
	}
	if !shaRE.MatchString(sha) {
		return co, fmt.Errorf("the approved commit %q is not a full commit SHA; this is a bug of the bot, which must record the PR head's SHA", sha)
	}
	if err := r.fetch(ctx, pr, baseRef); err != nil {
		return co, err
	}
	if !r.hasCommit(ctx, sha) {
		// The PR moved since the approval, and this clone never saw the commit: ask for it
		// by ID (servers hand out commits that are reachable from any ref, GitHub's
		// refs/pull/* included).
		if _, err := r.git(ctx, nil, "fetch", "--no-tags", "--", r.remote, sha); err != nil || !r.hasCommit(ctx, sha) {
			return co, fmt.Errorf("the approved commit %s is not on refs/pull/%d/head of %s; was the branch force-pushed? comment the command again", short(sha), pr, r.remote)
		}
	}
	if head, err := r.resolve(ctx, refPR+strconv.Itoa(pr)); err == nil && head != sha {
		co.Moved = head
	}
	base, err := r.resolve(ctx, refBase)
	if err != nil {
		return co, fmt.Errorf("the base branch %s of %s: %w", baseRef, r.remote, err)
	}
	co.BaseCommit = base
	if !r.exists(ctx, sha, "frameworks") {
		return co, fmt.Errorf("commit %s has no frameworks/ directory; is this the arena repository?", short(sha))
	}
	if err := r.extract(ctx, sha, dir, "frameworks"); err != nil {
		return co, err
	}
	return co, nil
}

// baselines reads each named entry's meta.json tests and committed results at the base
// commit. An entry that does not exist or does not load there has Present false. scratch is
// a directory the files are written to; the caller removes it.
//
// Committed results come from today's layout, the rows of the entry's display name's file
// site/data/results/<slug>.json that are the entry's (those that name it, and the arena's,
// which name no entry), and from the April layout, frameworks/<name>/results/, for an arena
// that has not moved; where both hold a row of one profile and connection count, today's is
// taken.
func (r repo) baselines(ctx context.Context, base string, names []string, scratch string, log *slog.Logger) []result.Baseline {
	var out []result.Baseline
	seen := map[string]bool{}
	for _, name := range names {
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		b := result.Baseline{Entry: name}
		out = append(out, b)
		at := &out[len(out)-1]
		if !entryNameRE.MatchString(name) {
			continue
		}
		dir := "frameworks/" + name
		if !r.exists(ctx, base, dir+"/meta.json") {
			continue
		}
		paths := []string{dir + "/meta.json"}
		if r.exists(ctx, base, dir+"/"+result.Dir) {
			paths = append(paths, dir+"/"+result.Dir)
		}
		if err := r.extract(ctx, base, scratch, paths...); err != nil {
			log.Warn("baseline unreadable", "framework", name, "err", err)
			continue
		}
		e, err := frameworks.Load(filepath.Join(scratch, "frameworks"), name, profile.Names())
		if err != nil {
			log.Warn("baseline entry does not load", "framework", name, "err", err)
			continue
		}
		newer := r.siteRows(ctx, base, scratch, e, log)
		older, err := result.ReadAll(e.Dir)
		if err != nil {
			log.Warn("baseline results unreadable", "framework", name, "err", err)
		}
		at.Present, at.Tests, at.Results = true, e.Meta.Tests, result.Prefer(newer, older)
	}
	return out
}

// siteRows are entry e's rows in its display name's results file at base (today's layout),
// extracted into scratch once for the entries that share it.
func (r repo) siteRows(ctx context.Context, base, scratch string, e frameworks.Entry, log *slog.Logger) []result.Result {
	p := result.SitePath(e.Meta.DisplayName, false)
	if _, err := os.Stat(filepath.Join(scratch, filepath.FromSlash(p))); err != nil {
		if !r.exists(ctx, base, p) {
			return nil
		}
		if err := r.extract(ctx, base, scratch, p); err != nil {
			log.Warn("baseline results unreadable", "framework", e.Name, "file", p, "err", err)
			return nil
		}
	}
	f, _, err := result.ReadSite(scratch, e.Meta.DisplayName, false)
	if err == nil && f.Framework != e.Meta.DisplayName {
		err = fmt.Errorf("it holds the results of %q", f.Framework)
	}
	var rows []result.Result
	if err == nil {
		rows, err = f.EntryRows(e.Name)
	}
	if err != nil {
		log.Warn("baseline results unreadable", "framework", e.Name, "file", p, "err", err)
		return nil
	}
	return rows
}

// short shortens a commit ID for messages.
func short(sha string) string { return build.ShortCommit(sha) }
