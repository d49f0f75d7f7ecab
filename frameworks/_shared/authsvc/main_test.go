package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The arena's secret and the claims of its token (data/jwt-token.txt).
const (
	arenaSecret = "httparena-bench-secret-do-not-use-in-production"
	arenaClaims = `{"sub":"42","name":"Alice Chen","exp":4102444800}`
	jwtHeader   = `{"alg":"HS256","typ":"JWT"}`
)

var now = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// sign makes an HS256 token for the claims.
func sign(secret, claims string) string {
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString([]byte(jwtHeader)) + "." + enc.EncodeToString([]byte(claims))
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil))
}

func TestAuth(t *testing.T) {
	good := sign(arenaSecret, arenaClaims)
	h, p, _ := strings.Cut(good, ".")
	p, s, _ := strings.Cut(p, ".")
	tampered := h + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"1","exp":4102444800}`)) + "." + s
	tests := []struct {
		name   string
		method string
		auth   string
		status int
		user   string
	}{
		{"the arena's token", http.MethodGet, "Bearer " + good, http.StatusOK, "42"},
		{"a POST's subrequest", http.MethodPost, "Bearer " + good, http.StatusOK, "42"},
		{"numeric sub", http.MethodGet, "Bearer " + sign(arenaSecret, `{"sub":7}`), http.StatusOK, "7"},
		{"no header", http.MethodGet, "", http.StatusUnauthorized, ""},
		{"the validation's invalid token", http.MethodGet, "Bearer invalid.token.here", http.StatusUnauthorized, ""},
		{"not bearer", http.MethodGet, "Basic " + good, http.StatusUnauthorized, ""},
		{"other secret", http.MethodGet, "Bearer " + sign("another-secret", arenaClaims), http.StatusUnauthorized, ""},
		{"tampered payload", http.MethodGet, "Bearer " + tampered, http.StatusUnauthorized, ""},
		{"two parts", http.MethodGet, "Bearer " + h + "." + p, http.StatusUnauthorized, ""},
		{"four parts", http.MethodGet, "Bearer " + good + ".x", http.StatusUnauthorized, ""},
		{"expired", http.MethodGet, "Bearer " + sign(arenaSecret, `{"sub":"42","exp":1700000000}`), http.StatusUnauthorized, ""},
		{"no sub", http.MethodGet, "Bearer " + sign(arenaSecret, `{"name":"Alice Chen"}`), http.StatusUnauthorized, ""},
		{"empty sub", http.MethodGet, "Bearer " + sign(arenaSecret, `{"sub":""}`), http.StatusUnauthorized, ""},
		{"payload not JSON", http.MethodGet, "Bearer " + sign(arenaSecret, `sub=42`), http.StatusUnauthorized, ""},
	}
	handler := newHandler([]byte(arenaSecret), func() time.Time { return now })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "/_auth", nil)
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Errorf("%s /_auth = %d, want %d", tt.method, rec.Code, tt.status)
			}
			if got := rec.Header().Get("X-User-Id"); got != tt.user {
				t.Errorf("X-User-Id = %q, want %q", got, tt.user)
			}
			if tt.status == http.StatusUnauthorized && rec.Body.String() != `{"error":"unauthorized"}` {
				t.Errorf("401 body = %q", rec.Body.String())
			}
		})
	}
}

// TestServe runs the handler on a real listener, as nginx reaches it, and -check's probe.
func TestServe(t *testing.T) {
	srv := httptest.NewServer(newHandler([]byte(arenaSecret), time.Now))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/_health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/_health = %d, want 200", resp.StatusCode)
	}
	if err := healthCheck(strings.TrimPrefix(srv.URL, "http://")); err != nil {
		t.Errorf("healthCheck: %v", err)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/_auth", nil)
	req.Header.Set("Authorization", "Bearer "+sign(arenaSecret, arenaClaims))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-User-Id") != "42" {
		t.Errorf("/_auth = %d X-User-Id %q, want 200 and 42", resp.StatusCode, resp.Header.Get("X-User-Id"))
	}
	srv.Close()
	if err := healthCheck(strings.TrimPrefix(srv.URL, "http://")); err == nil {
		t.Error("healthCheck of a closed server succeeded")
	}
}
