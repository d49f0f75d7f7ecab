// Package githubtest is a fake GitHub REST API for the bot's tests. It runs on an
// httptest.Server, keeps repositories, pull requests, comments, reactions, file contents
// and Git objects in memory, answers with GitHub's paths, statuses, headers and JSON shapes,
// and records every call.
//
// The fake serves under "/" and also under "/api/v3/", so both a client whose BaseURL is set
// to Server.URL and one built with go-github's WithEnterpriseURLs(URL, URL) reach it.
//
// It imports no testing package: New takes the small TB interface, which *testing.T and
// *testing.B satisfy.
package githubtest

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"
)

// TB is the part of testing.TB the fake needs.
type TB interface {
	Helper()
	Cleanup(func())
}

// BotLogin is the default login of the authenticated caller: comments, reactions and commits
// made through the API are attributed to it. Change it with SetCaller.
const BotLogin = "arenabot[bot]"

// DefaultBranch is every repository's default branch; contents requests without ref read it.
const DefaultBranch = "main"

// MaxCommentLength is GitHub's limit on an issue comment body, in characters.
const MaxCommentLength = 65536

// Server is a running fake GitHub API.
type Server struct {
	// URL is the API base URL with a trailing slash, usable as ARENA_GITHUB_API_URL and as
	// go-github's BaseURL.
	URL string

	srv *httptest.Server

	mu         sync.Mutex
	now        func() time.Time
	caller     string
	repos      map[string]*repo // by lower-case full name
	users      map[string]int64 // login → id
	nextID     int64
	calls      []Call
	faults     []*fault
	transport  []*transportFault // SlowNext, ResetNext
	tokens     map[string]bool   // accepted tokens; nil accepts any
	issued     int
	rateLimit  int
	rateUsed   int
	rateReset  time.Time
	requestSeq int
	deliveries []*Delivery     // oldest first
	appSlug    *string         // GET /app's slug; nil means DefaultAppSlug
	installs   []*installation // GET /app/installations, in the order added
}

// Call is one recorded request with the status it was answered with.
type Call struct {
	Method string
	Path   string // without the optional /api/v3 prefix
	Query  url.Values
	Body   []byte
	Header http.Header
	Status int
	Time   time.Time
}

// PR describes a pull request to AddPR.
type PR struct {
	Number  int
	Title   string
	HeadSHA string
	HeadRef string
	// HeadRepo is the full name of the head repository; "" means the base repository.
	HeadRepo string
	// HeadRepoDeleted answers head.repo as null, as GitHub does once the fork is deleted.
	HeadRepoDeleted bool
	BaseRef         string // "" means DefaultBranch
	User            string
	// MaintainerCanModify: when false and the head is a fork, pushes to the fork are
	// refused with 403 (see DenyPush).
	MaintainerCanModify bool
	State               string // "" means "open"
	// Files are the changed paths listed by GET …/pulls/{n}/files, each with status
	// "modified" unless FileStatus says otherwise.
	Files      []string
	FileStatus map[string]string
}

