package protocol

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/gorilla/websocket"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// Schemes of the units in this file.
const (
	SchemeH3 = "h3" // HTTP/3 over QUIC (UDP 8443)
	SchemeWS = "ws" // WebSocket: an HTTP/1.1 upgrade on 8080
)

// ALPNH3 is HTTP/3's ALPN protocol ID (RFC 9114).
const ALPNH3 = "h3"

// The units.
var (
	// H3 is HTTP/3 over QUIC, with quic-go's client (ALPN h3 only: there is no fallback).
	H3 HTTP = h3{}
	// WS is the WebSocket protocol: an HTTP/1.1 upgrade over TCP, with gorilla/websocket's
	// client, which sends a random Sec-WebSocket-Key and checks the Sec-WebSocket-Accept.
	WS WebSocket = ws{}
)

// A WebSocket protocol opens WebSocket connections.
type WebSocket interface {
	Protocol
	// DialWS upgrades a connection to addr at path; the response is the server's answer to
	// the upgrade (its 101, or what it sent instead, with the error).
	DialWS(ctx context.Context, addr, path string, cfg Config) (*websocket.Conn, *http.Response, error)
}

type h3 struct{}

func (h3) Scheme() string   { return SchemeH3 }
func (h3) Describe() string { return "HTTP/3 over QUIC (UDP, ALPN h3)" }

func (h3) Client(cfg Config) *http.Client {
	t := &http3.Transport{
		TLSClientConfig:    TLSConfig(cfg, []string{ALPNH3}),
		QUICConfig:         &quic.Config{HandshakeIdleTimeout: cfg.timeout()},
		DisableCompression: true,
	}
	return client(t, cfg)
}

func (h3) URL(addr, path string) string { return webURL(true, addr, path) }

func (p h3) Probe(ctx context.Context, addr, path string, cfg Config) error {
	return probeHTTP(ctx, p, addr, path, cfg)
}

type ws struct{}

func (ws) Scheme() string   { return SchemeWS }
func (ws) Describe() string { return "WebSocket (HTTP/1.1 upgrade)" }

func (ws) DialWS(ctx context.Context, addr, path string, cfg Config) (*websocket.Conn, *http.Response, error) {
	d := websocket.Dialer{
		NetDialContext:   func(ctx context.Context, _, addr string) (net.Conn, error) { return dialTCP(ctx, addr, cfg) },
		HandshakeTimeout: cfg.timeout(),
	}
	c, resp, err := d.DialContext(ctx, "ws://"+addr+path, nil)
	if err != nil {
		return nil, resp, fmt.Errorf("WebSocket upgrade at ws://%s%s: %w", addr, path, err)
	}
	return c, resp, nil
}

// Probe upgrades a connection at path and closes it at once.
func (p ws) Probe(ctx context.Context, addr, path string, cfg Config) error {
	c, resp, err := p.DialWS(ctx, addr, path, cfg)
	if resp != nil && resp.Body != nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
	}
	if err != nil {
		if errors.Is(err, websocket.ErrBadHandshake) && resp != nil {
			return nil // an answer, if not an upgrade: the server is up
		}
		return err
	}
	return c.Close()
}

// NegotiatedH3 reports whether resp came over HTTP/3 with ALPN h3.
func NegotiatedH3(resp *http.Response) bool {
	return resp != nil && strings.HasPrefix(resp.Proto, "HTTP/3") && (resp.TLS == nil || resp.TLS.NegotiatedProtocol == ALPNH3)
}
