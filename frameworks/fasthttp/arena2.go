package main

import (
	"bufio"
	"compress/gzip"
	"io"
	"mime"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

const (
	maxEchoBytes = 1 << 20 // the 8gbit profile posts 10 KB
	maxDelayMs   = 10000
)

// echo answers the request body, byte for byte.
func echo(ctx *fasthttp.RequestCtx) {
	body, err := io.ReadAll(io.LimitReader(ctx.RequestBodyStream(), maxEchoBytes+1))
	switch {
	case err != nil:
		ctx.Error("cannot read request body", fasthttp.StatusBadRequest)
		return
	case len(body) > maxEchoBytes:
		tooLarge(ctx)
		return
	}
	ctx.SetContentType("application/octet-stream")
	ctx.SetBody(body) // with its Content-Length
}

// delay waits {ms} milliseconds, holding only this connection's goroutine, then answers
// the number.
func delay(ctx *fasthttp.RequestCtx, arg string) {
	ms, err := strconv.Atoi(arg)
	if err != nil || ms < 0 || ms > maxDelayMs {
		ctx.Error("ms must be an integer from 0 to 10000", fasthttp.StatusBadRequest)
		return
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done(): // the server is shutting down
	}
	ctx.SetContentType("text/plain")
	ctx.SetBody(strconv.AppendInt(nil, int64(ms), 10))
}

// compressible are the extensions of the large files worth compressing: text.
var compressible = map[string]bool{".html": true, ".js": true, ".css": true, ".json": true, ".svg": true, ".txt": true}

// largeFiles serves GET /large/<file> from a directory: text files that the client accepts
// gzip for are compressed as they are streamed from disk (a body stream, chunked), and
// everything else goes through fasthttp's file server, which streams big files from disk
// (sendfile where it can) without compressing them.
type largeFiles struct {
	root  *os.Root // nil when the directory could not be opened
	plain fasthttp.RequestHandler
}

func newLargeFiles(dir string) *largeFiles {
	l := &largeFiles{plain: (&fasthttp.FS{
		Root:            dir,
		PathRewrite:     fasthttp.NewPathSlashesStripper(1), // /large/x -> /x
		AcceptByteRange: true,
		SkipCache:       true,
	}).NewRequestHandler()}
	if root, err := os.OpenRoot(dir); err == nil {
		l.root = root
	}
	return l
}

var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

func (l *largeFiles) serve(ctx *fasthttp.RequestCtx, name string) {
	if l.root == nil || name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		ctx.Error("not found", fasthttp.StatusNotFound)
		return
	}
	ext := path.Ext(name)
	if !compressible[ext] {
		l.plain(ctx)
		return
	}
	ctx.Response.Header.Set("Vary", "Accept-Encoding")
	if !ctx.Request.Header.HasAcceptEncoding("gzip") || ctx.IsHead() {
		l.plain(ctx)
		return
	}
	f, err := l.root.Open(name)
	if err != nil {
		ctx.Error("not found", fasthttp.StatusNotFound)
		return
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		ctx.Error("not found", fasthttp.StatusNotFound)
		return
	}
	ct := mime.TypeByExtension(ext)
	if ct == "" {
		ct = "application/octet-stream"
	}
	ctx.SetContentType(ct)
	ctx.Response.Header.Set("Content-Encoding", "gzip")
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer f.Close()
		zw := gzipWriters.Get().(*gzip.Writer)
		defer gzipWriters.Put(zw)
		zw.Reset(w)
		io.Copy(zw, f)
		zw.Close()
	})
}
