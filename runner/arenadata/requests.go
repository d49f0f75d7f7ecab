package arenadata

import (
	"fmt"
	"io"
)

// The request files are raw HTTP/1.1 requests with CRLF line endings, sent as they are by
// the load tools.
const host = "localhost:8080"

// Accept-Encoding values the request files carry.
const (
	StaticAcceptEncoding = "br;q=1, gzip;q=0.8" // static-*.raw
	JSONAcceptEncoding   = "gzip, br"           // json-gzip-*.raw
)

// jsonPairs are the (count, m) pairs of json-<count>.raw: GET /json/<count>?m=<m>.
var jsonPairs = [][2]int{{1, 3}, {5, 7}, {10, 2}, {15, 5}, {25, 4}, {40, 8}, {50, 6}}

// jsonCompPairs are the (count, m) pairs of json-gzip-<count>.raw.
var jsonCompPairs = [][2]int{{25, 4}, {40, 8}, {50, 6}}

// uploadSizes are the body sizes of upload-<name>.raw, by name.
var uploadSizes = []struct {
	name string
	size int
}{{"500k", 512000}, {"2m", 2097152}, {"10m", 10485760}, {"20m", 20971520}}

func requestFiles() []file {
	fs := []file{
		rawFile("get.raw", "GET", "/baseline11?a=13&b=42", nil, ""),
		rawFile("post_cl.raw", "POST", "/baseline11?a=13&b=42", []string{"Content-Type: text/plain", "Content-Length: 2"}, "20"),
		rawFile("post_chunked.raw", "POST", "/baseline11?a=13&b=42", []string{"Content-Type: text/plain", "Transfer-Encoding: chunked"}, "2\r\n20\r\n0\r\n\r\n"),
		rawFile("pipeline.raw", "GET", "/pipeline", nil, ""),
	}
	for _, p := range jsonPairs {
		fs = append(fs, rawFile(fmt.Sprintf("json-%d.raw", p[0]), "GET", fmt.Sprintf("/json/%d?m=%d", p[0], p[1]), nil, ""))
	}
	for _, p := range jsonCompPairs {
		fs = append(fs, rawFile(fmt.Sprintf("json-gzip-%d.raw", p[0]), "GET", fmt.Sprintf("/json/%d?m=%d", p[0], p[1]),
			[]string{"Accept-Encoding: " + JSONAcceptEncoding}, ""))
	}
	for _, u := range uploadSizes {
		fs = append(fs, file{RequestsDir + "/upload-" + u.name + ".raw", func(w io.Writer) error {
			writeHead(w, "POST", "/upload", []string{"Content-Type: application/octet-stream", fmt.Sprintf("Content-Length: %d", u.size)})
			return writeRandom(w, newRNG("upload-"+u.name), u.size)
		}})
	}
	for _, name := range StaticFiles() {
		fs = append(fs, rawFile("static-"+name+".raw", "GET", "/static/"+name,
			[]string{"Accept-Encoding: " + StaticAcceptEncoding}, ""))
	}
	return fs
}

// rawFile returns the request file requests/name.
func rawFile(name, method, target string, headers []string, body string) file {
	return file{RequestsDir + "/" + name, func(w io.Writer) error {
		writeHead(w, method, target, headers)
		_, err := io.WriteString(w, body)
		return err
	}}
}

// writeHead writes the request line and headers. Write errors are left to the caller's
// buffered writer, which reports them on Flush.
func writeHead(w io.Writer, method, target string, headers []string) {
	fmt.Fprintf(w, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, target, host)
	for _, h := range headers {
		fmt.Fprintf(w, "%s\r\n", h)
	}
	io.WriteString(w, "\r\n")
}

// writeRandom writes n pseudo-random bytes.
func writeRandom(w io.Writer, r *rng, n int) error {
	buf := make([]byte, 64<<10)
	for n > 0 {
		chunk := buf[:min(n, len(buf))]
		r.fill(chunk)
		if _, err := w.Write(chunk); err != nil {
			return err
		}
		n -= len(chunk)
	}
	return nil
}
