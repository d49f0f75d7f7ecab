package githubtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const repoName = "octo/arena"

type result struct {
	status int
	header http.Header
	raw    []byte
}

func (r result) obj(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.raw, &v); err != nil {
		t.Fatalf("decoding %q: %v", r.raw, err)
	}
	return v
}

func (r result) list(t *testing.T) []map[string]any {
	t.Helper()
	var v []map[string]any
	if err := json.Unmarshal(r.raw, &v); err != nil {
		t.Fatalf("decoding %q: %v", r.raw, err)
	}
	return v
}

// call sends one request; body is marshalled to JSON unless nil; hdr holds header pairs.
func call(t *testing.T, s *Server, method, path string, body any, hdr ...string) result {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+strings.TrimPrefix(path, "/"), rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer test-token")
	req.Header.Set("Accept", "application/vnd.github+json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return result{resp.StatusCode, resp.Header, raw}
}

func wantStatus(t *testing.T, r result, want int) {
	t.Helper()
	if r.status != want {
		t.Fatalf("status %d, want %d; body %s", r.status, want, r.raw)
	}
}

func newRepo(t *testing.T) *Server {
	s := New(t)
	s.AddRepo("octo", "arena")
	return s
}

func TestCommentRoundTrip(t *testing.T) {
	s := newRepo(t)
	created := call(t, s, "POST", "repos/octo/arena/issues/7/comments", map[string]string{"body": "👀 queued"})
	wantStatus(t, created, http.StatusCreated)
	c := created.obj(t)
	id := int64(c["id"].(float64))
	user := c["user"].(map[string]any)
	if user["login"] != BotLogin || user["type"] != "Bot" || c["body"] != "👀 queued" {
		t.Errorf("created comment = %v", c)
	}
	if !strings.HasSuffix(c["html_url"].(string), "/octo/arena/pull/7#issuecomment-"+strconv.FormatInt(id, 10)) {
		t.Errorf("html_url = %v", c["html_url"])
	}
	if created.header.Get("Location") == "" {
		t.Error("no Location header")
	}

	edited := call(t, s, "PATCH", "repos/octo/arena/issues/comments/"+strconv.FormatInt(id, 10), map[string]string{"body": "⏳ running"})
	wantStatus(t, edited, http.StatusOK)
	got := call(t, s, "GET", "repos/octo/arena/issues/comments/"+strconv.FormatInt(id, 10), nil)
	wantStatus(t, got, http.StatusOK)
	if b := got.obj(t)["body"]; b != "⏳ running" {
		t.Errorf("body after edit = %v", b)
	}

	s.AddComment(repoName, 7, "alice", "/benchmark go")
	s.AddComment(repoName, 8, "alice", "other PR")
	cs := s.Comments(repoName, 7)
	if len(cs) != 2 || cs[0].Edits != 1 || cs[0].User != BotLogin || cs[1].User != "alice" {
		t.Errorf("Comments = %+v", cs)
	}
	wantStatus(t, call(t, s, "GET", "repos/octo/arena/issues/comments/999999", nil), http.StatusNotFound)
}

func TestCommentListPagination(t *testing.T) {
	s := newRepo(t)
	for i := range 5 {
		s.AddComment(repoName, 3, "alice", "c"+strconv.Itoa(i))
	}
	var bodies []string
	path := "repos/octo/arena/issues/3/comments?per_page=2"
	for pages := 0; path != ""; pages++ {
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
		r := call(t, s, "GET", path, nil)
		wantStatus(t, r, http.StatusOK)
		for _, c := range r.list(t) {
			bodies = append(bodies, c["body"].(string))
		}
		path = nextLink(t, s, r.header.Get("Link"))
	}
	if diff := cmp.Diff([]string{"c0", "c1", "c2", "c3", "c4"}, bodies); diff != "" {
		t.Errorf("comments (-want +got):\n%s", diff)
	}
}

// nextLink returns the rel="next" target of a Link header relative to s.URL, or "".
func nextLink(t *testing.T, s *Server, link string) string {
	t.Helper()
	for part := range strings.SplitSeq(link, ",") {
		target, rel, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(rel) == `rel="next"` {
			u := strings.Trim(target, "<>")
			rest, ok := strings.CutPrefix(u, s.URL)
			if !ok {
				t.Fatalf("link %q is not below %q", u, s.URL)
			}
			return rest
		}
	}
	return ""
}

func TestCommentLengthLimit(t *testing.T) {
	s := newRepo(t)
	for _, tc := range []struct {
		name string
		body string
		want int
	}{
		{"at limit", strings.Repeat("a", MaxCommentLength), http.StatusCreated},
		{"multibyte at limit", strings.Repeat("é", MaxCommentLength), http.StatusCreated},
		{"over limit", strings.Repeat("a", MaxCommentLength+1), http.StatusUnprocessableEntity},
		{"empty", "", http.StatusUnprocessableEntity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, s, "POST", "repos/octo/arena/issues/1/comments", map[string]string{"body": tc.body})
			wantStatus(t, r, tc.want)
			if tc.want == http.StatusUnprocessableEntity && r.obj(t)["message"] != "Validation Failed" {
				t.Errorf("422 body = %s", r.raw)
			}
		})
	}
	id := s.Comments(repoName, 1)[0].ID
	r := call(t, s, "PATCH", "repos/octo/arena/issues/comments/"+strconv.FormatInt(id, 10),
		map[string]string{"body": strings.Repeat("b", MaxCommentLength+1)})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(string(r.raw), "body is too long (maximum is 65536 characters)") {
		t.Errorf("422 body = %s", r.raw)
	}
}

