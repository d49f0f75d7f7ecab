package githubtest

import (
	"net/http"
	"strconv"
	"strings"
)

// DefaultAppSlug is the App's slug GET /app answers until SetApp: its comments are by
// DefaultAppSlug+"[bot]", which is BotLogin.
const DefaultAppSlug = "arenabot"

// installation is one installation of the App, on the repositories it lists.
type installation struct {
	id      int64
	account string
	repos   []string // full names
}

// SetApp sets the slug GET /app answers (default DefaultAppSlug); "" answers one without a
// slug.
func (s *Server) SetApp(slug string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appSlug = &slug
}

// AddInstallation installs the App on repos ("owner/name", created if needed) as
// installation id, listed by GET /app/installations; GET /installation/repositories answers
// them to that installation's tokens. Without any, the App is installed nowhere.
func (s *Server) AddInstallation(id int64, repos ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := &installation{id: id}
	for _, full := range repos {
		r := s.repo(full)
		in.repos = append(in.repos, r.owner+"/"+r.name)
		if in.account == "" {
			in.account = r.owner
		}
	}
	s.installs = append(s.installs, in)
}

// appJWTRoute reports whether seg is a route only the App's JSON web token may call: GET
// /app and GET /app/installations (the access-token and hook routes are checked apart).
func appJWTRoute(seg []string) bool {
	return seg[0] == "app" && (len(seg) == 1 || len(seg) == 2 && seg[1] == "installations")
}

// identity answers GET /app, GET /app/installations, GET /installation/repositories and GET
// /user; nil for any other route. s.mu is held.
func (s *Server) identity(req *http.Request, seg []string) *response {
	switch {
	case appJWTRoute(seg):
		if !appJWT(req) {
			return answer(http.StatusUnauthorized, map[string]any{"message": "A JSON web token could not be decoded", "documentation_url": docsBase, "status": "401"})
		}
		if req.Method != http.MethodGet {
			return notFound()
		}
		if len(seg) == 1 {
			return s.app()
		}
		list := make([]any, 0, len(s.installs))
		for _, in := range s.installs {
			list = append(list, map[string]any{
				"id": in.id, "app_id": 1234, "app_slug": s.slug(), "target_type": "Organization",
				"account":              map[string]any{"login": in.account, "type": "Organization"},
				"repository_selection": "selected", "access_tokens_url": s.srv.URL + "/app/installations/" + strconv.FormatInt(in.id, 10) + "/access_tokens",
				"permissions": map[string]string{"contents": "write", "issues": "write", "metadata": "read", "pull_requests": "write", "checks": "write"},
			})
		}
		resp := answer(http.StatusOK, nil)
		lo, hi := s.page(req, len(list), resp.header)
		resp.body = list[lo:hi]
		return resp
	case len(seg) == 2 && seg[0] == "installation" && seg[1] == "repositories" && req.Method == http.MethodGet:
		in := s.installationOf(req)
		if in == nil {
			return answer(http.StatusForbidden, errorBody("This endpoint can only be accessed with an installation token", docsBase))
		}
		list := make([]any, 0, len(in.repos))
		for _, full := range in.repos {
			r := s.lookup(full)
			list = append(list, map[string]any{
				"id": r.id, "name": r.name, "full_name": r.owner + "/" + r.name, "private": false,
				"owner": map[string]any{"login": r.owner, "type": "Organization"},
			})
		}
		resp := answer(http.StatusOK, nil)
		lo, hi := s.page(req, len(list), resp.header)
		resp.body = map[string]any{"total_count": len(list), "repository_selection": "selected", "repositories": list[lo:hi]}
		return resp
	case len(seg) == 1 && seg[0] == "user" && req.Method == http.MethodGet:
		_, tok, _ := strings.Cut(req.Header.Get("Authorization"), " ")
		if appJWT(req) || strings.HasPrefix(strings.TrimSpace(tok), "ghs_") {
			return answer(http.StatusForbidden, errorBody("Resource not accessible by integration", "https://docs.github.com/rest/users/users#get-the-authenticated-user"))
		}
		typ := "User"
		if strings.HasSuffix(s.caller, "[bot]") {
			typ = "Bot"
		}
		return answer(http.StatusOK, map[string]any{"login": s.caller, "id": s.userID(s.caller), "type": typ, "site_admin": false})
	}
	return nil
}

func (s *Server) slug() string {
	if s.appSlug != nil {
		return *s.appSlug
	}
	return DefaultAppSlug
}

func (s *Server) app() *response {
	body := map[string]any{
		"id": 1234, "node_id": "A_kwHOAAAAAAAAAAE", "name": "Arenabot",
		"owner":       map[string]any{"login": "arena", "type": "Organization"},
		"description": "Benchmarks pull requests", "external_url": "https://example.com", "html_url": "https://github.com/apps/" + s.slug(),
		"permissions": map[string]string{"contents": "write", "issues": "write", "metadata": "read", "pull_requests": "write", "checks": "write"},
		"events":      []string{"issue_comment", "pull_request"}, "installations_count": len(s.installs),
	}
	if sl := s.slug(); sl != "" {
		body["slug"] = sl
	}
	return answer(http.StatusOK, body)
}

// installationOf returns the installation whose token (one the fake issued,
// "ghs_test<id>_<n>") the request carries; nil for any other credential.
func (s *Server) installationOf(req *http.Request) *installation {
	_, tok, _ := strings.Cut(req.Header.Get("Authorization"), " ")
	rest, ok := strings.CutPrefix(strings.TrimSpace(tok), "ghs_test")
	if !ok {
		return nil
	}
	idText, _, _ := strings.Cut(rest, "_")
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil {
		return nil
	}
	for _, in := range s.installs {
		if in.id == id {
			return in
		}
	}
	return nil
}
