package main

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// testServer is a running server for the tests.
type testServer struct{ URL string }

// newTestServer serves the new routes with main's body settings, with a large directory
// holding a page and a binary.
func newTestServer(t *testing.T) (srv testServer, page, bin []byte) {
	t.Helper()
	dir := t.TempDir()
	page = []byte(strings.Repeat("<p>arena large page text</p>\n", 40000))
	bin = make([]byte, 3<<20)
	rand.Read(bin)
	os.WriteFile(filepath.Join(dir, "page-1m.html"), page, 0o644)
	os.WriteFile(filepath.Join(dir, "download.bin"), bin, 0o644)
	app := fiber.New(fiber.Config{DisableStartupMessage: true, StreamRequestBody: true, BodyLimit: 4 << 20})
	newerRoutes(app, dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln)
	t.Cleanup(func() { app.Shutdown() })
	return testServer{"http://" + ln.Addr().String()}, page, bin
}

// get sends a GET without the transport's own gzip handling.
func get(t *testing.T, url string, acceptEncoding string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestEcho(t *testing.T) {
	srv, _, _ := newTestServer(t)
	for _, n := range []int{0, 1, 1000, 10240, 100000} {
		body := make([]byte, n)
		rand.Read(body)
		resp, err := http.Post(srv.URL+"/echo", "application/octet-stream", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Equal(got, body) || resp.ContentLength != int64(n) ||
			resp.Header.Get("Content-Type") != "application/octet-stream" {
			t.Errorf("POST /echo of %d bytes: %d, %d bytes back, Content-Length %d, %q", n, resp.StatusCode, len(got), resp.ContentLength, resp.Header.Get("Content-Type"))
		}
	}
}

func TestDelay(t *testing.T) {
	srv, _, _ := newTestServer(t)
	start := time.Now()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			resp, b := get(t, srv.URL+"/delay/150", "")
			if resp.StatusCode != 200 || string(b) != "150" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
				t.Errorf("GET /delay/150: %d %q %q", resp.StatusCode, b, resp.Header.Get("Content-Type"))
			}
		})
	}
	wg.Wait()
	if d := time.Since(start); d < 150*time.Millisecond || d > 600*time.Millisecond {
		t.Errorf("8 concurrent /delay/150 took %v; want at least 150 ms and far less than 1.2 s", d)
	}
	for _, bad := range []string{"-1", "10001", "abc"} {
		if resp, _ := get(t, srv.URL+"/delay/"+bad, ""); resp.StatusCode != 400 {
			t.Errorf("GET /delay/%s: %d, want 400", bad, resp.StatusCode)
		}
	}
}

func TestLarge(t *testing.T) {
	srv, page, bin := newTestServer(t)
	resp, b := get(t, srv.URL+"/large/page-1m.html", "")
	if resp.StatusCode != 200 || !bytes.Equal(b, page) || resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("page without Accept-Encoding: %d, %d bytes, Content-Encoding %q", resp.StatusCode, len(b), resp.Header.Get("Content-Encoding"))
	}
	resp, b = get(t, srv.URL+"/large/page-1m.html", "gzip")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("page with gzip: %d, Content-Encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if dec, err := io.ReadAll(zr); err != nil || !bytes.Equal(dec, page) || len(b) > len(page)/4 {
		t.Errorf("page with gzip: %d bytes decode to %d (%v), want the %d of the page", len(b), len(dec), err, len(page))
	}
	resp, b = get(t, srv.URL+"/large/download.bin", "gzip")
	if resp.StatusCode != 200 || !bytes.Equal(b, bin) || resp.Header.Get("Content-Encoding") != "" || resp.ContentLength != int64(len(bin)) {
		t.Errorf("download.bin: %d, %d bytes, Content-Length %d, Content-Encoding %q", resp.StatusCode, len(b), resp.ContentLength, resp.Header.Get("Content-Encoding"))
	}
	for _, p := range []string{"/large/missing.bin", "/large/", "/large/..%2fsecret", "/large/.hidden"} {
		if resp, _ := get(t, srv.URL+p, ""); resp.StatusCode == 200 {
			t.Errorf("GET %s: 200, want not found", p)
		}
	}
}
