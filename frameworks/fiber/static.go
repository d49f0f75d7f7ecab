package main

import (
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// twins are the precompressed copies a static file may have next to it, in
// the order they are preferred: br whenever the client accepts it, else gzip.
var twins = []struct{ coding, suffix string }{
	{"br", ".br"},
	{"gzip", ".gz"},
}

// precompressed runs before the filesystem middleware mounted at prefix.
// When the client accepts br or gzip and <file>.br or <file>.gz exists in
// fsys, it sends that precompressed twin, opened on this request, with
// Content-Encoding and the original file's Content-Type; otherwise the
// filesystem middleware serves the file itself. Fiber v2 has no feature that
// sends existing precompressed files: Static's Compress writes its own
// .fiber.gz copies next to the files, which a read-only mount refuses.
func precompressed(prefix string, fsys fs.FS) fiber.Handler {
	return func(c *fiber.Ctx) error {
		method := c.Method()
		if method != fiber.MethodGet && method != fiber.MethodHead {
			return c.Next()
		}
		c.Vary(fiber.HeaderAcceptEncoding)
		br, gz := acceptedCodings([]string{c.Get(fiber.HeaderAcceptEncoding)})
		if !br && !gz {
			return c.Next()
		}
		// The file the filesystem middleware would open for this path.
		name := strings.TrimPrefix(path.Clean("/"+strings.TrimPrefix(c.Path(), prefix)), "/")
		if !fs.ValidPath(name) || name == "." {
			return c.Next()
		}
		if fi, err := fs.Stat(fsys, name); err != nil || !fi.Mode().IsRegular() {
			return c.Next()
		}
		for _, t := range twins {
			if (t.coding == "br" && !br) || (t.coding == "gzip" && !gz) {
				continue
			}
			f, err := fsys.Open(name + t.suffix)
			if err != nil {
				continue
			}
			fi, err := f.Stat()
			if err != nil || !fi.Mode().IsRegular() {
				f.Close()
				continue
			}
			size := int(fi.Size())
			c.Status(fiber.StatusOK)
			c.Type(path.Ext(name))
			c.Set(fiber.HeaderContentEncoding, t.coding)
			c.Set(fiber.HeaderLastModified, fi.ModTime().UTC().Format(http.TimeFormat))
			if method == fiber.MethodHead {
				f.Close()
				c.Response().SkipBody = true
				c.Response().Header.SetContentLength(size)
				return nil
			}
			return c.SendStream(f, size) // fasthttp closes f once sent
		}
		return c.Next()
	}
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