func TestReactions(t *testing.T) {
	s := newRepo(t)
	id := s.AddComment(repoName, 5, BotLogin, "status")
	path := "repos/octo/arena/issues/comments/" + strconv.FormatInt(id, 10) + "/reactions"

	first := call(t, s, "POST", path, map[string]string{"content": "eyes"})
	wantStatus(t, first, http.StatusCreated)
	again := call(t, s, "POST", path, map[string]string{"content": "eyes"})
	wantStatus(t, again, http.StatusOK)
	if first.obj(t)["id"] != again.obj(t)["id"] {
		t.Error("repeated reaction got a new id")
	}
	wantStatus(t, call(t, s, "POST", path, map[string]string{"content": "thumbsup"}), http.StatusUnprocessableEntity)

	list := call(t, s, "GET", path, nil)
	wantStatus(t, list, http.StatusOK)
	etag := list.header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	remaining := s.RateRemaining()
	cached := call(t, s, "GET", path, nil, "If-None-Match", etag)
	wantStatus(t, cached, http.StatusNotModified)
	if len(cached.raw) != 0 {
		t.Errorf("304 has a body: %q", cached.raw)
	}
	if s.RateRemaining() != remaining {
		t.Errorf("a 304 used the rate limit: %d → %d", remaining, s.RateRemaining())
	}

	if !s.React(repoName, id, "alice", "+1") {
		t.Error("React reported an existing reaction")
	}
	changed := call(t, s, "GET", path, nil, "If-None-Match", etag)
	wantStatus(t, changed, http.StatusOK)
	if changed.header.Get("ETag") == etag {
		t.Error("ETag did not change after a reaction")
	}
	var got []string
	for _, x := range changed.list(t) {
		got = append(got, x["user"].(map[string]any)["login"].(string)+" "+x["content"].(string))
	}
	if diff := cmp.Diff([]string{BotLogin + " eyes", "alice +1"}, got); diff != "" {
		t.Errorf("reactions (-want +got):\n%s", diff)
	}
	rs := s.Reactions(repoName, id)
	if len(rs) != 2 || rs[1].User != "alice" || rs[1].Content != "+1" {
		t.Errorf("Reactions = %+v", rs)
	}
	c := call(t, s, "GET", "repos/octo/arena/issues/comments/"+strconv.FormatInt(id, 10), nil).obj(t)
	if n := c["reactions"].(map[string]any)["+1"]; n != 1.0 {
		t.Errorf("reactions rollup +1 = %v", n)
	}
}

