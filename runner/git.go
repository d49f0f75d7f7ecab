package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/measure"
	"github.com/arenabot/arenabot/text"
)

// GitCommit returns the commit checked out in dir, or "" when dir is not a git work tree.
func GitCommit(ctx context.Context, dir string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// Against gives each target of a plan whose entries live under root (a frameworks directory
// in a git work tree) the same entry at ref as its base, from a worktree of ref that the
// returned cleanup removes: `arenabot bench X --against REF`. An entry that does not exist
// at ref has no base (its rows are new); one that does not load there has a base that fails.
func Against(ctx context.Context, plan *measure.Plan, root, ref string) (cleanup func(), err error) {
	git := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", root}, args...)...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %s: %v: %s", args[0], err, text.LastLine(string(out)))
		}
		return strings.TrimSpace(string(out)), nil
	}
	top, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("--against %s: %s is not in a git work tree: %w", ref, root, err)
	}
	commit, err := git("rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("--against %s: no such commit or branch in %s; name a branch, tag or commit (for example: --against main)", ref, top)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "arenabot-against-")
	if err != nil {
		return nil, err
	}
	wt := filepath.Join(tmp, "tree")
	if _, err := git("worktree", "add", "--detach", wt, commit); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("--against %s: %w", ref, err)
	}
	cleanup = func() {
		_, _ = git("worktree", "remove", "--force", wt)
		os.RemoveAll(tmp)
		_, _ = git("worktree", "prune")
	}
	baseRoot := filepath.Join(wt, rel)
	for i := range plan.Targets {
		t := &plan.Targets[i]
		if _, err := os.Stat(filepath.Join(baseRoot, t.Entry.Name)); err != nil {
			continue // new since ref
		}
		e, err := frameworks.Load(baseRoot, t.Entry.Name, profile.Names())
		t.Base = &measure.Base{Entry: e, Ref: ref, Commit: commit}
		if err != nil {
			t.Base.Entry.Name = t.Entry.Name
			t.Base.Err = fmt.Errorf("it does not load at %s: %w", ref, err)
		}
	}
	return cleanup, nil
}
