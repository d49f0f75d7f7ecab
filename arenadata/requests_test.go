package arenadata_test

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/arenadata"
)

type rawWant struct {
	method, target string
	header         map[string]string // canonical key → value; "" must be absent
	body           string            // checked when bodyLen is 0
	bodyLen        int64
	chunked        bool
}

func rawRequests() map[string]rawWant {
	plain := map[string]string{"Accept-Encoding": ""}
	m := map[string]rawWant{
		"get.raw":          {method: "GET", target: "/baseline11?a=13&b=42", header: plain},
		"post_cl.raw":      {method: "POST", target: "/baseline11?a=13&b=42", header: map[string]string{"Content-Length": "2"}, body: "20"},
		"post_chunked.raw": {method: "POST", target: "/baseline11?a=13&b=42", body: "20", chunked: true},
		"pipeline.raw":     {method: "GET", target: "/pipeline", header: plain},
	}
	for n, mm := range map[int]int{1: 3, 5: 7, 10: 2, 15: 5, 25: 4, 40: 8, 50: 6} {
		m[fmt.Sprintf("json-%d.raw", n)] = rawWant{method: "GET", target: fmt.Sprintf("/json/%d?m=%d", n, mm), header: plain}
	}
	for n, mm := range map[int]int{25: 4, 40: 8, 50: 6} {
		m[fmt.Sprintf("json-gzip-%d.raw", n)] = rawWant{method: "GET", target: fmt.Sprintf("/json/%d?m=%d", n, mm),
			header: map[string]string{"Accept-Encoding": "gzip, br"}}
	}
	for name, size := range map[string]int64{"500k": 512000, "2m": 2097152, "10m": 10485760, "20m": 20971520} {
		m["upload-"+name+".raw"] = rawWant{method: "POST", target: "/upload", bodyLen: size,
			header: map[string]string{"Content-Type": "application/octet-stream", "Content-Length": fmt.Sprint(size)}}
	}
	for _, n := range []int{5, 10, 20, 35, 50} {
		m[fmt.Sprintf("async-db-%d.raw", n)] = rawWant{method: "GET", target: fmt.Sprintf("/async-db?min=10&max=50&limit=%d", n), header: plain}
	}
	m["json-get.raw"] = rawWant{method: "GET", target: "/json/50?m=1", header: plain}
	m["async-db-get.raw"] = rawWant{method: "GET", target: "/async-db?min=10&max=50&limit=50", header: plain}
	for n := 1; n <= 15; n++ {
		m[fmt.Sprintf("crud-get-%d.raw", n)] = rawWant{method: "GET", target: "/crud/items/{RAND:1:50000}", header: plain}
	}
	jsonHeader := map[string]string{"Content-Type": "application/json"}
	for n, body := range []string{
		`{"name":"Updated Kettle","category":"home","price":129,"quantity":12}`,
		`{"name":"Refurbished Monitor","category":"electronics","price":249,"quantity":3}`,
		`{"name":"Desk Lamp Pro","category":"office","price":45,"quantity":40}`,
	} {
		m[fmt.Sprintf("crud-update-%d.raw", n+1)] = rawWant{method: "PUT", target: "/crud/items/{RAND:1:50000}", header: jsonHeader, body: body}
	}
	m["crud-list-rand-1.raw"] = rawWant{method: "GET", target: "/crud/items?category=office&page={RAND:1:10}&limit=10", header: plain}
	m["crud-create-1.raw"] = rawWant{method: "POST", target: "/crud/items", header: jsonHeader,
		body: `{"id":{SEQ:100001},"name":"Bench Item","category":"office","price":25,"quantity":10}`}
	for _, name := range arenadata.StaticFiles() {
		m["static-"+name+".raw"] = rawWant{method: "GET", target: "/static/" + name,
			header: map[string]string{"Accept-Encoding": "br;q=1, gzip;q=0.8"}}
	}
	m["fortunes.raw"] = rawWant{method: "GET", target: "/fortunes", header: plain}
	m["async-delay.raw"] = rawWant{method: "GET", target: "/delay/10", header: plain}
	m["download.raw"] = rawWant{method: "GET", target: "/large/download.bin", header: plain}
	m["static-large-1m.raw"] = rawWant{method: "GET", target: "/large/page-1m.html", header: map[string]string{"Accept-Encoding": "gzip"}}
	m["static-large-2m.raw"] = rawWant{method: "GET", target: "/large/bundle-2m.js", header: map[string]string{"Accept-Encoding": "gzip"}}
	return m
}

