package arenadata_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/arenabot/arenabot/arenadata"
)

var update = flag.Bool("update", false, "rewrite SHA256SUMS from the generator's current output")

// The content tests share one generated tree; TestMain removes it.
var (
	sharedOnce sync.Once
	sharedDir  string
	sharedErr  error
	sharedRoot string
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if sharedRoot != "" {
		os.RemoveAll(sharedRoot)
	}
	os.Exit(code)
}

// tree returns a directory holding a generated tree, generating it with Ensure on first
// use. Tests must not change it.
func tree(t *testing.T) string {
	t.Helper()
	sharedOnce.Do(func() {
		sharedRoot, sharedErr = os.MkdirTemp("", "arenadata-test-")
		if sharedErr == nil {
			sharedDir, sharedErr = arenadata.Ensure(sharedRoot)
		}
	})
	if sharedErr != nil {
		t.Fatalf("Ensure: %v", sharedErr)
	}
	return sharedDir
}

func readFile(t *testing.T, dir, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checksums returns the sha256sum-format listing of every regular file under dir, sorted
// by path.
func checksums(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		// Streamed: large/download.bin is 170 MiB.
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		lines = append(lines, hex.EncodeToString(h.Sum(nil))+"  "+filepath.ToSlash(rel)+"\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[66:], b[66:]) })
	return strings.Join(lines, "")
}

// TestWriteReplacesStale: a file written over a longer stale one holds the generator's
// bytes only, readable by any user (the mounts are read by the containers' users).
func TestWriteReplacesStale(t *testing.T) {
	dir := t.TempDir()
	const path = arenadata.DatasetFile
	stale := filepath.Join(dir, path)
	if err := os.WriteFile(stale, bytes.Repeat([]byte("x"), 4<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := arenadata.WriteOneForTest(dir, path); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := arenadata.WriteFileForTest(&want, path); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, dir, path)
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("%s: %d bytes after writing over a stale file, want the generator's %d", path, len(got), want.Len())
	}
	if fi, err := os.Stat(stale); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("%s: mode %v (%v), want 0644", path, fi.Mode(), err)
	}
}

// TestSHA256SUMS checks the generated tree against the committed SHA256SUMS, so any change
// to the generator's output shows up in review, and a generator that is not deterministic
// fails on the next run. After an intended change, run go test ./arenadata -update.
// (Generating a second copy to compare cost a minute of CI under -race; the committed sums
// are the same check across runs, and TestWriteReplacesStale covers writing over old files.)
func TestSHA256SUMS(t *testing.T) {
	got := checksums(t, tree(t))
	if *update {
		if err := os.WriteFile("SHA256SUMS", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("SHA256SUMS")
	if err != nil {
		t.Fatalf("%v (run go test ./arenadata -update to create it)", err)
	}
	if got == string(want) {
		return
	}
	wantSums := parseSums(string(want))
	gotSums := parseSums(got)
	for _, p := range slices.Sorted(keys(wantSums, gotSums)) {
		switch w, g := wantSums[p], gotSums[p]; {
		case w == "":
			t.Errorf("%s: generated but not in SHA256SUMS", p)
		case g == "":
			t.Errorf("%s: in SHA256SUMS but not generated", p)
		case w != g:
			t.Errorf("%s: sha256 %s, SHA256SUMS has %s", p, g, w)
		}
	}
	t.Errorf("the generated data differs from SHA256SUMS; if intended, rerun go test ./arenadata -update")
}

func parseSums(s string) map[string]string {
	m := map[string]string{}
	for line := range strings.Lines(s) {
		if sum, path, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "  "); ok {
			m[path] = sum
		}
	}
	return m
}

func keys(ms ...map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range ms {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}
}

func TestFiles(t *testing.T) {
	want := []string{"dataset.json", "certs/server.crt", "certs/server.key",
		"requests/get.raw", "requests/post_cl.raw", "requests/post_chunked.raw", "requests/pipeline.raw",
		"requests/json-gzip-25.raw", "requests/json-gzip-40.raw", "requests/json-gzip-50.raw",
		"requests/upload-500k.raw", "requests/upload-2m.raw", "requests/upload-10m.raw", "requests/upload-20m.raw"}
	for _, n := range []int{1, 5, 10, 15, 25, 40, 50} {
		want = append(want, fmt.Sprintf("requests/json-%d.raw", n))
	}
	want = append(want, "db/seed.sql", "requests/json-get.raw", "requests/async-db-get.raw",
		"requests/crud-list-rand-1.raw", "requests/crud-create-1.raw", "requests/fortunes.raw")
	for _, n := range []int{5, 10, 20, 35, 50} {
		want = append(want, fmt.Sprintf("requests/async-db-%d.raw", n))
	}
	for n := 1; n <= 15; n++ {
		want = append(want, fmt.Sprintf("requests/crud-get-%d.raw", n))
	}
	for n := 1; n <= 3; n++ {
		want = append(want, fmt.Sprintf("requests/crud-update-%d.raw", n))
	}
	for _, name := range arenadata.StaticFiles() {
		want = append(want, "static/"+name, "static/"+name+".gz", "static/"+name+".br", "requests/static-"+name+".raw")
	}
	want = append(want, "requests/static-h2-uris.txt", "requests/json-h2c-uris.txt",
		"requests/async-delay.raw", "requests/echo-10k.bin", "requests/download.raw",
		"requests/static-large-1m.raw", "requests/static-large-2m.raw",
		"large/download.bin", "large/page-1m.html", "large/bundle-2m.js",
		"requests/gateway-64-uris.txt", "requests/production-stack-reads.txt", "requests/production-stack-writes.txt",
		"requests/production-stack-write-body.json", "jwt-token.txt",
		"dataset-large.json", "redis-seed.txt", "redis-entrypoint.sh")
	slices.Sort(want)
	got := arenadata.Files()
	if !slices.IsSorted(got) {
		t.Errorf("Files() is not sorted: %q", got)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Files() = %q\nwant %q", got, want)
	}

	// Write produces exactly Files().
	dir := tree(t)
	var written []string
	for line := range strings.Lines(checksums(t, dir)) {
		written = append(written, strings.TrimSuffix(line[66:], "\n"))
	}
	if !slices.Equal(written, got) {
		t.Errorf("Write wrote %q\nFiles() lists %q", written, got)
	}
}

func TestWriteIsWorldReadable(t *testing.T) {
	dir := tree(t)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o644)
		if d.IsDir() {
			want = fs.ModeDir | 0o755
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// firstLine returns the first line of a raw request, for messages.
func firstLine(b []byte) string {
	line, _, _ := bufio.NewReader(bytes.NewReader(b)).ReadLine()
	return string(line)
}
