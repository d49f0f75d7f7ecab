package validate

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strings"

	"github.com/arenabot/arenabot/validate/protocol"
)

// isStream reports whether the protocol carries validate's own HTTP/1.1 client (HTTP/1.1,
// plain or over TLS); the others (h2, h2c) are spoken through net/http.
func isStream(p protocol.Protocol) bool {
	_, ok := p.(protocol.Stream)
	return ok
}

// authority is the Host (h2's and h3's :authority) of a request to addr: the arena's suite
// names every server localhost (curl https://localhost:8443/...), its URI lists do too, and
// so do this harness's (arenadata's) and its HTTP/1.1 requests (Host: localhost:8080). A
// server that routes by host name sees the name it was configured for: the arena's caddy
// edges serve their site for https://localhost:8443 only, and caddy answers a request for
// any other host, 127.0.0.1:8443 among them, with an empty 200 (Content-Length: 0), which
// made every static file of gateway-h3 come back empty. Only a loopback addr is named
// localhost; another keeps its address.
func authority(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return addr
	}
	return net.JoinHostPort("localhost", port)
}

// roundTrip sends the raw HTTP/1.1 request raw through the client c of an HTTP protocol:
// it is parsed back into its method, target, header fields and body and sent as the
// protocol frames it (so the checks of the HTTP/1.1 profiles that are not about HTTP/1.1's
// framing run unchanged over h2). The HTTP/1.1 connection fields are dropped and Host is
// the arena's (authority); the body is sent with its length. The response is read within
// the parser's body limit.
func roundTrip(ctx context.Context, c *http.Client, p protocol.HTTP, addr string, raw []byte) (*response, error) {
	in, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		return nil, fmt.Errorf("cannot check: the check's request does not parse: %w", err)
	}
	body, err := io.ReadAll(in.Body)
	if err != nil {
		return nil, fmt.Errorf("cannot check: the check's request body: %w", err)
	}
	var rd io.Reader
	if len(body) > 0 {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, in.Method, p.URL(addr, in.RequestURI), rd)
	if err != nil {
		return nil, fmt.Errorf("cannot check: %w", err)
	}
	req.Host = authority(addr)
	for name, vs := range in.Header {
		switch strings.ToLower(name) {
		case "host", "connection", "keep-alive", "transfer-encoding", "content-length", "te", "upgrade":
			continue
		}
		req.Header[name] = vs
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read response body: %w", err)
	}
	if len(b) > maxBodyBytes {
		return nil, errBodyTooLarge
	}
	framing := framingFrames
	if resp.ProtoMajor == 1 {
		framing = framingLength
		if resp.ContentLength < 0 {
			framing = framingChunked
		}
	}
	return &response{
		Proto:   resp.Proto,
		Status:  resp.StatusCode,
		Reason:  http.StatusText(resp.StatusCode),
		Header:  textproto.MIMEHeader(resp.Header),
		Body:    b,
		Framing: framing,
	}, nil
}
