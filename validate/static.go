package validate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/arenabot/arenabot/profile"
)

// staticDir is the static files' directory inside the data directory.
const staticDir = "static"

// staticFiles returns the names of the files the static profiles request (the profile
// table's), sorted.
func staticFiles() []string {
	names := profile.StaticFiles()
	slices.Sort(names)
	return names
}

// staticAcceptEncoding is the Accept-Encoding the requests of profile p carry (its row's
// Headers).
func staticAcceptEncoding(p string) string {
	for _, h := range row(p).Headers {
		if v, ok := strings.CutPrefix(h, "Accept-Encoding: "); ok {
			return v
		}
	}
	return "br;q=1, gzip;q=0.8"
}

// arenaTypedFiles are the static files whose Content-Type the old arena's suite asserts.
var arenaTypedFiles = []string{"app.js", "manifest.json", "reset.css"}

// staticChecks are the checks of static (and of the profiles that serve its files beside
// other checks): the readiness probe, then the files (staticFileChecks).
func staticChecks(p string) []check {
	return append([]check{probeCheck(p, "/static/reset.css")}, staticFileChecks(p)...)
}

// staticTLSChecks are those of static-tls: the TLS checks of 8081, then the files over
// HTTP/1.1 on TLS.
func staticTLSChecks(p string) []check {
	return append(tlsChecks(p, "/static/reset.css", "/static/app.js"), staticFileChecks(p)...)
}

// staticH2Checks are those of static-h2: the readiness probe and the h2 TLS checks of 8443,
// then the files over h2.
func staticH2Checks(p string) []check {
	checks := append([]check{probeCheck(p, "/static/reset.css")}, h2TLSChecks(p, "/static/app.js")...)
	return append(checks, staticFileChecks(p)...)
}

// staticFileChecks are the static files' checks, over whatever protocol the profile speaks:
// each file's exact bytes, with and without Accept-Encoding, and its Content-Type.
func staticFileChecks(p string) []check {
	names := staticFiles()
	var others []string
	for _, n := range names {
		if !slices.Contains(arenaTypedFiles, n) {
			others = append(others, n)
		}
	}
	ae := staticAcceptEncoding(p)
	ref := func(text string) string { return contract(p, text, "") }
	const types = ".css text/css, .js text/javascript (or application/javascript), .json application/json, .html text/html, .svg image/svg+xml, .woff2 font/woff2, .webp image/webp"
	n := len(names)
	typeJudge := func(name string, file []byte, r *response) string {
		want := staticType(name)
		switch {
		case r.Status != 200:
			return describe(r)
		case want != "" && !typeMatches(r.get("Content-Type"), want):
			return fmt.Sprintf("%s (expected Content-Type %s)", describe(r), want)
		}
		return ""
	}
	return []check{
		{
			name:     fmt.Sprintf("%d files without Accept-Encoding", n),
			contract: ref("GET /static/<file> without Accept-Encoding → 200, no Content-Encoding, the file's exact bytes"),
			run: func(ctx context.Context, e *env) result {
				return eachFile(ctx, e, names, "", "200 with the file's exact bytes and no Content-Encoding", func(name string, file []byte, r *response) string {
					return identityMismatch(file, r)
				})
			},
		},
		{
			name:     "Content-Type of " + strings.Join(arenaTypedFiles, ", "),
			contract: ref("GET /static/reset.css → text/css, /static/app.js → text/javascript or application/javascript, /static/manifest.json → application/json (parameters such as charset ignored)"),
			run: func(ctx context.Context, e *env) result {
				return eachFile(ctx, e, arenaTypedFiles, "", "200 with the Content-Type of the file's extension", typeJudge)
			},
		},
		check{
			name:     fmt.Sprintf("%d other files Content-Type", len(others)),
			contract: contract(p, "GET /static/<file> → the Content-Type of its extension (parameters such as charset ignored): "+types, "RFC 9110 §8.3"),
			run: func(ctx context.Context, e *env) result {
				return eachFile(ctx, e, others, "", "200 with the Content-Type of the file's extension", typeJudge)
			},
		}.advisory(),
		{
			name:     fmt.Sprintf("%d files with Accept-Encoding", n),
			contract: ref("GET /static/<file> with Accept-Encoding: " + ae + " → 200 and the file's exact bytes: as they are, or with Content-Encoding br or gzip decoding to them"),
			run: func(ctx context.Context, e *env) result {
				exp := "200 with the file's exact bytes, as they are or with Content-Encoding br or gzip decoding to them"
				return eachFile(ctx, e, names, ae, exp, func(name string, file []byte, r *response) string {
					return judgeDecoded(name, file, r)
				})
			},
		},
		check{
			name:     "precompressed twins served",
			contract: contract(p, "GET /static/<file> with Accept-Encoding: "+ae+" → compressed (Content-Encoding br or gzip) wherever the data directory has a precompressed twin <file>.br or <file>.gz at least 10% smaller than the file; every compressed answer carries Vary: Accept-Encoding and the Content-Type of the file's extension", "RFC 9110 §12.5.5"),
			run: func(ctx context.Context, e *env) result {
				exp := "200 with Content-Encoding br or gzip where a .br or .gz twin at least 10% smaller exists, Vary: Accept-Encoding on every compressed answer, and the file's Content-Type"
				return eachFile(ctx, e, names, ae, exp, func(name string, file []byte, r *response) string {
					return judgeTwins(e, name, r)
				})
			},
		}.advisory(),
		{
			name:     "404 for a missing file",
			contract: ref("GET /static/<a file that does not exist> → 404"),
			run: func(ctx context.Context, e *env) result {
				return expectStatus(ctx, e, "GET", request("GET", "/static/nonexistent.txt", nil, nil), 404)
			},
		},
	}
}

