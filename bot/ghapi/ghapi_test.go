package ghapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/internal/deptest"
)

const repo = "arena/bench"

// sleeps records the waits of a client instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.d)
}

func (s *sleeps) max() time.Duration {
	var m time.Duration
	for _, d := range s.all() {
		m = max(m, d)
	}
	return m
}

// setup starts a fake GitHub with one PR and a client using token auth, the fake's
// BotLogin and a recording Sleep.
func setup(t *testing.T, mod func(*Config)) (*githubtest.Server, *Client, *sleeps) {
	t.Helper()
	s := githubtest.New(t)
	s.AddRepo("arena", "bench")
	s.AddPR(repo, githubtest.PR{Number: 7, HeadSHA: "aaa111", HeadRef: "feature", User: "alice",
		Files: []string{"frameworks/gin/main.go", "frameworks/gin/meta.json"}})
	sl := &sleeps{}
	cfg := Config{
		BaseURL: s.URL, Token: "test-token", BotLogin: githubtest.BotLogin, WriteSpacing: -1, Sleep: sl.sleep,
		Logger: slog.New(slog.NewTextHandler(t.Output(), nil)),
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, c, sl
}

func TestPullRequestAndFiles(t *testing.T) {
	s, c, _ := setup(t, nil)
	s.AddPR("arena/bench", githubtest.PR{Number: 8, HeadSHA: "bbb", HeadRef: "patch-1", HeadRepo: "bob/bench",
		User: "bob", MaintainerCanModify: true})
	pr, err := c.PullRequest(t.Context(), 0, repo, 8)
	if err != nil {
		t.Fatal(err)
	}
	want := PR{Number: 8, HeadSHA: "bbb", HeadRef: "patch-1", HeadRepo: "bob/bench", BaseRef: "main",
		Author: "bob", MaintainerCanModify: true, State: "open"}
	if pr != want {
		t.Errorf("PullRequest = %+v, want %+v", pr, want)
	}

	var many []string
	for i := range 250 {
		many = append(many, fmt.Sprintf("f/%03d", i))
	}
	s.AddPR(repo, githubtest.PR{Number: 9, HeadSHA: "ccc", HeadRef: "big", User: "bob", Files: many})
	files, err := c.ChangedFiles(t.Context(), 0, repo, 9)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(files, many) {
		t.Errorf("ChangedFiles: got %d files, want %d", len(files), len(many))
	}
	if n := len(s.CallsTo("GET", "/repos/arena/bench/pulls/9/files")); n != 3 {
		t.Errorf("ChangedFiles made %d calls, want 3 pages", n)
	}
	if auth := s.Calls()[0].Header.Get("Authorization"); auth != "Bearer test-token" {
		t.Errorf("Authorization = %q", auth)
	}
}

func TestContents(t *testing.T) {
	s, c, sl := setup(t, nil)
	s.AddFile(repo, "aaa111", "frameworks/gin/meta.json", []byte(`{"display_name":"gin"}`))
	s.AddFile(repo, "aaa111", "frameworks/gin/main.go", []byte("package main"))
	s.AddFile(repo, "aaa111", "frameworks/fiber/meta.json", []byte(`{}`))
	got, err := c.File(t.Context(), 0, repo, "aaa111", "frameworks/gin/meta.json")
	if err != nil || string(got) != `{"display_name":"gin"}` {
		t.Errorf("File = %q, %v", got, err)
	}
	names, err := c.Dir(t.Context(), 0, repo, "aaa111", "frameworks")
	if err != nil || !slices.Equal(names, []string{"fiber", "gin"}) {
		t.Errorf("Dir = %q, %v", names, err)
	}
	before := len(s.Calls())
	_, err = c.File(t.Context(), 0, repo, "aaa111", "frameworks/nope/meta.json")
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("missing file: err = %v, want ErrNotFound", err)
	}
	_, err = c.Dir(t.Context(), 0, repo, "aaa111", "nope")
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("missing dir: err = %v, want ErrNotFound", err)
	}
	if n := len(s.Calls()) - before; n != 2 {
		t.Errorf("404s made %d calls, want 2 (no retries)", n)
	}
	if len(sl.all()) != 0 {
		t.Errorf("404s slept %v", sl.all())
	}
}

