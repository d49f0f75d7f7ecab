package main

import (
	"io"
	"mime"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
)

const (
	maxEchoBytes = 1 << 20 // the 8gbit profile posts 10 KB
	maxDelayMs   = 10000
)

// echo answers the request body, byte for byte.
func echo(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEchoBytes))
	if err != nil {
		bodyError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

// delay waits {ms} milliseconds, holding only its own goroutine, then answers the number.
func delay(w http.ResponseWriter, r *http.Request) {
	ms, err := strconv.Atoi(r.PathValue("ms"))
	if err != nil || ms < 0 || ms > maxDelayMs {
		http.Error(w, "ms must be an integer from 0 to 10000", http.StatusBadRequest)
		return
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
		return // the client went away
	}
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, strconv.Itoa(ms))
}

// compressible are the extensions of the large files worth compressing: text.
var compressible = map[string]bool{".html": true, ".js": true, ".css": true, ".json": true, ".svg": true, ".txt": true}

// largeFiles serves GET /large/{file} from dir, streamed from disk: text files gzipped as
// they are sent when the client accepts gzip, everything else as it is (http.ServeContent,
// with ranges and conditional requests). Only the directory's own regular files are
// served: os.Root refuses any name that leaves it.
type largeFiles struct {
	root *os.Root // nil when the directory could not be opened: every file is missing
}

func newLargeFiles(dir string) largeFiles {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return largeFiles{}
	}
	return largeFiles{root}
}

var gzipWriters = sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression); return w }}

func (l largeFiles) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if l.root == nil || name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		http.NotFound(w, r)
		return
	}
	f, err := l.root.Open(name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	ext := path.Ext(name)
	if ct := mime.TypeByExtension(ext); ct != "" {
		w.Header().Set("Content-Type", ct)
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	if !compressible[ext] {
		http.ServeContent(w, r, name, fi.ModTime(), f)
		return
	}
	w.Header().Set("Vary", "Accept-Encoding")
	if !acceptsGzip(r.Header.Values("Accept-Encoding")) {
		http.ServeContent(w, r, name, fi.ModTime(), f)
		return
	}
	w.Header().Set("Content-Encoding", "gzip")
	if r.Method == http.MethodHead {
		return
	}
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(w)
	io.Copy(zw, f)
	zw.Close()
}

// acceptsGzip reports whether Accept-Encoding values accept gzip (or *) with a q above 0.
func acceptsGzip(values []string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			name, params, _ := strings.Cut(part, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "gzip" && name != "x-gzip" && name != "*" {
				continue
			}
			q := 1.0
			for p := range strings.SplitSeq(params, ";") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(p), "q="); ok {
					if f, err := strconv.ParseFloat(v, 64); err == nil {
						q = f
					}
				}
			}
			return q > 0
		}
	}
	return false
}
