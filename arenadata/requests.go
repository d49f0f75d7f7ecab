package arenadata

import (
	"fmt"
	"io"
	"strings"
)

// The request files are raw HTTP/1.1 requests with CRLF line endings, sent as they are by
// the load tools, and the URI lists of the h2 tool (h2load -i), one absolute URI a line
// (h2load takes the scheme, host and port from its -B base URI instead).
//
// The crud templates carry the arena's placeholders, which the load tool replaces in every
// request it sends: {RAND:min:max} by a uniform random integer in [min, max], {SEQ:start}
// by the next number of a sequence from start on (distinct across the tool's threads).
// Both are zero-padded to the digit count of max (of start): {RAND:1:50000} becomes 00001 to
// 50000, {SEQ:100001} six digits. So a substituted request has the same length as every other
// one from its template, and a body's Content-Length is computed with the padded widths.
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

// asyncDBLimits are the limits of async-db-<limit>.raw:
// GET /async-db?min=10&max=50&limit=<limit>.
var asyncDBLimits = []int{5, 10, 20, 35, 50}

// Crud templates. crudItem is a random id among the first half of the seeded items.
const (
	crudItem     = "{RAND:1:50000}"
	crudGets     = 15             // crud-get-1.raw ... crud-get-15.raw
	crudCreateID = "{SEQ:100001}" // past the seeded ids, so the first run inserts
)

// crudUpdates are the bodies of crud-update-<n>.raw, in order.
var crudUpdates = []string{
	`{"name":"Updated Kettle","category":"home","price":129,"quantity":12}`,
	`{"name":"Refurbished Monitor","category":"electronics","price":249,"quantity":3}`,
	`{"name":"Desk Lamp Pro","category":"office","price":45,"quantity":40}`,
}

// crudCreate is the body of crud-create-1.raw.
const crudCreate = `{"id":` + crudCreateID + `,"name":"Bench Item","category":"office","price":25,"quantity":10}`

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
	for _, n := range asyncDBLimits {
		fs = append(fs, rawFile(fmt.Sprintf("async-db-%d.raw", n), "GET", fmt.Sprintf("/async-db?min=10&max=50&limit=%d", n), nil, ""))
	}
	// api-4 and api-16 mix get.raw with these two.
	fs = append(fs,
		rawFile("json-get.raw", "GET", "/json/50?m=1", nil, ""),
		rawFile("async-db-get.raw", "GET", "/async-db?min=10&max=50&limit=50", nil, ""))
	for i := 1; i <= crudGets; i++ {
		fs = append(fs, rawFile(fmt.Sprintf("crud-get-%d.raw", i), "GET", "/crud/items/"+crudItem, nil, ""))
	}
	for i, body := range crudUpdates {
		fs = append(fs, jsonFile(fmt.Sprintf("crud-update-%d.raw", i+1), "PUT", "/crud/items/"+crudItem, body))
	}
	// fortunes asks for one URL, as the arena's gcannon did in its URL mode.
	fs = append(fs, rawFile("fortunes.raw", "GET", "/fortunes", nil, ""))
	fs = append(fs,
		rawFile("crud-list-rand-1.raw", "GET", "/crud/items?category=office&page={RAND:1:10}&limit=10", nil, ""),
		jsonFile("crud-create-1.raw", "POST", "/crud/items", crudCreate))
	for _, name := range StaticFiles() {
		fs = append(fs, rawFile("static-"+name+".raw", "GET", "/static/"+name,
			[]string{"Accept-Encoding: " + StaticAcceptEncoding}, ""))
	}
	// The profiles of the arena's newer rows: async, 8gbit, download and static-large.
	fs = append(fs,
		rawFile("async-delay.raw", "GET", "/delay/10", nil, ""),
		file{RequestsDir + "/" + EchoBody, func(w io.Writer) error {
			return writeRandom(w, newRNG("echo-10k"), EchoBodySize)
		}},
		rawFile("download.raw", "GET", "/large/"+DownloadFile, nil, ""),
		rawFile("static-large-1m.raw", "GET", "/large/"+LargePage, []string{"Accept-Encoding: gzip"}, ""),
		rawFile("static-large-2m.raw", "GET", "/large/"+LargeBundle, []string{"Accept-Encoding: gzip"}, ""))
	var static, jsons []string
	for _, name := range StaticFiles() {
		static = append(static, "https://localhost:8443/static/"+name)
	}
	for _, p := range jsonPairs {
		jsons = append(jsons, fmt.Sprintf("http://localhost:8082/json/%d?m=%d", p[0], p[1]))
	}
	return append(fs, uriFile(StaticH2URIs, static), uriFile(JSONH2CURIs, jsons))
}

// EchoBody is the request body the 8gbit profile posts to /echo, in requests/: EchoBodySize
// pseudo-random bytes.
const (
	EchoBody     = "echo-10k.bin"
	EchoBodySize = 10240
)

// URI lists of the h2 profiles, in requests/.
const (
	StaticH2URIs = "static-h2-uris.txt" // the static files on 8443, in StaticFiles order
	JSONH2CURIs  = "json-h2c-uris.txt"  // the json pairs on 8082
)

// uriFile returns the URI list requests/name, one URI a line.
func uriFile(name string, uris []string) file {
	return file{RequestsDir + "/" + name, func(w io.Writer) error {
		_, err := io.WriteString(w, strings.Join(uris, "\n")+"\n")
		return err
	}}
}

// rawFile returns the request file requests/name.
func rawFile(name, method, target string, headers []string, body string) file {
	return file{RequestsDir + "/" + name, func(w io.Writer) error {
		writeHead(w, method, target, headers)
		_, err := io.WriteString(w, body)
		return err
	}}
}

// jsonFile returns the request file requests/name with a JSON body, whose Content-Length is
// its length after substitution.
func jsonFile(name, method, target, body string) file {
	return rawFile(name, method, target,
		[]string{"Content-Type: application/json", fmt.Sprintf("Content-Length: %d", substitutedLen(body))}, body)
}

// substitutedLen returns the length of s once the load tool has replaced its placeholders:
// {RAND:min:max} becomes as many digits as max has, {SEQ:start} as many as start has.
// Anything else, other braces included, stays as it is.
func substitutedLen(s string) int {
	n := 0
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			return n + len(s)
		}
		n += i
		s = s[i:]
		if width, size, ok := placeholder(s); ok {
			n += width
			s = s[size:]
		} else {
			n++
			s = s[1:]
		}
	}
}

// placeholder reads the placeholder s starts with: the width of its value and its own
// length.
func placeholder(s string) (width, size int, ok bool) {
	end := strings.IndexByte(s, '}')
	if end < 0 {
		return 0, 0, false
	}
	inner := s[1:end]
	var last string
	if rest, found := strings.CutPrefix(inner, "RAND:"); found {
		lo, hi, found := strings.Cut(rest, ":")
		if !found || !isDigits(lo) {
			return 0, 0, false
		}
		last = hi
	} else if rest, found := strings.CutPrefix(inner, "SEQ:"); found {
		last = rest
	} else {
		return 0, 0, false
	}
	if !isDigits(last) {
		return 0, 0, false
	}
	// the number of digits of the value: leading zeros do not count
	return max(len(strings.TrimLeft(last, "0")), 1), end + 1, true
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
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
