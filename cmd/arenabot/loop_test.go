package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/bot/hook"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/queuetest"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/runnertest"
)

// The whole loop in tests: a real git remote standing in for the arena repository (the
// runner fetches refs/pull/N/head from it), the fake GitHub holding the same pull request
// and files (the bot reads and writes there), a real redis-server, `arenabot serve` and
// `arenabot work` started through run(), real entries built and measured on the real Docker
// Engine with the real wrk.

const (
	loopRepo   = "octo/arena"
	loopPR     = 1
	loopBranch = "feature"
	// loopWebURL is the web root of the loop's GitHub (ARENA_GITHUB_WEB_URL): the fake
	// answers on http, and the bot links https addresses only.
	loopWebURL = "https://ghe.example.com/"
	loopSecret = "loop-secret"
)

type loop struct {
	t      *testing.T
	gh     *githubtest.Server
	redis  *queuetest.Server
	q      queue.Queue
	remote string // the bare repository the runner fetches from
	base   string // main's commit
	head   string // the PR head commit
	// headFiles are the files of the PR head, as the fake GitHub holds them.
	headFiles map[string][]byte
	botURL    string
	logs      *syncBuffer
	// redisURL is the queue serve and work use; "" makes serve use its embedded queue.
	redisURL string
	// stateDir is where serve keeps its embedded store when redisURL is "".
	stateDir string
	// envOver replaces or adds variables of env() (App auth instead of the token).
	envOver map[string]string

	cancelServe context.CancelFunc
	serveDone   chan error
	workers     []*workerProc
}

// syncBuffer collects the services' logs for the test's output.
type syncBuffer = runnertest.SyncBuffer

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// newLoop makes the arena: main holds the entries (copied from this repository's real ones,
// or written by extra) and a committed nethttp baseline-512 result so deltas have something
// to compare with; the PR branch touches every entry. The fake GitHub gets the repository,
// the PR and the head's files.
func newLoop(t *testing.T, entries []string, extra func(dir string)) *loop {
	t.Helper()
	if testing.Short() {
		t.Skip("builds images and runs load")
	}
	needDocker(t)
	l := &loop{t: t, gh: githubtest.New(t), redis: queuetest.StartRedis(t), logs: &syncBuffer{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("service logs:\n%s", l.logs.String())
		}
	})
	l.q = queue.NewRedis(l.redis.Client(t), queue.Options{Prefix: "arena:"})
	l.redisURL = "redis://" + l.redis.Addr
	l.stateDir = t.TempDir()

	work := t.TempDir()
	git(t, work, "init", "-q", "-b", "main")
	for _, e := range entries {
		dst := filepath.Join(work, "frameworks", e)
		if err := os.CopyFS(dst, os.DirFS(filepath.Join(repoRoot(t), "frameworks", e))); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(filepath.Join(dst, "results"))
	}
	if extra != nil {
		extra(work)
	}
	old := result.Result{Framework: "Go net/http", Language: "Go", RPS: 1000, Connections: 512, Entry: "nethttp",
		Profile: "baseline", Tool: "wrk", Runs: []result.Run{{RPS: 1000, Requests: 5000, Status2xx: 5000, MemoryPeak: 8 << 20}}}
	old.FromRuns(old.Runs)
	if _, err := result.Write(filepath.Join(work, "frameworks", "nethttp"), old); err != nil {
		t.Fatal(err)
	}
	git(t, work, "add", "-A")
	git(t, work, "commit", "-q", "-m", "arena")
	l.base = git(t, work, "rev-parse", "HEAD")
	git(t, work, "checkout", "-q", "-b", loopBranch)
	var changed []string
	for _, e := range entries {
		changed = append(changed, "frameworks/"+e+"/"+tune(t, filepath.Join(work, "frameworks", e)))
	}
	git(t, work, "add", "-A")
	git(t, work, "commit", "-q", "-m", "tune")
	l.head = git(t, work, "rev-parse", "HEAD")

	l.remote = filepath.Join(t.TempDir(), "arena.git")
	git(t, work, "clone", "-q", "--bare", work, l.remote)
	git(t, l.remote, "update-ref", fmt.Sprintf("refs/pull/%d/head", loopPR), l.head)

	owner, name, _ := strings.Cut(loopRepo, "/")
	l.gh.AddRepo(owner, name)
	l.headFiles = map[string][]byte{}
	l.gh.SetRef(loopRepo, "main", l.base)
	for _, f := range strings.Split(git(t, work, "ls-tree", "-r", "--name-only", "HEAD"), "\n") {
		b, err := os.ReadFile(filepath.Join(work, f))
		if err != nil {
			t.Fatal(err)
		}
		l.gh.AddFile(loopRepo, l.head, f, b)
		l.headFiles[f] = b
	}
	l.gh.AddPR(loopRepo, githubtest.PR{Number: loopPR, HeadSHA: l.head, HeadRef: loopBranch, User: "carol", Files: changed})
	l.gh.SetPermission(loopRepo, "maintainer", "write")
	return l
}