func TestRequests(t *testing.T) {
	dir := tree(t)
	want := rawRequests()
	var files []string
	for _, f := range arenadata.Files() {
		if name, ok := strings.CutPrefix(f, arenadata.RequestsDir+"/"); ok && strings.HasSuffix(name, ".raw") {
			files = append(files, name)
		}
	}
	if len(files) != len(want) {
		t.Errorf("%d request files, want %d", len(files), len(want))
	}
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("unexpected request file")
			}
			raw := readFile(t, dir, arenadata.RequestsDir+"/"+name)
			if got, want := firstLine(raw), w.method+" "+w.target+" HTTP/1.1"; got != want {
				t.Errorf("request line %q, want %q", got, want)
			}
			// What the load tool sends: placeholders replaced by values of their padded width.
			raw = substitute(t, raw)
			head, _, found := bytes.Cut(raw, []byte("\r\n\r\n"))
			if !found {
				t.Fatalf("no CRLF CRLF after the headers in %q", firstLine(raw))
			}
			if n := bytes.Count(head, []byte("\n")); n != bytes.Count(head, []byte("\r\n")) {
				t.Errorf("bare LF in the head: %q", head)
			}

			br := bufio.NewReader(bytes.NewReader(raw))
			req, err := http.ReadRequest(br)
			if err != nil {
				t.Fatalf("http.ReadRequest: %v", err)
			}
			if target := string(substitute(t, []byte(w.target))); req.Method != w.method || req.RequestURI != target || req.Proto != "HTTP/1.1" {
				t.Errorf("request line %q %q %q, want %q %q HTTP/1.1", req.Method, req.RequestURI, req.Proto, w.method, target)
			}
			if req.Host != "localhost:8080" {
				t.Errorf("Host %q, want localhost:8080", req.Host)
			}
			for k, v := range w.header {
				if got := req.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if w.chunked != (len(req.TransferEncoding) == 1 && req.TransferEncoding[0] == "chunked") {
				t.Errorf("Transfer-Encoding %q, want chunked=%v", req.TransferEncoding, w.chunked)
			}
			body, err := io.ReadAll(req.Body)
			if err != nil {
				t.Fatalf("read body: %v", err)
			}
			if req.ContentLength >= 0 && int64(len(body)) != req.ContentLength {
				t.Errorf("body has %d bytes, Content-Length says %d", len(body), req.ContentLength)
			}
			if w.bodyLen > 0 {
				if int64(len(body)) != w.bodyLen {
					t.Errorf("body has %d bytes, want %d", len(body), w.bodyLen)
				}
				if bytes.Count(body, body[:1]) > len(body)/100 {
					t.Errorf("upload body is not pseudo-random")
				}
			} else if want := substitute(t, []byte(w.body)); !bytes.Equal(body, want) {
				t.Errorf("body %q, want %q", body, want)
			}
			if w.header["Content-Type"] == "application/json" && !json.Valid(body) {
				t.Errorf("body %q is not JSON once substituted", body)
			}
			if rest, _ := io.ReadAll(br); len(rest) != 0 {
				t.Errorf("%d bytes after the request", len(rest))
			}
		})
	}
}

// placeholderRE matches the load tools' placeholders: {RAND:min:max} and {SEQ:start}.
var placeholderRE = regexp.MustCompile(`\{(?:RAND:([0-9]+):([0-9]+)|SEQ:([0-9]+))\}`)

// substitute replaces every placeholder in b the way the load tool does, with a value
// zero-padded to the digit count of max (RAND) or start (SEQ): here min for RAND and start
// for SEQ, the values whose padding is widest.
func substitute(t *testing.T, b []byte) []byte {
	t.Helper()
	return placeholderRE.ReplaceAllFunc(b, func(m []byte) []byte {
		g := placeholderRE.FindSubmatch(m)
		value, last := g[1], g[2]
		if g[3] != nil {
			value, last = g[3], g[3]
		}
		v, err1 := strconv.Atoi(string(value))
		l, err2 := strconv.Atoi(string(last))
		if err1 != nil || err2 != nil || v > l {
			t.Fatalf("bad placeholder %s", m)
		}
		return fmt.Appendf(nil, "%0*d", len(strconv.Itoa(l)), v)
	})
}

