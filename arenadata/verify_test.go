package arenadata_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/arenabot/arenabot/arenadata"
)

// TestRepairTamperedData: a copy of the generated tree that a job changed (a file's bytes, a
// file replaced by a link to a host file, a file added, a mode loosened, a file removed) is
// found different by Verify, and Repair puts back the generator's bytes, so the next job
// mounts the data as committed. It also times Verify on the whole tree, the cost every job
// pays before it mounts the data.
func TestRepairTamperedData(t *testing.T) {
	shared := tree(t)
	start := time.Now()
	problems, err := arenadata.Verify(shared)
	took := time.Since(start)
	if err != nil || len(problems) > 0 {
		t.Fatalf("Verify of the generated tree = %v, %v; want nothing", problems, err)
	}
	t.Logf("Verify of the whole tree took %s", took.Round(time.Millisecond))

	dir := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(dir, os.DirFS(shared)); err != nil {
		t.Fatal(err)
	}
	static := arenadata.Files()[slices.IndexFunc(arenadata.Files(), func(p string) bool { return filepath.Dir(p) == arenadata.StaticDir })]
	write := func(rel string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, rel), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(arenadata.DatasetFile, []byte(`[{"id":1,"name":"planted"}]`))
	write("static/planted.js", []byte("alert(1)"))
	os.Remove(filepath.Join(dir, static))
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, static)); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(dir, arenadata.CertFile), 0o666)
	os.Remove(filepath.Join(dir, arenadata.KeyFile))

	want := []arenadata.Problem{
		{Path: arenadata.CertFile, What: "mode 0666, want 0644"},
		{Path: arenadata.KeyFile, What: "missing"},
		{Path: arenadata.DatasetFile, What: "changed"},
		{Path: static, What: "not a regular file"},
		{Path: "static/planted.js", What: "not in the tree"},
	}
	slices.SortFunc(want, func(a, b arenadata.Problem) int { return bytes.Compare([]byte(a.Path), []byte(b.Path)) })
	got, err := arenadata.Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Verify of the tampered copy = %v\nwant %v", got, want)
	}
	repaired, err := arenadata.Repair(dir)
	if err != nil {
		t.Fatalf("Repair: %v", err)
	}
	if !slices.Equal(repaired, want) {
		t.Errorf("Repair found %v, want %v", repaired, want)
	}
	if again, err := arenadata.Verify(dir); err != nil || len(again) > 0 {
		t.Errorf("Verify after Repair = %v, %v; want nothing", again, err)
	}
	for _, rel := range []string{arenadata.DatasetFile, static, arenadata.KeyFile} {
		if !bytes.Equal(readFile(t, dir, rel), readFile(t, shared, rel)) {
			t.Errorf("%s after Repair differs from the generator's", rel)
		}
	}
	if fi, err := os.Lstat(filepath.Join(dir, static)); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("%s after Repair: %v, %v; want a regular file", static, fi.Mode(), err)
	}
	if n, err := arenadata.Repair(dir); err != nil || n != nil {
		t.Errorf("Repair of an intact tree = %v, %v; want nothing to do", n, err)
	}
}
