package bot

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/githubtest"
)

// gitApply runs the real `git apply --check` and then `git apply` for each patch in a fresh
// repository holding before, and returns the files afterwards.
func gitApply(t *testing.T, before map[string][]byte, patches []string) map[string][]byte {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is not installed (apt-get install git)")
		}
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	run := func(stdin string, args ...string) {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_CONFIG_GLOBAL=/dev/null")
		cmd.Stdin = strings.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s\ninput:\n%s", strings.Join(args, " "), err, out, stdin)
		}
	}
	run("", "init", "-q")
	for p, c := range before {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, c, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range patches {
		run(p, "apply", "--check", "-")
		run(p, "apply", "-")
	}
	after := map[string][]byte{}
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		after[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return after
}

func TestFilePatchAppliesWithGit(t *testing.T) {
	const res = "frameworks/nethttp/results/baseline-512.json"
	tests := []struct {
		name    string
		path    string
		old     string
		existed bool
		new     string
	}{
		{"new file", res, "", false, "{\n  \"rps\": 1\n}\n"},
		{"replace", res, "{\n  \"rps\": 1\n}\n", true, "{\n  \"rps\": 2,\n  \"cpu\": \"99%\"\n}\n"},
		{"old without final newline", res, "{\"rps\": 1}", true, "{\n  \"rps\": 2\n}\n"},
		{"new without final newline", res, "{\"rps\": 1}\n", true, "{\"rps\": 2}"},
		{"new file without final newline", res, "", false, "{\"rps\": 2}"},
		{"existing empty file", res, "", true, "{}\n"},
		{"emptied", res, "{}\n", true, ""},
		{"empty new file", res, "", false, ""},
		{"blank lines and diff-like text", res, "\n\n--- a\n+++ b\n@@ -1 +1 @@\n", true, "+\n-\n \n\\ x\n"},
		{"space and non-ASCII in path", "frameworks/my entry/résultats \"q\".json", "a\n", true, "b\n"},
		{"new file, tab in path", "frameworks/x\ty/r.json", "", false, "b\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := filePatch(tt.path, []byte(tt.old), tt.existed, []byte(tt.new))
			before := map[string][]byte{"README.md": []byte("readme\n")}
			if tt.existed {
				before[tt.path] = []byte(tt.old)
			}
			after := gitApply(t, before, []string{d})
			if got, ok := after[tt.path]; !ok || string(got) != tt.new {
				t.Errorf("after git apply: %q (exists %v), want %q\npatch:\n%s", got, ok, tt.new, d)
			}
			if string(after["README.md"]) != "readme\n" || len(after) != 2 {
				t.Errorf("git apply touched other files: %q", after)
			}
		})
	}
}

func TestFilePatchIdenticalIsEmpty(t *testing.T) {
	if d := filePatch("a.json", []byte("x\n"), true, []byte("x\n")); d != "" {
		t.Errorf("patch of an unchanged file = %q, want none", d)
	}
}

func TestFilePatchRefusesOtherContent(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is not installed (apt-get install git)")
		}
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "r.json"), []byte("changed meanwhile\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(git, "apply", "--check", "-")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(filePatch("r.json", []byte("old\n"), true, []byte("new\n")))
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("git apply --check accepted a replacement of other content:\n%s", out)
	}
}

func TestResultPatchesReadTheHead(t *testing.T) {
	gh := githubtest.New(t)
	gh.AddRepo("octo", "arena")
	gh.AddPR(repo, githubtest.PR{Number: prNum, HeadSHA: sha1, HeadRef: "feature", User: "alice"})
	existing := "frameworks/nethttp/results/baseline-512.json"
	gh.AddFile(repo, sha1, existing, []byte("{\"rps\": 1}\n"))
	gh.AddFile(repo, sha1, "frameworks/nethttp/results/json-512.json", []byte("same\n"))
	c, err := ghapi.New(ghapi.Config{BaseURL: gh.URL, Token: "t", BotLogin: githubtest.BotLogin, WriteSpacing: -1, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	b := New(Config{}, c, nil, nil)
	files := map[string][]byte{
		existing: []byte("{\"rps\": 2}\n"),
		"frameworks/nethttp/results/json-512.json":      []byte("same\n"),
		"frameworks/nethttp/results/baseline-4096.json": []byte("{\"rps\": 3}\n"),
	}
	patches := b.Reporter.fin.resultPatches(context.Background(), 0, repo, sha1, files)
	if len(patches) != 2 || !strings.Contains(patches[0], "baseline-4096.json") || !strings.Contains(patches[0], "new file mode") ||
		!strings.Contains(patches[1], "-{\"rps\": 1}") {
		t.Fatalf("patches = %q", patches)
	}
	after := gitApply(t, map[string][]byte{existing: []byte("{\"rps\": 1}\n"), "frameworks/nethttp/results/json-512.json": []byte("same\n")}, patches)
	for p, want := range files {
		if string(after[p]) != string(want) {
			t.Errorf("%s after git apply = %q, want %q", p, after[p], want)
		}
	}
}

// TestFilePatchIsTheChangedLines: a results file that gains a row in its middle gives a
// patch of that row and three lines around it, not of the whole file, and it applies.
func TestFilePatchIsTheChangedLines(t *testing.T) {
	var old, new strings.Builder
	for i := range 200 {
		line := fmt.Sprintf("    \"row-%03d\": %d,\n", i, i)
		old.WriteString(line)
		new.WriteString(line)
		if i == 100 {
			new.WriteString("    \"added\": 1,\n")
		}
	}
	d := filePatch("site/data/results/a.json", []byte(old.String()), true, []byte(new.String()))
	if !strings.Contains(d, "@@ -99,6 +99,7 @@\n") || strings.Count(d, "\n") != 4+7 {
		t.Errorf("patch =\n%s\nwant one hunk of the added line and 3 lines each side", d)
	}
	after := gitApply(t, map[string][]byte{"site/data/results/a.json": []byte(old.String())}, []string{d})
	if string(after["site/data/results/a.json"]) != new.String() {
		t.Error("the patch does not give the new file")
	}
	// Changes at both ends: one hunk spanning them.
	d = filePatch("a.json", []byte("a\nb\nc\nd\ne\nf\ng\nh\n"), true, []byte("A\nb\nc\nd\ne\nf\ng\nH\n"))
	if !strings.Contains(d, "@@ -1,8 +1,8 @@\n") {
		t.Errorf("patch =\n%s", d)
	}
}
