package arenadata_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/arenadata"
)

// entries lists the names in root.
func entries(t *testing.T, root string) []string {
	t.Helper()
	des, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func TestEnsureReuses(t *testing.T) {
	// tree generated the shared tree with Ensure; asking again reuses it.
	shared := tree(t)
	if !filepath.IsAbs(shared) || filepath.Dir(shared) != sharedRoot {
		t.Errorf("Ensure(%s) = %s, want an absolute directory inside it", sharedRoot, shared)
	}
	if again, err := arenadata.Ensure(sharedRoot); err != nil || again != shared {
		t.Errorf("second Ensure(%s) = %s, %v; want %s", sharedRoot, again, err, shared)
	}
	fi, err := os.Stat(shared)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("%s has mode %v, want 0755 (containers read it as any user)", shared, fi.Mode().Perm())
	}

	// A marker survives the second call: the directory was reused, not regenerated.
	t.Cleanup(arenadata.SetWriteForTest(fakeWrite))
	root := filepath.Join(t.TempDir(), "cache")
	dir, err := arenadata.Ensure(root)
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "marker")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := arenadata.Ensure(root)
	if err != nil {
		t.Fatal(err)
	}
	if again != dir {
		t.Errorf("second Ensure = %s, want %s", again, dir)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("second Ensure regenerated the directory: %v", err)
	}
	if got := entries(t, root); len(got) != 1 {
		t.Errorf("cache root holds %q, want only the data directory", got)
	}
}

func TestEnsureFails(t *testing.T) {
	t.Cleanup(arenadata.SetWriteForTest(func(string) error { return errors.New("disk full") }))
	root := t.TempDir()
	if dir, err := arenadata.Ensure(root); err == nil {
		t.Fatalf("Ensure with a failing Write = %s, nil; want an error", dir)
	}
	if got := entries(t, root); len(got) != 0 {
		t.Errorf("a failed Ensure left %q behind", got)
	}
}

// fakeWrite stands in for Write in the tests of Ensure's locking and renaming: it writes
// one file, slowly, so that concurrent calls overlap.
func fakeWrite(dir string) error {
	time.Sleep(100 * time.Millisecond)
	return os.WriteFile(filepath.Join(dir, "data"), []byte("data"), 0o644)
}

func TestEnsureConcurrent(t *testing.T) {
	t.Cleanup(arenadata.SetWriteForTest(fakeWrite))
	root := t.TempDir()
	const n = 4
	dirs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { dirs[i], errs[i] = arenadata.Ensure(root) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("Ensure %d: %v", i, errs[i])
		}
		if dirs[i] != dirs[0] {
			t.Errorf("Ensure %d = %s, Ensure 0 = %s", i, dirs[i], dirs[0])
		}
	}
	if got := entries(t, dirs[0]); !slices.Equal(got, []string{"data"}) {
		t.Errorf("data directory holds %q, want what one Write wrote", got)
	}
	if got := entries(t, root); len(got) != 1 {
		t.Errorf("cache root holds %q, want only the data directory", got)
	}
}

// TestEnsureAcrossProcesses runs Ensure in several processes at once: each generates into
// its own temporary directory and one rename wins; the others must reuse the winner's.
func TestEnsureAcrossProcesses(t *testing.T) {
	if root := os.Getenv("ARENADATA_TEST_ENSURE_ROOT"); root != "" {
		arenadata.SetWriteForTest(fakeWrite)
		dir, err := arenadata.Ensure(root)
		if err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("dir=" + dir + "\n")
		return
	}
	root := t.TempDir()
	const n = 4
	outs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestEnsureAcrossProcesses$", "-test.v")
			cmd.Env = append(os.Environ(), "ARENADATA_TEST_ENSURE_ROOT="+root)
			out, err := cmd.CombinedOutput()
			outs[i], errs[i] = string(out), err
		})
	}
	wg.Wait()
	var dirs []string
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("process %d: %v\n%s", i, errs[i], outs[i])
		}
		for line := range strings.Lines(outs[i]) {
			if d, ok := strings.CutPrefix(strings.TrimSpace(line), "dir="); ok {
				dirs = append(dirs, d)
			}
		}
	}
	if len(dirs) != n {
		t.Fatalf("got directories %q from %d processes", dirs, n)
	}
	for _, d := range dirs {
		if d != dirs[0] {
			t.Errorf("processes got different directories: %q", dirs)
		}
	}
	if got := entries(t, dirs[0]); !slices.Equal(got, []string{"data"}) {
		t.Errorf("data directory holds %q, want what one Write wrote", got)
	}
	if got := entries(t, root); len(got) != 1 {
		t.Errorf("cache root holds %q, want only the data directory", got)
	}
}
