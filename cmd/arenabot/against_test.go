package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/runner/build"
)

// TestBenchAgainst: bench --against REF measures the working tree's entry against the same
// entry at REF, from a worktree of REF that is gone afterwards, interleaved, and the header
// names REF and its commit; the base image is tagged by the commit and kept. A ref that does
// not exist, or both --against and --compare, are refused with the fix.
func TestBenchAgainst(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images and runs load")
	}
	needDocker(t)
	root := arena(t, "nethttp")
	git(t, root, "init", "-q", "-b", "main")
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "arena")
	commit := git(t, root, "rev-parse", "HEAD")
	// The contributor's change, not committed.
	tune(t, filepath.Join(root, "frameworks", "nethttp"))
	t.Cleanup(func() {
		exec.Command("docker", "rmi", "-f", build.CommitImageTag("nethttp", commit)).Run()
	})

	stdout, stderr, err := runBench(t, nil, "nethttp", "-t", "baseline", "--lite", "--duration", "2s",
		"--min-runs", "2", "--max-runs", "2", "--against", "main", "--root", root)
	if err != nil {
		t.Fatalf("bench --against main: %v\n%s", err, stdout)
	}
	t.Logf("stdout:\n%s", stdout)
	if !strings.Contains(stdout, "**Runs:** 2 a side against the base") {
		t.Errorf("the header does not say 2 runs a side")
	}
	if !strings.Contains(stdout, "against itself at `main` (`"+commit[:12]+"`), measured in this job, interleaved") {
		t.Errorf("the header does not name main and its commit %s", commit[:12])
	}
	row := regexp.MustCompile(`\| baseline \| \d+ \| [^|]+ \|.*\| ([^|]+) \| ([^|]+) \|\n`).FindStringSubmatch(stdout)
	if row == nil || !intervalCell.MatchString(strings.TrimSpace(row[1])) {
		t.Errorf("baseline row's Δ RPS: %q; want an interval against main", row)
	}
	if !strings.Contains(stderr, "building the base "+build.CommitImageTag("nethttp", commit)) {
		t.Errorf("stderr does not say the base was built as %s:\n%s", build.CommitImageTag("nethttp", commit), stderr)
	}
	if out, _ := exec.Command("docker", "image", "inspect", build.CommitImageTag("nethttp", commit)).CombinedOutput(); !strings.Contains(string(out), `"arenabot.base": "nethttp"`) {
		t.Errorf("the base image is not kept, labelled arenabot.base=nethttp:\n%.400s", out)
	}
	if wt := git(t, root, "worktree", "list"); strings.Count(wt, "\n") != 0 {
		t.Errorf("worktrees left:\n%s", wt)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--against", "nosuchref"}, "--against nosuchref: no such commit or branch"},
		{[]string{"--against", "main", "--compare", "nethttp"}, "give one"},
	} {
		_, _, err := runBench(t, nil, append([]string{"nethttp", "-t", "baseline", "--root", root}, tt.args...)...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err %v, want %q", tt.args, err, tt.want)
		}
	}
}