// Comment is an issue comment as the fake holds it.
type Comment struct {
	ID        int64
	Number    int
	Body      string
	User      string
	Edits     int // successful PATCHes
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Reaction is one reaction on an issue comment.
type Reaction struct {
	ID        int64
	User      string
	Content   string
	CreatedAt time.Time
}

// Commit is a commit object of a repository: either created through the Git Data API or
// standing for a head SHA given to AddPR/SetHead.
type Commit struct {
	SHA     string
	Message string
	Tree    string
	Parents []string
	// Files maps each path of the commit's tree to its content.
	Files map[string][]byte
}

type repo struct {
	owner, name string
	id          int64
	perms       map[string]string // lower-case login → admin|maintain|write|triage|read|none
	permDenied  bool
	denyPush    bool
	prs         map[int]*PR
	comments    []*Comment
	reactions   map[int64][]*Reaction
	files       map[string]map[string][]byte // ref → path → content, from AddFile
	blobs       map[string][]byte
	trees       map[string]map[string]treeEntry // flat: path → entry
	commits     map[string]*commitObj
	created     []string          // commit SHAs created through the API, in order
	refs        map[string]string // branch → SHA
	checks      []*CheckRun       // the check runs, in the order created
}

type treeEntry struct {
	Mode string
	Type string
	SHA  string
}

type commitObj struct {
	sha     string
	message string
	tree    string
	parents []string
	date    time.Time
	// synthetic commits stand for commits made outside the API (PR heads); their tree is
	// rebuilt from the files added for their SHA.
	synthetic bool
}

type fault struct {
	method, pattern string
	n               int
	status          int
	retryAfter      time.Duration // secondary rate limit
	reset           time.Time     // primary rate limit
	primary         bool
}

// New starts a fake GitHub API that is closed when the test ends.
func New(t TB) *Server {
	t.Helper()
	s := &Server{
		now:       func() time.Time { return time.Now().UTC().Truncate(time.Second) },
		caller:    BotLogin,
		repos:     map[string]*repo{},
		users:     map[string]int64{},
		nextID:    1000,
		rateLimit: 5000,
	}
	s.rateReset = s.now().Add(time.Hour)
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL + "/"
	t.Cleanup(s.srv.Close)
	return s
}

// Client returns an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// SetCaller sets the login of the authenticated caller (default BotLogin).
func (s *Server) SetCaller(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caller = login
}

// SetClock replaces the clock used for timestamps and rate-limit resets.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// RequireToken makes every call except the App token endpoint answer 401 unless it carries
// "Authorization: Bearer tok" or "token tok". Installation tokens issued by the fake are
// accepted as well. Without it any Authorization (or none) is accepted.
func (s *Server) RequireToken(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tokens == nil {
		s.tokens = map[string]bool{}
	}
	s.tokens[tok] = true
}

// SetRateLimit sets the simulated primary rate limit: every answered call except a 304 uses
// one; when none remain calls get 403 with X-RateLimit-Remaining: 0 until reset.
func (s *Server) SetRateLimit(limit int, reset time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rateLimit, s.rateUsed, s.rateReset = limit, 0, reset
}

// RateRemaining reports how many calls the simulated primary rate limit still allows.
func (s *Server) RateRemaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(s.rateLimit-s.rateUsed, 0)
}

// AddRepo creates an empty repository. Adding it again changes nothing.
func (s *Server) AddRepo(owner, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repo(owner + "/" + name)
}

// repo returns the repository, creating it. s.mu must be held.
func (s *Server) repo(full string) *repo {
	key := strings.ToLower(full)
	if r, ok := s.repos[key]; ok {
		return r
	}
	owner, name, _ := strings.Cut(full, "/")
	s.nextID++
	r := &repo{
		owner: owner, name: name, id: s.nextID,
		perms:     map[string]string{},
		prs:       map[int]*PR{},
		reactions: map[int64][]*Reaction{},
		files:     map[string]map[string][]byte{},
		blobs:     map[string][]byte{},
		trees:     map[string]map[string]treeEntry{},
		commits:   map[string]*commitObj{},
		refs:      map[string]string{},
	}
	s.repos[key] = r
	return r
}

func (s *Server) lookup(full string) *repo { return s.repos[strings.ToLower(full)] }

// mustRepo returns an existing repository or panics: setup helpers name repositories that
// the test added.
func (s *Server) mustRepo(full string) *repo {
	r := s.lookup(full)
	if r == nil {
		panic("githubtest: unknown repository " + full + " (call AddRepo first)")
	}
	return r
}

// AddPR adds or replaces a pull request of repo ("owner/name", created if needed). The head
// repository is created too, its head branch points at HeadSHA, and a fork whose
// maintainers may not modify it refuses pushes.
func (s *Server) AddPR(repoName string, pr PR) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(repoName)
	if pr.State == "" {
		pr.State = "open"
	}
	if pr.BaseRef == "" {
		pr.BaseRef = DefaultBranch
	}
	pr.Files = append([]string(nil), pr.Files...)
	r.prs[pr.Number] = &pr
	head := s.headRepo(r, &pr, true)
	if head == nil {
		return
	}
	if head != r && !pr.MaintainerCanModify {
		head.denyPush = true
	}
	if pr.HeadRef != "" && pr.HeadSHA != "" {
		s.ensureCommit(head, pr.HeadSHA, "")
		head.refs[pr.HeadRef] = pr.HeadSHA
	}
}

