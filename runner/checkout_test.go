package runner

import (
	"archive/tar"
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/result"
)

// gitT runs git in dir for a test, with a fixed identity and no user configuration.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=Arena Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// An arenaRemote is a bare repository standing in for the arena on GitHub: main holds the
// real nethttp entry with one committed result; refs/pull/7/head adds an entry whose
// Dockerfile does not build and one whose meta.json is bad.
type arenaRemote struct {
	URL  string // file:// URL of the bare repository (file:// so clones fetch like a network remote)
	dir  string // the bare repository
	work string // a working clone the test commits in
	Main string // main's commit
	PR   string // refs/pull/7/head's commit
}

// baselineRPS is the RPS of the result committed on main.
const baselineRPS = 12345

func newArenaRemote(t *testing.T) *arenaRemote {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is not installed (apt-get install git)")
		}
		t.Skip("git is not installed")
	}
	base := t.TempDir()
	a := &arenaRemote{dir: filepath.Join(base, "remote.git"), work: filepath.Join(base, "work")}
	a.URL = "file://" + a.dir
	gitT(t, base, "init", "-q", "--bare", "-b", "main", a.dir)
	gitT(t, base, "init", "-q", "-b", "main", a.work)

	src, err := filepath.Abs("../frameworks/nethttp")
	if err != nil {
		t.Fatal(err)
	}
	nethttp := filepath.Join(a.work, "frameworks", "nethttp")
	if err := os.CopyFS(nethttp, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(nethttp, "results"))
	r := result.Result{Framework: "go-nethttp", Language: "Go", RPS: baselineRPS, Connections: 512, Entry: "nethttp", Profile: "baseline", Tool: "wrk", ToolVersion: "4.1.0", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if _, err := result.Write(nethttp, r); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(a.work, "README.md"), []byte("arena\n"), 0o644)
	gitT(t, a.work, "add", "-A")
	gitT(t, a.work, "commit", "-q", "-m", "main")
	a.Main = gitT(t, a.work, "rev-parse", "HEAD")
	gitT(t, a.work, "push", "-q", a.URL, "HEAD:refs/heads/main")

	broken := filepath.Join(a.work, "frameworks", "broken")
	os.MkdirAll(broken, 0o755)
	os.WriteFile(filepath.Join(broken, "meta.json"), []byte(`{"display_name":"broken","language":"Go","type":"engine","engine":"none","enabled":true,"tests":["baseline"]}`), 0o644)
	os.WriteFile(filepath.Join(broken, "Dockerfile"), []byte("FROM scratch\nCOPY missing-file /missing\n"), 0o644)
	badmeta := filepath.Join(a.work, "frameworks", "badmeta")
	os.MkdirAll(badmeta, 0o755)
	os.WriteFile(filepath.Join(badmeta, "meta.json"), []byte(`{"display_name":"badmeta","language":"Go","type":"engine","engine":"x","enabled":"yes","tests":["baseline"]}`), 0o644)
	os.WriteFile(filepath.Join(badmeta, "Dockerfile"), []byte("FROM scratch\n"), 0o644)
	disabled := filepath.Join(a.work, "frameworks", "disabled")
	os.MkdirAll(disabled, 0o755)
	os.WriteFile(filepath.Join(disabled, "meta.json"), []byte(`{"display_name":"disabled","language":"Go","type":"engine","engine":"x","enabled":false,"tests":["baseline"]}`), 0o644)
	os.WriteFile(filepath.Join(disabled, "Dockerfile"), []byte("FROM scratch\n"), 0o644)
	gitT(t, a.work, "add", "-A")
	gitT(t, a.work, "commit", "-q", "-m", "add broken entries")
	a.PR = gitT(t, a.work, "rev-parse", "HEAD")
	gitT(t, a.work, "push", "-q", a.URL, "HEAD:refs/pull/7/head")
	return a
}

// clone makes a runner's clone of the remote.
func (a *arenaRemote) clone(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "arena")
	gitT(t, filepath.Dir(dir), "clone", "-q", a.URL, dir)
	return dir
}

// movePR force-pushes a new commit to refs/pull/7/head that replaces the PR's commit, and
// returns it. The old commit stays in the remote, unreachable from any ref.
func (a *arenaRemote) movePR(t *testing.T) string {
	t.Helper()
	os.WriteFile(filepath.Join(a.work, "README.md"), []byte("arena, amended\n"), 0o644)
	gitT(t, a.work, "add", "-A")
	gitT(t, a.work, "commit", "-q", "--amend", "-m", "add broken entries, amended")
	head := gitT(t, a.work, "rev-parse", "HEAD")
	gitT(t, a.work, "push", "-q", "--force", a.URL, "HEAD:refs/pull/7/head")
	return head
}

