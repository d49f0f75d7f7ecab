package validate

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// The parsers of what servers send: each must never panic or hang on any input, whatever
// the reads look like, and keep its output within its input.

func FuzzReadResponse(f *testing.F) {
	for _, tt := range responseTests {
		if len(tt.raw) < 4096 {
			f.Add([]byte(tt.raw), tt.method == "HEAD", false)
		}
	}
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n55HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n75"), false, true)
	f.Fuzz(func(t *testing.T, data []byte, head, oneByte bool) {
		method := "GET"
		if head {
			method = "HEAD"
		}
		var src = bytes.NewReader(data)
		r := bufio.NewReader(src)
		if oneByte {
			r = bufio.NewReader(iotest.OneByteReader(src))
		}
		for range 4 { // pipelined responses, one after another
			resp, err := readResponse(r, method)
			if err != nil {
				return
			}
			if len(resp.Body) > len(data) {
				t.Fatalf("a %d-byte body from %d bytes of input", len(resp.Body), len(data))
			}
			if resp.Status < 200 || resp.Status > 599 {
				t.Fatalf("final status %d", resp.Status)
			}
			if head && len(resp.Body) != 0 {
				t.Fatalf("a body of %d bytes for HEAD", len(resp.Body))
			}
			if resp.Framing == framingLength {
				if n, err := parseContentLength(resp.Header.Values("Content-Length")); err != nil || n != int64(len(resp.Body)) {
					t.Fatalf("Content-Length %v, %v for a %d-byte body", resp.Header.Values("Content-Length"), err, len(resp.Body))
				}
			}
			_ = describe(resp)
		}
	})
}

func FuzzReadChunked(f *testing.F) {
	f.Add([]byte("2\r\n55\r\n0\r\n\r\n"), []byte("hello"), []byte{1, 2})
	f.Add([]byte("1;ext=1\r\nx\r\n0\r\nTrailer: t\r\n\r\n"), []byte(""), []byte{})
	f.Add([]byte("ffffffffffffffff\r\n"), []byte(strings.Repeat("z", 100)), []byte{0, 200, 7})
	f.Add([]byte("0000000000000000001\r\nx\r\n0\r\n\r\n"), []byte("a"), []byte{255})
	f.Fuzz(func(t *testing.T, data, body, sizes []byte) {
		// Any input: no panic, no more out than in.
		got, err := readChunked(bufio.NewReader(bytes.NewReader(data)), maxBodyBytes)
		if err == nil && len(got) > len(data) {
			t.Fatalf("%d bytes decoded from %d", len(got), len(data))
		}
		// What chunked encodes, readChunked decodes, however it is cut.
		var ns []int
		for _, s := range sizes {
			ns = append(ns, int(s))
		}
		enc := chunked(body, ns...)
		back, err := readChunked(bufio.NewReader(iotest.HalfReader(bytes.NewReader(enc))), maxBodyBytes)
		if err != nil || !bytes.Equal(back, body) {
			t.Fatalf("round trip of %q in chunks %v: %q, %v", body, ns, back, err)
		}
	})
}

func FuzzDecodeBody(f *testing.F) {
	f.Add([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\x01\x00\x00\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00"), "gzip")
	f.Add([]byte("\x0b\x01\x80hello\x03"), "br")
	f.Add([]byte("plain"), "")
	f.Add([]byte("plain"), "identity")
	f.Add([]byte("x"), "deflate")
	f.Fuzz(func(t *testing.T, body []byte, ce string) {
		out, err := decodeBody(body, ce)
		if err != nil {
			return
		}
		if len(out) > maxBodyBytes {
			t.Fatalf("%d decoded bytes, over the cap", len(out))
		}
		if enc := strings.ToLower(strings.TrimSpace(ce)); (enc == "" || enc == "identity") && !bytes.Equal(out, body) {
			t.Fatalf("identity decoding changed the body")
		}
	})
}

func FuzzCheckItems(f *testing.F) {
	ds := mustDataset(f)
	for n := range 4 {
		f.Add(renderItems(ds, n, 3), n, 3)
	}
	f.Add([]byte(`{"items":[{"id":1}],"count":1}`), 1, 1)
	f.Add([]byte(`{"items":null,"count":1e999}`), 1, 1)
	f.Add([]byte(`[`), 0, 0)
	f.Fuzz(func(t *testing.T, body []byte, n, m int) {
		err := checkItems(body, ds, n, m) // must not panic
		if err != nil && !utf8.ValidString(err.Error()) {
			t.Fatalf("error text is not UTF-8: %q", err.Error())
		}
		// The correct body for the same request always passes.
		if err := checkItems(renderItems(ds, n, m), ds, n, m); err != nil && n >= 0 {
			t.Fatalf("correct body for n=%d m=%d: %v", n, m, err)
		}
	})
}

func FuzzTypeMatches(f *testing.F) {
	for _, tt := range typeTests {
		f.Add(tt.got, tt.want)
	}
	f.Fuzz(func(t *testing.T, got, want string) {
		m := typeMatches(got, want)
		if m != typeMatches(want, got) {
			t.Fatalf("typeMatches(%q, %q) = %v but not the other way round", got, want, m)
		}
		if mediaType(got) != "" && !strings.Contains(got, ";") && !typeMatches(got+"; charset=utf-8", got) {
			t.Fatalf("typeMatches(%q, %q) is false: parameters must not matter", got+"; charset=utf-8", got)
		}
	})
}

func FuzzPrintable(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\n\x00\xff"), 300)
	f.Add([]byte(""), 0)
	f.Fuzz(func(t *testing.T, b []byte, limit int) {
		limit = max(0, min(limit, 1<<16))
		s := printable(b, limit)
		body, _, _ := strings.Cut(s, "…(+")
		for i := 0; i < len(body); i++ {
			if c := body[i]; c < 0x20 || c >= 0x7f {
				t.Fatalf("printable(%q) = %q has byte %#x", b, s, c)
			}
		}
		if len(body) > limit+4 {
			t.Fatalf("printable(%d bytes, %d) is %d bytes long", len(b), limit, len(body))
		}
	})
}
