package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// serveAs is serve with request headers.
func serveAs(t *testing.T, s *server, method, target, body string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	s.routes(t.TempDir(), t.TempDir()).ServeHTTP(w, req)
	return w
}

// TestStackPublic covers the production-stack's unauthenticated routes, as the arena's
// validation asks for them.
func TestStackPublic(t *testing.T) {
	s := &server{}
	for i := range 30 {
		s.dataset = append(s.dataset, Item{ID: i + 1, Price: 10 + i, Quantity: 2})
	}
	if w := serve(t, s, "GET", "/public/baseline?a=13&b=42", ""); w.Code != 200 || w.Body.String() != "55" {
		t.Errorf("/public/baseline?a=13&b=42 = %d %q, want 200 55", w.Code, w.Body)
	}
	w := serve(t, s, "GET", "/public/json/25", "")
	var got itemsResponse
	if err := json.Unmarshal(w.Body.Bytes(), &got); w.Code != 200 || err != nil {
		t.Fatalf("/public/json/25 = %d %q (%v)", w.Code, w.Body, err)
	}
	if got.Count != 25 || len(got.Items) != 25 || got.Items[24].Total != (10+24)*2 {
		t.Errorf("/public/json/25: count %d, %d items, last total %d", got.Count, len(got.Items), got.Items[len(got.Items)-1].Total)
	}
	if w := serve(t, s, "POST", "/public/json/25", ""); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /public/json/25 = %d, want 405", w.Code)
	}
}

// TestStackAPIWithoutDatabase: the /api/ routes answer 503 without a database, except an
// /api/me without a user, which the edge would never pass on: 401.
func TestStackAPIWithoutDatabase(t *testing.T) {
	s := &server{}
	user := map[string]string{"X-User-Id": "42"}
	for _, r := range []struct {
		method, target, body string
		header               map[string]string
		want                 int
	}{
		{"GET", "/api/items/1", "", user, 503},
		{"POST", "/api/items/1", `{"name":"bench-updated","price":250,"quantity":10}`, user, 503},
		{"GET", "/api/me", "", user, 503},
		{"GET", "/api/me", "", nil, 401},
		{"GET", "/api/me", "", map[string]string{"X-User-Id": "alice"}, 401},
	} {
		if w := serveAs(t, s, r.method, r.target, r.body, r.header); w.Code != r.want {
			t.Errorf("%s %s %v = %d %q, want %d", r.method, r.target, r.header, w.Code, w.Body, r.want)
		}
	}
}

// TestStackBadRequests covers the answers given before the database is asked.
func TestStackBadRequests(t *testing.T) {
	s := &server{db: &store{cache: newMemCache()}}
	for _, r := range []struct {
		method, target, body string
		want                 int
	}{
		{"GET", "/api/items/abc", "", 400},
		{"POST", "/api/items/abc", `{}`, 400},
		{"POST", "/api/items/1", `not json`, 400},
		{"POST", "/api/items/1", `{"price":"250"}`, 400},
		{"POST", "/api/items/1", strings.Repeat(" ", maxItemBytes+1), 413},
		{"PUT", "/api/items/1", `{}`, 405},
		{"POST", "/api/me", "", 405},
	} {
		if w := serve(t, s, r.method, r.target, r.body); w.Code != r.want {
			t.Errorf("%s %s = %d %q, want %d", r.method, r.target, w.Code, w.Body, r.want)
		}
	}
	if w := serve(t, s, "GET", "/api/me", ""); w.Code != 401 || w.Body.String() != `{"error":"unauthorized"}` {
		t.Errorf("/api/me without X-User-Id = %d %q, want 401 and the edge's body", w.Code, w.Body)
	}
}

func TestUserCache(t *testing.T) {
	var c userCache // the zero value is ready
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	if _, ok := c.get(42, t0); ok {
		t.Fatal("an empty cache hit")
	}
	c.set(42, []byte(`{"id":42}`), t0)
	if body, ok := c.get(42, t0.Add(userTTL-time.Millisecond)); !ok || string(body) != `{"id":42}` {
		t.Errorf("get before the TTL = %q, %v", body, ok)
	}
	if _, ok := c.get(42, t0.Add(userTTL)); ok {
		t.Error("get at the TTL hit, want a miss")
	}
	if _, ok := c.get(1, t0); ok {
		t.Error("another user hit")
	}
}
