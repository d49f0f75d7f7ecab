package main

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

func serve(s *server, method, target, body string) *fasthttp.RequestCtx {
	ctx := &fasthttp.RequestCtx{}
	ctx.Request.Header.SetMethod(method)
	ctx.Request.SetRequestURI(target)
	if body != "" {
		ctx.Request.SetBodyStream(strings.NewReader(body), len(body))
	}
	s.handle(ctx)
	return ctx
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
		ctx := serve(s, r.method, r.target, r.body)
		if code, body := ctx.Response.StatusCode(), string(ctx.Response.Body()); code != 503 || body != noDatabase {
			t.Errorf("%s %s = %d %q, want 503 %q", r.method, r.target, code, body, noDatabase)
		}
	}
	if ctx := serve(s, "GET", "/baseline11?a=13&b=42", ""); ctx.Response.StatusCode() != 200 || string(ctx.Response.Body()) != "55" {
		t.Errorf("baseline without a database = %d %q", ctx.Response.StatusCode(), ctx.Response.Body())
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
		{"GET", "/crud/items/", "", 400},
		{"GET", "/crud/items/1/2", "", 400},
		{"GET", "/crud/items/2147483648", "", 400},
		{"PUT", "/crud/items/abc", `{}`, 400},
		{"PUT", "/crud/items/1", `not json`, 400},
		{"POST", "/crud/items", `not json`, 400},
		{"POST", "/crud/items", `{"name":"no id"}`, 400},
		{"POST", "/crud/items", strings.Repeat(" ", maxItemBytes+1), 413},
		{"DELETE", "/crud/items/1", "", 405},
		{"POST", "/async-db", "", 405},
	} {
		if ctx := serve(s, r.method, r.target, r.body); ctx.Response.StatusCode() != r.want {
			t.Errorf("%s %s = %d %q, want %d", r.method, r.target, ctx.Response.StatusCode(), ctx.Response.Body(), r.want)
		}
	}
}
