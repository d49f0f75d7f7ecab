package validate

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/textproto"
	"strconv"
	"strings"
	"syscall"

	"github.com/andybalholm/brotli"
)

// Limits of the response parser. A response beyond them is an error, never a hang or an
// unbounded allocation.
const (
	maxHeadBytes   = 64 << 10 // status line and header fields together
	maxHeaderCount = 200
	maxChunkLine   = 4 << 10  // a chunk-size line with its extensions
	maxBodyBytes   = 64 << 20 // a body as framed, and a body after content decoding
	maxInterim     = 8        // 1xx responses skipped before the final one
)

var (
	// errBodyTooLarge reports a body over the parser's cap.
	errBodyTooLarge = errors.New("body larger than 64 MiB")
	// errNoResponse reports a connection that ended before the first byte of a response.
	errNoResponse = errors.New("connection closed before a response")
)

// A framing says how a response's body was delimited.
type framing int

const (
	framingNone    framing = iota // no body by definition (HEAD, 1xx, 204, 304)
	framingLength                 // Content-Length
	framingChunked                // Transfer-Encoding: chunked
	framingClose                  // neither: the body ran to the end of the connection
	framingFrames                 // HTTP/2 DATA frames, ended by END_STREAM
)

func (f framing) String() string {
	switch f {
	case framingNone:
		return "no body"
	case framingLength:
		return "Content-Length"
	case framingChunked:
		return "chunked"
	case framingFrames:
		return "HTTP/2 DATA-framed"
	default:
		return "close-delimited"
	}
}

// A response is one HTTP/1.x response as read from the wire.
type response struct {
	Proto   string               // "HTTP/1.1"
	Status  int                  // 200
	Reason  string               // "OK"
	Header  textproto.MIMEHeader // canonical names
	Body    []byte               // as framed, before any content decoding
	Framing framing
}

// get returns the first value of the named field.
func (r *response) get(name string) string { return r.Header.Get(name) }

// closes reports whether the server said it closes the connection after this response.
func (r *response) closes() bool {
	if r.Framing == framingClose {
		return true
	}
	for _, v := range r.Header.Values("Connection") {
		for tok := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "close") {
				return true
			}
		}
	}
	return r.Proto == "HTTP/1.0" && !hasToken(r.Header.Values("Connection"), "keep-alive")
}

func hasToken(values []string, token string) bool {
	for _, v := range values {
		for tok := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), token) {
				return true
			}
		}
	}
	return false
}

// readResponse reads one final response to a request with the given method from r,
// skipping interim (1xx) responses. It is strict: CRLF line ends, token field names, no
// obsolete line folding, no control characters, a valid and unambiguous Content-Length or
// chunked encoding, and the limits above. It reads no further than the response's end.
func readResponse(r *bufio.Reader, method string) (*response, error) {
	for range maxInterim + 1 {
		resp, err := readOne(r, method)
		if err != nil {
			return nil, err
		}
		if resp.Status >= 200 {
			return resp, nil
		}
	}
	return nil, fmt.Errorf("more than %d interim (1xx) responses", maxInterim)
}

func readOne(r *bufio.Reader, method string) (*response, error) {
	resp, err := readHead(r)
	if err != nil {
		return nil, err
	}
	if err := readBody(r, resp, method); err != nil {
		return nil, err
	}
	return resp, nil
}

// readFinalHead reads the status line and header section of the final response, skipping
// interim (1xx) responses, and leaves the body unread: for bodies too large to hold.
func readFinalHead(r *bufio.Reader) (*response, error) {
	for range maxInterim + 1 {
		resp, err := readHead(r)
		if err != nil {
			return nil, err
		}
		if resp.Status >= 200 {
			return resp, nil
		}
	}
	return nil, fmt.Errorf("more than %d interim (1xx) responses", maxInterim)
}

// readHead reads one response's status line and header section.
func readHead(r *bufio.Reader) (*response, error) {
	if _, err := r.Peek(1); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
			return nil, fmt.Errorf("%w (%v)", errNoResponse, err)
		}
		return nil, err
	}
	budget := maxHeadBytes
	line, err := readLine(r, &budget, "status line")
	if err != nil {
		return nil, err
	}
	resp, err := parseStatusLine(line)
	if err != nil {
		return nil, err
	}
	resp.Header = textproto.MIMEHeader{}
	for n := 0; ; n++ {
		line, err := readLine(r, &budget, "header field")
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			break
		}
		if n == maxHeaderCount {
			return nil, fmt.Errorf("more than %d header fields", maxHeaderCount)
		}
		name, value, err := parseField(line)
		if err != nil {
			return nil, err
		}
		resp.Header.Add(name, value)
	}
	return resp, nil
}

