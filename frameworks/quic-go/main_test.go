package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"
)

// testServer is the entry running on ephemeral loopback ports.
type testServer struct {
	h1, tls, h3 string // host:port of each socket
	static      string // the static directory
	roots       *x509.CertPool
}

// selfSigned makes an ECDSA P-256 certificate for 127.0.0.1 and localhost, as the
// arena's pair is, and the pool that trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "localhost"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// staticFixture fills dir with files like the arena's: some with a real gzip twin and a
// stand-in br twin, hero.webp with none.
func staticFixture(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"reset.css":     strings.Repeat("html, body { margin: 0; }\n", 200),
		"app.js":        strings.Repeat("console.log('app');\n", 200),
		"manifest.json": `{"name": "arena", "icons": []}` + "\n",
		"logo.svg":      `<svg xmlns="http://www.w3.org/2000/svg"></svg>`,
		"bold.woff2":    "wOF2 not really a font",
		"hero.webp":     "RIFF....WEBPVP8 not really an image",
	}
	for name, content := range files {
		write(t, filepath.Join(dir, name), []byte(content))
		if name == "hero.webp" {
			continue
		}
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write([]byte(content))
		zw.Close()
		write(t, filepath.Join(dir, name+".gz"), gz.Bytes())
		write(t, filepath.Join(dir, name+".br"), []byte("br stand-in for "+name))
	}
	if err := os.Mkdir(filepath.Join(dir, "subdir"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// start runs serve with the entry's routes on loopback ephemeral ports until the test
// ends.
func start(t *testing.T) *testServer { return startWith(t, routes) }

// startWith is start with the handler handler(staticDir).
func startWith(t *testing.T, handler func(string) http.Handler) *testServer {
	t.Helper()
	cert, roots := selfSigned(t)
	dir := t.TempDir()
	staticFixture(t, dir)
	h1, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, handler(dir), sockets{h1: h1, tls: tl, udp: udp}, cert) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("serve did not return after its context ended")
		}
	})
	return &testServer{h1: h1.Addr().String(), tls: tl.Addr().String(), h3: udp.LocalAddr().String(), static: dir, roots: roots}
}

// h3Client speaks HTTP/3 only.
func (s *testServer) h3Client(t *testing.T) *http.Client {
	tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: s.roots}, DisableCompression: true}
	t.Cleanup(func() { tr.Close() })
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// h2Client offers ALPN h2 then http/1.1 over TCP, as h2load and curl --http2 do.
func (s *testServer) h2Client(t *testing.T) *http.Client {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.roots}, Protocols: &p, DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// h1Client speaks plaintext HTTP/1.1.
func h1Client(t *testing.T) *http.Client {
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// do sends one request and returns the response with its body read.
func do(t *testing.T, c *http.Client, method, url, body string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, url, err)
	}
	return resp, data
}

// checkText asserts a 200 text/plain answer of want over proto.
func checkText(t *testing.T, resp *http.Response, body []byte, proto, want string) {
	t.Helper()
	if resp.StatusCode != 200 || string(body) != want || resp.Proto != proto {
		t.Errorf("%s %s: %s %d %q; want %s 200 %q", resp.Request.Method, resp.Request.URL, resp.Proto, resp.StatusCode, body, proto, want)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain" {
		t.Errorf("%s: Content-Type %q, want text/plain", resp.Request.URL, ct)
	}
}