// TestFileAboveTheContentsLimit: a file above 1 MB, which the contents API gives without its
// content, is read through its blob.
func TestFileAboveTheContentsLimit(t *testing.T) {
	s, c, _ := setup(t, nil)
	big := bytes.Repeat([]byte("0123456789abcde\n"), 80_000) // 1.28 MB
	s.AddFile(repo, "aaa111", "site/data/results/big.json", big)
	got, err := c.File(t.Context(), 0, repo, "aaa111", "site/data/results/big.json")
	if err != nil || !bytes.Equal(got, big) {
		t.Errorf("File of a %d-byte file = %d bytes, %v", len(big), len(got), err)
	}
	if n := len(s.CallsTo("GET", "/repos/"+repo+"/git/blobs/*")); n != 1 {
		t.Errorf("%d blob reads, want 1", n)
	}
}

func TestPermission(t *testing.T) {
	s, c, _ := setup(t, nil)
	for _, p := range []string{"admin", "maintain", "write", "triage", "read"} {
		s.SetPermission(repo, "u-"+p, p)
	}
	for _, p := range []string{"admin", "maintain", "write", "triage", "read", "none"} {
		got, err := c.Permission(t.Context(), 0, repo, "u-"+p)
		if err != nil || got != p {
			t.Errorf("Permission(u-%s) = %q, %v; want %q", p, got, err, p)
		}
	}
	if _, err := c.Permission(t.Context(), 0, repo, "u-maintain"); err != nil {
		t.Fatal(err)
	}
	if n := len(s.CallsTo("GET", "/repos/arena/bench/collaborators/u-maintain/permission")); n != 1 {
		t.Errorf("permission calls = %d, want 1 (second answered from the cache)", n)
	}
}

func TestPermissionCacheExpires(t *testing.T) {
	s, c, _ := setup(t, func(cfg *Config) { cfg.PermissionTTL = time.Minute })
	now := time.Now()
	c.now = func() time.Time { return now }
	s.SetPermission(repo, "carol", "write")
	if p, _ := c.Permission(t.Context(), 0, repo, "carol"); p != "write" {
		t.Fatalf("got %q", p)
	}
	s.SetPermission(repo, "carol", "read")
	now = now.Add(2 * time.Minute)
	if p, _ := c.Permission(t.Context(), 0, repo, "carol"); p != "read" {
		t.Errorf("after TTL got %q, want read", p)
	}
}

func TestReactionsETag(t *testing.T) {
	s, c, _ := setup(t, nil)
	id := s.AddComment(repo, 7, "arenabot[bot]", "status")
	s.React(repo, id, "alice", "+1")
	rs, etag, nm, err := c.Reactions(t.Context(), 0, repo, id, "")
	if err != nil || nm || etag == "" || len(rs) != 1 || rs[0].User != "alice" || rs[0].Content != "+1" {
		t.Fatalf("first Reactions = %+v, %q, %v, %v", rs, etag, nm, err)
	}
	remaining := s.RateRemaining()
	rs, etag2, nm, err := c.Reactions(t.Context(), 0, repo, id, etag)
	if err != nil || !nm || rs != nil || etag2 != etag {
		t.Fatalf("unchanged Reactions = %+v, %q, %v, %v; want notModified", rs, etag2, nm, err)
	}
	if s.RateRemaining() != remaining {
		t.Errorf("304 used rate limit: %d → %d", remaining, s.RateRemaining())
	}
	calls := s.CallsTo("GET", "/repos/arena/bench/issues/comments/*/reactions")
	if last := calls[len(calls)-1]; last.Header.Get("If-None-Match") != etag || last.Status != http.StatusNotModified {
		t.Errorf("conditional call: If-None-Match %q, status %d", last.Header.Get("If-None-Match"), last.Status)
	}
	s.React(repo, id, "bob", "-1")
	rs, etag3, nm, err := c.Reactions(t.Context(), 0, repo, id, etag)
	if err != nil || nm || etag3 == etag || len(rs) != 2 {
		t.Errorf("changed Reactions = %+v, %q, %v, %v", rs, etag3, nm, err)
	}
}

