package validatetest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// newerModes are the modes of the latency, 8gbit, async, download and static-large
// profiles.
func newerModes(m map[string]string) {
	for _, b := range []string{"probe-status", "get-wrong-sum", "get-content-type", "get-random-wrong-sum",
		"framing", "frag-line", "frag-headers"} {
		m["latency-10k."+b] = baselineBehaviours[b]
	}
	m["latency-10k.keepalive-close"] = "every response says Connection: close and the connection closes"
	for _, p := range []string{"8gbit", "async", "download", "static-large"} {
		m[p+".probe-status"] = baselineBehaviours["probe-status"]
	}
	for name, d := range map[string]string{
		"8gbit.echo-0":    "POST /echo with an empty body gets 400",
		"8gbit.echo-1":    "a 1-byte /echo body comes back with a newline after it",
		"8gbit.echo-1000": "a 1,000-byte /echo body comes back without its last byte",
		"8gbit.echo-10k":  "a 10,240-byte /echo body comes back with its middle byte changed",
		"8gbit.echo-100k": "/echo returns at most the first 65,536 bytes of a body",
		"8gbit.echo-type": "/echo answers text/plain",

		"async.delay-10-early":  "GET /delay/10 answers at once",
		"async.delay-200-early": "GET /delay/200 answers after 100 ms",
		"async.delay-type":      "/delay answers text/html",
		"async.delay-serial":    "one /delay wait at a time, server-wide",

		"download.download-corrupt": "download.bin has its middle byte flipped",
		"download.large-404":        "a missing /large/ file gets 200 with an empty body",
		"download.large-traversal":  "GET /large/../<file> serves the data directory's file",

		"static-large.large-uncompressed":   "the large text files are never compressed",
		"static-large.large-identity-short": "bundle-2m.js without Accept-Encoding lacks its last byte",
		"static-large.large-404":            "a missing /large/ file gets 200 with an empty body",
	} {
		m[name] = d
	}
}

// echo answers POST /echo with the body.
func (s *Server) echo(r *req) reply {
	if r.method != "POST" {
		return reply{status: 405, headers: []string{"Allow: POST"}}
	}
	b := r.body
	n := len(b)
	switch {
	case s.mode == "echo-0" && n == 0:
		return reply{status: 400, headers: []string{"Content-Type: text/plain"}, body: []byte("empty body")}
	case s.mode == "echo-1" && n == 1:
		b = append(slices.Clone(b), '\n')
	case s.mode == "echo-1000" && n == 1000:
		b = b[:999]
	case s.mode == "echo-10k" && n == 10240:
		b = slices.Clone(b)
		b[n/2] ^= 0xff
	case s.mode == "echo-100k" && n > 65536:
		b = b[:65536]
	}
	ct := "application/octet-stream"
	if s.mode == "echo-type" {
		ct = "text/plain"
	}
	return reply{status: 200, headers: []string{"Content-Type: " + ct}, body: b}
}

// delay answers GET /delay/{ms} after ms milliseconds.
func (s *Server) delay(r *req) reply {
	if r.method != "GET" {
		return reply{status: 405, headers: []string{"Allow: GET"}}
	}
	ms, err := strconv.Atoi(strings.TrimPrefix(r.path, "/delay/"))
	if err != nil || ms < 0 || ms > 10000 {
		return reply{status: 400, headers: []string{"Content-Type: text/plain"}, body: []byte("ms must be an integer from 0 to 10000")}
	}
	wait := time.Duration(ms) * time.Millisecond
	switch {
	case s.mode == "delay-10-early" && ms == 10:
		wait = 0
	case s.mode == "delay-200-early" && ms == 200:
		wait = 100 * time.Millisecond
	}
	if s.mode == "delay-serial" {
		s.delayMu.Lock()
		time.Sleep(wait)
		s.delayMu.Unlock()
	} else {
		time.Sleep(wait)
	}
	ct := "text/plain"
	if s.mode == "delay-type" {
		ct = "text/html"
	}
	return reply{status: 200, headers: []string{"Content-Type: " + ct}, body: []byte(strconv.Itoa(ms))}
}

// large answers GET /large/{name} from the data directory's large/: the text files gzipped
// when the client accepts it (chunked, as on-the-fly compression sends them), everything
// else streamed as it is.
func (s *Server) large(r *req) reply {
	if r.method != "GET" {
		return reply{status: 405, headers: []string{"Allow: GET"}}
	}
	name := strings.TrimPrefix(r.path, "/large/")
	notFound := reply{status: 404, headers: []string{"Content-Type: text/plain"}, body: []byte("not found")}
	if s.mode == "large-404" {
		notFound = reply{status: 200, headers: []string{"Content-Type: text/html"}}
	}
	traversal := s.mode == "large-traversal" && strings.HasPrefix(name, "../")
	if !traversal && (name == "" || strings.ContainsAny(name, "/\\") || strings.HasPrefix(name, ".")) {
		return notFound
	}
	file := filepath.Join(s.dataDir, "large", name)
	if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() {
		return notFound
	}
	ext := path.Ext(name)
	ct := staticTypes[ext]
	if ct == "" {
		ct = "application/octet-stream"
	}
	ae := r.get("accept-encoding")
	text := ext == ".html" || ext == ".js"
	if text && (acceptsCoding(ae, "gzip") && s.mode != "large-uncompressed" || s.mode == "large-identity-short" && ae == "") {
		b, err := os.ReadFile(file)
		if err != nil {
			return reply{status: 500}
		}
		if ae == "" {
			return reply{status: 200, headers: []string{"Content-Type: " + ct, "Vary: Accept-Encoding"}, body: b[:len(b)-1]}
		}
		return reply{status: 200, headers: []string{"Content-Type: " + ct, "Content-Encoding: gzip", "Vary: Accept-Encoding"},
			body: gzipped(file, b), chunked: true}
	}
	return reply{status: 200, headers: []string{"Content-Type: " + ct}, file: file,
		corrupt: s.mode == "download-corrupt" && name == "download.bin"}
}

// writeFile writes the rest of rep's head and its file, streamed.
func writeFile(bw *bufio.Writer, rep reply) {
	f, err := os.Open(rep.file)
	if err != nil {
		bw.WriteString("Content-Length: 0\r\n\r\n")
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		bw.WriteString("Content-Length: 0\r\n\r\n")
		return
	}
	fmt.Fprintf(bw, "Content-Length: %d\r\n\r\n", fi.Size())
	if !rep.corrupt || fi.Size() == 0 {
		io.Copy(bw, f)
		return
	}
	half := fi.Size() / 2
	io.CopyN(bw, f, half)
	var b [1]byte
	io.ReadFull(f, b[:])
	bw.WriteByte(b[0] ^ 0xff)
	io.Copy(bw, f)
}

// largeGzip caches the gzip of each large file, by path: compressing 1–2 MiB for every
// request under the race detector took longer than a check waits for progress.
var largeGzip sync.Map

// gzipped returns b, the content of file, gzipped (fast), computed once per file.
func gzipped(file string, b []byte) []byte {
	if z, ok := largeGzip.Load(file); ok {
		return z.([]byte)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	zw.Write(b)
	zw.Close()
	z, _ := largeGzip.LoadOrStore(file, buf.Bytes())
	return z.([]byte)
}
