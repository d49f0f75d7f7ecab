// Package validatetest provides a server for testing package validate: a small HTTP/1.1
// server on raw TCP that implements the contract of every profile validate checks
// (baseline, pipelined, limited-conn, json, json-comp, upload, static, and the database
// profiles async-db, api-4, api-16 and crud over an in-memory copy of the seeded items
// table and fortunes over the seeded fortune table (fortunes.go, with a directory of the
// entry's source for the template check), and /echo, /delay/{ms} and /large/ for 8gbit, async, download and static-large;
// newer.go; a WebSocket echo at /ws for the echo-ws profiles, ws.go), and the same handlers
// over TLS, h2 and h2c for the TLS, h2 and h2c profiles (protocols.go) and over HTTP/3 on
// the h2 port's number in UDP for the h3 profiles (h3.go), reading the dataset, the static files, the database seed and the TLS pair
// from an arena data directory, and that can be told to break the contract in one named way
// (a mode), so that each check can be shown to catch what it is for. The gRPC profiles have
// their own server (StartGRPC).
package validatetest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// A Server is a running fixture server on 127.0.0.1.
type Server struct {
	Addr string // "127.0.0.1:41234"
	Port int    // 41234
	// Source is the directory of the fixture entry's source (validate.Target.Source): a
	// template file for the fortunes page, or code that builds it (fortunes-no-template).
	Source string

	// The same contracts over the other protocols (protocols.go): HTTP/1.1 over TLS,
	// h2 over TLS, h2c with prior knowledge.
	TLSPort, H2Port, H2CPort int
	tlsLn                    net.Listener
	https                    []*http.Server
	h3                       *http3.Server  // HTTP/3 on H2Port in UDP (h3.go)
	h3ln                     *quic.Listener // h3-alpn-not-h3's QUIC listener instead
	h3pc                     net.PacketConn

	mode    string // the behaviour part of the mode: "get-wrong-sum"; "" for a correct server
	dataDir string
	dataset []item
	db      db // the items table and the cache, for /async-db and /crud
	ln      net.Listener
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closed  bool
	// poisoned makes the server close the next connection at once (a server that a
	// malformed request left unable to serve).
	poisoned atomic.Bool
	delayMu  sync.Mutex // held through each /delay wait under delay-serial
	// wsRetired is set once a WebSocket connection has carried wsRetire echoes
	// (ws-reconnect-refused).
	wsRetired atomic.Bool
}

type rating struct {
	Score int `json:"score"`
	Count int `json:"count"`
}

// item is one dataset item, as the entries define it.
type item struct {
	ID       int      `json:"id"`
	Name     string   `json:"name"`
	Category string   `json:"category"`
	Price    int      `json:"price"`
	Quantity int      `json:"quantity"`
	Active   bool     `json:"active"`
	Tags     []string `json:"tags"`
	Rating   rating   `json:"rating"`
}

type pricedItem struct {
	item
	Total int `json:"total"`
}

