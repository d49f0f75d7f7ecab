package runner

import (
	"context"
	"os/exec"
	"strings"
)

// GitCommit returns the commit checked out in dir, or "" when dir is not a git work tree.
func GitCommit(ctx context.Context, dir string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