// readLine reads one CRLF-terminated line, without the CRLF, charging its length to budget.
func readLine(r *bufio.Reader, budget *int, what string) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(line)+len(frag) > *budget {
			return nil, fmt.Errorf("%s: response head longer than %d bytes", what, maxHeadBytes)
		}
		line = append(line, frag...)
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			if len(line) == 0 {
				return nil, fmt.Errorf("%s: connection closed (EOF)", what)
			}
			return nil, fmt.Errorf("%s: connection closed after \"%s\"", what, printable(line, 80))
		}
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	*budget -= len(line)
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("%s \"%s\": not terminated by CRLF", what, printable(line, 80))
	}
	line = line[:len(line)-2]
	if i := bytes.IndexFunc(line, func(c rune) bool { return c == '\r' || c == 0 }); i >= 0 {
		return nil, fmt.Errorf("%s \"%s\": bare CR or NUL", what, printable(line, 80))
	}
	return line, nil
}

func parseStatusLine(line []byte) (*response, error) {
	s := string(line)
	proto, rest, ok := strings.Cut(s, " ")
	if !ok || (proto != "HTTP/1.1" && proto != "HTTP/1.0") {
		return nil, fmt.Errorf("status line \"%s\": not HTTP/1.0 or HTTP/1.1", printable(line, 80))
	}
	code, reason, _ := strings.Cut(rest, " ")
	if len(code) != 3 || code[0] < '1' || code[0] > '5' || !isDigits(code) {
		return nil, fmt.Errorf("status line \"%s\": bad status code", printable(line, 80))
	}
	status, _ := strconv.Atoi(code)
	for _, c := range []byte(reason) {
		if c < ' ' && c != '\t' || c == 0x7f {
			return nil, fmt.Errorf("status line \"%s\": control character in reason", printable(line, 80))
		}
	}
	return &response{Proto: proto, Status: status, Reason: reason}, nil
}

func parseField(line []byte) (name, value string, err error) {
	if line[0] == ' ' || line[0] == '\t' {
		return "", "", fmt.Errorf("header field \"%s\": obsolete line folding", printable(line, 80))
	}
	i := bytes.IndexByte(line, ':')
	if i <= 0 {
		return "", "", fmt.Errorf("header field \"%s\": no field name and colon", printable(line, 80))
	}
	for _, c := range line[:i] {
		if !isTchar(c) {
			return "", "", fmt.Errorf("header field \"%s\": invalid character in field name", printable(line, 80))
		}
	}
	v := bytes.Trim(line[i+1:], " \t")
	for _, c := range v {
		if c < ' ' && c != '\t' || c == 0x7f {
			return "", "", fmt.Errorf("header field \"%s\": control character in value", printable(line, 80))
		}
	}
	return textproto.CanonicalMIMEHeaderKey(string(line[:i])), string(v), nil
}

// readBody reads the body the response's framing announces.
func readBody(r *bufio.Reader, resp *response, method string) error {
	te := resp.Header.Values("Transfer-Encoding")
	cl := resp.Header.Values("Content-Length")
	if method == "HEAD" || resp.Status < 200 || resp.Status == 204 || resp.Status == 304 {
		resp.Framing = framingNone
		return nil
	}
	if len(te) > 0 {
		if len(cl) > 0 {
			return errors.New("both Transfer-Encoding and Content-Length (a server must not send both)")
		}
		if resp.Proto == "HTTP/1.0" {
			return errors.New("Transfer-Encoding in an HTTP/1.0 response")
		}
		codings := strings.ToLower(strings.Join(te, ","))
		if strings.TrimSpace(codings) != "chunked" {
			return fmt.Errorf("Transfer-Encoding %q: only chunked is understood", strings.Join(te, ", "))
		}
		body, err := readChunked(r, maxBodyBytes)
		if err != nil {
			return fmt.Errorf("chunked body: %w", err)
		}
		resp.Body, resp.Framing = body, framingChunked
		return nil
	}
	if len(cl) > 0 {
		n, err := parseContentLength(cl)
		if err != nil {
			return err
		}
		if n > maxBodyBytes {
			return fmt.Errorf("Content-Length %d: %w", n, errBodyTooLarge)
		}
		body := make([]byte, 0, min(n, 1<<20))
		body, err = readN(r, body, n)
		if err != nil {
			return fmt.Errorf("body (Content-Length %d): got %d bytes: %w", n, len(body), err)
		}
		resp.Body, resp.Framing = body, framingLength
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(r, maxBodyBytes+1))
	if err != nil {
		return fmt.Errorf("close-delimited body: got %d bytes: %w", len(body), err)
	}
	if len(body) > maxBodyBytes {
		return fmt.Errorf("close-delimited body: %w", errBodyTooLarge)
	}
	resp.Body, resp.Framing = body, framingClose
	return nil
}