// Start starts a server for the test on a random port of 127.0.0.1, serving dataDir, and
// closes it when the test ends. mode is "" for a server that fulfils every contract, or
// one of Modes ("baseline.get-wrong-sum") to break one check.
func Start(t testing.TB, dataDir, mode string) *Server {
	t.Helper()
	s, err := New(dataDir, mode)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// New starts a server; the caller must Close it.
func New(dataDir, mode string) (*Server, error) {
	behaviour := ""
	if mode != "" {
		if _, ok := modes[mode]; !ok {
			return nil, fmt.Errorf("validatetest: unknown mode %q (see Modes)", mode)
		}
		_, behaviour, _ = strings.Cut(mode, ".")
	}
	b, err := os.ReadFile(filepath.Join(dataDir, "dataset.json"))
	if err != nil {
		return nil, fmt.Errorf("validatetest: %w", err)
	}
	var ds []item
	if err := json.Unmarshal(b, &ds); err != nil {
		return nil, fmt.Errorf("validatetest: dataset: %w", err)
	}
	// The seeded table is read before the server listens (once per directory), so that no
	// check's timeout pays for reading 100,000 rows.
	if _, err := os.Stat(filepath.Join(dataDir, "db", "seed.sql")); err == nil {
		if _, err := loadTable(dataDir); err != nil {
			return nil, fmt.Errorf("validatetest: %w", err)
		}
		loadFortunes(dataDir) // read now too; /fortunes answers 503 for a seed without them
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("validatetest: %w", err)
	}
	s := &Server{
		Addr:    ln.Addr().String(),
		Port:    ln.Addr().(*net.TCPAddr).Port,
		mode:    behaviour,
		dataDir: dataDir,
		dataset: ds,
		ln:      ln,
		conns:   map[net.Conn]struct{}{},
	}
	if err := s.writeSource(); err != nil {
		s.Close()
		return nil, fmt.Errorf("validatetest: %w", err)
	}
	if err := s.startProtocols(); err != nil {
		s.Close()
		return nil, fmt.Errorf("validatetest: %w", err)
	}
	s.wg.Go(func() { s.acceptOn(s.ln) })
	return s, nil
}

// Close stops the server, closes its connections and waits for its goroutines.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.ln.Close()
	s.closeProtocols()
	s.wg.Wait()
	if s.Source != "" {
		os.RemoveAll(s.Source)
	}
}

func (s *Server) acceptOn(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if s.poisoned.CompareAndSwap(true, false) {
			c.Close()
			continue
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Go(func() {
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
			s.serve(c)
		})
	}
}

// Limits of the fixture's request parser.
const (
	maxHead = 16 << 10 // a larger header section gets 431
	maxBody = 64 << 20 // a larger body gets 413
	keepMax = 64 << 10 // bodies up to this size are kept; larger ones are only counted
)

// countingReader records where each read from the connection ended, so the parser can
// tell how a request was split into TCP segments.
type countingReader struct {
	r     io.Reader
	total int64
	ends  []int64 // cumulative end offset of each read that returned data
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.total += int64(n)
		c.ends = append(c.ends, c.total)
	}
	return n, err
}

// readOf returns the index of the read that delivered the byte at offset off.
func (c *countingReader) readOf(off int64) int {
	return sort.Search(len(c.ends), func(i int) bool { return c.ends[i] > off })
}

// A req is one parsed request with what the modes need to know about how it arrived.
type req struct {
	method, target, proto string
	path, query           string
	header                map[string][]string // lower-case names
	body                  []byte              // nil when longer than keepMax
	bodyLen               int64
	chunked               bool
	index                 int // 0 for the first request on the connection

	lineSplit    bool // the request line arrived in more than one read
	headersSplit bool // the header section ended in a later read than the request line
	bodyLate     bool // the body arrived whole in a read after the header section
	bodySplit    bool // the body arrived in more than one read
	buffered     int  // bytes already buffered after this request
}