func TestRetry5xx(t *testing.T) {
	s, c, sl := setup(t, nil)
	s.FailNext("GET", "/repos/arena/bench/pulls/7", 2, http.StatusBadGateway)
	pr, err := c.PullRequest(t.Context(), 0, repo, 7)
	if err != nil || pr.HeadSHA != "aaa111" {
		t.Fatalf("PullRequest = %+v, %v", pr, err)
	}
	if n := len(s.CallsTo("GET", "/repos/arena/bench/pulls/7")); n != 3 {
		t.Errorf("calls = %d, want 3", n)
	}
	d := sl.all()
	if len(d) != 2 || d[0] < backoffBase/2 || d[0] >= backoffBase || d[1] < backoffBase || d[1] >= 2*backoffBase {
		t.Errorf("backoff sleeps = %v, want one in [%v,%v) then one in [%v,%v)", d, backoffBase/2, backoffBase, backoffBase, 2*backoffBase)
	}
}

func TestRetryGivesUp(t *testing.T) {
	s, c, _ := setup(t, func(cfg *Config) { cfg.MaxRetries = 2 })
	s.FailNext("GET", "/repos/arena/bench/pulls/7", 10, http.StatusInternalServerError)
	if _, err := c.PullRequest(t.Context(), 0, repo, 7); status(err) != http.StatusInternalServerError {
		t.Errorf("err = %v, want the 500", err)
	}
	if n := len(s.CallsTo("GET", "/repos/arena/bench/pulls/7")); n != 3 {
		t.Errorf("calls = %d, want 1 + 2 retries", n)
	}
}

func TestNotFoundNotRetried(t *testing.T) {
	s, c, sl := setup(t, nil)
	_, err := c.PullRequest(t.Context(), 0, repo, 404)
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
	if n := len(s.CallsTo("GET", "/repos/arena/bench/pulls/404")); n != 1 || len(sl.all()) != 0 {
		t.Errorf("calls = %d, sleeps %v; want 1 call, no sleep", n, sl.all())
	}
}

func TestSecondaryRateLimit(t *testing.T) {
	s, c, sl := setup(t, nil)
	s.RateLimitNext("POST", "/repos/arena/bench/issues/7/comments", 3*time.Second)
	if _, err := c.CreateComment(t.Context(), 0, repo, 7, "hello <!-- arenabot:job=1 -->"); err != nil {
		t.Fatal(err)
	}
	if m := sl.max(); m < 3*time.Second {
		t.Errorf("slept at most %v, want ≥ Retry-After 3s", m)
	}
	if n := len(s.Comments(repo, 7)); n != 1 {
		t.Errorf("comments = %d, want 1", n)
	}
	if n := len(s.CallsTo("POST", "/repos/arena/bench/issues/7/comments")); n != 2 {
		t.Errorf("POSTs = %d, want 2", n)
	}
}

func TestPrimaryRateLimit(t *testing.T) {
	for _, code := range []int{http.StatusForbidden, http.StatusTooManyRequests} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			s, c, sl := setup(t, nil)
			reset := time.Now().Add(30 * time.Second)
			s.PrimaryRateLimitNext("GET", "/repos/arena/bench/pulls/7", code, reset)
			if _, err := c.PullRequest(t.Context(), 0, repo, 7); err != nil {
				t.Fatal(err)
			}
			if m := sl.max(); m < 28*time.Second || m > 33*time.Second {
				t.Errorf("waited %v, want about 30s until reset", m)
			}
		})
	}
}