// headRepo returns the PR's head repository, nil when it was deleted (or, unless create,
// unknown). s.mu must be held.
func (s *Server) headRepo(r *repo, pr *PR, create bool) *repo {
	switch {
	case pr.HeadRepoDeleted:
		return nil
	case pr.HeadRepo == "" || strings.EqualFold(pr.HeadRepo, r.owner+"/"+r.name):
		return r
	case create:
		return s.repo(pr.HeadRepo)
	default:
		return s.lookup(pr.HeadRepo)
	}
}

// SetHead moves the pull request to a new head commit, as a push does: the head branch
// points at sha, whose parent is the previous head, and whose files are those added for
// sha with AddFile or, without any, the previous head's.
func (s *Server) SetHead(repoName string, number int, sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(repoName)
	pr, ok := r.prs[number]
	if !ok {
		panic("githubtest: unknown pull request")
	}
	old := pr.HeadSHA
	pr.HeadSHA = sha
	if head := s.headRepo(r, pr, false); head != nil {
		if _, ok := head.files[sha]; !ok {
			if c := s.ensureCommit(head, old, ""); c != nil {
				head.files[sha] = flatten(head, treeOf(head, c))
			}
		}
		s.ensureCommit(head, sha, old)
		if pr.HeadRef != "" {
			head.refs[pr.HeadRef] = sha
		}
	}
}

// SetRef points a branch of repo at sha (created as an empty commit when unknown).
func (s *Server) SetRef(repoName, branch, sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(repoName)
	s.ensureCommit(r, sha, "")
	r.refs[branch] = sha
}

// Ref returns the SHA a branch points at, "" when it does not exist.
func (s *Server) Ref(repoName, branch string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mustRepo(repoName).refs[branch]
}

// SetPermission sets user's permission on repo: admin, maintain, write, triage, read or
// none. The permission endpoint answers maintain as "write" and triage as "read", keeping
// the role in role_name, as GitHub does. Users never set answer "none".
func (s *Server) SetPermission(repoName, user, perm string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustRepo(repoName).perms[strings.ToLower(user)] = perm
}

// DenyPermissionRead makes the permission endpoint of repo answer 403 "Must have push access
// to view collaborator permission.", as GitHub does for a caller without push access.
func (s *Server) DenyPermissionRead(repoName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustRepo(repoName).permDenied = true
}

// DenyPush makes every Git Data write to repo (blobs, trees, commits, ref updates) answer 403
// "Resource not accessible by integration".
func (s *Server) DenyPush(repoName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustRepo(repoName).denyPush = true
}

// AddFile stores a file of repo at ref (a branch name or a commit SHA) for the contents
// endpoint. Files added for a head SHA (AddPR, SetHead, SetRef) also make up the tree of that
// commit in the Git Data API.
func (s *Server) AddFile(repoName, ref, filePath string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(repoName)
	if r.files[ref] == nil {
		r.files[ref] = map[string][]byte{}
	}
	r.files[ref][strings.Trim(filePath, "/")] = append([]byte(nil), content...)
}

// AddComment adds a comment by user to issue or pull request number, as if posted on
// GitHub, and returns its id.
func (s *Server) AddComment(repoName string, number int, user, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addComment(s.mustRepo(repoName), number, user, body).ID
}

func (s *Server) addComment(r *repo, number int, user, body string) *Comment {
	s.nextID++
	now := s.now()
	c := &Comment{ID: s.nextID, Number: number, Body: body, User: user, CreatedAt: now, UpdatedAt: now}
	r.comments = append(r.comments, c)
	return c
}

// React adds user's reaction (+1, -1, laugh, confused, heart, hooray, rocket, eyes) to a
// comment, which changes the reaction list and its ETag. It reports false when user had
// already reacted with content.
func (s *Server) React(repoName string, commentID int64, user, content string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, created := s.react(s.mustRepo(repoName), commentID, user, content)
	return created
}

