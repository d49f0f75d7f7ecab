package githubtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

const docsBase = "https://docs.github.com/rest"

// secondaryDocs ends in "secondary-rate-limits", which go-github v60 needs to return an
// *AbuseRateLimitError.
const secondaryDocs = "https://docs.github.com/rest/overview/resources-in-the-rest-api#secondary-rate-limits"

// response is an answer before it is written.
type response struct {
	status int
	header http.Header
	body   any // marshalled to JSON unless nil
}

func answer(status int, body any) *response {
	return &response{status: status, header: http.Header{}, body: body}
}

func errorBody(message, docs string) map[string]any {
	return map[string]any{"message": message, "documentation_url": docs}
}

func notFound() *response {
	return answer(http.StatusNotFound, map[string]any{"message": "Not Found", "documentation_url": docsBase, "status": "404"})
}

func validationFailed(resource, field, code, message, docs string) *response {
	e := map[string]any{"resource": resource, "field": field, "code": code}
	if message != "" {
		e["message"] = message
	}
	return answer(http.StatusUnprocessableEntity, map[string]any{
		"message": "Validation Failed", "errors": []any{e}, "documentation_url": docs, "status": "422",
	})
}

func unprocessable(message, docs string) *response {
	return answer(http.StatusUnprocessableEntity, map[string]any{"message": message, "documentation_url": docs, "status": "422"})
}

func (s *Server) serveHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	p := apiPath(req)
	tf := s.takeTransportFault(req.Method, p)
	if tf != nil && tf.delay > 0 {
		time.Sleep(tf.delay)
	}
	if tf != nil && tf.reset && !tf.carriedOut {
		s.recordReset(req, p, body)
		resetConn(w)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	now := s.now()
	resp := s.handle(req, p, body)
	if resp.header == nil {
		resp.header = http.Header{}
	}
	var out []byte
	if resp.body != nil {
		out, _ = json.Marshal(resp.body)
	}
	if req.Method == http.MethodGet && resp.status == http.StatusOK {
		sum := sha256.Sum256(out)
		etag := `W/"` + hex.EncodeToString(sum[:16]) + `"`
		resp.header.Set("ETag", etag)
		if etagMatch(req.Header.Get("If-None-Match"), etag) {
			resp.status, out = http.StatusNotModified, nil
		}
	}
	if resp.status != http.StatusNotModified && resp.header.Get("X-RateLimit-Remaining") == "" {
		s.rateUsed++
	}
	h := w.Header()
	for k, vs := range resp.header {
		h[k] = vs
	}
	s.requestSeq++
	h.Set("X-GitHub-Request-Id", fmt.Sprintf("FAKE:%04X", s.requestSeq))
	h.Set("X-GitHub-Media-Type", "github.v3; format=json")
	if h.Get("X-RateLimit-Remaining") == "" {
		h.Set("X-RateLimit-Limit", strconv.Itoa(s.rateLimit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(max(s.rateLimit-s.rateUsed, 0)))
		h.Set("X-RateLimit-Used", strconv.Itoa(min(s.rateUsed, s.rateLimit)))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(s.rateReset.Unix(), 10))
		h.Set("X-RateLimit-Resource", "core")
	}
	if out != nil {
		h.Set("Content-Type", "application/json; charset=utf-8")
	}
	s.calls = append(s.calls, Call{
		Method: req.Method, Path: p, Query: cloneValues(req.URL.Query()), Body: body,
		Header: req.Header.Clone(), Status: resp.status, Time: now,
	})
	if tf != nil && tf.reset {
		resetConn(w)
		return
	}
	w.WriteHeader(resp.status)
	w.Write(out)
}

func etagMatch(header, etag string) bool {
	if header == "" {
		return false
	}
	bare := strings.TrimPrefix(etag, "W/")
	for t := range strings.SplitSeq(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == bare {
			return true
		}
	}
	return false
}

func (s *Server) authorized(req *http.Request) bool {
	if s.tokens == nil {
		return true
	}
	a := req.Header.Get("Authorization")
	scheme, tok, _ := strings.Cut(a, " ")
	if !strings.EqualFold(scheme, "bearer") && !strings.EqualFold(scheme, "token") {
		return false
	}
	return s.tokens[strings.TrimSpace(tok)]
}

