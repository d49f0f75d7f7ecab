package validate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The large files inside the data directory (arenadata's LargeDir), mounted into the
// servers at /data/large.
const (
	largeDir     = "large"
	downloadFile = "download.bin" // 170 MiB, incompressible
)

// largeTextFiles are the compressible large files the static-large profile requests
// (arenadata's LargePage and LargeBundle).
var largeTextFiles = []string{"page-1m.html", "bundle-2m.js"}

// largeMissingCheck wants 404 for a name that is not in the large directory.
func largeMissingCheck(p string) check {
	return check{
		name:     "404 for a missing large file",
		contract: contract(p, "GET /large/<a file that does not exist> → 404", ""),
		run: func(ctx context.Context, e *env) result {
			return expectStatus(ctx, e, "GET", request("GET", "/large/nonexistent.bin", nil, nil), 404)
		},
	}
}

// downloadChecks are the checks of download: GET /large/download.bin, 170 MiB, byte for
// byte, with its Content-Length.
func downloadChecks(p string) []check {
	return []check{
		probeCheck(p, "/baseline11?a=1&b=1"),
		{
			name:     "GET /large/" + downloadFile,
			contract: contract(p, "GET /large/"+downloadFile+" → 200 with a Content-Length of the file's size (178,257,920 bytes) and the data directory's "+largeDir+"/"+downloadFile+" byte for byte, as it is (it does not compress)", ""),
			run:      downloadCheck,
		},
		largeMissingCheck(p),
		{
			name:     "no path traversal",
			contract: contract(p, "GET /large/../dataset.json (a path out of the large directory) → not the data directory's dataset.json: 404, 400 or a redirect to the cleaned path; only the directory's files are served", ""),
			run: func(ctx context.Context, e *env) result {
				raw := request("GET", "/large/../dataset.json", nil, nil)
				const exp = "not the dataset (404, 400 or a redirect to the cleaned path)"
				outside, err := os.ReadFile(filepath.Join(e.data.dir, "dataset.json"))
				if err != nil {
					return failed(show(raw), exp, "cannot check: read the dataset: "+err.Error())
				}
				r, err := exchange(ctx, e, "GET", raw)
				if err != nil {
					return failed(show(raw), exp, err.Error())
				}
				if r.Status == 200 && bytes.Equal(r.Body, outside) {
					return failed(show(raw), exp, describe(r)+": the dataset, from outside the large directory")
				}
				return passed(show(raw), exp, describe(r))
			},
		},
	}
}

// downloadCheck streams the download against the file, comparing as it reads and hashing
// what came back, so neither is held in memory.
func downloadCheck(ctx context.Context, e *env) result {
	raw := request("GET", "/large/"+downloadFile, nil, nil)
	name := filepath.Join(e.data.dir, largeDir, downloadFile)
	f, err := os.Open(name)
	if err != nil {
		return failed(show(raw), "200 with the file's bytes", "cannot check: read the large file: "+err.Error())
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return failed(show(raw), "200 with the file's bytes", "cannot check: "+err.Error())
	}
	size := fi.Size()
	exp := fmt.Sprintf("200 with Content-Length: %d, no Content-Encoding, and the %s of %s/%s byte for byte", size, byteCount(int(size)), largeDir, downloadFile)
	c, err := dial(ctx, e)
	if err != nil {
		return failed(show(raw), exp, err.Error())
	}
	defer c.close()
	if err := c.write(raw); err != nil {
		return failed(show(raw), exp, err.Error())
	}
	r, err := readFinalHead(c.br)
	if err != nil {
		return failed(show(raw), exp, "read response: "+err.Error())
	}
	if r.Status != 200 {
		if err := readBody(c.br, r, "GET"); err != nil {
			return failed(show(raw), exp, fmt.Sprintf("%s %d, then: %v", r.Proto, r.Status, err))
		}
		return failed(show(raw), exp, describe(r))
	}
	head := describe(r) // the body is not in r: it is streamed below
	head = head[:strings.LastIndex(head, ";")]
	if ce := r.get("Content-Encoding"); !encodingNone.allows(ce) {
		return failed(show(raw), exp, head+": Content-Encoding on a request that did not accept one")
	}
	cl := r.Header.Values("Content-Length")
	if len(cl) == 0 || len(r.Header.Values("Transfer-Encoding")) > 0 {
		return failed(show(raw), exp, head+": not framed by a Content-Length")
	}
	n, err := parseContentLength(cl)
	if err != nil {
		return failed(show(raw), exp, head+": "+err.Error())
	}
	if n != size {
		return failed(show(raw), exp, fmt.Sprintf("%s: Content-Length %d, the file has %d bytes", head, n, size))
	}
	h := sha256.New()
	want := sha256.New()
	off, diff := int64(0), int64(-1)
	got, exp2 := make([]byte, 256<<10), make([]byte, 256<<10)
	for off < size {
		k := int(min(int64(len(got)), size-off))
		m, rerr := io.ReadFull(c.br, got[:k])
		h.Write(got[:m])
		if _, err := io.ReadFull(f, exp2[:m]); err != nil {
			return failed(show(raw), exp, "cannot check: read the large file: "+err.Error())
		}
		want.Write(exp2[:m])
		if diff < 0 && !bytes.Equal(got[:m], exp2[:m]) {
			i := 0
			for got[i] == exp2[i] {
				i++
			}
			diff = off + int64(i)
		}
		off += int64(m)
		if rerr != nil {
			if errors.Is(rerr, io.ErrUnexpectedEOF) {
				rerr = io.EOF
			}
			return failed(show(raw), exp, fmt.Sprintf("%s: the body ended after %d of %d bytes (%v)", head, off, size, rerr))
		}
		if ctx.Err() != nil {
			return failed(show(raw), exp, fmt.Sprintf("%s: %d of %d bytes read when the check's time ran out", head, off, size))
		}
	}
	gotSum, wantSum := hex.EncodeToString(h.Sum(nil)), hex.EncodeToString(want.Sum(nil))
	if diff >= 0 {
		return failed(show(raw), exp, fmt.Sprintf("%s: %d bytes with SHA-256 %s, the file's is %s; they differ from byte %d on", head, size, gotSum[:16], wantSum[:16], diff))
	}
	return passed(show(raw), exp, fmt.Sprintf("%s: %d bytes, SHA-256 %s…, the file's", head, size, gotSum[:16]))
}

// staticLargeChecks are the checks of static-large: the 1 MB and 2 MB text files, gzipped
// on the fly when asked to and as they are when not.
func staticLargeChecks(p string) []check {
	files := strings.Join(largeTextFiles, " and ")
	return []check{
		probeCheck(p, "/baseline11?a=1&b=1"),
		{
			name:     "large files with Accept-Encoding: gzip",
			contract: contract(p, "GET /large/"+strings.Join(largeTextFiles, ", /large/")+" with Accept-Encoding: gzip → 200 with Content-Encoding: gzip, decoding to the data directory's file exactly", ""),
			run: func(ctx context.Context, e *env) result {
				return eachLarge(ctx, e, "gzip", "200 with Content-Encoding: gzip, decoding to the file's exact bytes", func(file []byte, r *response) string {
					switch {
					case r.Status != 200:
						return describe(r)
					case !strings.EqualFold(strings.TrimSpace(r.get("Content-Encoding")), "gzip"):
						return describe(r) + ": not gzip-compressed"
					}
					body, err := decodeBody(r.Body, "gzip")
					if err != nil {
						return fmt.Sprintf("%s: the body does not decode: %v", describe(r), err)
					}
					if !bytes.Equal(body, file) {
						return fmt.Sprintf("%s: decoded, %s", describe(r), diffBytes(body, file))
					}
					return fmt.Sprintf("ok: %s compressed to %s", byteCount(len(file)), byteCount(len(r.Body)))
				})
			},
		},
		{
			name:     "large files without Accept-Encoding",
			contract: contract(p, "GET /large/<"+files+"> without Accept-Encoding → 200, no Content-Encoding, the file's exact bytes", ""),
			run: func(ctx context.Context, e *env) result {
				return eachLarge(ctx, e, "", "200 with the file's exact bytes and no Content-Encoding", func(file []byte, r *response) string {
					if why := identityMismatch(file, r); why != "" {
						return why
					}
					return "ok: " + byteCount(len(file))
				})
			},
		},
		largeMissingCheck(p),
	}
}

// eachLarge requests every large text file on a kept-alive connection and judges each
// response with judge, which returns what is wrong, or "ok: …" for what was right.
func eachLarge(ctx context.Context, e *env, acceptEncoding, exp string, judge func(file []byte, r *response) string) result {
	var headers []string
	req := "GET /large/<" + strings.Join(largeTextFiles, ", ") + "> one after another on one connection"
	if acceptEncoding != "" {
		headers = []string{"Accept-Encoding: " + acceptEncoding}
		req += " with Accept-Encoding: " + acceptEncoding
	} else {
		req += " without Accept-Encoding"
	}
	s := &session{e: e}
	defer s.close()
	var oks []string
	for _, name := range largeTextFiles {
		file, err := os.ReadFile(filepath.Join(e.data.dir, largeDir, name))
		if err != nil {
			return failed(req, exp, "cannot check: read the large file: "+err.Error())
		}
		raw := request("GET", "/large/"+name, headers, nil)
		r, err := s.do(ctx, "GET", raw)
		if err != nil {
			return failed(show(raw), exp, name+": "+err.Error())
		}
		verdict := judge(file, r)
		ok, found := strings.CutPrefix(verdict, "ok: ")
		if !found {
			return failed(show(raw), exp, name+": "+verdict)
		}
		oks = append(oks, name+" "+ok)
	}
	return passed(req, exp, strings.Join(oks, "; "))
}