func (s *Server) react(r *repo, commentID int64, user, content string) (*Reaction, bool) {
	for _, x := range r.reactions[commentID] {
		if strings.EqualFold(x.User, user) && x.Content == content {
			return x, false
		}
	}
	s.nextID++
	x := &Reaction{ID: s.nextID, User: user, Content: content, CreatedAt: s.now()}
	r.reactions[commentID] = append(r.reactions[commentID], x)
	return x, true
}

// Unreact removes user's reaction with content from a comment.
func (s *Server) Unreact(repoName string, commentID int64, user, content string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(repoName)
	list := r.reactions[commentID]
	for i, x := range list {
		if strings.EqualFold(x.User, user) && x.Content == content {
			r.reactions[commentID] = append(list[:i:i], list[i+1:]...)
			return
		}
	}
}

// Calls returns every call so far, in arrival order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Call, len(s.calls))
	for i, c := range s.calls {
		c.Header = c.Header.Clone()
		c.Query = cloneValues(c.Query)
		c.Body = append([]byte(nil), c.Body...)
		out[i] = c
	}
	return out
}

// CallsTo returns the calls whose method and path match, as for FailNext.
func (s *Server) CallsTo(method, pathPattern string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if matches(method, pathPattern, c.Method, c.Path) {
			out = append(out, c)
		}
	}
	return out
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// Comments returns the current comments of issue or pull request number, oldest first.
func (s *Server) Comments(repoName string, number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.mustRepo(repoName).comments {
		if c.Number == number {
			out = append(out, *c)
		}
	}
	return out
}

// Reactions returns the reactions on a comment, oldest first.
func (s *Server) Reactions(repoName string, commentID int64) []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Reaction
	for _, x := range s.mustRepo(repoName).reactions[commentID] {
		out = append(out, *x)
	}
	return out
}

// Commits returns the commits created through the Git Data API, oldest first, with the
// files of their trees.
func (s *Server) Commits(repoName string) []Commit {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(repoName)
	var out []Commit
	for _, sha := range r.created {
		c := r.commits[sha]
		files := map[string][]byte{}
		for p, e := range r.trees[c.tree] {
			files[p] = append([]byte(nil), r.blobs[e.SHA]...)
		}
		out = append(out, Commit{
			SHA: c.sha, Message: c.message, Tree: c.tree,
			Parents: append([]string(nil), c.parents...), Files: files,
		})
	}
	return out
}

// FailNext makes the next n calls matching method ("" for any) and pathPattern answer status
// with a GitHub-style error body. pathPattern is matched with path.Match against the path
// without the optional /api/v3 prefix ("/repos/*/*/issues/*/comments"); "" matches any path.
func (s *Server) FailNext(method, pathPattern string, n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{method: method, pattern: pathPattern, n: n, status: status})
}

// RateLimitNext makes the next matching call hit a secondary rate limit: 403 with a
// Retry-After header (whole seconds) and GitHub's message and documentation URL.
func (s *Server) RateLimitNext(method, pathPattern string, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{method: method, pattern: pathPattern, n: 1, status: http.StatusForbidden, retryAfter: retryAfter})
}

// PrimaryRateLimitNext makes the next matching call hit the primary rate limit: status (403
// or 429) with X-RateLimit-Remaining: 0 and X-RateLimit-Reset at reset.
func (s *Server) PrimaryRateLimitNext(method, pathPattern string, status int, reset time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{method: method, pattern: pathPattern, n: 1, status: status, reset: reset, primary: true})
}

func matches(method, pattern, gotMethod, gotPath string) bool {
	if method != "" && !strings.EqualFold(method, gotMethod) {
		return false
	}
	if pattern == "" {
		return true
	}
	ok, err := path.Match(pattern, gotPath)
	return err == nil && ok
}

// SetNextID makes the IDs the fake gives from now on (comments, reactions, deliveries)
// start after id, so that tests sharing something outside the fake (a Docker engine whose
// containers are labelled with request IDs made of comment IDs) do not collide.
func (s *Server) SetNextID(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID = max(s.nextID, id)
}
