package build

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/loadgen"
	"github.com/arenabot/arenabot/runner/runnertest"
)

// versionEngine answers every Run with out, as the load-generator image's arenaload
// --version would (the image itself is built by the --lite bench tests).
type versionEngine struct {
	Engine
	out string
}

func (e versionEngine) Run(_ context.Context, _ docker.RunOptions, w io.Writer) (int, error) {
	io.WriteString(w, e.out)
	return 0, nil
}

// TestOwnToolStale: an image whose arenaload is another build than the native one (another
// commit, same pinned version) is stale and is rebuilt; the same build is not.
func TestOwnToolStale(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "arenaload")
	script := "#!/bin/sh\necho 'arenaload 1.0.0 (vcs 0123456789ab)'\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if p, _ := exec.LookPath("arenaload"); p != bin {
		t.Fatalf("arenaload resolves to %q", p)
	}
	same := New(versionEngine{out: "arenaload 1.0.0 (vcs 0123456789ab)\n"}, Config{ScratchDir: dir})
	if stale, why := (loadgenImage{same, loadgen.Arenaload()}).ownToolStale(context.Background()); stale {
		t.Errorf("the same build is stale: %s", why)
	}
	other := New(versionEngine{out: "arenaload 1.0.0 (vcs fedcba987654)\n"}, Config{ScratchDir: dir})
	stale, why := (loadgenImage{other, loadgen.Arenaload()}).ownToolStale(context.Background())
	if !stale || !strings.Contains(why, "fedcba987654") || !strings.Contains(why, "0123456789ab") {
		t.Errorf("another build: stale %v, %q; want stale, naming both builds", stale, why)
	}
	if stale, why := (loadgenImage{other, loadgen.Wrk()}).ownToolStale(context.Background()); stale {
		t.Errorf("wrk is a Debian package, never this module's build, yet stale: %s", why)
	}
}

// TestBuildOwnTool: a checkout's first --lite run, before .ci/setup installed arenaload,
// builds it from the checkout (the pinned version, this commit), and outside a checkout of
// this module says why it cannot.
func TestBuildOwnTool(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Dir(goBin)+":/usr/bin:/bin") // go and git, no arenaload
	if p, err := exec.LookPath("arenaload"); err == nil {
		t.Fatalf("arenaload is on PATH at %s", p)
	}
	notes := &runnertest.Notes{}
	b := New(Engine(nil), Config{ScratchDir: t.TempDir(), Progress: notes})
	dir := t.TempDir()
	if err := (loadgenImage{b, loadgen.Arenaload()}).copyOwnTool(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(dir, "arenaload"), "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "arenaload "+loadgen.ArenaloadVersion) {
		t.Errorf("the built arenaload --version: %q, %v", out, err)
	}
	if len(notes.Lines) != 1 || !strings.Contains(notes.Lines[0], "building arenaload") {
		t.Errorf("notes %q, want one line saying it builds arenaload", notes.Lines)
	}

	t.Chdir(t.TempDir())
	err = (loadgenImage{b, loadgen.Arenaload()}).copyOwnTool(context.Background(), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "not in a checkout of github.com/arenabot/arenabot") || !strings.Contains(err.Error(), ".ci/setup") {
		t.Errorf("outside the checkout: %v; want why and how to build it", err)
	}
}
