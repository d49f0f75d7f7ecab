// Package protocol is the arena's protocols as this harness speaks them, one unit per
// profile scheme (profile's Scheme* constants): how to reach a server that speaks
// it, for the runner's readiness probe and for validate's checks alike.
//
// Every unit is a [Protocol]: it knows its scheme and how to probe a path. What else it
// offers depends on what the checks need from it:
//
//   - [Stream] protocols (HTTP/1.1 over TCP, over TLS) hand out a connection that validate's
//     own HTTP/1.1 client writes raw bytes to (pipelining, fragments, malformed requests).
//   - [HTTP] protocols (all of the HTTP ones) hand out a net/http client that speaks exactly
//     that protocol: h2 over TLS negotiated by ALPN, h2c with prior knowledge.
//   - [GRPC] protocols hand out a gRPC client connection (google.golang.org/grpc), over h2c
//     or over TLS.
//
// The units use well-kept clients only: net/http (whose HTTP/2, golang.org/x/net/http2,
// is bundled in the standard library, prior-knowledge h2c included since Go 1.24),
// crypto/tls for ALPN, grpc-go, quic-go's HTTP/3 client and gorilla/websocket. [For] finds
// a scheme's unit; a scheme without one is an error that says so. A new protocol is one
// more value in the list [All] returns.
//
//   - [WebSocket] protocols open WebSocket connections (gorilla/websocket).
//
// TLS: by default no certificate is verified, as the load tools and the old arena's
// curl -k do not verify one; a check that the server presents the arena's certificate
// passes Config.Roots.
//
// Imports: the standard library, grpc-go, quic-go and gorilla/websocket; nothing from this
// module.
package protocol

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Schemes, as profile spells them (this package imports nothing from the module;
// a test keeps the two lists the same).
const (
	SchemeHTTP  = "http"
	SchemeHTTPS = "https"
	SchemeH2    = "h2"
	SchemeH2C   = "h2c"
	SchemeGRPC  = "grpc"
	SchemeGRPCS = "grpcs"
)

// ALPN protocol IDs (RFC 7301).
const (
	ALPNHTTP1 = "http/1.1"
	ALPNH2    = "h2"
)

// DefaultTimeout is Config.Timeout's zero value.
const DefaultTimeout = 5 * time.Second

// Config says how a unit's clients reach a server. The zero value dials with
// DefaultTimeout, offers the unit's own ALPN list and accepts any certificate.
type Config struct {
	// Timeout bounds a dial with its TLS handshake, and one request of a client.
	Timeout time.Duration
	// Roots, when set, are the certificates a TLS server's must chain to (the arena's
	// certs/server.crt), for ServerName; nil accepts any certificate.
	Roots *x509.CertPool
	// ServerName is the name sent in SNI and verified with Roots; "" means "localhost", the
	// name the arena's certificate is for.
	ServerName string
	// ALPN replaces the list a TLS unit offers; nil keeps the unit's own (none for
	// HTTP/1.1 over TLS, as wrk offers none; h2 and http/1.1 for h2 over TLS, as curl --http2
	// and h2load do). A non-nil empty list offers none.
	ALPN []string
}

func (c Config) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

// A Protocol is one scheme's unit.
type Protocol interface {
	// Scheme is the profile scheme it speaks (SchemeH2, …).
	Scheme() string
	// Describe names the protocol for people ("h2 over TLS (ALPN h2)").
	Describe() string
	// Probe sends one request for path (a URL path with query; for gRPC the full method
	// name) to addr ("127.0.0.1:8443") and returns nil when the server answered, whatever it
	// answered; an error says why it did not. It returns when ctx ends.
	Probe(ctx context.Context, addr, path string, cfg Config) error
}

// A Stream protocol is an HTTP one that carries HTTP/1.1 on a connection the caller may
// also read and write itself.
type Stream interface {
	HTTP
	// Dial connects to addr (TCP_NODELAY set, so each write leaves as its own segment) and,
	// for TLS, completes the handshake.
	Dial(ctx context.Context, addr string, cfg Config) (net.Conn, error)
}

// An HTTP protocol is spoken by a net/http client.
type HTTP interface {
	Protocol
	// Client returns a client that speaks the protocol to any address: the URL's host and
	// port are dialled, its scheme is ignored (URL below builds the right one). It keeps
	// connections alive; CloseIdleConnections ends them. The client decodes no
	// Content-Encoding and follows no redirects.
	Client(cfg Config) *http.Client
	// URL returns the URL of path on addr in the scheme Client expects.
	URL(addr, path string) string
}

// All returns every unit, one per scheme.
func All() []Protocol {
	return []Protocol{H1, H1TLS, H2, H2C, H3, WS, GRPCH2C, GRPCTLS}
}

// ErrUnknown is wrapped by For when no unit speaks the scheme.
var ErrUnknown = errors.New("no protocol unit for scheme")

// For returns the unit of the scheme.
func For(scheme string) (Protocol, error) {
	var schemes []string
	for _, p := range All() {
		if p.Scheme() == scheme {
			return p, nil
		}
		schemes = append(schemes, p.Scheme())
	}
	return nil, fmt.Errorf("%w %q (units: %s)", ErrUnknown, scheme, strings.Join(schemes, ", "))
}

// The units.
var (
	// H1 is HTTP/1.1 over TCP (8080).
	H1 Stream = h1{}
	// H1TLS is HTTP/1.1 over TLS (8081): it offers no ALPN by default, as wrk.
	H1TLS Stream = h1{tls: true}
	// H2 is h2 over TLS negotiated with ALPN (8443). Its client offers h2 and http/1.1 and
	// falls back to HTTP/1.1 when the server picks it, as curl --http2 and h2load do; a
	// check that wants h2 looks at the response's protocol.
	H2 HTTP = h2{}
	// H2C is h2c with prior knowledge (8082): the client sends the HTTP/2 preface at once,
	// with no HTTP/1.1 upgrade and no fallback.
	H2C HTTP = h2c{}
)

// dialTCP connects with TCP_NODELAY.
func dialTCP(ctx context.Context, addr string, cfg Config) (net.Conn, error) {
	d := net.Dialer{Timeout: cfg.timeout()}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	return nc, nil
}

// TLSConfig returns the client TLS configuration cfg asks for, offering alpn unless
// cfg.ALPN replaces it.
func TLSConfig(cfg Config, alpn []string) *tls.Config {
	if cfg.ALPN != nil {
		alpn = cfg.ALPN
	}
	name := cfg.ServerName
	if name == "" {
		name = "localhost"
	}
	return &tls.Config{
		ServerName:         name,
		RootCAs:            cfg.Roots,
		InsecureSkipVerify: cfg.Roots == nil, // the load tools verify nothing either
		NextProtos:         append([]string(nil), alpn...),
	}
}

// dialTLS connects and completes a TLS handshake within the timeout.
func dialTLS(ctx context.Context, addr string, cfg Config, alpn []string) (*tls.Conn, error) {
	nc, err := dialTCP(ctx, addr, cfg)
	if err != nil {
		return nil, err
	}
	tc := tls.Client(nc, TLSConfig(cfg, alpn))
	hctx, cancel := context.WithTimeout(ctx, cfg.timeout())
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		nc.Close()
		return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
	}
	return tc, nil
}