// tune makes a contributor's change to the entry in dir and returns the file it changed: a
// line added to its README, which the entry's .dockerignore keeps out of the image. The
// entry changes (the PR touches it, the runner builds its base), but head and base build
// from the context the entries' images were built from ahead (.ci/test), so the build cache
// serves both instead of compiling the entry again for every test.
func tune(t *testing.T, dir string) string {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "README.md"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("\nTuned in this pull request.\n"); err != nil {
		t.Fatal(err)
	}
	return "README.md"
}

func (l *loop) env() map[string]string {
	env := map[string]string{
		"ARENA_WEBHOOK_SECRET": loopSecret, "ARENA_GITHUB_TOKEN": "tok", "ARENA_GITHUB_API_URL": l.gh.URL,
		"ARENA_REDIS_URL": l.redisURL, "ARENA_LISTEN": "127.0.0.1:0", "ARENA_BOT_LOGIN": "arenabot[bot]", "ARENA_REPOS": loopRepo,
		"ARENA_APPROVAL_POLL": "100ms", "ARENA_PROGRESS_EVERY": "1s", "ARENA_STATE_DIR": l.stateDir,
		"ARENA_GITHUB_WEB_URL": loopWebURL,
	}
	maps.Copy(env, l.envOver)
	return env
}

// startServe runs `arenabot serve` against the fake GitHub and the Redis.
func (l *loop) startServe(args ...string) {
	l.t.Helper()
	env := l.env()
	cfg, err := parseServe(args, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		l.t.Fatal(err)
	}
	addr := make(chan string, 1)
	cfg.ReadyListening = func(a string) { addr <- a }
	ctx, cancel := context.WithCancel(context.Background())
	l.cancelServe, l.serveDone = cancel, make(chan error, 1)
	go func() { l.serveDone <- serve(ctx, cfg, l.logs) }()
	select {
	case a := <-addr:
		l.botURL = "http://" + a
	case err := <-l.serveDone:
		l.t.Fatalf("serve: %v", err)
	}
	l.t.Cleanup(l.stopServe)
}

func (l *loop) stopServe() {
	if l.cancelServe == nil {
		return
	}
	l.cancelServe()
	select {
	case err := <-l.serveDone:
		if err != nil {
			l.t.Errorf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		l.t.Error("serve did not stop")
	}
	l.cancelServe = nil
}

// workArgs are the flags of a fast runner: one 1-second run per row.
func (l *loop) workArgs() []string {
	return []string{"--repo-dir", l.clone(), "--work-dir", l.t.TempDir(), "--cache-dir", cacheDir,
		"--runs", "1", "--duration", "1s", "--min-runs", "2", "--max-runs", "2", "--heartbeat", "500ms", "-v"}
}

// clone makes the runner's own clone of the remote.
func (l *loop) clone() string {
	dir := filepath.Join(l.t.TempDir(), "arena")
	git(l.t, filepath.Dir(dir), "clone", "-q", l.remote, dir)
	return dir
}

// workerProc is `arenabot work` running in this process.
type workerProc struct {
	cancel context.CancelFunc
	done   chan error
}

func (l *loop) startWork(args ...string) *workerProc {
	l.t.Helper()
	env := l.env()
	ctx, cancel := context.WithCancel(context.Background())
	w := &workerProc{cancel: cancel, done: make(chan error, 1)}
	go func() {
		w.done <- run(ctx, append([]string{"work"}, append(l.workArgs(), args...)...), func(k string) string { return env[k] }, l.logs, l.logs)
	}()
	l.workers = append(l.workers, w)
	l.t.Cleanup(func() { w.stop(l.t) })
	return w
}

func (w *workerProc) stop(t *testing.T) {
	if w.cancel == nil {
		return
	}
	w.cancel()
	select {
	case err := <-w.done:
		if err != nil {
			t.Errorf("work: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Error("work did not stop")
	}
	w.cancel = nil
}

// comment posts a signed issue_comment delivery for a new comment by user.
func (l *loop) comment(user, body string) int64 {
	l.t.Helper()
	id := l.gh.AddComment(loopRepo, loopPR, user, body)
	payload := l.commentPayload(id, user, body, 0)
	req, _ := http.NewRequest(http.MethodPost, l.botURL+"/webhook", bytes.NewReader(payload))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "issue_comment")
	req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("delivery-%d", id))
	req.Header.Set("X-Hub-Signature-256", hook.Sign([]byte(loopSecret), payload))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		l.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		l.t.Fatalf("webhook answered %d, want 202", resp.StatusCode)
	}
	return id
}