// handle answers one request; s.mu is held.
func (s *Server) handle(req *http.Request, p string, body []byte) *response {
	seg := strings.Split(strings.Trim(p, "/"), "/")
	appToken := len(seg) == 4 && seg[0] == "app" && seg[1] == "installations" && seg[3] == "access_tokens"
	appHook := len(seg) >= 3 && seg[0] == "app" && seg[1] == "hook" && seg[2] == "deliveries" // the App's JWT: hookDeliveries checks it
	if !appToken && !appHook && !appJWTRoute(seg) && !s.authorized(req) {
		return answer(http.StatusUnauthorized, map[string]any{"message": "Bad credentials", "documentation_url": docsBase, "status": "401"})
	}
	if r := s.fault(req.Method, p); r != nil {
		return r
	}
	now := s.now()
	if !now.Before(s.rateReset) {
		s.rateUsed, s.rateReset = 0, now.Add(time.Hour)
	}
	if s.rateUsed >= s.rateLimit {
		return s.primaryLimited(http.StatusForbidden, s.rateReset)
	}
	if appToken && req.Method == http.MethodPost {
		return s.accessToken(seg[2])
	}
	if appHook {
		return s.hookDeliveries(req, seg[3:])
	}
	if r := s.identity(req, seg); r != nil {
		return r
	}
	if len(seg) < 4 || seg[0] != "repos" {
		return notFound()
	}
	r := s.lookup(seg[1] + "/" + seg[2])
	if r == nil {
		return notFound()
	}
	rest := seg[3:]
	m := req.Method
	switch {
	case rest[0] == "issues" && len(rest) == 3 && rest[2] == "comments" && rest[1] != "comments":
		n, err := strconv.Atoi(rest[1])
		if err != nil {
			return notFound()
		}
		switch m {
		case http.MethodGet:
			return s.listComments(req, r, n)
		case http.MethodPost:
			return s.createComment(r, n, body)
		}
	case rest[0] == "issues" && len(rest) >= 3 && rest[1] == "comments":
		id, err := strconv.ParseInt(rest[2], 10, 64)
		if err != nil {
			return notFound()
		}
		c := findComment(r, id)
		if c == nil {
			return notFound()
		}
		switch {
		case len(rest) == 3 && m == http.MethodGet:
			return answer(http.StatusOK, s.commentJSON(r, c))
		case len(rest) == 3 && m == http.MethodPatch:
			return s.editComment(r, c, body)
		case len(rest) == 4 && rest[3] == "reactions" && m == http.MethodGet:
			return s.listReactions(req, r, c)
		case len(rest) == 4 && rest[3] == "reactions" && m == http.MethodPost:
			return s.createReaction(r, c, body)
		}
	case rest[0] == "collaborators" && len(rest) == 3 && rest[2] == "permission" && m == http.MethodGet:
		return s.permission(r, rest[1])
	case rest[0] == "pulls" && (len(rest) == 2 || len(rest) == 3 && rest[2] == "files") && m == http.MethodGet:
		n, err := strconv.Atoi(rest[1])
		if err != nil {
			return notFound()
		}
		pr, ok := r.prs[n]
		if !ok {
			return notFound()
		}
		if len(rest) == 3 {
			return s.listFiles(req, r, pr)
		}
		return answer(http.StatusOK, s.prJSON(r, pr))
	case rest[0] == "contents" && m == http.MethodGet:
		return s.contents(r, strings.Join(rest[1:], "/"), req.URL.Query().Get("ref"))
	case rest[0] == "git" && len(rest) >= 2:
		return s.git(r, m, rest[1:], body)
	case rest[0] == "check-runs":
		return s.checkRuns(r, m, rest, body)
	case rest[0] == "commits" && len(rest) == 3 && rest[2] == "check-runs" && m == http.MethodGet:
		return s.listCheckRuns(r, rest[1], req.URL.Query().Get("check_name"))
	}
	return notFound()
}

// fault answers the first injected failure that matches, if any.
func (s *Server) fault(method, p string) *response {
	for i, f := range s.faults {
		if !matches(f.method, f.pattern, method, p) {
			continue
		}
		f.n--
		if f.n <= 0 {
			s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
		}
		switch {
		case f.primary:
			return s.primaryLimited(f.status, f.reset)
		case f.retryAfter > 0:
			r := answer(f.status, errorBody("You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID FAKE.", secondaryDocs))
			secs := int((f.retryAfter + time.Second - 1) / time.Second)
			r.header.Set("Retry-After", strconv.Itoa(secs))
			return r
		default:
			msg := http.StatusText(f.status)
			if msg == "" {
				msg = "Error"
			}
			return answer(f.status, map[string]any{"message": msg, "documentation_url": docsBase, "status": strconv.Itoa(f.status)})
		}
	}
	return nil
}

func (s *Server) primaryLimited(status int, reset time.Time) *response {
	r := answer(status, errorBody(
		"API rate limit exceeded for installation ID 1. If you reach out to GitHub Support for help, please include the request ID FAKE.",
		"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"))
	r.header.Set("X-RateLimit-Limit", strconv.Itoa(s.rateLimit))
	r.header.Set("X-RateLimit-Remaining", "0")
	r.header.Set("X-RateLimit-Used", strconv.Itoa(s.rateLimit))
	r.header.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	r.header.Set("X-RateLimit-Resource", "core")
	return r
}