// TestTemplates checks the crud templates' placeholders: the arena's ranges, and nothing
// else in braces that looks like one.
func TestTemplates(t *testing.T) {
	dir := tree(t)
	want := map[string][]string{
		"crud-list-rand-1.raw": {"{RAND:1:10}"},
		"crud-create-1.raw":    {"{SEQ:100001}"},
	}
	for n := 1; n <= 15; n++ {
		want[fmt.Sprintf("crud-get-%d.raw", n)] = []string{"{RAND:1:50000}"}
	}
	for n := 1; n <= 3; n++ {
		want[fmt.Sprintf("crud-update-%d.raw", n)] = []string{"{RAND:1:50000}"}
	}
	for _, f := range arenadata.Files() {
		name, ok := strings.CutPrefix(f, arenadata.RequestsDir+"/")
		if !ok || strings.HasPrefix(name, "upload-") {
			continue
		}
		raw := readFile(t, dir, f)
		var got []string
		for _, m := range placeholderRE.FindAll(raw, -1) {
			got = append(got, string(m))
		}
		if fmt.Sprint(got) != fmt.Sprint(want[name]) {
			t.Errorf("%s: placeholders %q, want %q", name, got, want[name])
		}
		if bytes.Contains(raw, []byte("{RAND")) != bytes.Contains(raw, []byte("{RAND:")) ||
			bytes.Count(raw, []byte("{SEQ")) != bytes.Count(raw, []byte("{SEQ:")) {
			t.Errorf("%s: a malformed placeholder", name)
		}
	}
}

// TestURILists checks the h2 tools' URI lists: the static files on 8443 in StaticFiles
// order, and json's seven (count, m) pairs on 8082, the same targets as json-*.raw.
func TestURILists(t *testing.T) {
	dir := tree(t)
	var static []string
	for _, name := range arenadata.StaticFiles() {
		static = append(static, "https://localhost:8443/static/"+name)
	}
	var jsons []string
	for _, n := range []int{1, 5, 10, 15, 25, 40, 50} {
		raw := readFile(t, dir, fmt.Sprintf("%s/json-%d.raw", arenadata.RequestsDir, n))
		_, target, _ := strings.Cut(strings.TrimSuffix(firstLine(raw), " HTTP/1.1"), " ")
		jsons = append(jsons, "http://localhost:8082"+target)
	}
	for name, want := range map[string][]string{arenadata.StaticH2URIs: static, arenadata.JSONH2CURIs: jsons} {
		got := string(readFile(t, dir, arenadata.RequestsDir+"/"+name))
		if w := strings.Join(want, "\n") + "\n"; got != w {
			t.Errorf("%s:\n%s\nwant\n%s", name, got, w)
		}
		for line := range strings.Lines(got) {
			if u, err := url.Parse(strings.TrimSpace(line)); err != nil || u.Host == "" || u.Path == "" {
				t.Errorf("%s: %q is not an absolute URI (%v)", name, line, err)
			}
		}
	}
}

// TestStackFiles checks the compose-stack profiles' files: the gateway list's 20 lines in
// the arena's proportions, the reads' mix, and a token authsvc's rule accepts.
func TestStackFiles(t *testing.T) {
	dir := tree(t)
	lines := func(name string) []string {
		b, err := os.ReadFile(filepath.Join(dir, "requests", name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}
	count := func(uris []string, sub string) int {
		n := 0
		for _, u := range uris {
			if strings.Contains(u, sub) {
				n++
			}
		}
		return n
	}
	gw := lines(arenadata.GatewayURIs)
	for sub, want := range map[string]int{"/static/": 6, "/baseline2?": 4, "/json/": 7, "/async-db?": 3} {
		if got := count(gw, sub); got != want {
			t.Errorf("%s has %d %s URIs, want %d", arenadata.GatewayURIs, got, sub, want)
		}
	}
	if len(gw) != 20 {
		t.Errorf("%s has %d lines, want 20", arenadata.GatewayURIs, len(gw))
	}
	reads := lines(arenadata.ProductionReads)
	if len(reads) != arenadata.ProductionReadCount {
		t.Fatalf("%s has %d lines, want %d", arenadata.ProductionReads, len(reads), arenadata.ProductionReadCount)
	}
	for sub, pct := range map[string]int{"/static/": 30, "/public/baseline?": 10, "/api/items/": 50, "/api/me": 10} {
		if got := count(reads, sub) * 100 / len(reads); got < pct-2 || got > pct+2 {
			t.Errorf("%s: %d%% %s, want about %d%%", arenadata.ProductionReads, got, sub, pct)
		}
	}
	if w := lines(arenadata.ProductionWrites); len(w) != 20 || !strings.HasSuffix(w[19], "/api/items/20") {
		t.Errorf("%s = %q, want /api/items/1..20", arenadata.ProductionWrites, w)
	}
	tok, err := os.ReadFile(filepath.Join(dir, arenadata.JWTTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(strings.TrimSpace(string(tok)), ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not three parts", tok)
	}
	mac := hmac.New(sha256.New, []byte(arenadata.JWTSecret))
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if got := base64.RawURLEncoding.EncodeToString(mac.Sum(nil)); got != parts[2] {
		t.Errorf("token signature %s, want %s", parts[2], got)
	}
	body, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if !strings.Contains(string(body), `"sub":"42"`) {
		t.Errorf("token payload %s has no sub 42", body)
	}
}