func (r *req) get(name string) string {
	if vs := r.header[name]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

func (r *req) wantsClose() bool {
	c := strings.ToLower(r.get("connection"))
	return strings.Contains(c, "close") || r.proto == "HTTP/1.0" && !strings.Contains(c, "keep-alive")
}

// A reply is a response to write.
type reply struct {
	status  int
	headers []string // "Name: value"
	body    []byte
	chunked bool // send the body in chunks instead of with a Content-Length
	close   bool // close the connection after it
	// badLength, when set, sends a Content-Length one larger than the body.
	badLength bool
	// noLength, when set, sends neither Content-Length nor chunked: the body ends when the
	// connection closes.
	noLength bool
	// file, when set, is sent as the body with its size as the Content-Length, streamed
	// from disk (the 170 MiB download); corrupt flips its middle byte.
	file    string
	corrupt bool
}

// A parseError is a request the server rejects: its status, and the mode-specific handling.
type parseError struct {
	status int
	msg    string
	kind   string // "bad-cl", "bad-header", "bare-cr", "nul", "fold", "huge", "junk", ""
}

func (e *parseError) Error() string { return e.msg }

func (s *Server) serve(c net.Conn) {
	cr := &countingReader{r: c}
	br := bufio.NewReaderSize(cr, 64<<10)
	bw := bufio.NewWriterSize(c, 64<<10)
	pipelineAnswers := 0
	for i := 0; ; i++ {
		r, early, err := s.readRequest(br, cr, i)
		if err != nil {
			var pe *parseError
			if !errors.As(err, &pe) {
				return // the client went away
			}
			s.reject(c, br, bw, pe)
			return
		}
		if early != nil {
			s.write(bw, *early)
			bw.Flush()
			return
		}
		batch := []*req{r}
		if s.mode == "pipeline-reorder" {
			for br.Buffered() > 0 {
				next, _, err := s.readRequest(br, cr, i+len(batch))
				if err != nil {
					break
				}
				batch = append(batch, next)
			}
			i += len(batch) - 1
			// Answer the /baseline requests first: the order the client cannot see in a
			// batch of identical requests, but can in a mixed one.
			slices.SortStableFunc(batch, func(a, b *req) int {
				return boolInt(!strings.HasPrefix(a.path, "/baseline")) - boolInt(!strings.HasPrefix(b.path, "/baseline"))
			})
		}
		if r.path == "/ws" && len(batch) == 1 {
			bw.Flush()
			s.serveWS(c, br, bw, r)
			return
		}
		for _, r := range batch {
			rep := s.handle(r)
			if r.path == "/pipeline" {
				pipelineAnswers++
				if s.mode == "pipeline-burst" && pipelineAnswers > 8 {
					bw.Flush()
					return
				}
			}
			if r.wantsClose() {
				rep.close = true
			}
			switch {
			case s.mode == "keepalive-close":
				rep.close = true
			case s.mode == "reconnect" && r.index == 4:
				rep.close = true
			}
			s.write(bw, rep)
			if rep.close {
				bw.Flush()
				return
			}
		}
		if err := bw.Flush(); err != nil {
			return
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// reject answers a request the parser refused, or misbehaves as the mode says.
func (s *Server) reject(c net.Conn, br *bufio.Reader, bw *bufio.Writer, pe *parseError) {
	switch {
	case s.mode == "malformed-bare-cr" && pe.kind == "bare-cr":
		s.write(bw, reply{status: 500, body: []byte("internal error"), close: true})
	case s.mode == "malformed-nul" && pe.kind == "nul":
		s.poisoned.Store(true) // closes without an answer, and refuses the next connection
		return
	case s.mode == "malformed-fold" && pe.kind == "fold":
		s.write(bw, reply{status: 200, headers: []string{"Content-Type: text/plain"}, body: []byte("folded"), close: true})
	case s.mode == "malformed-huge" && pe.kind == "huge":
		io.Copy(io.Discard, br) // hold the connection without answering until the client leaves
		return
	case s.mode == "malformed-junk" && pe.kind == "junk":
		s.write(bw, reply{status: 200, close: true})
	default:
		s.write(bw, reply{status: pe.status, headers: []string{"Content-Type: text/plain"}, body: []byte(pe.msg), close: true})
	}
	bw.Flush()
}

// readRequest reads and parses one request. For a request the mode answers before reading
// its body, it returns that reply as early.
func (s *Server) readRequest(br *bufio.Reader, cr *countingReader, index int) (r *req, early *reply, err error) {
	consumed := func() int64 { return cr.total - int64(br.Buffered()) }
	lineStart := consumed()
	budget := maxHead
	line, err := readLine(br, &budget)
	if err != nil {
		return nil, nil, err
	}
	lineEnd := consumed()
	r = &req{header: map[string][]string{}, index: index}
	parts := strings.Split(string(line), " ")
	if len(parts) != 3 || !isToken(parts[0]) || !strings.HasPrefix(parts[1], "/") ||
		(parts[2] != "HTTP/1.1" && parts[2] != "HTTP/1.0") {
		return nil, nil, &parseError{400, "bad request line", "junk"}
	}
	r.method, r.target, r.proto = parts[0], parts[1], parts[2]
	r.path, r.query, _ = strings.Cut(r.target, "?")
	var folded bool
	for {
		line, err := readLine(br, &budget)
		if err != nil {
			return nil, nil, err
		}
		if len(line) == 0 {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			if s.mode == "malformed-fold" {
				folded = true
				continue
			}
			return nil, nil, &parseError{400, "obsolete line folding", "fold"}
		}
		name, value, ok := strings.Cut(string(line), ":")
		if !ok || !isToken(name) {
			if s.mode == "malformed-bad-header" && ok && isToken(strings.TrimRight(name, " ")) {
				name = strings.TrimRight(name, " ")
			} else {
				return nil, nil, &parseError{400, "bad header field", "bad-header"}
			}
		}
		name = strings.ToLower(name)
		r.header[name] = append(r.header[name], strings.Trim(value, " \t"))
	}
	headersEnd := consumed()
	if folded {
		return nil, nil, &parseError{400, "obsolete line folding", "fold"}
	}
	if r.proto == "HTTP/1.1" && len(r.header["host"]) != 1 {
		return nil, nil, &parseError{400, "missing or repeated Host", ""}
	}
	r.lineSplit = cr.readOf(lineStart) != cr.readOf(lineEnd-1)
	r.headersSplit = cr.readOf(headersEnd-1) != cr.readOf(lineEnd-1)

	te, cl := r.header["transfer-encoding"], r.header["content-length"]
	var n int64
	switch {
	case len(te) > 0 && len(cl) > 0:
		return nil, nil, &parseError{400, "both Transfer-Encoding and Content-Length", ""}
	case len(te) > 0:
		if len(te) != 1 || !strings.EqualFold(te[0], "chunked") {
			return nil, nil, &parseError{501, "unsupported transfer coding", ""}
		}
		r.chunked = true
	case len(cl) > 0:
		if len(cl) != 1 || !isDigits(cl[0]) || len(cl[0]) > 18 {
			if s.mode != "malformed-bad-cl" {
				return nil, nil, &parseError{400, "bad Content-Length", "bad-cl"}
			}
			break // treat it as no body
		}
		n, _ = strconv.ParseInt(cl[0], 10, 64)
		if n > maxBody {
			return nil, nil, &parseError{413, "body too large", ""}
		}
	}
	if r.path == "/upload" && !r.chunked {
		switch {
		case s.mode == "upload-10m" && n == 10485760:
			// Echo the Content-Length without reading the body.
			return nil, &reply{status: 200, headers: []string{"Content-Type: text/plain"}, body: []byte(strconv.FormatInt(n, 10)), close: true}, nil
		case s.mode == "upload-20m" && n == 20971520:
			return nil, &reply{status: 413, headers: []string{"Content-Type: text/plain"}, body: []byte("request body too large"), close: true}, nil
		}
	}
	bodyStart := consumed()
	keep := int64(keepMax)
	if r.path == "/echo" {
		keep = maxBody // echoed whole
	}
	if r.chunked {
		r.body, r.bodyLen, err = readChunked(br, keep)
	} else if n > 0 {
		r.body, r.bodyLen, err = readBody(br, n, keep)
	}
	if err != nil {
		return nil, nil, err
	}
	bodyEnd := consumed()
	if bodyEnd > bodyStart {
		first, last := cr.readOf(bodyStart), cr.readOf(bodyEnd-1)
		r.bodyLate = first > cr.readOf(headersEnd-1) && first == last
		r.bodySplit = last > first
	}
	r.buffered = br.Buffered()
	return r, nil, nil
}

// readLine reads a CRLF-terminated line within budget and rejects the characters the
// arena's noise requests carry.
func readLine(br *bufio.Reader, budget *int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > *budget {
			return nil, &parseError{431, "request header fields too large", "huge"}
		}
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
	*budget -= len(line)
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, &parseError{400, "line not ended by CRLF", "junk"}
	}
	line = line[:len(line)-2]
	if bytes.IndexByte(line, 0) >= 0 {
		return nil, &parseError{400, "NUL in the request", "nul"}
	}
	if bytes.IndexByte(line, '\r') >= 0 {
		return nil, &parseError{400, "bare CR in the request", "bare-cr"}
	}
	for _, c := range line {
		if c < ' ' && c != '\t' || c == 0x7f {
			return nil, &parseError{400, "control character in the request", "junk"}
		}
	}
	return line, nil
}

// readBody reads n bytes, keeping them only when they are at most keep.
func readBody(br *bufio.Reader, n, keep int64) ([]byte, int64, error) {
	if n <= keep {
		b := make([]byte, n)
		_, err := io.ReadFull(br, b)
		return b, n, err
	}
	got, err := io.CopyN(io.Discard, br, n)
	return nil, got, err
}

func readChunked(br *bufio.Reader, keep int64) ([]byte, int64, error) {
	var kept []byte
	var total int64
	for {
		budget := 4096
		line, err := readLine(br, &budget)
		if err != nil {
			return nil, 0, err
		}
		size, _, _ := strings.Cut(string(line), ";")
		n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		if err != nil || n < 0 {
			return nil, 0, &parseError{400, "bad chunk size", ""}
		}
		if n == 0 {
			break
		}
		if total+n > maxBody {
			return nil, 0, &parseError{413, "body too large", ""}
		}
		if total+n <= keep {
			b := make([]byte, n)
			if _, err := io.ReadFull(br, b); err != nil {
				return nil, 0, err
			}
			kept = append(kept, b...)
		} else {
			if _, err := io.CopyN(io.Discard, br, n); err != nil {
				return nil, 0, err
			}
			kept = nil
		}
		total += n
		var crlf [2]byte
		if _, err := io.ReadFull(br, crlf[:]); err != nil {
			return nil, 0, err
		}
		if crlf != [2]byte{'\r', '\n'} {
			return nil, 0, &parseError{400, "chunk not followed by CRLF", ""}
		}
	}
	for { // trailer section
		budget := maxHead
		line, err := readLine(br, &budget)
		if err != nil {
			return nil, 0, err
		}
		if len(line) == 0 {
			break
		}
	}
	if total > keep {
		kept = nil
	}
	return kept, total, nil
}

var statusText = map[int]string{
	200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
	413: "Content Too Large", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
	501: "Not Implemented", 503: "Service Unavailable",
}

func (s *Server) write(bw *bufio.Writer, rep reply) {
	text, ok := statusText[rep.status]
	if !ok {
		text = http.StatusText(rep.status)
	}
	fmt.Fprintf(bw, "HTTP/1.1 %d %s\r\n", rep.status, text)
	for _, h := range rep.headers {
		bw.WriteString(h + "\r\n")
	}
	if rep.close {
		bw.WriteString("Connection: close\r\n")
	}
	if rep.chunked {
		bw.WriteString("Transfer-Encoding: chunked\r\n\r\n")
		half := len(rep.body) / 2
		for _, part := range [][]byte{rep.body[:half], rep.body[half:]} {
			if len(part) > 0 {
				fmt.Fprintf(bw, "%x\r\n", len(part))
				bw.Write(part)
				bw.WriteString("\r\n")
			}
		}
		bw.WriteString("0\r\n\r\n")
		return
	}
	if rep.noLength {
		bw.WriteString("\r\n")
		bw.Write(rep.body)
		return
	}
	if rep.file != "" {
		writeFile(bw, rep)
		return
	}
	n := len(rep.body)
	if rep.badLength {
		n++
	}
	fmt.Fprintf(bw, "Content-Length: %d\r\n\r\n", n)
	bw.Write(rep.body)
}

// handle answers one well-formed request.
func (s *Server) handle(r *req) reply {
	switch {
	case strings.HasPrefix(r.path, "/baseline"):
		return s.baseline(r)
	case r.path == "/pipeline":
		if r.method != "GET" {
			return reply{status: 405, headers: []string{"Allow: GET"}}
		}
		body := "ok"
		if s.mode == "pipeline-wrong-body" && r.index == 0 && r.buffered == 0 {
			body = "OK"
		}
		ct := "text/plain"
		if s.mode == "pipeline-content-type" {
			ct = "text/html"
		}
		return reply{status: 200, headers: []string{"Content-Type: " + ct}, body: []byte(body)}
	case strings.HasPrefix(r.path, "/json/"):
		return s.items(r)
	case r.path == "/upload":
		return s.upload(r)
	case strings.HasPrefix(r.path, "/static/"):
		return s.static(r)
	case r.path == "/async-db":
		return s.asyncDB(r)
	case r.path == "/crud/items" || strings.HasPrefix(r.path, "/crud/items/"):
		return s.crud(r)
	case r.path == "/fortunes":
		return s.fortunes(r)
	case r.path == "/echo":
		return s.echo(r)
	case strings.HasPrefix(r.path, "/delay/"):
		return s.delay(r)
	case strings.HasPrefix(r.path, "/large/"):
		return s.large(r)
	}
	return reply{status: 404, headers: []string{"Content-Type: text/plain"}, body: []byte("not found")}
}

// query returns the query's values in order, as name/value pairs.
func query(q string) [][2]string {
	var kv [][2]string
	for part := range strings.SplitSeq(q, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		kv = append(kv, [2]string{k, v})
	}
	return kv
}

func queryValue(q, name string) string {
	for _, kv := range query(q) {
		if kv[0] == name {
			return kv[1]
		}
	}
	return ""
}

func (s *Server) baseline(r *req) reply {
	if r.method != "GET" && r.method != "POST" {
		return reply{status: 405, headers: []string{"Allow: GET, POST"}}
	}
	bad := func(msg string) reply {
		return reply{status: 400, headers: []string{"Content-Type: text/plain"}, body: []byte(msg)}
	}
	if r.lineSplit && s.mode == "frag-line" || r.headersSplit && s.mode == "frag-headers" ||
		r.bodyLate && s.mode == "frag-body" || r.bodySplit && s.mode == "frag-body-split" {
		return bad("incomplete request")
	}
	var sum int64
	for _, kv := range query(r.query) {
		if n, err := strconv.ParseInt(kv[1], 10, 64); err == nil {
			sum += n
		}
	}
	a, _ := strconv.Atoi(queryValue(r.query, "a"))
	ct := "text/plain"
	if r.method == "GET" {
		switch {
		case s.mode == "probe-status" && r.query == "a=1&b=1":
			return reply{status: 503, body: []byte("not ready")}
		case s.mode == "get-wrong-sum" && r.query == "a=13&b=42":
			sum++
		case s.mode == "get-random-wrong-sum" && a >= 100:
			sum++
		}
		if s.mode == "get-content-type" {
			ct = "text/html"
		}
	} else {
		body := strings.TrimSpace(string(r.body))
		var n int64
		if body != "" {
			var err error
			if n, err = strconv.ParseInt(body, 10, 64); err != nil {
				return bad("body is not an integer")
			}
		}
		switch {
		case s.mode == "post-cl-wrong-sum" && !r.chunked && a == 13 && body == "20",
			s.mode == "post-chunked-wrong-sum" && r.chunked && a == 13:
			n = 0 // the body ignored
		case s.mode == "post-random-wrong-sum" && n >= 100:
			n++
		}
		sum += n
		if s.mode == "post-content-type" {
			ct = "text/html"
		}
	}
	rep := reply{status: 200, headers: []string{"Content-Type: " + ct}, body: []byte(strconv.FormatInt(sum, 10))}
	if s.mode == "framing" && r.wantsClose() {
		rep.badLength = true
	}
	if s.mode == "no-length" {
		rep.noLength, rep.close = true, true
	}
	return rep
}

// encoding picks the response coding for an Accept-Encoding value: br, then gzip, when
// accepted with a q above 0; "" for none.
func encoding(acceptEncoding string) string {
	q := map[string]bool{}
	for part := range strings.SplitSeq(acceptEncoding, ",") {
		name, params, _ := strings.Cut(part, ";")
		name = strings.ToLower(strings.TrimSpace(name))
		ok := true
		if v, found := strings.CutPrefix(strings.TrimSpace(params), "q="); found {
			f, err := strconv.ParseFloat(v, 64)
			ok = err == nil && f > 0
		}
		q[name] = ok
	}
	switch {
	case q["br"]:
		return "br"
	case q["gzip"]:
		return "gzip"
	}
	return ""
}

func compress(coding string, b []byte) []byte {
	var buf bytes.Buffer
	switch coding {
	case "gzip":
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
	case "br":
		zw := brotli.NewWriterLevel(&buf, brotli.DefaultCompression)
		zw.Write(b)
		zw.Close()
	default:
		return b
	}
	return buf.Bytes()
}

func (s *Server) items(r *req) reply {
	if r.method != "GET" {
		return reply{status: 405, headers: []string{"Allow: GET"}}
	}
	if s.mode == "probe-status" && r.path == "/json/1" && (r.query == "" || r.query == "m=1") {
		return reply{status: 500, body: []byte("not ready")}
	}
	n, err := strconv.Atoi(strings.TrimPrefix(r.path, "/json/"))
	if err != nil || n < 0 {
		return reply{status: 400, body: []byte("count must be a non-negative integer")}
	}
	m := 1
	if v := queryValue(r.query, "m"); v != "" {
		if m, err = strconv.Atoi(v); err != nil {
			return reply{status: 400, body: []byte("m must be an integer")}
		}
	}
	n = min(n, len(s.dataset))
	out := struct {
		Items []pricedItem `json:"items"`
		Count int          `json:"count"`
	}{Items: make([]pricedItem, n), Count: n}
	for i, it := range s.dataset[:n] {
		out.Items[i] = pricedItem{item: it, Total: it.Price * it.Quantity * m}
	}
	ae := r.get("accept-encoding")
	switch {
	case s.mode == "json-pairs-wrong-total" && n == 40 && m == 8:
		out.Items[39].Total++
	case s.mode == "json-random-wrong" && m >= 11 && n > 0:
		out.Items[0].Tags = nil
	case s.mode == "comp-random-wrong" && m >= 11 && ae != "" && n > 0:
		out.Items[n-1].Total++
	}
	body, _ := json.Marshal(out)
	ct := "application/json"
	if s.mode == "json-content-type" {
		ct = "text/plain"
	}
	coding := encoding(ae)
	switch {
	case s.mode == "json-compress-unasked" && ae == "":
		coding = "gzip"
	case s.mode == "comp-pairs-uncompressed" && ae == "gzip, br" && m <= 8:
		coding = ""
	case s.mode == "comp-gzip-only-br" && ae == "gzip":
		coding = "br"
	}
	rep := reply{status: 200, body: body}
	if coding != "" {
		rep.body = compress(coding, body)
		rep.chunked = true // as compressing middleware does
		rep.headers = append(rep.headers, "Content-Encoding: "+coding)
		if s.mode == "comp-content-type" {
			ct = "text/plain"
		}
	}
	rep.headers = append(rep.headers, "Content-Type: "+ct)
	if s.mode != "comp-no-vary" {
		rep.headers = append(rep.headers, "Vary: Accept-Encoding")
	}
	return rep
}

func (s *Server) upload(r *req) reply {
	if r.method != "POST" {
		return reply{status: 405, headers: []string{"Allow: POST"}}
	}
	n := r.bodyLen
	switch {
	case s.mode == "upload-17" && n == 17, s.mode == "upload-48" && n == 48,
		s.mode == "upload-2m" && n == 2097152:
		n--
	case s.mode == "upload-500k" && n == 512000:
		n++
	case s.mode == "upload-chunked" && r.chunked:
		n = 0
	}
	ct := "text/plain"
	if s.mode == "upload-content-type" {
		ct = "text/html"
	}
	return reply{status: 200, headers: []string{"Content-Type: " + ct}, body: []byte(strconv.FormatInt(n, 10))}
}

// staticTypes are the fixture's Content-Types, with parameters where servers commonly add
// them.
var staticTypes = map[string]string{
	".css":   "text/css; charset=utf-8",
	".js":    "text/javascript; charset=utf-8",
	".json":  "application/json",
	".html":  "text/html; charset=utf-8",
	".svg":   "image/svg+xml",
	".woff2": "font/woff2",
	".webp":  "image/webp",
}

func (s *Server) static(r *req) reply {
	if r.method != "GET" {
		return reply{status: 405, headers: []string{"Allow: GET"}}
	}
	name := strings.TrimPrefix(r.path, "/static/")
	ae := r.get("accept-encoding")
	notFound := reply{status: 404, headers: []string{"Content-Type: text/plain"}, body: []byte("not found")}
	if s.mode == "static-404" {
		notFound = reply{status: 200, headers: []string{"Content-Type: text/html"}}
	}
	if name == "" || strings.ContainsAny(name, "/\\") || strings.HasPrefix(name, ".") {
		return notFound
	}
	file := filepath.Join(s.dataDir, "static", name)
	if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() {
		return notFound
	}
	if (s.mode == "probe-status" || s.mode == "static-probe-status") && name == "reset.css" && r.index == 0 && ae == "" {
		return reply{status: 503, body: []byte("not ready")}
	}
	ct := staticTypes[path.Ext(name)]
	if ct == "" {
		ct = "application/octet-stream"
	}
	if s.mode == "static-content-type" && ae == "" && path.Ext(name) == ".woff2" {
		ct = "application/octet-stream"
	}
	if s.mode == "static-css-type" && ae == "" && name == "reset.css" {
		ct = "text/plain"
	}
	rep := reply{status: 200, headers: []string{"Content-Type: " + ct}}
	if s.mode != "static-no-vary" {
		rep.headers = append(rep.headers, "Vary: Accept-Encoding")
	}
	if s.mode != "static-uncompressed" {
		// Serve the precompressed twin the client accepts, as a production server's
		// precompressed-file feature does: br before gzip.
		for _, coding := range []string{"br", "gzip"} {
			if !acceptsCoding(ae, coding) {
				continue
			}
			ext := map[string]string{"br": ".br", "gzip": ".gz"}[coding]
			twin, err := os.ReadFile(file + ext)
			if err != nil {
				continue
			}
			label := coding
			if s.mode == "static-mislabel" && coding == "br" {
				twin, _ = os.ReadFile(file + ".gz")
			}
			rep.headers = append(rep.headers, "Content-Encoding: "+label)
			rep.body = twin
			return rep
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return reply{status: 500}
	}
	if s.mode == "static-identity" && ae == "" && name == "hero.webp" {
		b = slices.Clone(b)
		b[len(b)-1] ^= 0xff
	}
	rep.body = b
	return rep
}

// acceptsCoding reports whether the Accept-Encoding value accepts coding with a q above 0.
func acceptsCoding(acceptEncoding, coding string) bool {
	for part := range strings.SplitSeq(acceptEncoding, ",") {
		name, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(name), coding) {
			continue
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			f, err := strconv.ParseFloat(v, 64)
			return err == nil && f > 0
		}
		return true
	}
	return false
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}
