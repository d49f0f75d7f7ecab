package arenadata_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/runner/arenadata"
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
	for _, name := range arenadata.StaticFiles() {
		m["static-"+name+".raw"] = rawWant{method: "GET", target: "/static/" + name,
			header: map[string]string{"Accept-Encoding": "br;q=1, gzip;q=0.8"}}
	}
	return m
}

func TestRequests(t *testing.T) {
	dir := tree(t)
	want := rawRequests()
	var files []string
	for _, f := range arenadata.Files() {
		if name, ok := strings.CutPrefix(f, arenadata.RequestsDir+"/"); ok {
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
			if req.Method != w.method || req.RequestURI != w.target || req.Proto != "HTTP/1.1" {
				t.Errorf("request line %q %q %q, want %q %q HTTP/1.1", req.Method, req.RequestURI, req.Proto, w.method, w.target)
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
			} else if string(body) != w.body {
				t.Errorf("body %q, want %q", body, w.body)
			}
			if rest, _ := io.ReadAll(br); len(rest) != 0 {
				t.Errorf("%d bytes after the request", len(rest))
			}
		})
	}
}