func (s *Server) accessToken(installation string) *response {
	s.issued++
	tok := fmt.Sprintf("ghs_test%s_%d", installation, s.issued)
	if s.tokens != nil {
		s.tokens[tok] = true
	}
	return answer(http.StatusCreated, map[string]any{
		"token":                tok,
		"expires_at":           s.now().Add(time.Hour).Format(time.RFC3339),
		"permissions":          map[string]string{"contents": "write", "issues": "write", "metadata": "read", "pull_requests": "write", "checks": "write"},
		"repository_selection": "all",
	})
}

// page cuts a list of n items per the page and per_page parameters and sets the Link header
// as GitHub does.
func (s *Server) page(req *http.Request, n int, h http.Header) (lo, hi int) {
	q := req.URL.Query()
	per, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || per <= 0 {
		per = 30
	}
	per = min(per, 100)
	pg, err := strconv.Atoi(q.Get("page"))
	if err != nil || pg <= 0 {
		pg = 1
	}
	last := max((n+per-1)/per, 1)
	link := func(page int, rel string) string {
		q.Set("page", strconv.Itoa(page))
		q.Set("per_page", strconv.Itoa(per))
		return fmt.Sprintf("<%s%s?%s>; rel=%q", strings.TrimSuffix(s.srv.URL, "/"), req.URL.Path, q.Encode(), rel)
	}
	var links []string
	if pg > 1 {
		links = append(links, link(pg-1, "prev"))
	}
	if pg < last {
		links = append(links, link(pg+1, "next"), link(last, "last"))
	}
	if pg > 1 {
		links = append(links, link(1, "first"))
	}
	if len(links) > 0 {
		h.Set("Link", strings.Join(links, ", "))
	}
	lo = min((pg-1)*per, n)
	return lo, min(lo+per, n)
}

func findComment(r *repo, id int64) *Comment {
	for _, c := range r.comments {
		if c.ID == id {
			return c
		}
	}
	return nil
}

func decode(body []byte, v any) bool {
	return json.NewDecoder(bytes.NewReader(body)).Decode(v) == nil
}

const commentDocs = "https://docs.github.com/rest/issues/comments#create-an-issue-comment"

func checkCommentBody(body *string, docs string) *response {
	switch {
	case body == nil || *body == "":
		return validationFailed("IssueComment", "body", "missing_field", "", docs)
	case len([]rune(*body)) > MaxCommentLength:
		return validationFailed("IssueComment", "body", "custom",
			fmt.Sprintf("body is too long (maximum is %d characters)", MaxCommentLength), docs)
	}
	return nil
}

func (s *Server) createComment(r *repo, n int, body []byte) *response {
	var in struct {
		Body *string `json:"body"`
	}
	if !decode(body, &in) {
		return answer(http.StatusBadRequest, errorBody("Problems parsing JSON", commentDocs))
	}
	if bad := checkCommentBody(in.Body, commentDocs); bad != nil {
		return bad
	}
	c := s.addComment(r, n, s.caller, *in.Body)
	resp := answer(http.StatusCreated, s.commentJSON(r, c))
	resp.header.Set("Location", s.apiURL(r, "issues/comments/%d", c.ID))
	return resp
}

func (s *Server) editComment(r *repo, c *Comment, body []byte) *response {
	const docs = "https://docs.github.com/rest/issues/comments#update-an-issue-comment"
	var in struct {
		Body *string `json:"body"`
	}
	if !decode(body, &in) {
		return answer(http.StatusBadRequest, errorBody("Problems parsing JSON", docs))
	}
	if bad := checkCommentBody(in.Body, docs); bad != nil {
		return bad
	}
	c.Body = *in.Body
	c.Edits++
	c.UpdatedAt = s.now()
	return answer(http.StatusOK, s.commentJSON(r, c))
}

func (s *Server) listComments(req *http.Request, r *repo, n int) *response {
	var list []any
	for _, c := range r.comments {
		if c.Number == n {
			list = append(list, s.commentJSON(r, c))
		}
	}
	resp := answer(http.StatusOK, nil)
	lo, hi := s.page(req, len(list), resp.header)
	resp.body = append([]any{}, list[lo:hi]...)
	return resp
}

var reactionContents = map[string]string{
	"+1": "+1", "-1": "-1", "laugh": "laugh", "confused": "confused",
	"heart": "heart", "hooray": "hooray", "rocket": "rocket", "eyes": "eyes",
}

