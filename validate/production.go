package validate

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// tokenFile is the arena's bearer token in the data directory (arenadata.JWTTokenFile).
const tokenFile = "jwt-token.txt"

// writeBody is what production-stack's writes post (requests/production-stack-write-body.json).
const writeBody = `{"name":"bench-updated","price":250,"quantity":10}`

// productionChecks are production-stack's, over its edge on 8443 in h2, as the arena's suite
// checks it: h2 and the certificate, the static files from disk, /public/ unauthenticated,
// /api/ refused without a valid token (401), and with the arena's token the items (with the
// cache's X-Cache: MISS, then HIT, and MISS again after a write), a write (204) and /api/me.
func productionChecks(p string) []check {
	ref := func(text string) string { return contract(p, text, "") }
	token := func(e *env) (string, error) {
		b, err := os.ReadFile(filepath.Join(e.data.dir, tokenFile))
		if err != nil {
			return "", fmt.Errorf("cannot check: the arena's token: %w", err)
		}
		return "Authorization: Bearer " + strings.TrimSpace(string(b)), nil
	}
	post := func(id int, auth string) []byte {
		h := []string{"Content-Type: application/json", "Content-Length: " + strconv.Itoa(len(writeBody))}
		if auth != "" {
			h = append(h, auth)
		}
		return request("POST", "/api/items/"+strconv.Itoa(id), h, []byte(writeBody))
	}
	get := func(target, auth string) []byte {
		if auth == "" {
			return request("GET", target, nil, nil)
		}
		return request("GET", target, []string{auth}, nil)
	}
	refused := func(name, method, auth string) check {
		return check{
			name:     name,
			contract: ref(method + " /api/items/1 " + strings.TrimPrefix(name, method+" /api/items/1 ") + " → 401 (the edge's auth_request refuses it)"),
			run: func(ctx context.Context, e *env) result {
				raw := get("/api/items/1", auth)
				if method == "POST" {
					raw = post(1, auth)
				}
				return expectStatus(ctx, e, method, raw, 401)
			},
		}
	}
	// idCheck wants 200 with a JSON object whose id is want.
	idCheck := func(ctx context.Context, e *env, target string, want int) result {
		auth, err := token(e)
		if err != nil {
			return failed("GET "+target, "", err.Error())
		}
		raw := get(target, auth)
		exp := fmt.Sprintf("200 with a JSON object whose id is %d", want)
		r, err := exchange(ctx, e, "GET", raw)
		if err != nil {
			return failed(show(raw), exp, err.Error())
		}
		var v struct {
			ID *int `json:"id"`
		}
		if r.Status != 200 || json.Unmarshal(r.Body, &v) != nil || v.ID == nil || *v.ID != want {
			return failed(show(raw), exp, describe(r))
		}
		return passed(show(raw), exp, describe(r))
	}
	// cacheSeq sends the steps in order and wants each GET's X-Cache.
	type step struct {
		method string
		id     int
		cache  string // a GET's X-Cache; a POST wants 204
	}
	cacheSeq := func(ctx context.Context, e *env, steps []step) result {
		auth, err := token(e)
		if err != nil {
			return failed("", "", err.Error())
		}
		var sent, want, got []string
		for _, s := range steps {
			raw := get("/api/items/"+strconv.Itoa(s.id), auth)
			w := "200 X-Cache: " + s.cache
			if s.method == "POST" {
				raw, w = post(s.id, auth), "204"
			}
			sent, want = append(sent, fmt.Sprintf("%s /api/items/%d", s.method, s.id)), append(want, w)
			r, err := exchange(ctx, e, s.method, raw)
			if err != nil {
				return failed(strings.Join(sent, ", "), strings.Join(want, ", "), strings.Join(append(got, err.Error()), ", "))
			}
			g := strconv.Itoa(r.Status)
			if s.method == "GET" {
				g += " X-Cache: " + r.get("X-Cache")
			}
			got = append(got, g)
			if g != w {
				return failed(strings.Join(sent, ", "), strings.Join(want, ", "), strings.Join(got, ", "))
			}
		}
		return passed(strings.Join(sent, ", "), strings.Join(want, ", "), strings.Join(got, ", "))
	}
	checks := h2TLSChecks(p, "/static/reset.css")
	return append(checks,
		check{
			name:     "GET /static/reset.css Content-Type",
			contract: ref("GET /static/reset.css → 200 text/css, from the edge's disk"),
			run: func(ctx context.Context, e *env) result {
				return expectType(ctx, e, "GET", get("/static/reset.css", ""), "text/css")
			},
		},
		check{
			name:     "GET /static/app.js body",
			contract: ref("GET /static/app.js → 200 with a body"),
			run: func(ctx context.Context, e *env) result {
				raw := get("/static/app.js", "")
				r, err := exchange(ctx, e, "GET", raw)
				if err != nil {
					return failed(show(raw), "200 with a body", err.Error())
				}
				if r.Status != 200 || len(r.Body) == 0 {
					return failed(show(raw), "200 with a body", describe(r))
				}
				return passed(show(raw), "200 with a body", describe(r))
			},
		},
		check{
			name:     "GET /public/baseline 13+42",
			contract: ref(`GET /public/baseline?a=13&b=42 → 200 "55", without a token`),
			run: func(ctx context.Context, e *env) result {
				return expectText(ctx, e, "GET", get("/public/baseline?a=13&b=42", ""), "55")
			},
		},
		check{
			name:     "GET /public/baseline random",
			contract: ref("GET /public/baseline?a=<random>&b=<random> → 200 with their sum"),
			run: func(ctx context.Context, e *env) result {
				a, b := rand.IntN(10000), rand.IntN(10000)
				return expectText(ctx, e, "GET", get(fmt.Sprintf("/public/baseline?a=%d&b=%d", a, b), ""), strconv.Itoa(a+b))
			},
		},
		check{
			name:     "GET /public/json/25",
			contract: ref("GET /public/json/25 → 200 JSON with count 25 and 25 items"),
			run: func(ctx context.Context, e *env) result {
				raw := get("/public/json/25", "")
				const exp = "200 JSON with count 25 and 25 items"
				r, err := exchange(ctx, e, "GET", raw)
				if err != nil {
					return failed(show(raw), exp, err.Error())
				}
				var v struct {
					Count int               `json:"count"`
					Items []json.RawMessage `json:"items"`
				}
				if r.Status != 200 || json.Unmarshal(r.Body, &v) != nil || v.Count != 25 || len(v.Items) != 25 {
					return failed(show(raw), exp, describe(r))
				}
				return passed(show(raw), exp, describe(r))
			},
		},
		refused("GET /api/items/1 without a token", "GET", ""),
		refused("POST /api/items/1 without a token", "POST", ""),
		refused("GET /api/items/1 with an invalid token", "GET", "Authorization: Bearer invalid.token.here"),
		refused("POST /api/items/1 with an invalid token", "POST", "Authorization: Bearer invalid.token.here"),
		check{
			name:     "GET /api/items/1 with the token",
			contract: ref("GET /api/items/1 with the arena's token → 200 JSON with id 1"),
			run:      func(ctx context.Context, e *env) result { return idCheck(ctx, e, "/api/items/1", 1) },
		},
		check{
			name:     "GET /api/items/7 cached",
			contract: ref("GET /api/items/7 twice → X-Cache: MISS, then HIT (cache-aside)"),
			run: func(ctx context.Context, e *env) result {
				return cacheSeq(ctx, e, []step{{"GET", 7, "MISS"}, {"GET", 7, "HIT"}})
			},
		},
		check{
			name:     "POST /api/items/2",
			contract: ref(`POST /api/items/2 with the token and {"name","price","quantity"} → 204`),
			run: func(ctx context.Context, e *env) result {
				return cacheSeq(ctx, e, []step{{"POST", 2, ""}})
			},
		},
		check{
			name:     "POST invalidates the cache",
			contract: ref("GET /api/items/3, POST /api/items/3, GET /api/items/3 → the last is X-Cache: MISS"),
			run: func(ctx context.Context, e *env) result {
				return cacheSeq(ctx, e, []step{{"GET", 3, "MISS"}, {"POST", 3, ""}, {"GET", 3, "MISS"}})
			},
		},
		check{
			name:     "GET /api/me",
			contract: ref("GET /api/me with the token → 200 JSON with id 42 (the token's subject)"),
			run:      func(ctx context.Context, e *env) result { return idCheck(ctx, e, "/api/me", 42) },
		},
	)
}