type h1 struct{ tls bool }

func (p h1) Scheme() string {
	if p.tls {
		return SchemeHTTPS
	}
	return SchemeHTTP
}

func (p h1) Describe() string {
	if p.tls {
		return "HTTP/1.1 over TLS"
	}
	return "HTTP/1.1"
}

func (p h1) Dial(ctx context.Context, addr string, cfg Config) (net.Conn, error) {
	if !p.tls {
		return dialTCP(ctx, addr, cfg)
	}
	return dialTLS(ctx, addr, cfg, nil)
}

func (p h1) Client(cfg Config) *http.Client {
	t := &http.Transport{
		DialContext:        func(ctx context.Context, _, addr string) (net.Conn, error) { return dialTCP(ctx, addr, cfg) },
		DisableCompression: true,
		Protocols:          new(http.Protocols),
	}
	t.Protocols.SetHTTP1(true)
	if p.tls {
		t.DialTLSContext = func(ctx context.Context, _, addr string) (net.Conn, error) { return p.Dial(ctx, addr, cfg) }
	}
	return client(t, cfg)
}

func (p h1) URL(addr, path string) string { return webURL(p.tls, addr, path) }

func (p h1) Probe(ctx context.Context, addr, path string, cfg Config) error {
	return probeHTTP(ctx, p, addr, path, cfg)
}

type h2 struct{}

func (h2) Scheme() string   { return SchemeH2 }
func (h2) Describe() string { return "h2 over TLS (ALPN h2)" }

func (h2) Client(cfg Config) *http.Client {
	t := &http.Transport{
		DialContext:         func(ctx context.Context, _, addr string) (net.Conn, error) { return dialTCP(ctx, addr, cfg) },
		TLSClientConfig:     TLSConfig(cfg, []string{ALPNH2, ALPNHTTP1}),
		TLSHandshakeTimeout: cfg.timeout(),
		ForceAttemptHTTP2:   true,
		DisableCompression:  true,
		Protocols:           new(http.Protocols),
	}
	t.Protocols.SetHTTP1(true)
	t.Protocols.SetHTTP2(true)
	return client(t, cfg)
}

func (h2) URL(addr, path string) string { return webURL(true, addr, path) }

func (p h2) Probe(ctx context.Context, addr, path string, cfg Config) error {
	return probeHTTP(ctx, p, addr, path, cfg)
}

type h2c struct{}

func (h2c) Scheme() string   { return SchemeH2C }
func (h2c) Describe() string { return "h2c (HTTP/2 with prior knowledge)" }

func (h2c) Client(cfg Config) *http.Client {
	t := &http.Transport{
		DialContext:        func(ctx context.Context, _, addr string) (net.Conn, error) { return dialTCP(ctx, addr, cfg) },
		DisableCompression: true,
		Protocols:          new(http.Protocols),
	}
	t.Protocols.SetUnencryptedHTTP2(true)
	return client(t, cfg)
}

func (h2c) URL(addr, path string) string { return webURL(false, addr, path) }

func (p h2c) Probe(ctx context.Context, addr, path string, cfg Config) error {
	return probeHTTP(ctx, p, addr, path, cfg)
}

func client(t http.RoundTripper, cfg Config) *http.Client {
	return &http.Client{
		Transport:     t,
		Timeout:       cfg.timeout(),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func webURL(tls bool, addr, path string) string {
	if tls {
		return "https://" + addr + path
	}
	return "http://" + addr + path
}

// probeHTTP sends GET path and reads the response; any response is an answer.
func probeHTTP(ctx context.Context, p HTTP, addr, path string, cfg Config) error {
	c := p.Client(cfg)
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL(addr, path), nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return nil
}