func TestPrimaryRateLimitBoundedByContext(t *testing.T) {
	s, c, sl := setup(t, nil)
	s.PrimaryRateLimitNext("GET", "/repos/arena/bench/pulls/7", http.StatusForbidden, time.Now().Add(time.Hour))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := c.PullRequest(ctx, 0, repo, 7); err == nil {
		t.Fatal("want the rate limit error")
	}
	if len(sl.all()) != 0 {
		t.Errorf("slept %v beyond the deadline", sl.all())
	}
}

func TestWritesSpaced(t *testing.T) {
	const spacing = 20 * time.Millisecond
	s, c, _ := setup(t, func(cfg *Config) { cfg.WriteSpacing = spacing; cfg.Sleep = nil })
	s.SetClock(time.Now)
	id := s.AddComment(repo, 7, "arenabot[bot]", "status")
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := range 4 {
		wg.Go(func() {
			for i := range 2 {
				if _, err := c.CreateComment(t.Context(), 0, repo, 7, fmt.Sprintf("c <!-- arenabot:g=%d,i=%d -->", g, i)); err != nil {
					errs <- err
				}
				if err := c.EditComment(t.Context(), 0, repo, id, fmt.Sprintf("e %d %d", g, i)); err != nil {
					errs <- err
				}
				if _, err := c.PullRequest(t.Context(), 0, repo, 7); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var times []time.Time
	for _, call := range s.Calls() {
		if call.Method == "POST" || call.Method == "PATCH" {
			times = append(times, call.Time)
		}
	}
	if len(times) != 16 {
		t.Fatalf("writes = %d, want 16", len(times))
	}
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < spacing {
			t.Errorf("write %d came %v after the previous one, want ≥ %v", i, gap, spacing)
		}
	}
}

func TestCreateCommentRetryAfter502(t *testing.T) {
	s, c, _ := setup(t, nil)
	s.FailNext("POST", "/repos/arena/bench/issues/7/comments", 1, http.StatusBadGateway)
	id, err := c.CreateComment(t.Context(), 0, repo, 7, "status <!-- arenabot:job=abc -->")
	if err != nil {
		t.Fatal(err)
	}
	got := s.Comments(repo, 7)
	if len(got) != 1 || got[0].ID != id {
		t.Errorf("comments = %+v, want one with id %d", got, id)
	}
	if n := len(s.CallsTo("GET", "/repos/arena/bench/issues/7/comments")); n != 1 {
		t.Errorf("looked for the marker %d times, want 1", n)
	}
}

// lostAnswer is a transport that carries out the first matching request but answers 502,
// as when GitHub creates a comment and the answer is lost.
type lostAnswer struct {
	method, suffix string
	mu             sync.Mutex
	done           bool
	before         func() // run before the first matching request, when set
}

func (l *lostAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	l.mu.Lock()
	hit := !l.done && req.Method == l.method && strings.HasSuffix(req.URL.Path, l.suffix)
	l.done = l.done || hit
	l.mu.Unlock()
	if hit && l.before != nil {
		l.before()
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if hit && l.before == nil && err == nil {
		resp.Body.Close()
		resp.StatusCode, resp.Status = http.StatusBadGateway, "502 Bad Gateway"
		resp.Body = http.NoBody
	}
	return resp, err
}

func TestCreateCommentOutcomeUnknownNoDuplicate(t *testing.T) {
	s, c, _ := setup(t, func(cfg *Config) {
		cfg.Transport = &lostAnswer{method: "POST", suffix: "/issues/7/comments"}
		cfg.BotLogin = githubtest.BotLogin
	})
	s.AddComment(repo, 7, "mallory", "fake <!-- arenabot:job=abc -->")
	id, err := c.CreateComment(t.Context(), 0, repo, 7, "status <!-- arenabot:job=abc -->")
	if err != nil {
		t.Fatal(err)
	}
	var mine []githubtest.Comment
	for _, cm := range s.Comments(repo, 7) {
		if cm.User == githubtest.BotLogin {
			mine = append(mine, cm)
		}
	}
	if len(mine) != 1 || mine[0].ID != id {
		t.Errorf("bot comments = %+v, want exactly one with id %d", mine, id)
	}
	if n := len(s.CallsTo("POST", "/repos/arena/bench/issues/7/comments")); n != 1 {
		t.Errorf("POSTs = %d, want 1", n)
	}
}

func TestCreateCommentWithoutMarkerNotRetried(t *testing.T) {
	s, c, _ := setup(t, nil)
	s.FailNext("POST", "/repos/arena/bench/issues/7/comments", 1, http.StatusBadGateway)
	if _, err := c.CreateComment(t.Context(), 0, repo, 7, "no marker"); status(err) != http.StatusBadGateway {
		t.Errorf("err = %v, want the 502", err)
	}
	if n := len(s.CallsTo("POST", "/repos/arena/bench/issues/7/comments")); n != 1 {
		t.Errorf("POSTs = %d, want 1", n)
	}
}

func TestFindCommentAndEdit(t *testing.T) {
	s, c, _ := setup(t, nil)
	for i := range 150 {
		s.AddComment(repo, 7, "alice", fmt.Sprintf("comment %d", i))
	}
	want := s.AddComment(repo, 7, githubtest.BotLogin, "status <!-- arenabot:job=zz -->")
	id, body, found, err := c.FindComment(t.Context(), 0, repo, 7, "<!-- arenabot:job=zz -->")
	if err != nil || !found || id != want || !strings.Contains(body, "status") {
		t.Fatalf("FindComment = %d, %q, %v, %v", id, body, found, err)
	}
	if _, _, found, _ := c.FindComment(t.Context(), 0, repo, 7, "<!-- arenabot:job=none -->"); found {
		t.Error("found a marker nobody wrote")
	}
	if err := c.EditComment(t.Context(), 0, repo, id, "done <!-- arenabot:job=zz -->"); err != nil {
		t.Fatal(err)
	}
	got := s.Comments(repo, 7)
	if last := got[len(got)-1]; last.Body != "done <!-- arenabot:job=zz -->" || last.Edits != 1 {
		t.Errorf("edited comment = %+v", last)
	}
	if err := c.EditComment(t.Context(), 0, repo, 999999, "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("edit missing: %v", err)
	}
}

func TestReactIdempotent(t *testing.T) {
	s, c, _ := setup(t, nil)
	id := s.AddComment(repo, 7, "alice", "/benchmark -f gin")
	for range 2 {
		if err := c.React(t.Context(), 0, repo, id, "eyes"); err != nil {
			t.Fatal(err)
		}
	}
	if rs := s.Reactions(repo, id); len(rs) != 1 || rs[0].Content != "eyes" || rs[0].User != githubtest.BotLogin {
		t.Errorf("reactions = %+v", rs)
	}
}

func TestCommitFiles(t *testing.T) {
	s, c, _ := setup(t, nil)
	s.AddFile(repo, "aaa111", "README.md", []byte("readme"))
	files := map[string][]byte{
		"frameworks/gin/results/baseline-512.json": []byte(`{"rps":1}`),
		"frameworks/gin/results/json-4096.json":    {0, 1, 2, 0xff},
	}
	sha, err := c.CommitFiles(t.Context(), 0, repo, "feature", "Save results", files)
	if err != nil {
		t.Fatal(err)
	}
	commits := s.Commits(repo)
	if len(commits) != 1 {
		t.Fatalf("commits = %d, want 1", len(commits))
	}
	got := commits[0]
	want := maps.Clone(files)
	want["README.md"] = []byte("readme")
	if got.SHA != sha || got.Message != "Save results" || !slices.Equal(got.Parents, []string{"aaa111"}) ||
		!maps.EqualFunc(got.Files, want, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Errorf("commit = %+v", got)
	}
	if ref := s.Ref(repo, "feature"); ref != sha {
		t.Errorf("branch at %s, want %s", ref, sha)
	}
	// The text file travels inside the tree; only the binary one needs a blob.
	if n := len(s.CallsTo("POST", "/repos/arena/bench/git/blobs")); n != 1 {
		t.Errorf("blob creates = %d, want 1", n)
	}
}

func TestCommitFilesUnchangedTreeMakesNoCommit(t *testing.T) {
	s, c, _ := setup(t, nil)
	s.AddFile(repo, "aaa111", "README.md", []byte("readme"))
	files := map[string][]byte{"frameworks/gin/results/baseline-512.json": []byte(`{"rps":1}`)}
	first, err := c.CommitFiles(t.Context(), 0, repo, "feature", "Save results", files)
	if err != nil {
		t.Fatal(err)
	}
	// The same call again (a redelivered event): the head holds the files already.
	again, err := c.CommitFiles(t.Context(), 0, repo, "feature", "Save results", files)
	if err != nil {
		t.Fatal(err)
	}
	if again != first || len(s.Commits(repo)) != 1 || s.Ref(repo, "feature") != first {
		t.Errorf("second call: sha %s (first %s), %d commits, branch at %s; want no new commit",
			again, first, len(s.Commits(repo)), s.Ref(repo, "feature"))
	}
	if n := len(s.CallsTo("POST", "/repos/arena/bench/git/commits")); n != 1 {
		t.Errorf("commit creates = %d, want 1", n)
	}
	// Files that exist with the same content at a head made outside the API: nothing to do.
	s.AddFile(repo, "ccc333", "README.md", []byte("readme"))
	s.AddFile(repo, "ccc333", "frameworks/gin/results/baseline-512.json", []byte(`{"rps":1}`))
	s.SetHead(repo, 7, "ccc333")
	if sha, err := c.CommitFiles(t.Context(), 0, repo, "feature", "Save results", files); err != nil || sha != "ccc333" {
		t.Errorf("CommitFiles on a head holding the files = %s, %v; want ccc333", sha, err)
	}
	// A changed file still commits.
	files["frameworks/gin/results/baseline-512.json"] = []byte(`{"rps":2}`)
	sha, err := c.CommitFiles(t.Context(), 0, repo, "feature", "Save results", files)
	if err != nil {
		t.Fatal(err)
	}
	commits := s.Commits(repo)
	if last := commits[len(commits)-1]; len(commits) != 2 || last.SHA != sha || !slices.Equal(last.Parents, []string{"ccc333"}) {
		t.Errorf("commits = %+v, want a second one on ccc333", commits)
	}
}

func TestCommitFilesHeadMoved(t *testing.T) {
	var s *githubtest.Server
	lost := &lostAnswer{method: "PATCH", suffix: "/git/refs/heads/feature"}
	lost.before = func() { s.SetHead(repo, 7, "bbb222") }
	s, c, _ := setup(t, func(cfg *Config) { cfg.Transport = lost })
	s.AddFile(repo, "aaa111", "README.md", []byte("old"))
	s.AddFile(repo, "bbb222", "README.md", []byte("new"))
	sha, err := c.CommitFiles(t.Context(), 0, repo, "feature", "Save results", map[string][]byte{"r.json": []byte("{}")})
	if err != nil {
		t.Fatal(err)
	}
	if ref := s.Ref(repo, "feature"); ref != sha {
		t.Errorf("branch at %s, want %s", ref, sha)
	}
	commits := s.Commits(repo)
	last := commits[len(commits)-1]
	if last.SHA != sha || !slices.Equal(last.Parents, []string{"bbb222"}) || string(last.Files["README.md"]) != "new" || string(last.Files["r.json"]) != "{}" {
		t.Errorf("final commit = %+v, want one on bbb222", last)
	}
	if n := len(s.CallsTo("PATCH", "/repos/arena/bench/git/refs/heads/feature")); n != 2 {
		t.Errorf("ref updates = %d, want 2", n)
	}
}

func TestCommitFilesPushDenied(t *testing.T) {
	s, c, sl := setup(t, nil)
	s.DenyPush(repo)
	_, err := c.CommitFiles(t.Context(), 0, repo, "feature", "x", map[string][]byte{"a": []byte("b")})
	if !errors.Is(err, ErrPushDenied) {
		t.Errorf("err = %v, want ErrPushDenied", err)
	}
	if len(sl.all()) != 0 || len(s.Commits(repo)) != 0 {
		t.Errorf("retried (%v) or committed", sl.all())
	}
	if _, err := c.CommitFiles(t.Context(), 0, repo, "nope", "x", map[string][]byte{"a": []byte("b")}); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing branch: %v", err)
	}
}

func TestAppAuth(t *testing.T) {
	s := githubtest.New(t)
	s.AddPR(repo, githubtest.PR{Number: 7, HeadSHA: "aaa111", HeadRef: "feature", User: "alice"})
	s.RequireToken("nothing-else")
	c := appClient(t, s)
	if _, err := c.PullRequest(t.Context(), 0, repo, 7); err == nil {
		t.Error("installation 0 with app auth: want an error")
	}
	for range 2 {
		if pr, err := c.PullRequest(t.Context(), 42, repo, 7); err != nil || pr.HeadSHA != "aaa111" {
			t.Fatalf("PullRequest = %+v, %v", pr, err)
		}
	}
	tok := s.CallsTo("POST", "/app/installations/42/access_tokens")
	if len(tok) != 1 || !strings.HasPrefix(tok[0].Header.Get("Authorization"), "Bearer ") {
		t.Fatalf("token calls = %+v, want one with a JWT", tok)
	}
	for _, call := range s.CallsTo("GET", "/repos/arena/bench/pulls/7") {
		if a := call.Header.Get("Authorization"); a != "token ghs_test42_1" || call.Status != http.StatusOK {
			t.Errorf("API call Authorization %q status %d, want the installation token", a, call.Status)
		}
	}
}

func TestNewRejects(t *testing.T) {
	for name, cfg := range map[string]Config{
		"both":      {Token: "t", AppID: 1, PrivateKey: []byte("x")},
		"bad key":   {AppID: 1, PrivateKey: []byte("not a key")},
		"no key":    {AppID: 1},
		"no app id": {PrivateKey: []byte("x")},
		"bad url":   {BaseURL: "not a url"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
}

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{Module: []string{"internal/clock"}, ThirdParty: []string{
		"github.com/google/go-github/v60",
		"github.com/bradleyfalzon/ghinstallation/v2",
		"github.com/google/go-querystring",
		"github.com/golang-jwt/jwt/v4",
	}})
}

// TestHookDeliveries lists the App's webhook deliveries with its JSON web token, newest
// first across pages, down to since; reads one delivery's payload; and refuses token auth.
func TestHookDeliveries(t *testing.T) {
	s := githubtest.New(t)
	s.RequireToken("nothing-else")
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	t.Cleanup(receiver.Close)
	clock := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { return clock })
	for i := range 150 {
		clock = clock.Add(time.Second)
		url := receiver.URL
		if i%50 == 49 {
			url = "http://127.0.0.1:1/down" // nothing listens: status code 0
		}
		s.Deliver(url, []byte("secret"), "issue_comment", fmt.Sprintf("guid-%d", i), []byte(fmt.Sprintf(`{"action":"created","n":%d}`, i)))
	}
	c := appClient(t, s)
	all, err := c.HookDeliveries(t.Context(), time.Time{}, 1000)
	if err != nil || len(all) != 150 {
		t.Fatalf("HookDeliveries = %d, %v; want all 150 over two pages", len(all), err)
	}
	if all[0].GUID != "guid-149" || all[149].GUID != "guid-0" || all[0].StatusCode != 0 || all[1].StatusCode != http.StatusAccepted || all[0].Event != "issue_comment" || all[0].Action != "created" {
		t.Errorf("first %+v, second %+v, last %+v; want newest first, the down receiver's 0", all[0], all[1], all[149])
	}
	recent, err := c.HookDeliveries(t.Context(), all[9].DeliveredAt, 1000)
	if err != nil || len(recent) != 10 {
		t.Errorf("since the 10th newest: %d, %v; want 10", len(recent), err)
	}
	if few, err := c.HookDeliveries(t.Context(), time.Time{}, 3); err != nil || len(few) != 3 {
		t.Errorf("limit 3: %d, %v", len(few), err)
	}
	event, payload, err := c.HookPayload(t.Context(), all[0].ID)
	if err != nil || event != "issue_comment" || string(payload) != `{"action":"created","n":149}` {
		t.Errorf("HookPayload = %q, %s, %v", event, payload, err)
	}
	if _, _, err := c.HookPayload(t.Context(), 99999); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown delivery: %v; want ErrNotFound", err)
	}
	tc, _ := New(Config{BaseURL: s.URL, Token: "nothing-else"})
	if _, err := tc.HookDeliveries(t.Context(), time.Time{}, 10); !errors.Is(err, ErrNoApp) {
		t.Errorf("token auth: %v; want ErrNoApp", err)
	}
}

// appClient is a client of s authenticated as App 1234 with a fresh private key.
func appClient(t *testing.T, s *githubtest.Server) *Client {
	t.Helper()
	return appClientWith(t, s, nil)
}

// appClientWith is appClient with mod applied to its Config.
func appClientWith(t *testing.T, s *githubtest.Server, mod func(*Config)) *Client {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	cfg := Config{BaseURL: s.URL, AppID: 1234, PrivateKey: pemKey, WriteSpacing: -1}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestWebURL: the web root follows the API root: github.com's, GitHub Enterprise Server's
// (the API under /api/v3), and a GitHub whose API and pages share a root.
func TestWebURL(t *testing.T) {
	for api, want := range map[string]string{
		"https://api.github.com/":         "https://github.com/",
		"https://api.github.com":          "https://github.com/",
		"https://ghe.example.com/api/v3/": "https://ghe.example.com/",
		"https://ghe.example.com/api/v3":  "https://ghe.example.com/",
		"https://ex.com/git/api/v3/":      "https://ex.com/git/",
		"http://127.0.0.1:8099":           "http://127.0.0.1:8099/",
		"http://127.0.0.1:8099/":          "http://127.0.0.1:8099/",
		"not a url":                       "https://github.com/",
		"ftp://ghe.example.com/api/v3/":   "https://github.com/",
	} {
		if got := WebURL(api); got != want {
			t.Errorf("WebURL(%q) = %q, want %q", api, got, want)
		}
	}
}

// TestFindCheckRun: the newest run of an external ID newer than a given one is found on its
// commit; an older or another request's run is not.
func TestFindCheckRun(t *testing.T) {
	_, c, _ := setup(t, nil)
	k := NewChecks(c)
	const sha = "1111111111111111111111111111111111111111"
	run := func(ext string) int64 {
		id, err := k.CreateCheckRun(t.Context(), 0, repo, CheckRun{Name: "arenabot", HeadSHA: sha, ExternalID: ext, Status: "queued", Title: "Queued", Summary: "s"})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	first, other, second := run("r1"), run("r2"), run("r1")
	for _, c := range []struct {
		ext   string
		after int64
		want  int64
	}{{"r1", 0, second}, {"r1", first, second}, {"r1", second, 0}, {"r2", 0, other}, {"r3", 0, 0}} {
		id, found, err := k.FindCheckRun(t.Context(), 0, repo, sha, "arenabot", c.ext, c.after)
		if err != nil || found != (c.want != 0) || id != c.want {
			t.Errorf("FindCheckRun(%s after %d) = %d, %v, %v; want %d", c.ext, c.after, id, found, err, c.want)
		}
	}
}
