package protocol_test

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/quic-go/quic-go/http3"

	"github.com/arenabot/arenabot/validate/protocol"
)

// startH3 serves echoProto over HTTP/3 on a UDP port of 127.0.0.1 with httptest's
// certificate, and returns its address.
func startH3(t *testing.T) string {
	t.Helper()
	ts := httptest.NewTLSServer(echoProto) // for its certificate only
	ts.Close()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http3.Server{Handler: echoProto, TLSConfig: http3.ConfigureTLSConfig(&tls.Config{Certificates: ts.TLS.Certificates})}
	go srv.Serve(pc)
	t.Cleanup(func() { srv.Close(); pc.Close() })
	return pc.LocalAddr().String()
}

// TestH3: the unit's client speaks HTTP/3 over QUIC with ALPN h3; its probe answers; a port
// with nothing on it is an error within the timeout.
func TestH3(t *testing.T) {
	addr := startH3(t)
	cfg := protocol.Config{Timeout: 3 * time.Second}
	body, resp, err := get(t, protocol.H3, addr, "/baseline2?a=1&b=2", cfg)
	if err != nil || body != "HTTP/3.0" || !protocol.NegotiatedH3(resp) {
		t.Fatalf("GET over h3: %q, %v (proto %v)", body, err, resp)
	}
	if err := protocol.H3.Probe(t.Context(), addr, "/missing", cfg); err != nil {
		t.Errorf("probe of a 404: %v; any answer counts", err)
	}
	pc, _ := net.ListenPacket("udp", "127.0.0.1:0")
	dead := pc.LocalAddr().String()
	pc.Close()
	start := time.Now()
	if err := protocol.H3.Probe(t.Context(), dead, "/", protocol.Config{Timeout: 500 * time.Millisecond}); err == nil {
		t.Error("probe of a closed UDP port succeeded")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("probe of a closed port took %v", d)
	}
	if h2 := startServers(t).addr[protocol.SchemeH2]; h2 != "" {
		if _, resp, _ := get(t, protocol.H2, h2, "/", protocol.Config{}); protocol.NegotiatedH3(resp) {
			t.Error("an h2 response counted as h3")
		}
	}
}

// TestWS: the unit upgrades with gorilla/websocket, echoes, and its probe counts a plain
// HTTP answer to the upgrade as the server being up; a server that answers 101 with a wrong
// Sec-WebSocket-Accept fails the upgrade.
func TestWS(t *testing.T) {
	up := websocket.Upgrader{}
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			mt, m, err := c.ReadMessage()
			if err != nil || c.WriteMessage(mt, m) != nil {
				return
			}
		}
	}))
	t.Cleanup(echo.Close)
	addr := echo.Listener.Addr().String()
	c, resp, err := protocol.WS.DialWS(t.Context(), addr, "/ws", protocol.Config{})
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("DialWS: %v", err)
	}
	c.WriteMessage(websocket.TextMessage, []byte("hello"))
	if mt, m, err := c.ReadMessage(); err != nil || mt != websocket.TextMessage || string(m) != "hello" {
		t.Errorf("echo: %d %q %v", mt, m, err)
	}
	c.Close()
	if err := protocol.WS.Probe(t.Context(), addr, "/ws", protocol.Config{}); err != nil {
		t.Errorf("probe: %v", err)
	}

	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "not a websocket") }))
	t.Cleanup(plain.Close)
	if err := protocol.WS.Probe(t.Context(), plain.Listener.Addr().String(), "/ws", protocol.Config{}); err != nil {
		t.Errorf("probe of a plain HTTP server: %v; an answer counts as up", err)
	}
	if _, _, err := protocol.WS.DialWS(t.Context(), plain.Listener.Addr().String(), "/ws", protocol.Config{}); !errors.Is(err, websocket.ErrBadHandshake) {
		t.Errorf("DialWS of a plain server: %v; want ErrBadHandshake", err)
	}

	canned := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, _ := w.(http.Hijacker)
		nc, bw, _ := h.Hijack()
		defer nc.Close()
		bw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
		bw.Flush()
	}))
	t.Cleanup(canned.Close)
	if _, _, err := protocol.WS.DialWS(t.Context(), canned.Listener.Addr().String(), "/ws", protocol.Config{}); err == nil || !strings.Contains(err.Error(), "upgrade") {
		t.Errorf("DialWS with a canned Accept: %v; want the upgrade refused", err)
	}
}
