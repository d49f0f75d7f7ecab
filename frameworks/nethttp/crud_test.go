package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func serve(t *testing.T, s *server, method, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	s.routes(t.TempDir(), t.TempDir()).ServeHTTP(w, httptest.NewRequest(method, target, strings.NewReader(body)))
	return w
}

func TestNoDatabase(t *testing.T) {
	s := &server{}
	for _, r := range []struct{ method, target, body string }{
		{"GET", "/async-db?min=10&max=50&limit=5", ""},
		{"GET", "/crud/items?category=office&page=1&limit=10", ""},
		{"GET", "/crud/items/1", ""},
		{"POST", "/crud/items", `{"id":1,"name":"a","category":"b","price":1,"quantity":1}`},
		{"PUT", "/crud/items/1", `{"name":"a","category":"b","price":1,"quantity":1}`},
	} {
		w := serve(t, s, r.method, r.target, r.body)
		if w.Code != http.StatusServiceUnavailable || w.Body.String() != noDatabase+"\n" {
			t.Errorf("%s %s = %d %q, want 503 %q", r.method, r.target, w.Code, w.Body, noDatabase)
		}
	}
	if w := serve(t, s, "GET", "/baseline11?a=13&b=42", ""); w.Code != 200 || w.Body.String() != "55" {
		t.Errorf("baseline without a database = %d %q", w.Code, w.Body)
	}
}

// TestBadRequests covers the answers given before the database is asked.
func TestBadRequests(t *testing.T) {
	s := &server{db: &store{cache: newMemCache()}}
	for _, r := range []struct {
		method, target, body string
		want                 int
	}{
		{"GET", "/crud/items/abc", "", 400},
		{"GET", "/crud/items/2147483648", "", 400},
		{"PUT", "/crud/items/abc", `{}`, 400},
		{"PUT", "/crud/items/1", `not json`, 400},
		{"POST", "/crud/items", `not json`, 400},
		{"POST", "/crud/items", `{"name":"no id"}`, 400},
		{"POST", "/crud/items", strings.Repeat(" ", maxItemBytes+1), 413},
		{"DELETE", "/crud/items/1", "", 405},
		{"POST", "/async-db", "", 405},
	} {
		if w := serve(t, s, r.method, r.target, r.body); w.Code != r.want {
			t.Errorf("%s %s = %d %q, want %d", r.method, r.target, w.Code, w.Body, r.want)
		}
	}
}
