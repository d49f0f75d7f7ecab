package main

import (
	"bufio"
	"compress/gzip"
	"io"
	"mime"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
)

const (
	maxEchoBytes = 1 << 20 // the 8gbit profile posts 10 KB
	maxDelayMs   = 10000
)

// echo answers the request body, byte for byte.
func echo(c *fiber.Ctx) error {
	body, err := io.ReadAll(io.LimitReader(c.Context().RequestBodyStream(), maxEchoBytes+1))
	switch {
	case err != nil:
		return fiber.NewError(fiber.StatusBadRequest, "cannot read request body")
	case len(body) > maxEchoBytes:
		c.Context().SetConnectionClose() // rather than read the rest
		return errTooLarge
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEOctetStream)
	return c.Send(body) // with its Content-Length
}

// delay waits :ms milliseconds, holding only this connection's goroutine, then answers
// the number.
func delay(c *fiber.Ctx) error {
	ms, err := strconv.Atoi(c.Params("ms"))
	if err != nil || ms < 0 || ms > maxDelayMs {
		return fiber.NewError(fiber.StatusBadRequest, "ms must be an integer from 0 to 10000")
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.Context().Done(): // the server is shutting down
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlain)
	return c.SendString(strconv.Itoa(ms))
}

// compressible are the extensions of the large files worth compressing: text.
var compressible = map[string]bool{".html": true, ".js": true, ".css": true, ".json": true, ".svg": true, ".txt": true}

var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// largeFiles serves GET /large/:file from dir: text files that the client accepts gzip for
// are compressed as they are streamed from disk (a body stream, chunked); everything else
// is sent by SendFile, which streams big files from disk, uncompressed.
func largeFiles(dir string) fiber.Handler {
	root, rootErr := os.OpenRoot(dir)
	return func(c *fiber.Ctx) error {
		name := c.Params("file")
		if rootErr != nil || name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
			return fiber.ErrNotFound
		}
		fi, err := root.Stat(name)
		if err != nil || !fi.Mode().IsRegular() {
			return fiber.ErrNotFound
		}
		ext := path.Ext(name)
		if !compressible[ext] {
			return c.SendFile(filepath.Join(dir, name), false)
		}
		c.Vary(fiber.HeaderAcceptEncoding)
		if !c.Context().Request.Header.HasAcceptEncoding("gzip") || c.Method() == fiber.MethodHead {
			return c.SendFile(filepath.Join(dir, name), false)
		}
		f, err := root.Open(name)
		if err != nil {
			return fiber.ErrNotFound
		}
		ct := mime.TypeByExtension(ext)
		if ct == "" {
			ct = fiber.MIMEOctetStream
		}
		c.Set(fiber.HeaderContentType, ct)
		c.Set(fiber.HeaderContentEncoding, "gzip")
		c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
			defer f.Close()
			zw := gzipWriters.Get().(*gzip.Writer)
			defer gzipWriters.Put(zw)
			zw.Reset(w)
			io.Copy(zw, f)
			zw.Close()
		})
		return nil
	}
}

// newerRoutes adds the routes of the 8gbit, async, download and static-large profiles.
func newerRoutes(app *fiber.App, largeDir string) {
	app.Post("/echo", echo)
	app.Get("/delay/:ms", delay)
	app.Get("/large/:file", largeFiles(largeDir))
}