func (s *Server) createReaction(r *repo, c *Comment, body []byte) *response {
	const docs = "https://docs.github.com/rest/reactions/reactions#create-reaction-for-an-issue-comment"
	var in struct {
		Content string `json:"content"`
	}
	if !decode(body, &in) {
		return answer(http.StatusBadRequest, errorBody("Problems parsing JSON", docs))
	}
	if _, ok := reactionContents[in.Content]; !ok {
		return validationFailed("Reaction", "content", "invalid", "", docs)
	}
	x, created := s.react(r, c.ID, s.caller, in.Content)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return answer(status, s.reactionJSON(x))
}

func (s *Server) listReactions(req *http.Request, r *repo, c *Comment) *response {
	list := []any{}
	want := req.URL.Query().Get("content")
	for _, x := range r.reactions[c.ID] {
		if want == "" || x.Content == want {
			list = append(list, s.reactionJSON(x))
		}
	}
	resp := answer(http.StatusOK, nil)
	lo, hi := s.page(req, len(list), resp.header)
	resp.body = append([]any{}, list[lo:hi]...)
	return resp
}

func (s *Server) permission(r *repo, user string) *response {
	if r.permDenied {
		return answer(http.StatusForbidden, errorBody("Must have push access to view collaborator permission.",
			"https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user"))
	}
	role := r.perms[strings.ToLower(user)]
	if role == "" {
		role = "none"
	}
	perm := role
	switch role {
	case "maintain":
		perm = "write"
	case "triage":
		perm = "read"
	}
	rank := map[string]int{"none": 0, "read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}[role]
	u := s.userJSON(user)
	u["role_name"] = role
	u["permissions"] = map[string]bool{
		"admin": rank >= 5, "maintain": rank >= 4, "push": rank >= 3, "triage": rank >= 2, "pull": rank >= 1,
	}
	return answer(http.StatusOK, map[string]any{"permission": perm, "role_name": role, "user": u})
}

func (s *Server) listFiles(req *http.Request, r *repo, pr *PR) *response {
	files := pr.Files
	if len(files) > 3000 {
		files = files[:3000]
	}
	resp := answer(http.StatusOK, nil)
	lo, hi := s.page(req, len(files), resp.header)
	out := []any{}
	for _, f := range files[lo:hi] {
		status := pr.FileStatus[f]
		if status == "" {
			status = "modified"
		}
		out = append(out, map[string]any{
			"sha":          blobSHA([]byte(pr.HeadSHA + "\x00" + f)),
			"filename":     f,
			"status":       status,
			"additions":    1,
			"deletions":    0,
			"changes":      1,
			"blob_url":     fmt.Sprintf("https://github.com/%s/%s/blob/%s/%s", r.owner, r.name, pr.HeadSHA, f),
			"raw_url":      fmt.Sprintf("https://github.com/%s/%s/raw/%s/%s", r.owner, r.name, pr.HeadSHA, f),
			"contents_url": s.apiURL(r, "contents/%s?ref=%s", f, pr.HeadSHA),
			"patch":        "@@ -0,0 +1 @@\n+fake",
		})
	}
	resp.body = out
	return resp
}

// contentsLimit is the largest file the contents API returns with its content (1 MB).
const contentsLimit = 1 << 20

func (s *Server) contents(r *repo, p, ref string) *response {
	files, ok := resolveFiles(r, ref)
	if !ok {
		return answer(http.StatusNotFound, map[string]any{"message": "No commit found for the ref " + ref,
			"documentation_url": "https://docs.github.com/rest/repos/contents#get-repository-content", "status": "404"})
	}
	p = strings.Trim(p, "/")
	if ref == "" {
		ref = DefaultBranch
	}
	if c, ok := files[p]; ok && p != "" {
		e := s.contentEntry(r, p, "file", ref, c)
		e["encoding"] = "base64"
		e["content"] = wrap64(c)
		if len(c) > contentsLimit {
			// GitHub gives a file above 1 MB without its content; its blob has it.
			e["encoding"], e["content"] = "none", ""
			r.blobs[blobSHA(c)] = c
		}
		return answer(http.StatusOK, e)
	}
	children := map[string]any{}
	prefix := p + "/"
	if p == "" {
		prefix = ""
	}
	for fp, c := range files {
		rest, ok := strings.CutPrefix(fp, prefix)
		if !ok {
			continue
		}
		name, _, isDir := strings.Cut(rest, "/")
		if isDir {
			if _, seen := children[name]; !seen {
				children[name] = s.contentEntry(r, prefix+name, "dir", ref, nil)
			}
		} else {
			children[name] = s.contentEntry(r, fp, "file", ref, c)
		}
	}
	if len(children) == 0 {
		return answer(http.StatusNotFound, map[string]any{"message": "Not Found",
			"documentation_url": "https://docs.github.com/rest/repos/contents#get-repository-content", "status": "404"})
	}
	list := []any{}
	for _, name := range sortedKeys(children) {
		list = append(list, children[name])
	}
	return answer(http.StatusOK, list)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