func TestPermission(t *testing.T) {
	s := newRepo(t)
	for _, tc := range []struct{ role, perm string }{
		{"admin", "admin"}, {"maintain", "write"}, {"write", "write"},
		{"triage", "read"}, {"read", "read"}, {"none", "none"}, {"", "none"},
	} {
		user := "u-" + tc.role
		if tc.role != "" {
			s.SetPermission(repoName, user, tc.role)
		}
		r := call(t, s, "GET", "repos/octo/arena/collaborators/"+user+"/permission", nil)
		wantStatus(t, r, http.StatusOK)
		o := r.obj(t)
		wantRole := tc.role
		if wantRole == "" {
			wantRole = "none"
		}
		if o["permission"] != tc.perm || o["role_name"] != wantRole || o["user"].(map[string]any)["login"] != user {
			t.Errorf("role %q: got %s", tc.role, r.raw)
		}
	}
	s.DenyPermissionRead(repoName)
	r := call(t, s, "GET", "repos/octo/arena/collaborators/someone/permission", nil)
	wantStatus(t, r, http.StatusForbidden)
	if r.obj(t)["message"] != "Must have push access to view collaborator permission." {
		t.Errorf("403 body = %s", r.raw)
	}
}

func TestPullRequestAndFiles(t *testing.T) {
	s := newRepo(t)
	files := []string{"frameworks/go/meta.json", "frameworks/go/main.go", "frameworks/rust/meta.json", "README.md", "x"}
	s.AddPR(repoName, PR{Number: 9, HeadSHA: "aaa1", HeadRef: "feature/x", HeadRepo: "alice/arena", User: "alice",
		MaintainerCanModify: true, Files: files, FileStatus: map[string]string{"x": "removed"}})
	s.AddPR(repoName, PR{Number: 10, HeadSHA: "bbb1", HeadRef: "gone", HeadRepo: "bob/arena", HeadRepoDeleted: true, User: "bob"})

	pr := call(t, s, "GET", "repos/octo/arena/pulls/9", nil)
	wantStatus(t, pr, http.StatusOK)
	o := pr.obj(t)
	head := o["head"].(map[string]any)
	if head["sha"] != "aaa1" || head["ref"] != "feature/x" || head["repo"].(map[string]any)["full_name"] != "alice/arena" ||
		o["base"].(map[string]any)["ref"] != DefaultBranch || o["user"].(map[string]any)["login"] != "alice" ||
		o["maintainer_can_modify"] != true || o["state"] != "open" {
		t.Errorf("PR = %s", pr.raw)
	}
	deleted := call(t, s, "GET", "repos/octo/arena/pulls/10", nil).obj(t)
	if r, ok := deleted["head"].(map[string]any)["repo"]; !ok || r != nil {
		t.Errorf("deleted fork: head.repo = %v, want null", r)
	}
	s.SetHead(repoName, 9, "aaa2")
	if sha := call(t, s, "GET", "repos/octo/arena/pulls/9", nil).obj(t)["head"].(map[string]any)["sha"]; sha != "aaa2" {
		t.Errorf("head after SetHead = %v", sha)
	}
	wantStatus(t, call(t, s, "GET", "repos/octo/arena/pulls/11", nil), http.StatusNotFound)

	var got []string
	path := "repos/octo/arena/pulls/9/files?per_page=2"
	for path != "" {
		r := call(t, s, "GET", path, nil)
		wantStatus(t, r, http.StatusOK)
		for _, f := range r.list(t) {
			got = append(got, f["filename"].(string)+":"+f["status"].(string))
		}
		path = nextLink(t, s, r.header.Get("Link"))
	}
	want := []string{"frameworks/go/meta.json:modified", "frameworks/go/main.go:modified",
		"frameworks/rust/meta.json:modified", "README.md:modified", "x:removed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestContents(t *testing.T) {
	s := newRepo(t)
	s.AddPR(repoName, PR{Number: 1, HeadSHA: "head1", HeadRef: "f"})
	meta := []byte(`{"name":"go-std","language":"go","tests":["baseline"]}` + strings.Repeat(" ", 100))
	s.AddFile(repoName, "head1", "frameworks/go-std/meta.json", meta)
	s.AddFile(repoName, "head1", "frameworks/go-std/main.go", []byte("package main\n"))
	s.AddFile(repoName, "head1", "frameworks/rust-x/meta.json", []byte(`{}`))
	s.AddFile(repoName, "head1", "README.md", []byte("hi"))

	r := call(t, s, "GET", "repos/octo/arena/contents/frameworks/go-std/meta.json?ref=head1", nil)
	wantStatus(t, r, http.StatusOK)
	o := r.obj(t)
	if o["type"] != "file" || o["encoding"] != "base64" || o["path"] != "frameworks/go-std/meta.json" || o["name"] != "meta.json" {
		t.Errorf("file = %s", r.raw)
	}
	content := o["content"].(string)
	if !strings.Contains(content, "\n") {
		t.Error("content is not wrapped like GitHub's")
	}
	dec, err := base64.StdEncoding.DecodeString(content)
	if err != nil || !bytes.Equal(dec, meta) {
		t.Errorf("decoded content = %q, %v", dec, err)
	}

	dir := call(t, s, "GET", "repos/octo/arena/contents/frameworks?ref=head1", nil)
	wantStatus(t, dir, http.StatusOK)
	var names []string
	for _, e := range dir.list(t) {
		names = append(names, e["type"].(string)+" "+e["path"].(string))
	}
	if diff := cmp.Diff([]string{"dir frameworks/go-std", "dir frameworks/rust-x"}, names); diff != "" {
		t.Errorf("directory (-want +got):\n%s", diff)
	}
	// The branch resolves to the same commit.
	wantStatus(t, call(t, s, "GET", "repos/octo/arena/contents/README.md?ref=f", nil), http.StatusOK)
	wantStatus(t, call(t, s, "GET", "repos/octo/arena/contents/frameworks/nope/meta.json?ref=head1", nil), http.StatusNotFound)
	wantStatus(t, call(t, s, "GET", "repos/octo/arena/contents/README.md?ref=unknown", nil), http.StatusNotFound)
}

func TestGitDataCommit(t *testing.T) {
	s := newRepo(t)
	s.AddPR(repoName, PR{Number: 4, HeadSHA: "base1", HeadRef: "feat/a"})
	s.AddFile(repoName, "base1", "frameworks/go/meta.json", []byte(`{}`))

	ref := call(t, s, "GET", "repos/octo/arena/git/ref/heads/feat/a", nil)
	wantStatus(t, ref, http.StatusOK)
	obj := ref.obj(t)["object"].(map[string]any)
	if obj["sha"] != "base1" || ref.obj(t)["ref"] != "refs/heads/feat/a" {
		t.Fatalf("ref = %s", ref.raw)
	}
	wantStatus(t, call(t, s, "GET", "repos/octo/arena/git/refs/heads/feat/a", nil), http.StatusOK)
	head := call(t, s, "GET", "repos/octo/arena/git/commits/base1", nil)
	wantStatus(t, head, http.StatusOK)
	baseTree := head.obj(t)["tree"].(map[string]any)["sha"].(string)

	blob := call(t, s, "POST", "repos/octo/arena/git/blobs", map[string]string{
		"content": base64.StdEncoding.EncodeToString([]byte("rps 100\n")), "encoding": "base64"})
	wantStatus(t, blob, http.StatusCreated)
	blobSHA := blob.obj(t)["sha"].(string)
	if blobSHA != "929bee7171414cc10da524f8bbcb26f909983d28" { // git hash-object
		t.Errorf("blob sha = %q", blobSHA)
	}
	tree := call(t, s, "POST", "repos/octo/arena/git/trees", map[string]any{
		"base_tree": baseTree,
		"tree": []map[string]any{
			{"path": "results/go/baseline.json", "mode": "100644", "type": "blob", "sha": blobSHA},
			{"path": "results/go/summary.md", "mode": "100644", "type": "blob", "content": "# ok\n"},
		},
	})
	wantStatus(t, tree, http.StatusCreated)
	treeSHA := tree.obj(t)["sha"].(string)

	commit := func(parent string) string {
		r := call(t, s, "POST", "repos/octo/arena/git/commits", map[string]any{
			"message": "Benchmark results", "tree": treeSHA, "parents": []string{parent}})
		wantStatus(t, r, http.StatusCreated)
		return r.obj(t)["sha"].(string)
	}
	c1 := commit("base1")
	upd := call(t, s, "PATCH", "repos/octo/arena/git/refs/heads/feat/a", map[string]any{"sha": c1, "force": false})
	wantStatus(t, upd, http.StatusOK)
	if s.Ref(repoName, "feat/a") != c1 {
		t.Errorf("ref = %s, want %s", s.Ref(repoName, "feat/a"), c1)
	}
	if sha := call(t, s, "GET", "repos/octo/arena/pulls/4", nil).obj(t)["head"].(map[string]any)["sha"]; sha != c1 {
		t.Errorf("PR head after push = %v", sha)
	}
	commits := s.Commits(repoName)
	if len(commits) != 1 {
		t.Fatalf("Commits = %+v", commits)
	}
	want := map[string]string{
		"frameworks/go/meta.json":  "{}",
		"results/go/baseline.json": "rps 100\n",
		"results/go/summary.md":    "# ok\n",
	}
	got := map[string]string{}
	for p, c := range commits[0].Files {
		got[p] = string(c)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("commit files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"base1"}, commits[0].Parents); diff != "" || commits[0].Message != "Benchmark results" {
		t.Errorf("commit = %+v", commits[0])
	}

	// The head moves on: a commit on the old head is no fast forward.
	s.SetHead(repoName, 4, "pushed2")
	stale := commit(c1)
	r := call(t, s, "PATCH", "repos/octo/arena/git/refs/heads/feat/a", map[string]any{"sha": stale, "force": false})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if r.obj(t)["message"] != "Update is not a fast forward" {
		t.Errorf("422 body = %s", r.raw)
	}
	if s.Ref(repoName, "feat/a") != "pushed2" {
		t.Errorf("ref moved on a refused update")
	}
	// The new head keeps the files of the old one.
	wantStatus(t, call(t, s, "GET", "repos/octo/arena/contents/results/go/summary.md?ref=pushed2", nil), http.StatusOK)
}

func TestPushRefused(t *testing.T) {
	s := newRepo(t)
	s.AddPR(repoName, PR{Number: 2, HeadSHA: "f1", HeadRef: "main", HeadRepo: "carol/arena", MaintainerCanModify: false})
	s.AddPR(repoName, PR{Number: 3, HeadSHA: "d1", HeadRef: "dev", HeadRepo: "dave/arena", MaintainerCanModify: true})
	blob := map[string]string{"content": "x"}
	wantStatus(t, call(t, s, "POST", "repos/carol/arena/git/blobs", blob), http.StatusForbidden)
	wantStatus(t, call(t, s, "PATCH", "repos/carol/arena/git/refs/heads/main", map[string]any{"sha": "f1"}), http.StatusForbidden)
	wantStatus(t, call(t, s, "GET", "repos/carol/arena/git/ref/heads/main", nil), http.StatusOK)

	wantStatus(t, call(t, s, "POST", "repos/dave/arena/git/blobs", blob), http.StatusCreated)
	s.DenyPush("dave/arena")
	r := call(t, s, "POST", "repos/dave/arena/git/blobs", blob)
	wantStatus(t, r, http.StatusForbidden)
	if r.obj(t)["message"] != "Resource not accessible by integration" {
		t.Errorf("403 body = %s", r.raw)
	}
}

func TestFailNext(t *testing.T) {
	s := newRepo(t)
	s.AddPR(repoName, PR{Number: 1, HeadSHA: "a", HeadRef: "b"})
	s.FailNext("GET", "/repos/*/*/pulls/*", 2, http.StatusBadGateway)
	wantStatus(t, call(t, s, "GET", "repos/octo/arena/issues/1/comments", nil), http.StatusOK)
	for range 2 {
		r := call(t, s, "GET", "repos/octo/arena/pulls/1", nil)
		wantStatus(t, r, http.StatusBadGateway)
		if r.obj(t)["message"] != "Bad Gateway" {
			t.Errorf("body = %s", r.raw)
		}
	}
	wantStatus(t, call(t, s, "GET", "repos/octo/arena/pulls/1", nil), http.StatusOK)
	var statuses []int
	for _, c := range s.CallsTo("GET", "/repos/octo/arena/pulls/1") {
		statuses = append(statuses, c.Status)
	}
	if diff := cmp.Diff([]int{502, 502, 200}, statuses); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

func TestRateLimits(t *testing.T) {
	s := newRepo(t)
	s.RateLimitNext("POST", "/repos/*/*/issues/*/comments", 2500*time.Millisecond)
	r := call(t, s, "POST", "repos/octo/arena/issues/1/comments", map[string]string{"body": "x"})
	wantStatus(t, r, http.StatusForbidden)
	if got := r.header.Get("Retry-After"); got != "3" {
		t.Errorf("Retry-After = %q, want 3", got)
	}
	if d := r.obj(t)["documentation_url"].(string); !strings.HasSuffix(d, "secondary-rate-limits") {
		t.Errorf("documentation_url = %q", d)
	}
	wantStatus(t, call(t, s, "POST", "repos/octo/arena/issues/1/comments", map[string]string{"body": "x"}), http.StatusCreated)

	reset := time.Now().Add(10 * time.Minute).Truncate(time.Second)
	s.PrimaryRateLimitNext("", "", http.StatusTooManyRequests, reset)
	r = call(t, s, "GET", "repos/octo/arena/issues/1/comments", nil)
	wantStatus(t, r, http.StatusTooManyRequests)
	if r.header.Get("X-RateLimit-Remaining") != "0" || r.header.Get("X-RateLimit-Reset") != strconv.FormatInt(reset.Unix(), 10) {
		t.Errorf("headers = %v", r.header)
	}

	s.SetRateLimit(2, reset)
	first := call(t, s, "GET", "repos/octo/arena/issues/1/comments", nil)
	wantStatus(t, first, http.StatusOK)
	if first.header.Get("X-RateLimit-Remaining") != "1" {
		t.Errorf("remaining = %q", first.header.Get("X-RateLimit-Remaining"))
	}
	wantStatus(t, call(t, s, "GET", "repos/octo/arena/issues/1/comments", nil, "If-None-Match", first.header.Get("ETag")), http.StatusNotModified)
	wantStatus(t, call(t, s, "GET", "repos/octo/arena/issues/1/comments", nil), http.StatusOK)
	r = call(t, s, "GET", "repos/octo/arena/issues/1/comments", nil)
	wantStatus(t, r, http.StatusForbidden)
	if r.header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("remaining = %q", r.header.Get("X-RateLimit-Remaining"))
	}
}

func TestCallsRecorded(t *testing.T) {
	s := newRepo(t)
	call(t, s, "POST", "api/v3/repos/octo/arena/issues/2/comments?x=1", map[string]string{"body": "hi"})
	nf := call(t, s, "GET", "repos/octo/arena/nothing/here", nil)
	wantStatus(t, nf, http.StatusNotFound)
	if o := nf.obj(t); o["message"] != "Not Found" || o["documentation_url"] == nil {
		t.Errorf("404 body = %s", nf.raw)
	}
	wantStatus(t, call(t, s, "GET", "repos/nobody/none/pulls/1", nil), http.StatusNotFound)

	calls := s.Calls()
	if len(calls) != 3 {
		t.Fatalf("%d calls, want 3", len(calls))
	}
	c := calls[0]
	if c.Method != "POST" || c.Path != "/repos/octo/arena/issues/2/comments" || c.Query.Get("x") != "1" ||
		string(c.Body) != `{"body":"hi"}` || c.Header.Get("Authorization") != "Bearer test-token" ||
		c.Status != http.StatusCreated || c.Time.IsZero() {
		t.Errorf("call = %+v", c)
	}
	if calls[1].Status != http.StatusNotFound || calls[2].Path != "/repos/nobody/none/pulls/1" {
		t.Errorf("calls = %+v", calls[1:])
	}
}

func TestAuth(t *testing.T) {
	s := newRepo(t)
	s.RequireToken("secret")
	wantStatus(t, call(t, s, "GET", "repos/octo/arena/issues/1/comments", nil), http.StatusUnauthorized)
	wantStatus(t, call(t, s, "GET", "repos/octo/arena/issues/1/comments", nil, "Authorization", "token secret"), http.StatusOK)
	wantStatus(t, call(t, s, "GET", "repos/octo/arena/issues/1/comments", nil, "Authorization", "Bearer secret"), http.StatusOK)

	tok := call(t, s, "POST", "app/installations/42/access_tokens", nil, "Authorization", "Bearer some.jwt.value")
	wantStatus(t, tok, http.StatusCreated)
	o := tok.obj(t)
	token, _ := o["token"].(string)
	if !strings.HasPrefix(token, "ghs_test") {
		t.Errorf("token = %q", token)
	}
	if exp, err := time.Parse(time.RFC3339, o["expires_at"].(string)); err != nil || !exp.After(time.Now()) {
		t.Errorf("expires_at = %v (%v)", o["expires_at"], err)
	}
	wantStatus(t, call(t, s, "GET", "repos/octo/arena/issues/1/comments", nil, "Authorization", "token "+token), http.StatusOK)
}
