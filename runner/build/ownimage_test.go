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

// TestOwnToolsStale: an image whose arenaload is another build than the native one (another
// commit, same pinned version) is stale and is rebuilt; the same build is not.
func TestOwnToolsStale(t *testing.T) {
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
	if stale, why := same.ownToolsStale(context.Background()); stale {
		t.Errorf("the same build is stale: %s", why)
	}
	other := New(versionEngine{out: "arenaload 1.0.0 (vcs fedcba987654)\n"}, Config{ScratchDir: dir})
	stale, why := other.ownToolsStale(context.Background())
	if !stale || !strings.Contains(why, "fedcba987654") || !strings.Contains(why, "0123456789ab") {
		t.Errorf("another build: stale %v, %q; want stale, naming both builds", stale, why)
	}
}
