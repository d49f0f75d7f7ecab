package main

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// oldArenaMap maps the public base images of testdata/oldarena's Dockerfile to the local
// stand-ins deploy/base-images.sh makes.
const oldArenaMap = "golang:*=arenabot/golang:local,alpine:*=arenabot/debian:local"

// oldArenaProfiles are the HTTP/1.1 profiles testdata/oldarena subscribes to.
var oldArenaProfiles = []string{"baseline", "pipelined", "limited-conn", "json", "json-comp", "upload", "static"}

// oldArena makes a temporary arena holding testdata/oldarena as frameworks/oldarena: an
// entry written the old arena's way (literal public FROM images that no registry here
// serves, no Vary, static files served uncompressed, a parser that accepts whitespace
// before a colon). It returns the root and a digest of the entry's files.
func oldArena(t *testing.T) (root, digest string) {
	t.Helper()
	root = t.TempDir()
	dst := filepath.Join(root, "frameworks", "oldarena")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("testdata", "oldarena"))); err != nil {
		t.Fatal(err)
	}
	return root, treeDigest(t, dst)
}

// treeDigest hashes every file's path and bytes under dir.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h.Write([]byte(rel + "\x00"))
		h.Write(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(h.Sum(nil))
}

// TestOldArenaEntry measures an entry written for the old arena, unedited, on every
// HTTP/1.1 profile it subscribes to: its base images come through the image map, its
// advisory misses are listed after the tables and measured all the same, and --strict
// makes the same misses failures. Without the map, its missing base image is one line that
// names the image, the stage and the fix.
func TestOldArenaEntry(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images and runs load")
	}
	needDocker(t)
	root, digest := oldArena(t)

	t.Run("unmapped", func(t *testing.T) {
		stdout, stderr, err := runBench(t, nil, "oldarena", "-t", "baseline", "--lite", "--runs", "1", "--duration", "1s", "--root", root)
		if err == nil {
			t.Fatal("bench without an image map succeeded; the base images cannot be on this host")
		}
		if !strings.Contains(stdout, "| baseline | 512 | ❌ base image missing: golang:1.26-alpine |") {
			t.Errorf("no short base-image cell in:\n%s", stdout)
		}
		for _, want := range []string{"golang:1.26-alpine", "stage 1", "ARENA_IMAGE_MAP=golang:*="} {
			if !strings.Contains(stderr, want) {
				t.Errorf("the missing base image error does not say %q:\n%s", want, stderr)
			}
		}
		if strings.Contains(stderr+stdout, "fix its Dockerfile") || strings.Contains(stderr+stdout, "fix the Dockerfile") {
			t.Errorf("the error blames the entry, which is not broken:\n%s", stderr)
		}
	})

	t.Run("mapped", func(t *testing.T) {
		rest := slices.DeleteFunc(slices.Clone(oldArenaProfiles), func(p string) bool { return p == "upload" })
		stdout, stderr, err := runBench(t, nil, "oldarena", "-t", strings.Join(rest, ","), "--lite", "--runs", "1", "--duration", "1s", "--root", root, "--image-map", oldArenaMap)
		if err != nil {
			t.Fatalf("bench oldarena through the image map: %v\n%s", err, stdout)
		}
		// upload alone, for the profile's own 5 s: its 128 connections each post a 0.5-20 MB
		// body (about 1 GB in the first round), the machine shares its bandwidth among them,
		// and so they all complete near the same moment; in 2 s runs on a machine busy with
		// the whole suite none had (the fresh CI run, twice in a row), and a run without a
		// response fails its row.
		upload, _, err := runBench(t, nil, "oldarena", "-t", "upload", "--lite", "--runs", "1", "--duration", "5s", "--root", root, "--image-map", oldArenaMap)
		if err != nil {
			t.Fatalf("bench oldarena upload through the image map: %v\n%s", err, upload)
		}
		for _, p := range oldArenaProfiles {
			row := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(p) + ` \| \d+ \| (\d[\d.]*K?M?) \|`)
			if m := row.FindStringSubmatch(stdout + upload); m == nil {
				t.Errorf("no measured %s row in:\n%s%s", p, stdout, upload)
			}
		}
		if strings.Contains(stdout+upload, "❌") {
			t.Errorf("a row failed:\n%s%s", stdout, upload)
		}
		for _, want := range []string{
			"golang:1.26-alpine", "arenabot/golang:local", "alpine:3.23", "arenabot/debian:local",
		} {
			if !strings.Contains(stderr, want) {
				t.Errorf("the build log does not say the stand-in for %q was used:\n%s", want, stderr)
			}
		}
		m := regexp.MustCompile("⚠️ (\\d+) advisor(?:y|ies) for `oldarena`").FindStringSubmatch(stdout)
		if m == nil {
			t.Fatalf("no advisory line after the tables:\n%s", stdout)
		}
		for _, want := range []string{
			"- WARN baseline: malformed bad header: sent ",
			"- WARN json-comp: Vary: Accept-Encoding: sent ",
			"- WARN static: precompressed twins served: sent ",
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("advisories lack %q:\n%s", want, stdout)
			}
		}
		if n, _ := strconv.Atoi(m[1]); n != strings.Count(stdout, "\n- WARN ") {
			t.Errorf("the line counts %s advisories, %d are listed", m[1], strings.Count(stdout, "\n- WARN "))
		}
		if treeDigest(t, filepath.Join(root, "frameworks", "oldarena")) != digest {
			t.Error("the entry's files changed")
		}
	})

	t.Run("validate", func(t *testing.T) {
		stdout, _, err := runCmd(t, "validate", "oldarena", "--root", root, "--image-map", oldArenaMap)
		if err != nil {
			t.Fatalf("validate oldarena: %v", err)
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		warns := strings.Count(stdout, "\nWARN ")
		if warns < 3 || !regexp.MustCompile(`^\d+ passed, 0 failed, 0 skipped$`).MatchString(lines[len(lines)-1]) ||
			!strings.HasPrefix(lines[len(lines)-2], strconv.Itoa(warns)+" advisory warnings (WARN)") {
			t.Errorf("want ≥3 WARN lines, their count above the summary, and 0 failed:\n%s", stdout)
		}
	})

	t.Run("strict", func(t *testing.T) {
		stdout, _, err := runCmd(t, "validate", "oldarena", "--strict", "--root", root, "--image-map", oldArenaMap)
		if err == nil {
			t.Fatalf("validate --strict passed an entry with advisory misses:\n%s", stdout)
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		m := regexp.MustCompile(`^\d+ passed, (\d+) failed, 0 skipped$`).FindStringSubmatch(lines[len(lines)-1])
		if m == nil || m[1] == "0" || strings.Contains(stdout, "WARN ") {
			t.Errorf("want the advisory misses as FAIL lines and counted as failed:\n%s", stdout)
		}
		for _, want := range []string{"FAIL baseline: malformed bad header: ", "FAIL json-comp: Vary: Accept-Encoding: ", "FAIL static: precompressed twins served: "} {
			if !strings.Contains(stdout, want) {
				t.Errorf("--strict output lacks %q", want)
			}
		}
	})
}