// commentPayload is the issue_comment webhook of comment id on the loop's PR; installation
// 0 leaves it out (token auth).
func (l *loop) commentPayload(id int64, user, body string, installation int64) []byte {
	owner, name, _ := strings.Cut(loopRepo, "/")
	p := map[string]any{
		"action": "created",
		"issue": map[string]any{"number": loopPR, "user": map[string]any{"login": "carol", "type": "User"},
			"pull_request": map[string]any{"url": l.gh.URL + "repos/" + loopRepo + "/pulls/1"}},
		"comment": map[string]any{"id": id, "body": body,
			"user": map[string]any{"login": user, "type": "User"}, "author_association": "CONTRIBUTOR"},
		"repository": map[string]any{"full_name": loopRepo, "name": name, "owner": map[string]any{"login": owner}},
		"sender":     map[string]any{"login": user, "type": "User"},
	}
	if installation != 0 {
		p["installation"] = map[string]any{"id": installation}
	}
	payload, _ := json.Marshal(p)
	return payload
}

// waitComment waits until a bot comment containing marker exists and returns it.
func (l *loop) waitComment(marker string, timeout time.Duration) githubtest.Comment {
	l.t.Helper()
	var found githubtest.Comment
	l.waitFor("a comment holding "+marker, timeout, func() bool {
		for _, c := range l.gh.Comments(loopRepo, loopPR) {
			if strings.Contains(c.Body, marker) {
				found = c
				return true
			}
		}
		return false
	})
	return found
}

func (l *loop) waitFor(what string, timeout time.Duration, cond func() bool) {
	l.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			l.t.Fatalf("timed out after %s waiting for %s; comments:\n%s", timeout, what, l.dumpComments())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (l *loop) dumpComments() string {
	var b strings.Builder
	for _, c := range l.gh.Comments(loopRepo, loopPR) {
		fmt.Fprintf(&b, "--- #%d by %s (%d edits)\n%s\n", c.ID, c.User, c.Edits, c.Body)
	}
	return b.String()
}

// finalMarker matches the hidden marker of a final reply: a part of a results reply or
// an ending (a request that ended without results).
var finalMarker = regexp.MustCompile(`<!-- arenabot:(results|ending) `)

// lockWait bounds a wait for the runner to start a job: the worker takes the host lock before
// it claims anything, and a Docker-backed test of another package may hold it for minutes
// (.ci/flaky: a 1 minute bound timed out while other tests measured).
const lockWait = 6 * time.Minute

// intervalCell is a Δ cell of a row measured against a base in the job: "-6.1% ±1.8% worse"
// or "~0% (±2.4%)".
var intervalCell = regexp.MustCompile(`^([+-]\d+\.\d% ±\d+\.\d% (better|worse)|~0% \(±\d+\.\d%\))$`)

// waitFinal waits for a final reply of any kind and returns it.
func (l *loop) waitFinal(timeout time.Duration) githubtest.Comment {
	l.t.Helper()
	var found githubtest.Comment
	l.waitFor("a final reply", timeout, func() bool {
		for _, c := range l.gh.Comments(loopRepo, loopPR) {
			if finalMarker.MatchString(c.Body) {
				found = c
				return true
			}
		}
		return false
	})
	return found
}

// results returns the bot's final replies (every part of every results reply, and every
// ending).
func (l *loop) results() []githubtest.Comment {
	var out []githubtest.Comment
	for _, c := range l.gh.Comments(loopRepo, loopPR) {
		if finalMarker.MatchString(c.Body) {
			out = append(out, c)
		}
	}
	return out
}

// approve reacts 👍 to the status comment as a collaborator.
func (l *loop) approve() {
	l.t.Helper()
	status := l.waitComment("arenabot:status", 30*time.Second)
	if !l.gh.React(loopRepo, status.ID, "maintainer", "+1") {
		l.t.Fatal("reaction refused")
	}
}

// tableRows parses the results tables: "entry/profile/conns" → cells.
func tableRows(body string) map[string][]string {
	rows := map[string][]string{}
	entry := ""
	head := regexp.MustCompile("^### (✅|❌) `([^`]+)`")
	for _, line := range strings.Split(body, "\n") {
		if m := head.FindStringSubmatch(line); m != nil {
			entry = m[2]
			continue
		}
		if entry == "" || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| Test") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) == 11 {
			rows[entry+"/"+cells[0]+"/"+cells[1]] = cells
		}
	}
	return rows
}
