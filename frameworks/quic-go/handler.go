package main

import (
	"errors"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
)

// maxNumberBytes bounds a baseline request body, which is one integer.
const maxNumberBytes = 1 << 10

// routes is the one handler every listener serves: /baseline* sums, /static/{file} the
// arena's static files from staticDir, opened on every request.
func routes(staticDir string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /static/{file}", staticHandler{fsys: os.DirFS(staticDir)})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// /baseline11 and /baseline2 (and any other /baseline… path) share one contract.
		if strings.HasPrefix(r.URL.Path, "/baseline") {
			baseline(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// baseline answers, as text/plain, the sum of the query values that are integers
// (others are ignored) plus, for a POST, the body, which must be empty or one integer:
// another body is a 400, a body over maxNumberBytes a 413.
func baseline(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost:
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	var sum int64
	for _, values := range r.URL.Query() {
		for _, v := range values {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				sum += n
			}
		}
	}
	if r.Method == http.MethodPost {
		n, err := bodyNumber(w, r)
		if err != nil {
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			} else {
				http.Error(w, err.Error(), http.StatusBadRequest)
			}
			return
		}
		sum += n
	}
	body := strconv.FormatInt(sum, 10)
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	io.WriteString(w, body)
}

// errNotInteger is a POST body that is neither empty nor one integer.
var errNotInteger = errors.New("body is not an integer")

// bodyNumber reads the request body as one integer, surrounding white space allowed;
// an empty body is 0.
func bodyNumber(w http.ResponseWriter, r *http.Request) (int64, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxNumberBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return 0, err
		}
		return 0, errors.New("cannot read request body")
	}
	s := strings.TrimSpace(string(data))
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errNotInteger
	}
	return n, nil
}

// file is an open static file: readable, seekable, with its metadata.
type file interface {
	io.ReadSeekCloser
	Stat() (fs.FileInfo, error)
}

// openRegular opens name in fsys when it is a regular file that can be seeked, and
// returns it with its metadata.
func openRegular(fsys fs.FS, name string) (file, fs.FileInfo, bool) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, nil, false
	}
	rf, ok := f.(file)
	if !ok {
		f.Close()
		return nil, nil, false
	}
	fi, err := rf.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, false
	}
	return rf, fi, true
}

// encodings are the precompressed twins a static file may have beside it, in the order
// they are preferred: br whenever the client accepts it, else gzip.
var encodings = []struct{ coding, suffix string }{
	{"br", ".br"},
	{"gzip", ".gz"},
}

// staticHandler serves GET /static/{file}: the regular file {file} of fsys, or its
// precompressed twin {file}.br or {file}.gz when Accept-Encoding accepts that coding
// with a q above 0 (br first), with Content-Encoding, the original file's Content-Type
// and Content-Length. Every answer that could differ by coding carries
// Vary: Accept-Encoding. Anything that is not a regular file is a 404.
type staticHandler struct{ fsys fs.FS }

func (s staticHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if name == "" || strings.HasPrefix(name, ".") || !fs.ValidPath(name) {
		http.NotFound(w, r)
		return
	}
	f, fi, ok := openRegular(s.fsys, name)
	if !ok {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Vary", "Accept-Encoding")
	h.Set("Content-Type", typeOf(name))
	br, gz := acceptedCodings(r.Header.Values("Accept-Encoding"))
	for _, e := range encodings {
		if (e.coding == "br" && !br) || (e.coding == "gzip" && !gz) {
			continue
		}
		twin, twinInfo, ok := openRegular(s.fsys, name+e.suffix)
		if !ok {
			continue
		}
		defer twin.Close()
		h.Set("Content-Encoding", e.coding)
		// http.ServeContent leaves Content-Length out when Content-Encoding is set; this
		// is the whole twin's length, which it replaces for a range and drops for a 304.
		h.Set("Content-Length", strconv.FormatInt(twinInfo.Size(), 10))
		http.ServeContent(w, r, name+e.suffix, twinInfo.ModTime(), twin)
		return
	}
	http.ServeContent(w, r, name, fi.ModTime(), f)
}

// typeOf is the Content-Type of a static file's extension, application/octet-stream when
// the extension is unknown.
func typeOf(name string) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// acceptedCodings reports whether Accept-Encoding values accept br and gzip: a coding is
// accepted when it is listed with a q above 0, or, when it is not listed, "*" is. No
// values accept neither.
func acceptedCodings(values []string) (br, gz bool) {
	brQ, gzQ, anyQ := -1.0, -1.0, -1.0 // -1: not listed
	for _, v := range values {
		for member := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(member, ";")
			switch strings.ToLower(strings.TrimSpace(coding)) {
			case "br":
				brQ = weight(params)
			case "gzip", "x-gzip":
				gzQ = weight(params)
			case "*":
				anyQ = weight(params)
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

// weight is the q parameter of one Accept-Encoding member: 1 without one, 0 when it is
// malformed or out of range.
func weight(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		key, value, ok := strings.Cut(p, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(key), "q") {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil || q < 0 || q > 1 {
			return 0
		}
		return q
	}
	return 1
}