func TestCheckout(t *testing.T) {
	a := newArenaRemote(t)
	r := repo{dir: a.clone(t), remote: "origin"}
	dir := filepath.Join(t.TempDir(), "ws")
	co, err := r.checkout(t.Context(), 7, a.PR, "main", dir)
	if err != nil {
		t.Fatal(err)
	}
	if co.Commit != a.PR || co.BaseCommit != a.Main || co.Moved != "" {
		t.Errorf("checkout = %+v, want commit %s, base %s, not moved", co, a.PR, a.Main)
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	for _, want := range []string{"frameworks/nethttp/main.go", "frameworks/nethttp/Dockerfile", "frameworks/broken/Dockerfile", "frameworks/nethttp/results/baseline-512.json"} {
		if !slices.Contains(files, want) {
			t.Errorf("workspace lacks %s; it holds %v", want, files)
		}
	}
	if slices.Contains(files, "README.md") {
		t.Errorf("workspace holds more than frameworks/: %v", files)
	}

	bs := r.baselines(t.Context(), co.BaseCommit, []string{"nethttp", "broken", "../etc", "nethttp"}, filepath.Join(t.TempDir(), "base"), slog.New(slog.DiscardHandler))
	if len(bs) != 3 {
		t.Fatalf("baselines = %+v, want 3 (duplicates dropped)", bs)
	}
	if b := bs[0]; !b.Present || !slices.Contains(b.Tests, "baseline") || len(b.Results) != 1 || b.Results[0].RPS != baselineRPS {
		t.Errorf("nethttp baseline = %+v, want present with main's result (rps %d)", b, baselineRPS)
	}
	if bs[1].Present || bs[2].Present {
		t.Errorf("baselines of entries absent on main = %+v, %+v; want Present false", bs[1], bs[2])
	}

	t.Run("sha not on the PR", func(t *testing.T) {
		missing := strings.Repeat("ab", 20)
		_, err := r.checkout(t.Context(), 7, missing, "main", filepath.Join(t.TempDir(), "ws"))
		if err == nil {
			t.Fatal("checkout of a commit that does not exist succeeded")
		}
		for _, want := range []string{"approved commit " + missing[:12], "refs/pull/7/head of origin", "force-pushed", "comment the command again"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	})
	t.Run("not a SHA", func(t *testing.T) {
		for _, sha := range []string{"--upload-pack=touch /tmp/x", "HEAD", "abc"} {
			if _, err := r.checkout(t.Context(), 7, sha, "main", filepath.Join(t.TempDir(), "ws")); err == nil || !strings.Contains(err.Error(), "not a full commit SHA") {
				t.Errorf("checkout(%q) = %v, want a refusal", sha, err)
			}
		}
	})
	t.Run("no such PR", func(t *testing.T) {
		_, err := r.checkout(t.Context(), 8, a.PR, "main", filepath.Join(t.TempDir(), "ws"))
		if err == nil || !strings.Contains(err.Error(), "refs/pull/8/head") {
			t.Errorf("checkout of PR 8 = %v, want an error naming refs/pull/8/head", err)
		}
	})
}

// TestCheckoutAfterForcePush: the approved commit is no longer on the PR's ref and this
// clone never fetched it; it is fetched by ID, and measured, not the new head.
func TestCheckoutAfterForcePush(t *testing.T) {
	a := newArenaRemote(t)
	approved := a.PR
	head := a.movePR(t)
	r := repo{dir: a.clone(t), remote: "origin"}
	dir := filepath.Join(t.TempDir(), "ws")
	co, err := r.checkout(t.Context(), 7, approved, "main", dir)
	if err != nil {
		t.Fatal(err)
	}
	if co.Commit != approved || co.Moved != head {
		t.Errorf("checkout = %+v, want commit %s and moved %s", co, approved, head)
	}
	if _, err := os.Stat(filepath.Join(dir, "frameworks", "broken", "Dockerfile")); err != nil {
		t.Error(err)
	}
}

func TestUntar(t *testing.T) {
	type file struct {
		name, link string
		typ        byte
	}
	mk := func(files ...file) *bytes.Buffer {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, f := range files {
			h := &tar.Header{Name: f.name, Typeflag: f.typ, Linkname: f.link, Mode: 0o644}
			if f.typ == tar.TypeReg {
				h.Size = 2
			}
			if err := tw.WriteHeader(h); err != nil {
				t.Fatal(err)
			}
			if f.typ == tar.TypeReg {
				tw.Write([]byte("x\n"))
			}
		}
		tw.Close()
		return &buf
	}
	for _, name := range []string{"../evil", "a/../../evil", "/etc/evil"} {
		dir := t.TempDir()
		err := untar(mk(file{name: name, typ: tar.TypeReg}), filepath.Join(dir, "ws"))
		if err == nil {
			t.Errorf("untar of %q succeeded", name)
		}
		if _, serr := os.Stat(filepath.Join(dir, "evil")); serr == nil {
			t.Errorf("untar of %q wrote outside the workspace", name)
		}
	}

	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	err := untar(mk(
		file{name: "a/", typ: tar.TypeDir},
		file{name: "a/f", typ: tar.TypeReg},
		file{name: "a/in", link: "f", typ: tar.TypeSymlink},
		file{name: "a/out", link: "../../outside", typ: tar.TypeSymlink},
		file{name: "a/abs", link: "/etc/passwd", typ: tar.TypeSymlink},
	), ws)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "a", "in")); err != nil || string(b) != "x\n" {
		t.Errorf("link inside the workspace: %q, %v", b, err)
	}
	for _, name := range []string{"out", "abs"} {
		if _, err := os.Lstat(filepath.Join(ws, "a", name)); err == nil {
			t.Errorf("link a/%s out of the workspace was written", name)
		}
	}
}