func TestHTTP3Baseline(t *testing.T) {
	s := start(t)
	c := s.h3Client(t)
	base := "https://" + s.h3
	resp, body := do(t, c, "GET", base+"/baseline2?a=1&b=2", "", nil)
	checkText(t, resp, body, "HTTP/3.0", "3")
	if cl := resp.Header.Get("Content-Length"); cl != "1" && resp.ContentLength != 1 {
		t.Errorf("Content-Length %q (%d), want 1", cl, resp.ContentLength)
	}
	for url, want := range map[string]string{
		"/baseline2?a=13&b=42":                     "55",
		"/baseline2?a=-7&b=3":                      "-4",
		"/baseline2?a=x&b=2":                       "2", // a value that is not an integer is ignored
		"/baseline2":                               "0",
		"/baseline11?a=13&b=42":                    "55",
		"/baseline2?a=9223372036854775807&b=0":     "9223372036854775807",
		"/baseline2?a=99999999999999999999999&b=1": "1",
	} {
		resp, body := do(t, c, "GET", base+url, "", nil)
		checkText(t, resp, body, "HTTP/3.0", want)
	}
	resp, body = do(t, c, "POST", base+"/baseline11?a=13&b=42", "20", nil)
	checkText(t, resp, body, "HTTP/3.0", "75")
	resp, _ = do(t, c, "POST", base+"/baseline11?a=1", "twenty", nil)
	if resp.StatusCode != 400 {
		t.Errorf("POST with a body that is not an integer: %d, want 400", resp.StatusCode)
	}
	resp, _ = do(t, c, "DELETE", base+"/baseline11", "", nil)
	if resp.StatusCode != 405 || resp.Header.Get("Allow") == "" {
		t.Errorf("DELETE: %d Allow %q, want 405 with Allow", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// TestHTTP3Streams holds 64 requests open at once on one QUIC connection (the HTTP/3
// transport multiplexes them on one), as baseline-h3's load does: each handler waits
// until all 64 have arrived, so a server that allowed fewer streams would time out.
func TestHTTP3Streams(t *testing.T) {
	const n = 64
	var arrived sync.WaitGroup
	arrived.Add(n)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	s := startWith(t, func(dir string) http.Handler {
		next := routes(dir)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived.Done()
			select {
			case <-all:
			case <-time.After(5 * time.Second):
				http.Error(w, "not all streams arrived", http.StatusServiceUnavailable)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	c := s.h3Client(t)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			resp, err := c.Get(fmt.Sprintf("https://%s/baseline2?a=%d&b=1", s.h3, i))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || string(body) != strconv.Itoa(i+1) {
				errs <- fmt.Errorf("request %d: %d %q", i, resp.StatusCode, body)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// staticCase is one static request and the file whose bytes answer it.
type staticCase struct {
	file, acceptEncoding string
	coding               string // the Content-Encoding expected; "" for none
}

var staticCases = []staticCase{
	{"reset.css", "", ""},
	{"reset.css", "br;q=1, gzip;q=0.8", "br"},
	{"reset.css", "gzip", "gzip"},
	{"reset.css", "br;q=0, gzip;q=0.8", "gzip"},
	{"reset.css", "gzip;q=0, br;q=0", ""},
	{"reset.css", "*", "br"},
	{"reset.css", "identity", ""},
	{"app.js", "br;q=1, gzip;q=0.8", "br"},
	{"app.js", "", ""},
	{"manifest.json", "gzip, deflate", "gzip"},
	{"logo.svg", "br;q=1, gzip;q=0.8", "br"},
	{"bold.woff2", "", ""},
	{"hero.webp", "br;q=1, gzip;q=0.8", ""}, // no twin
	{"hero.webp", "", ""},
}

var wantTypes = map[string]string{
	".css": "text/css", ".js": "text/javascript", ".json": "application/json", ".svg": "image/svg+xml",
	".woff2": "font/woff2", ".webp": "image/webp",
}

// checkStatic requests every staticCase and the 404s with c, expecting proto.
func checkStatic(t *testing.T, c *http.Client, base, dir, proto string) {
	t.Helper()
	for _, sc := range staticCases {
		var h http.Header
		if sc.acceptEncoding != "" {
			h = http.Header{"Accept-Encoding": {sc.acceptEncoding}}
		}
		resp, body := do(t, c, "GET", base+"/static/"+sc.file, "", h)
		name := sc.file
		switch sc.coding {
		case "br":
			name += ".br"
		case "gzip":
			name += ".gz"
		}
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("%s GET /static/%s with Accept-Encoding %q", proto, sc.file, sc.acceptEncoding)
		if resp.StatusCode != 200 || resp.Proto != proto || !bytes.Equal(body, want) {
			t.Errorf("%s: %s %d, %d bytes; want 200 and the %d bytes of %s", what, resp.Proto, resp.StatusCode, len(body), len(want), name)
			continue
		}
		if got := resp.Header.Get("Content-Encoding"); got != sc.coding {
			t.Errorf("%s: Content-Encoding %q, want %q", what, got, sc.coding)
		}
		if got, want := resp.Header.Get("Content-Length"), strconv.Itoa(len(want)); got != want && resp.ContentLength != int64(len(body)) {
			t.Errorf("%s: Content-Length %q, want %s", what, got, want)
		}
		ct := resp.Header.Get("Content-Type")
		if typ, _, _ := strings.Cut(ct, ";"); typ != wantTypes[filepath.Ext(sc.file)] {
			t.Errorf("%s: Content-Type %q, want %s", what, ct, wantTypes[filepath.Ext(sc.file)])
		}
		if v := resp.Header.Get("Vary"); v != "Accept-Encoding" {
			t.Errorf("%s: Vary %q, want Accept-Encoding", what, v)
		}
		if sc.coding == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Errorf("%s: %v", what, err)
				continue
			}
			plain, err := io.ReadAll(zr)
			orig, _ := os.ReadFile(filepath.Join(dir, sc.file))
			if err != nil || !bytes.Equal(plain, orig) {
				t.Errorf("%s: the gzip body does not decode to the file (%v)", what, err)
			}
		}
	}
	for _, p := range []string{"/static/missing.css", "/static/subdir", "/static/.hidden", "/static/", "/static/reset.css/x", "/nothing"} {
		resp, _ := do(t, c, "GET", base+p, "", nil)
		if resp.StatusCode != 404 {
			t.Errorf("%s GET %s: %d, want 404", proto, p, resp.StatusCode)
		}
	}
}

func TestHTTP3Static(t *testing.T) {
	s := start(t)
	checkStatic(t, s.h3Client(t), "https://"+s.h3, s.static, "HTTP/3.0")
}

func TestH2(t *testing.T) {
	s := start(t)
	c := s.h2Client(t)
	base := "https://" + s.tls
	resp, body := do(t, c, "GET", base+"/baseline2?a=1&b=2", "", nil)
	checkText(t, resp, body, "HTTP/2.0", "3")
	if resp.TLS == nil || resp.TLS.NegotiatedProtocol != "h2" {
		t.Errorf("ALPN: %+v, want h2", resp.TLS)
	}
	_, port, _ := net.SplitHostPort(s.h3)
	if got, want := resp.Header.Get("Alt-Svc"), `h3=":`+port+`"; ma=86400`; got != want {
		t.Errorf("Alt-Svc %q, want %q", got, want)
	}
	resp, body = do(t, c, "POST", base+"/baseline11?a=13&b=42", "20", nil)
	checkText(t, resp, body, "HTTP/2.0", "75")
	checkStatic(t, c, base, s.static, "HTTP/2.0")

	// A client that offers http/1.1 only still gets an answer over TLS.
	var p http.Protocols
	p.SetHTTP1(true)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.roots}, Protocols: &p}
	defer tr.CloseIdleConnections()
	resp, body = do(t, &http.Client{Transport: tr}, "GET", base+"/baseline2?a=5&b=5", "", nil)
	checkText(t, resp, body, "HTTP/1.1", "10")
}

func TestHTTP1(t *testing.T) {
	s := start(t)
	c := h1Client(t)
	base := "http://" + s.h1
	resp, body := do(t, c, "GET", base+"/baseline11?a=13&b=42", "", nil)
	checkText(t, resp, body, "HTTP/1.1", "55")
	if v := resp.Header.Get("Alt-Svc"); v != "" {
		t.Errorf("Alt-Svc %q on plaintext HTTP/1.1, want none", v)
	}
	resp, body = do(t, c, "POST", base+"/baseline11?a=13&b=42", "20", nil)
	checkText(t, resp, body, "HTTP/1.1", "75")

	// A chunked body, as post_chunked.raw sends it.
	req, _ := http.NewRequest("POST", base+"/baseline11?a=13&b=42", io.MultiReader(strings.NewReader("2"), strings.NewReader("0")))
	req.ContentLength = -1
	r, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(r.Body)
	r.Body.Close()
	if len(r.Request.TransferEncoding) == 0 && r.Request.ContentLength != -1 {
		t.Error("the request was not sent chunked")
	}
	checkText(t, r, body, "HTTP/1.1", "75")
	checkStatic(t, c, base, s.static, "HTTP/1.1")
}

func TestAcceptedCodings(t *testing.T) {
	for _, tc := range []struct {
		values []string
		br, gz bool
	}{
		{nil, false, false},
		{[]string{""}, false, false},
		{[]string{"br;q=1, gzip;q=0.8"}, true, true},
		{[]string{"gzip"}, false, true},
		{[]string{"x-gzip"}, false, true},
		{[]string{"BR"}, true, false},
		{[]string{"br;q=0"}, false, false},
		{[]string{"br;q=0.000, gzip; Q=0.5"}, false, true},
		{[]string{"*"}, true, true},
		{[]string{"*;q=0, gzip"}, false, true},
		{[]string{"br;q=2"}, false, false}, // out of range
		{[]string{"br;q=abc"}, false, false},
		{[]string{"deflate", "br"}, true, false},
		{[]string{"identity"}, false, false},
	} {
		if br, gz := acceptedCodings(tc.values); br != tc.br || gz != tc.gz {
			t.Errorf("acceptedCodings(%q) = %v, %v; want %v, %v", tc.values, br, gz, tc.br, tc.gz)
		}
	}
}

func TestMain(m *testing.M) {
	// As main does: Go's table lacks woff2 without /etc/mime.types.
	mainMIME()
	os.Exit(m.Run())
}
