package main

import (
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
)

// twins are the precompressed copies a static file may have next to it, in
// the order they are preferred: br whenever the client accepts it, else gzip.
var twins = []struct{ coding, suffix string }{
	{"br", ".br"},
	{"gzip", ".gz"},
}

// staticFiles serves /static/<file> from fsys, opened on every request. When
// the client accepts br or gzip and <file>.br or <file>.gz exists, it sends
// that precompressed twin with Content-Encoding and the original file's
// Content-Type; otherwise next serves the file itself. net/http has no
// precompressed-file feature of its own.
type staticFiles struct {
	fsys fs.FS
	next http.Handler // serves the original file; its path is the file's
}

func (s staticFiles) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Vary", "Accept-Encoding")
	if br, gz := acceptedCodings(r.Header.Values("Accept-Encoding")); br || gz {
		if serveTwin(w, r, s.fsys, r.URL.Path, br, gz) {
			return
		}
	}
	s.next.ServeHTTP(w, r)
}

// serveTwin sends the precompressed twin of the file at upath ("/reset.css")
// and reports whether it did. It leaves non-canonical paths, which the file
// server redirects, and files without a twin to the caller.
func serveTwin(w http.ResponseWriter, r *http.Request, fsys fs.FS, upath string, br, gz bool) bool {
	if path.Clean(upath) != upath || strings.HasSuffix(upath, "/index.html") {
		return false
	}
	name := strings.TrimPrefix(upath, "/")
	if !fs.ValidPath(name) || name == "." {
		return false
	}
	if fi, err := fs.Stat(fsys, name); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	for _, t := range twins {
		if (t.coding == "br" && !br) || (t.coding == "gzip" && !gz) {
			continue
		}
		f, err := fsys.Open(name + t.suffix)
		if err != nil {
			continue
		}
		defer f.Close()
		fi, err := f.Stat()
		content, seekable := f.(io.ReadSeeker)
		if err != nil || !fi.Mode().IsRegular() || !seekable {
			continue
		}
		h := w.Header()
		h.Set("Content-Type", contentType(fsys, name))
		h.Set("Content-Encoding", t.coding)
		// ServeContent omits Content-Length when Content-Encoding is set.
		// This is the length of a full response; ServeContent replaces it
		// for a range and drops it for 304 and errors.
		h.Set("Content-Length", strconv.FormatInt(fi.Size(), 10))
		http.ServeContent(w, r, name, fi.ModTime(), content)
		return true
	}
	return false
}

// contentType is the original file's type: by extension, as the file server
// does, or sniffed from the file's first bytes.
func contentType(fsys fs.FS, name string) string {
	if ctype := mime.TypeByExtension(path.Ext(name)); ctype != "" {
		return ctype
	}
	var buf [512]byte
	n := 0
	if f, err := fsys.Open(name); err == nil {
		n, _ = io.ReadFull(f, buf[:])
		f.Close()
	}
	return http.DetectContentType(buf[:n])
}

// acceptedCodings reports whether the Accept-Encoding values accept br and
// gzip: a coding is accepted when it is listed, or else covered by "*", with
// a q-value above 0. Absent values accept neither.
func acceptedCodings(values []string) (br, gz bool) {
	brQ, gzQ, anyQ := -1.0, -1.0, -1.0 // -1: not listed
	for _, v := range values {
		for member := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(member, ";")
			switch strings.ToLower(strings.TrimSpace(coding)) {
			case "br":
				brQ = qValue(params)
			case "gzip", "x-gzip":
				gzQ = qValue(params)
			case "*":
				anyQ = qValue(params)
			}
		}
	}
	if brQ < 0 {
		brQ = anyQ
	}
	if gzQ < 0 {
		gzQ = anyQ
	}
	return brQ > 0, gzQ > 0
}

// qValue is the weight in one Accept-Encoding member's parameters: 1 when
// there is none, 0 when it is malformed.
func qValue(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		name, value, ok := strings.Cut(p, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil || !(q >= 0 && q <= 1) {
			return 0
		}
		return q
	}
	return 1
}
