package runner

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/queue"
)

func TestRepoOfURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://github.com/octo/arena.git":              "octo/arena",
		"https://github.com/octo/arena":                  "octo/arena",
		"https://x-access-token:tok@github.com/octo/a/":  "octo/a",
		"ssh://git@github.example.com/octo/arena.git":    "octo/arena",
		"git@github.com:octo/arena.git":                  "octo/arena",
		"/srv/arena.git":                                 "",
		"file:///srv/arena.git":                          "",
		"../arena":                                       "",
		"https://github.com/octo":                        "",
		"https://gitlab.example.com/group/sub/arena.git": "",
	} {
		if got := repoOfURL(raw); got != want {
			t.Errorf("repoOfURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

// TestWorkerRefusesForeignRepository: a job whose repository is not the one the runner's
// clone fetches from, or not in its ARENA_REPOS, ends with one final failure naming the
// repository and the fix, before anything is fetched, built or run.
func TestWorkerRefusesForeignRepository(t *testing.T) {
	privateHostLock(t)
	a := newArenaRemote(t)
	for _, tt := range []struct {
		name, origin string // origin "" keeps the clone's local remote, which names no repository
		repos        []string
		want         []string
	}{
		{name: "remote", origin: "https://github.com/octo/arena.git", want: []string{"`mallory/fork` refused", "fetches pull requests from `octo/arena`"}},
		{name: "ARENA_REPOS", repos: []string{"octo/arena"}, want: []string{"`mallory/fork` refused", "runs the jobs of `octo/arena` only (ARENA_REPOS)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clone := a.clone(t)
			if tt.origin != "" {
				if out, err := exec.Command("git", "-C", clone, "remote", "set-url", "origin", tt.origin).CombinedOutput(); err != nil {
					t.Fatalf("git remote set-url: %v: %s", err, out)
				}
			}
			mem := queue.NewMemory(queue.Options{})
			q := &testQueue{WorkQueue: mem}
			eng := &fakeEngine{}
			w := testWorker(t, q, eng, clone, t.TempDir())
			w.cfg.Repos = tt.repos
			if err := w.checkRepo(t.Context(), 7, "OCTO/Arena"); err != nil {
				t.Fatalf("the served repository is refused too: %v", err)
			}
			j := prJob(a, queue.BenchmarkMultiple, "nethttp")
			j.Repo = "mallory/fork"
			done, err := w.RunJob(t.Context(), claim(t, mem, j))
			if err != nil {
				t.Fatal(err)
			}
			if done.State != queue.Failed || q.finishes.Load() != 1 {
				t.Fatalf("job ended %s after %d finishes; want one failure", done.State, q.finishes.Load())
			}
			for _, w := range tt.want {
				if !strings.Contains(done.Reason, w) {
					t.Errorf("reason %q does not say %q", done.Reason, w)
				}
			}
			for _, c := range eng.calls() {
				if strings.HasPrefix(c, "Build") || strings.HasPrefix(c, "Start") || strings.HasPrefix(c, "Run") {
					t.Errorf("the engine was asked to %s", c)
				}
			}
			if r := report(t, done); len(r.Rows) != 0 || strings.Contains(strings.Join(r.Log, "\n"), "fetching") {
				t.Errorf("the refused job has %d rows and log %q; want none and no fetch", len(r.Rows), r.Log)
			}
		})
	}
}