// judgeDecoded wants the file's exact bytes, as they are or under a Content-Encoding that
// decodes to them (the arena's rule: a compressed answer must decode to the file).
func judgeDecoded(name string, file []byte, r *response) string {
	if r.Status != 200 {
		return describe(r)
	}
	ce := r.get("Content-Encoding")
	if encodingNone.allows(ce) {
		if !bytes.Equal(r.Body, file) {
			return describe(r) + ": " + diffBytes(r.Body, file)
		}
		return ""
	}
	if !encodingGzipOrBr.allows(ce) {
		return describe(r) + ": Content-Encoding must be br or gzip"
	}
	body, err := decodeBody(r.Body, ce)
	if err != nil {
		return fmt.Sprintf("%s: the body does not decode: %v", describe(r), err)
	}
	if !bytes.Equal(body, file) {
		return fmt.Sprintf("%s: decoded, %s", describe(r), diffBytes(body, file))
	}
	return ""
}

// judgeTwins wants a compressed answer wherever a precompressed twin is worth serving, and
// Vary and the right Content-Type on every compressed answer. What the bytes decode to is
// judgeDecoded's.
func judgeTwins(e *env, name string, r *response) string {
	if r.Status != 200 {
		return describe(r)
	}
	if want := staticType(name); want != "" && !typeMatches(r.get("Content-Type"), want) {
		return fmt.Sprintf("%s (expected Content-Type %s)", describe(r), want)
	}
	if encodingNone.allows(r.get("Content-Encoding")) {
		if twin := twinOf(e, name); twin != "" {
			return fmt.Sprintf("%s: not compressed, though the data directory has %s for the server to send", describe(r), twin)
		}
		return ""
	}
	if !varies(r) {
		return describe(r) + ": a compressed response without Vary: Accept-Encoding"
	}
	return ""
}

// twinOf returns the name of a precompressed twin of the static file that is worth
// serving, or "". A twin counts when it saves at least a tenth of the file's size: the
// twins of already-compressed formats (woff2, webp) are as large as the files, and servers
// rightly send those as they are.
func twinOf(e *env, name string) string {
	orig, err := os.Stat(filepath.Join(e.data.dir, staticDir, name))
	if err != nil {
		return ""
	}
	for _, ext := range []string{".br", ".gz"} {
		fi, err := os.Stat(filepath.Join(e.data.dir, staticDir, name+ext))
		if err == nil && fi.Mode().IsRegular() && fi.Size()*10 <= orig.Size()*9 {
			return staticDir + "/" + name + ext
		}
	}
	return ""
}

// eachFile requests every static file on a kept-alive connection and judges each response
// with judge, which returns "" or what is wrong.
func eachFile(ctx context.Context, e *env, names []string, acceptEncoding, exp string, judge func(name string, file []byte, r *response) string) result {
	var headers []string
	if acceptEncoding != "" {
		headers = []string{"Accept-Encoding: " + acceptEncoding}
	}
	req := fmt.Sprintf("GET /static/<each of %d files>", len(names))
	if acceptEncoding != "" {
		req += " with Accept-Encoding: " + acceptEncoding
	} else {
		req += " without Accept-Encoding"
	}
	s := &session{e: e}
	defer s.close()
	var fails, failed1 []string
	firstReq := ""
	for _, name := range names {
		file, err := os.ReadFile(filepath.Join(e.data.dir, staticDir, name))
		if err != nil {
			return failed(req, exp, "cannot check: read the static file: "+err.Error())
		}
		raw := request("GET", "/static/"+name, headers, nil)
		var problem string
		r, err := s.do(ctx, "GET", raw)
		if err != nil {
			problem = err.Error()
		} else {
			problem = judge(name, file, r)
		}
		if problem != "" {
			if firstReq == "" {
				firstReq = show(raw)
			}
			fails = append(fails, name+": "+problem)
			failed1 = append(failed1, name)
		}
		if err != nil || ctx.Err() != nil {
			break // the connection failed: the other files would only wait for it again
		}
	}
	if len(fails) > 0 {
		return failed(firstReq, exp, joinFailures(fails, failed1))
	}
	return passed(req, exp, fmt.Sprintf("all %d files", len(names)))
}

// diffBytes says how got differs from the file want.
func diffBytes(got, want []byte) string {
	n := min(len(got), len(want))
	i := 0
	for i < n && got[i] == want[i] {
		i++
	}
	if i == n && len(got) != len(want) {
		return fmt.Sprintf("%d bytes, the file has %d (the first %d agree)", len(got), len(want), n)
	}
	return fmt.Sprintf("%d bytes, the file has %d; they differ from byte %d on", len(got), len(want), i)
}

// identityMismatch says how r, the answer to a request that accepted no Content-Encoding,
// is not a 200 with exactly file's bytes and no Content-Encoding; "" when it is.
func identityMismatch(file []byte, r *response) string {
	switch {
	case r.Status != 200:
		return describe(r)
	case !encodingNone.allows(r.get("Content-Encoding")):
		return describe(r) + ": Content-Encoding on a request that did not accept one"
	case !bytes.Equal(r.Body, file):
		return describe(r) + ": " + diffBytes(r.Body, file)
	}
	return ""
}