// commitSite commits files (paths from the repository's root) on main and returns the commit.
func (a *arenaRemote) commitSite(t *testing.T, files map[string]string) string {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(a.work, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitT(t, a.work, "add", "-A")
	gitT(t, a.work, "commit", "-q", "-m", "site data")
	base := gitT(t, a.work, "rev-parse", "HEAD")
	gitT(t, a.work, "push", "-q", a.URL, "HEAD:refs/heads/main")
	return base
}

// TestBaselinesReadTodaysLayout: an entry's committed results come from its display name's
// file in site/data/results (its own rows and the arena's, not another entry's of the same
// display name) and from the April layout where today's has no row; where both hold one,
// today's is taken.
func TestBaselinesReadTodaysLayout(t *testing.T) {
	a := newArenaRemote(t)
	ours := result.Result{Framework: "go-nethttp", Language: "Go", RPS: 777, Connections: 512, Entry: "nethttp", Profile: "baseline", Tool: "wrk"}
	f := result.SiteFile{Framework: "go-nethttp"}
	if err := f.Put(ours); err != nil {
		t.Fatal(err)
	}
	other := ours
	other.Entry, other.Profile, other.Connections = "nethttp-tuned", "json", 4096
	if err := f.Put(other); err != nil {
		t.Fatal(err)
	}
	f.Results["baseline-4096"] = []byte(`{"framework": "go-nethttp", "language": "Go", "rps": 888, "p99_latency": "4.90ms"}`)
	b, err := f.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// The lite file is a contributor's machine's: never a baseline.
	base := a.commitSite(t, map[string]string{"site/data/results/go-nethttp.json": string(b), "site/data/results/lite/go-nethttp.json": `{"framework": "go-nethttp", "results": {"baseline-256": {"rps": 1}}}`})

	r := repo{dir: a.clone(t), remote: "origin"}
	if err := r.fetch(t.Context(), 7, "main"); err != nil {
		t.Fatal(err)
	}
	bs := r.baselines(t.Context(), base, []string{"nethttp"}, filepath.Join(t.TempDir(), "base"), slog.New(slog.DiscardHandler))
	if len(bs) != 1 || !bs[0].Present {
		t.Fatalf("baselines = %+v", bs)
	}
	var got []string
	for _, res := range bs[0].Results {
		got = append(got, fmt.Sprintf("%s-%d:%d", res.Profile, res.Connections, res.RPS))
	}
	want := []string{"baseline-4096:888", "baseline-512:777"}
	if !slices.Equal(got, want) {
		t.Errorf("nethttp's committed results = %v, want %v (today's baseline-512 over April's %d, the arena's row, not nethttp-tuned's)", got, want, baselineRPS)
	}
	rep := result.Report{Baselines: bs}
	if c, _ := rep.Committed("nethttp", "baseline", 4096); c == nil || c.LatencyUS.P99 != 4900 {
		t.Errorf("the arena's row as a baseline = %+v, want its p99 read from its string", c)
	}
}
