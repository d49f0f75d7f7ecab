package validate

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/andybalholm/brotli"
)

// responseTests are raw responses and what the parser makes of them; the fuzz target
// starts from them.
var responseTests = []struct {
	name    string
	raw     string
	method  string
	status  int
	body    string
	framing framing
	err     string // a substring of the error; "" for success
}{
	{"content-length", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n55", "GET", 200, "55", framingLength, ""},
	{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n55\r\n0\r\n\r\n", "GET", 200, "55", framingChunked, ""},
	{"chunked with extensions and trailers", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;a=b\r\n5\r\n1 \r\n5\r\n0\r\nX-Trailer: t\r\n\r\n", "GET", 200, "55", framingChunked, ""},
	{"chunked upper-case hex", "HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n", "GET", 200, "0123456789", framingChunked, ""},
	{"close-delimited", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n55", "GET", 200, "55", framingClose, ""},
	{"HTTP/1.0", "HTTP/1.0 400 Bad Request\r\n\r\nbad", "GET", 400, "bad", framingClose, ""},
	{"no reason", "HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n", "GET", 404, "", framingLength, ""},
	{"HEAD has no body", "HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n", "HEAD", 200, "", framingNone, ""},
	{"204 has no body", "HTTP/1.1 204 No Content\r\nContent-Length: 20\r\n\r\n", "GET", 204, "", framingNone, ""},
	{"interim response skipped", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "POST", 200, "ok", framingLength, ""},
	{"identical Content-Lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2, 2\r\n\r\nok", "GET", 200, "ok", framingLength, ""},
	{"OWS around a value", "HTTP/1.1 200 OK\r\nContent-Length: \t2 \r\n\r\nok", "GET", 200, "ok", framingLength, ""},

	{"empty", "", "GET", 0, "", 0, "connection closed before a response"},
	{"not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", "GET", 0, "", 0, "not HTTP/1.0 or HTTP/1.1"},
	{"HTTP/2 status line", "HTTP/2 200\r\n\r\n", "GET", 0, "", 0, "not HTTP/1.0 or HTTP/1.1"},
	{"bad status", "HTTP/1.1 2000 OK\r\n\r\n", "GET", 0, "", 0, "bad status code"},
	{"status 600", "HTTP/1.1 600 OK\r\n\r\n", "GET", 0, "", 0, "bad status code"},
	{"bare LF", "HTTP/1.1 200 OK\nContent-Length: 0\n\n", "GET", 0, "", 0, "not terminated by CRLF"},
	{"bare CR in a value", "HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", "GET", 0, "", 0, "bare CR"},
	{"NUL in a value", "HTTP/1.1 200 OK\r\nX: a\x00b\r\n\r\n", "GET", 0, "", 0, "NUL"},
	{"obs-fold", "HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n", "GET", 0, "", 0, "obsolete line folding"},
	{"space before colon", "HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok", "GET", 0, "", 0, "invalid character in field name"},
	{"no colon", "HTTP/1.1 200 OK\r\nContent-Length\r\n\r\n", "GET", 0, "", 0, "no field name and colon"},
	{"both framings", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", "GET", 0, "", 0, "both Transfer-Encoding and Content-Length"},
	{"conflicting lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", "GET", 0, "", 0, "conflicting"},
	{"negative length", "HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\nok", "GET", 0, "", 0, "not a decimal number"},
	{"length too large", "HTTP/1.1 200 OK\r\nContent-Length: 999999999999\r\n\r\nok", "GET", 0, "", 0, "larger than 64 MiB"},
	{"length longer than the body", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok", "GET", 0, "", 0, "connection ended early"},
	{"gzip transfer coding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "GET", 0, "", 0, "only chunked"},
	{"chunked in HTTP/1.0", "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "GET", 0, "", 0, "HTTP/1.0"},
	{"chunk size not hex", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "GET", 0, "", 0, "not hexadecimal"},
	{"chunk size with sign", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+2\r\nok\r\n0\r\n\r\n", "GET", 0, "", 0, "not hexadecimal"},
	{"chunk shorter than its size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nok\r\n0\r\n\r\n", "GET", 0, "", 0, "not followed by CRLF"},
	{"chunk longer than its size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nok\r\n0\r\n\r\n", "GET", 0, "", 0, "not followed by CRLF"},
	{"no last chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n", "GET", 0, "", 0, "connection closed"},
	{"chunk too large", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffff\r\n", "GET", 0, "", 0, "larger than 64 MiB"},
	{"truncated head", "HTTP/1.1 200 OK\r\nContent-Le", "GET", 0, "", 0, "connection closed after"},
	{"head too long", "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxHeadBytes) + "\r\n\r\n", "GET", 0, "", 0, "longer than"},
	{"too many fields", "HTTP/1.1 200 OK\r\n" + strings.Repeat("X: 1\r\n", maxHeaderCount+1) + "\r\n", "GET", 0, "", 0, "more than 200 header fields"},
	{"endless interim", strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", maxInterim+2), "GET", 0, "", 0, "interim"},
}

func TestReadResponse(t *testing.T) {
	for _, tt := range responseTests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte per read: the parser must not depend on how the bytes arrive.
			for _, r := range []*bufio.Reader{
				bufio.NewReader(strings.NewReader(tt.raw)),
				bufio.NewReader(iotest.OneByteReader(strings.NewReader(tt.raw))),
			} {
				resp, err := readResponse(r, tt.method)
				if tt.err != "" {
					if err == nil || !strings.Contains(err.Error(), tt.err) {
						t.Errorf("readResponse(%q) = %v, want an error containing %q", tt.raw, err, tt.err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("readResponse(%q): %v", tt.raw, err)
				}
				if resp.Status != tt.status || string(resp.Body) != tt.body || resp.Framing != tt.framing {
					t.Errorf("readResponse(%q) = %d %q (%v), want %d %q (%v)", tt.raw, resp.Status, resp.Body, resp.Framing, tt.status, tt.body, tt.framing)
				}
			}
		})
	}
}

// TestReadResponseStopsAtTheEnd reads pipelined responses one after another.
func TestReadResponseStopsAtTheEnd(t *testing.T) {
	raw := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n7\r\n0\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
	r := bufio.NewReader(strings.NewReader(raw))
	var got []string
	for range 3 {
		resp, err := readResponse(r, "GET")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(resp.Body))
	}
	if strings.Join(got, ",") != "ok,7," {
		t.Errorf("bodies %q, want ok, 7 and empty", got)
	}
	if _, err := readResponse(r, "GET"); !errors.Is(err, errNoResponse) {
		t.Errorf("after the last response: %v, want errNoResponse", err)
	}
}

func TestChunkedRoundTrip(t *testing.T) {
	body := []byte(strings.Repeat("0123456789", 1000))
	for _, sizes := range [][]int{nil, {1}, {1, 2, 3}, {10000}, {20000}, {0, 5, 0}} {
		enc := chunked(body, sizes...)
		got, err := readChunked(bufio.NewReader(bytes.NewReader(enc)), maxBodyBytes)
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("sizes %v: readChunked(chunked(body)) = %d bytes, %v; want the %d bytes back", sizes, len(got), err, len(body))
		}
	}
}

func TestDecodeBody(t *testing.T) {
	plain := []byte(strings.Repeat("arena ", 100))
	var gz, br bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain)
	zw.Close()
	bw := brotli.NewWriter(&br)
	bw.Write(plain)
	bw.Close()
	for _, tt := range []struct {
		ce   string
		body []byte
		err  bool
	}{
		{"", plain, false},
		{"identity", plain, false},
		{"gzip", gz.Bytes(), false},
		{"GZIP", gz.Bytes(), false},
		{"br", br.Bytes(), false},
		{"deflate", plain, true},
		{"gzip", plain, true},
		{"gzip", gz.Bytes()[:gz.Len()-3], true},
		{"gzip", append(gz.Bytes(), "junk"...), true},
		{"br", plain, true},
		{"gzip, br", gz.Bytes(), true},
	} {
		got, err := decodeBody(tt.body, tt.ce)
		if tt.err {
			if err == nil {
				t.Errorf("decodeBody(%d bytes, %q) succeeded, want an error", len(tt.body), tt.ce)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, plain) {
			t.Errorf("decodeBody(%d bytes, %q) = %d bytes, %v; want the %d plain bytes", len(tt.body), tt.ce, len(got), err, len(plain))
		}
	}
}

var typeTests = []struct {
	got, want string
	match     bool
}{
	{"text/plain", "text/plain", true},
	{"text/plain; charset=utf-8", "text/plain", true},
	{"Text/Plain ;charset=UTF-8", "text/plain", true},
	{" text/css", "text/css", true},
	{"application/javascript", "text/javascript", true},
	{"text/javascript; charset=utf-8", "application/javascript", true},
	{"text/html", "text/plain", false},
	{"text/plain2", "text/plain", false},
	{"", "text/plain", false},
	{"application/json", "application/json", true},
	{"application/json+x", "application/json", false},
	{"application/x-javascript", "text/javascript", false},
}

func TestTypeMatches(t *testing.T) {
	for _, tt := range typeTests {
		if got := typeMatches(tt.got, tt.want); got != tt.match {
			t.Errorf("typeMatches(%q, %q) = %v, want %v", tt.got, tt.want, got, tt.match)
		}
	}
	for name, want := range map[string]string{
		"app.js": "text/javascript", "reset.css": "text/css", "manifest.json": "application/json",
		"header.html": "text/html", "logo.svg": "image/svg+xml", "bold.woff2": "font/woff2",
		"hero.webp": "image/webp", "readme.txt": "",
	} {
		if got := staticType(name); got != want {
			t.Errorf("staticType(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestPrintable(t *testing.T) {
	for _, tt := range []struct {
		in    string
		limit int
		want  string
	}{
		{"GET / HTTP/1.1\r\n", 300, `GET / HTTP/1.1\r\n`},
		{"a\x00b\tc\\", 300, `a\x00b\tc\\`},
		{"\xff\x7f", 300, `\xff\x7f`},
		{"abcdef", 3, "abc…(+3 bytes)"},
	} {
		if got := printable([]byte(tt.in), tt.limit); got != tt.want {
			t.Errorf("printable(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
		}
	}
}
