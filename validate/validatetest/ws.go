package validatetest

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// The fixture's WebSocket (echo-ws, echo-ws-pipeline, echo-ws-limited): GET /ws on Port
// upgrades with gorilla/websocket and echoes every text and binary message with its type;
// gorilla answers pings with pongs of the same payload and a close frame with a close frame.
// echo-ws-pipeline and echo-ws-limited run echo-ws's checks, so their modes are echo-ws's.

// wsBehaviours break the checks of the WebSocket profiles, one check each, except
// ws-wrong-accept: every check upgrades first, so a bad handshake fails them all.
var wsBehaviours = map[string]string{
	"ws-wrong-accept":   "every upgrade is answered 101 with a Sec-WebSocket-Accept that is not the key's (every check fails: each upgrades first)",
	"ws-text-wrong":     `a text frame "hello" is echoed as "Hello"`,
	"ws-binary-as-text": "binary messages are echoed in text frames",
	"ws-no-pong":        "pings are ignored: no pong",
	"ws-close-no-frame": "a close frame is answered by dropping the connection, with no close frame back",
	"ws-burst-reorder":  "when more than one frame is in flight, the first two echoes are swapped",
	"ws-retire-early":   "a connection whose frames come one at a time is closed after its 9th echo",
	// Not one check each (TestMoreWaysToBreak): the checks' other upgrades may come after
	// the 10th echo too, and nothing tells them from the second upgrade of
	// "upgrade again after 10 echoes".
	"ws-reconnect-refused": "once a connection has carried 10 echoes, every later upgrade gets 503 (extra)",
}

// wsModes adds the WebSocket modes to m.
func wsModes(m map[string]string) {
	for b, d := range wsBehaviours {
		m["echo-ws."+b] = d
	}
}

// wsRetire is the echo count after which ws-reconnect-refused refuses new upgrades, and one
// more than ws-retire-early's: the echo-ws-limited load's echoes per connection.
const wsRetire = 10

// isUpgrade reports whether r asks for a WebSocket upgrade.
func isUpgrade(r *req) bool {
	return strings.EqualFold(r.get("upgrade"), "websocket")
}

// serveWS answers GET /ws on a raw connection: the upgrade and the echo loop, or what the
// mode does instead. It returns when the WebSocket connection ends; the caller closes c.
func (s *Server) serveWS(c net.Conn, br *bufio.Reader, bw *bufio.Writer, r *req) {
	if !isUpgrade(r) {
		s.write(bw, reply{status: 400, headers: []string{"Content-Type: text/plain"}, body: []byte("WebSocket upgrade expected at /ws"), close: true})
		bw.Flush()
		return
	}
	switch {
	case s.mode == "ws-wrong-accept":
		// A canned Accept: a server that does not hash the key.
		bw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
		bw.Flush()
		return
	case s.mode == "ws-reconnect-refused" && s.wsRetired.Load():
		s.write(bw, reply{status: 503, headers: []string{"Content-Type: text/plain"}, body: []byte("no WebSocket slot free"), close: true})
		bw.Flush()
		return
	}
	hr := &http.Request{Method: r.method, RequestURI: r.target, Proto: r.proto, ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Host: r.get("host")}
	for name, vs := range r.header {
		for _, v := range vs {
			hr.Header.Add(name, v)
		}
	}
	w := &hijackWriter{c: c, brw: bufio.NewReadWriter(br, bw), header: http.Header{}}
	up := websocket.Upgrader{HandshakeTimeout: 5 * time.Second, CheckOrigin: func(*http.Request) bool { return true }}
	// With ReadBufferSize 0 gorilla reads frames through br, the hijacked reader, so
	// br.Buffered() says whether more of the client's frames are already here.
	ws, err := up.Upgrade(w, hr, nil)
	if err != nil {
		if !w.hijacked {
			s.write(bw, reply{status: w.status, headers: []string{"Content-Type: text/plain"}, body: w.body.Bytes(), close: true})
			bw.Flush()
		}
		return
	}
	defer ws.Close()
	switch s.mode {
	case "ws-no-pong":
		ws.SetPingHandler(func(string) error { return nil })
	case "ws-close-no-frame":
		ws.SetCloseHandler(func(int, string) error { return nil })
	}
	s.echoWS(ws, br)
}

// echoWS echoes messages until the connection ends (or the mode ends it).
func (s *Server) echoWS(ws *websocket.Conn, br *bufio.Reader) {
	echoes := 0
	swapped := false
	inFlight := false // more than one of the client's frames was here at once
	echo := func(mt int, m []byte) bool {
		switch {
		case s.mode == "ws-text-wrong" && mt == websocket.TextMessage && string(m) == "hello":
			m = []byte("Hello")
		case s.mode == "ws-binary-as-text" && mt == websocket.BinaryMessage:
			mt = websocket.TextMessage
		}
		if ws.WriteMessage(mt, m) != nil {
			return false
		}
		echoes++
		if echoes == wsRetire {
			s.wsRetired.Store(true)
		}
		return !(s.mode == "ws-retire-early" && echoes == wsRetire-1 && !inFlight)
	}
	for {
		mt, m, err := ws.ReadMessage()
		if err != nil {
			return
		}
		if br.Buffered() > 0 {
			inFlight = true
		}
		if s.mode == "ws-burst-reorder" && !swapped && br.Buffered() > 0 {
			// Another frame is in flight: read it and answer it first.
			swapped = true
			mt2, m2, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if !echo(mt2, m2) || !echo(mt, m) {
				return
			}
			continue
		}
		if !echo(mt, m) {
			return
		}
	}
}

// A hijackWriter hands gorilla's Upgrader the raw connection and its buffers; an upgrade
// it refuses is recorded for the raw server to answer.
type hijackWriter struct {
	c        net.Conn
	brw      *bufio.ReadWriter
	header   http.Header
	status   int
	body     bytes.Buffer
	hijacked bool
}

// Header returns the headers of a refusal.
func (w *hijackWriter) Header() http.Header { return w.header }

// WriteHeader records a refusal's status.
func (w *hijackWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

// Write records a refusal's body.
func (w *hijackWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// Hijack hands over the connection with the raw server's reader and writer.
func (w *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.hijacked = true
	return w.c, w.brw, nil
}