// readN appends exactly n bytes from r to buf, growing it as data arrives (so a lying
// Content-Length cannot make it allocate more than was sent).
func readN(r io.Reader, buf []byte, n int64) ([]byte, error) {
	var chunk [32 << 10]byte
	for int64(len(buf)) < n {
		want := min(n-int64(len(buf)), int64(len(chunk)))
		k, err := io.ReadFull(r, chunk[:want])
		buf = append(buf, chunk[:k]...)
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = io.EOF
			}
			return buf, fmt.Errorf("connection ended early (%w)", err)
		}
	}
	return buf, nil
}

// parseContentLength returns the value of the Content-Length fields: digits only, and every
// field (and list member) the same.
func parseContentLength(values []string) (int64, error) {
	n := int64(-1)
	for _, v := range values {
		for member := range strings.SplitSeq(v, ",") {
			member = strings.TrimSpace(member)
			if member == "" || len(member) > 18 || !isDigits(member) {
				return 0, fmt.Errorf("Content-Length %q: not a decimal number", strings.Join(values, ", "))
			}
			k, _ := strconv.ParseInt(member, 10, 64)
			if n >= 0 && k != n {
				return 0, fmt.Errorf("Content-Length %q: conflicting values", strings.Join(values, ", "))
			}
			n = k
		}
	}
	return n, nil
}

// readChunked decodes a chunked body from r (RFC 9112 §7.1): chunk-size lines with optional
// extensions, chunk data each followed by CRLF, a last chunk of size 0 and a trailer section
// ended by an empty line. It never returns more than limit bytes.
func readChunked(r *bufio.Reader, limit int64) ([]byte, error) {
	var body []byte
	for {
		budget := maxChunkLine
		line, err := readLine(r, &budget, "chunk size line")
		if err != nil {
			return body, err
		}
		sizeText, _, _ := bytes.Cut(line, []byte(";"))
		sizeText = bytes.TrimRight(sizeText, " \t")
		if len(sizeText) == 0 || len(sizeText) > 16 {
			return body, fmt.Errorf("chunk size \"%s\": not 1 to 16 hex digits", printable(line, 40))
		}
		size, err := strconv.ParseUint(string(sizeText), 16, 64)
		if err != nil || !isHex(sizeText) {
			return body, fmt.Errorf("chunk size \"%s\": not hexadecimal", printable(line, 40))
		}
		if size == 0 {
			break
		}
		if size > uint64(limit) || int64(len(body))+int64(size) > limit {
			return body, errBodyTooLarge
		}
		body, err = readN(r, body, int64(len(body))+int64(size))
		if err != nil {
			return body, fmt.Errorf("chunk of %d bytes: %w", size, err)
		}
		var crlf [2]byte
		if _, err := io.ReadFull(r, crlf[:]); err != nil {
			return body, fmt.Errorf("CRLF after chunk data: connection ended early")
		}
		if crlf != [2]byte{'\r', '\n'} {
			return body, fmt.Errorf("chunk data not followed by CRLF (got \"%s\"): the chunk size does not match its data", printable(crlf[:], 8))
		}
	}
	budget := maxHeadBytes
	for {
		line, err := readLine(r, &budget, "trailer section")
		if err != nil {
			return body, err
		}
		if len(line) == 0 {
			return body, nil
		}
		if _, _, err := parseField(line); err != nil {
			return body, fmt.Errorf("trailer: %w", err)
		}
	}
}

// decodeBody undoes the response's Content-Encoding: none, identity, gzip or br. The decoded
// body is capped like a framed one.
func decodeBody(body []byte, contentEncoding string) ([]byte, error) {
	var zr io.Reader
	switch ce := strings.ToLower(strings.TrimSpace(contentEncoding)); ce {
	case "", "identity":
		return body, nil
	case "gzip", "x-gzip":
		gz, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		zr = gz
	case "br":
		zr = brotli.NewReader(bytes.NewReader(body))
	default:
		return nil, fmt.Errorf("Content-Encoding %q: not gzip or br", contentEncoding)
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.ToLower(strings.TrimSpace(contentEncoding)), err)
	}
	if len(out) > maxBodyBytes {
		return nil, fmt.Errorf("decoded body: %w", errBodyTooLarge)
	}
	return out, nil
}

func isDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func isHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return len(b) > 0
}

// isTchar reports whether c may appear in a field name (RFC 9110 §5.6.2).
func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
