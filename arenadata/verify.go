package arenadata

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The cache directory is mounted into the containers of every later job, read-only; a job
// that got it mounted writable (or a process on the host) could still change it for every
// job after it. Verify checks it against the committed checksums, and Repair puts back what
// differs, so a job never mounts data another one changed.

// A Problem is one way a data directory differs from the generator's output.
type Problem struct {
	Path string // slash-separated, relative to the tree's root
	What string // "changed", "missing", "not a regular file", "not in the tree", "mode 0600"
}

func (p Problem) String() string { return p.Path + ": " + p.What }

// wantSums is the committed SHA256SUMS as a map from path to hex digest.
func wantSums() map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(sums))
	for sc.Scan() {
		sum, path, ok := strings.Cut(sc.Text(), "  ")
		if ok {
			m[path] = sum
		}
	}
	return m
}

// treeDirs are the directories of the tree, slash-separated ("." the root).
func treeDirs() map[string]bool {
	dirs := map[string]bool{".": true}
	for _, f := range tree() {
		for d := pathDir(f.path); d != "."; d = pathDir(d) {
			dirs[d] = true
		}
	}
	return dirs
}

func pathDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return "."
}

// Verify hashes every file of the data directory dir (as Ensure made it) and compares it
// with the committed checksums. It returns what differs: a file changed, missing, replaced
// by a link or a directory, or not world-readable, and anything that is not part of the
// tree. A nil slice and nil error mean the directory is exactly the generator's output. The
// error is for a directory that cannot be read at all.
func Verify(dir string) ([]Problem, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("verify arena data: %w", err)
	}
	want := wantSums()
	dirs := treeDirs()
	var problems []Problem
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if !dirs[rel] {
				problems = append(problems, Problem{rel, "not in the tree"})
				return fs.SkipDir
			}
			if fi, err := d.Info(); err == nil && fi.Mode().Perm() != 0o755 && rel != "." {
				problems = append(problems, Problem{rel, fmt.Sprintf("mode %#o, want 0755", fi.Mode().Perm())})
			}
			return nil
		}
		sum, ok := want[rel]
		switch {
		case !ok:
			problems = append(problems, Problem{rel, "not in the tree"})
			return nil
		case !d.Type().IsRegular():
			problems = append(problems, Problem{rel, "not a regular file"})
			seen[rel] = true
			return nil
		}
		seen[rel] = true
		got, mode, err := hashFile(path)
		if err != nil {
			problems = append(problems, Problem{rel, "unreadable: " + err.Error()})
			return nil
		}
		if got != sum {
			problems = append(problems, Problem{rel, "changed"})
		} else if mode != 0o644 {
			problems = append(problems, Problem{rel, fmt.Sprintf("mode %#o, want 0644", mode)})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("verify arena data %s: %w", dir, err)
	}
	for path := range want {
		if !seen[path] {
			problems = append(problems, Problem{path, "missing"})
		}
	}
	slices.SortFunc(problems, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	return problems, nil
}

func hashFile(path string) (string, fs.FileMode, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), fi.Mode().Perm(), nil
}

// Repair verifies the data directory dir and puts back what differs: a changed, missing or
// replaced file is generated anew in its place (a link is removed, not followed), anything
// not part of the tree is removed, modes are set back. It returns the problems it found
// (nil when the directory was intact) and an error when the directory could not be read or
// still differs after the repair.
func Repair(dir string) ([]Problem, error) {
	ensureMu.Lock()
	defer ensureMu.Unlock()
	problems, err := Verify(dir)
	if err != nil || len(problems) == 0 {
		return problems, err
	}
	byPath := map[string]file{}
	for _, f := range tree() {
		byPath[f.path] = f
	}
	for _, p := range problems {
		name := filepath.Join(dir, filepath.FromSlash(p.Path))
		f, generated := byPath[p.Path]
		if strings.HasPrefix(p.What, "mode ") {
			if err := os.Chmod(name, map[bool]fs.FileMode{true: 0o644, false: 0o755}[generated]); err != nil {
				return problems, fmt.Errorf("repair arena data %s: %w", p.Path, err)
			}
			continue
		}
		if err := os.RemoveAll(name); err != nil {
			return problems, fmt.Errorf("repair arena data %s: %w", p.Path, err)
		}
		if !generated {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return problems, fmt.Errorf("repair arena data %s: %w", p.Path, err)
		}
		if err := writeFile(dir, f); err != nil {
			return problems, fmt.Errorf("repair arena data: %w", err)
		}
	}
	after, err := Verify(dir)
	if err != nil {
		return problems, err
	}
	if len(after) > 0 {
		return problems, fmt.Errorf("arena data %s still differs after the repair (%s); remove the directory and run again, the runner writes the arena data anew", dir, after[0])
	}
	return problems, nil
}
