package githubtest

import (
	"net/http"
	"testing"
)

// TestIdentityRoutes: GET /app and /app/installations take the App's JWT only, GET
// /installation/repositories an installation token only, GET /user a user's token only, and
// FailNext reaches them like any route.
func TestIdentityRoutes(t *testing.T) {
	s := newRepo(t)
	s.AddInstallation(42, "octo/arena", "octo/other")
	const jwt = "Bearer some.jwt.value"
	wantStatus(t, call(t, s, "GET", "app", nil), http.StatusUnauthorized)
	if o := call(t, s, "GET", "app", nil, "Authorization", jwt).obj(t); o["slug"] != DefaultAppSlug {
		t.Errorf("GET /app slug = %v, want %s", o["slug"], DefaultAppSlug)
	}
	insts := call(t, s, "GET", "app/installations", nil, "Authorization", jwt).list(t)
	if len(insts) != 1 || insts[0]["id"] != float64(42) {
		t.Errorf("installations = %v, want 42", insts)
	}
	wantStatus(t, call(t, s, "GET", "installation/repositories", nil), http.StatusForbidden)
	tok := call(t, s, "POST", "app/installations/42/access_tokens", nil, "Authorization", jwt).obj(t)["token"].(string)
	repos := call(t, s, "GET", "installation/repositories", nil, "Authorization", "token "+tok).obj(t)
	if repos["total_count"] != float64(2) {
		t.Errorf("installation repositories = %v, want 2", repos)
	}
	wantStatus(t, call(t, s, "GET", "user", nil, "Authorization", "token "+tok), http.StatusForbidden)
	s.SetCaller("ops")
	if o := call(t, s, "GET", "user", nil).obj(t); o["login"] != "ops" {
		t.Errorf("GET /user login = %v, want ops", o["login"])
	}
	s.FailNext("GET", "/app", 1, http.StatusBadGateway)
	wantStatus(t, call(t, s, "GET", "app", nil, "Authorization", jwt), http.StatusBadGateway)
	if n := len(s.CallsTo("GET", "/app")); n != 3 {
		t.Errorf("recorded GET /app calls = %d, want 3", n)
	}
}
