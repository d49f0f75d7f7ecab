package validate

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/websocket"

	"github.com/arenabot/arenabot/validate/protocol"
)

// wsMagic is the GUID RFC 6455 appends to the key to compute Sec-WebSocket-Accept.
const wsMagic = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// wsPipeline is how many frames the pipelined check sends before reading: the
// echo-ws-pipeline load's 16 in flight.
const wsPipeline = 16

// wsLimit is how many echoes a connection of the echo-ws-limited load carries before it
// retires and a new one upgrades.
const wsLimit = 10

// wsChecks are the checks of the WebSocket profiles: the upgrade at /ws with a random key
// and the Accept that key asks for (so a canned 101 fails), text and binary echoes, ping
// answered by pong, a clean close, a burst of frames echoed in order, and a connection
// retired after 10 echoes followed by a new upgrade. The old arena never validated them.
func wsChecks(p string) []check {
	ref := func(text string) string { return contract(p, text, "RFC 6455") }
	return []check{
		{
			name:     "upgrade /ws",
			contract: ref("GET /ws with Upgrade: websocket and a random Sec-WebSocket-Key → 101 Switching Protocols with Sec-WebSocket-Accept = base64(SHA-1(key + " + wsMagic + "))"),
			run:      wsUpgradeCheck,
		},
		{
			name:     "text echo",
			contract: ref(`a masked text frame "hello" → the text frame "hello" back`),
			run: func(ctx context.Context, e *env) result {
				return wsEcho(ctx, e, websocket.TextMessage, []byte("hello"))
			},
		},
		{
			name:     "binary echo",
			contract: ref("a masked binary frame of 1,000 random bytes → the same bytes back in a binary frame"),
			run: func(ctx context.Context, e *env) result {
				b := make([]byte, 1000)
				rng := e.rand()
				for i := range b {
					b[i] = byte(rng.IntN(256))
				}
				return wsEcho(ctx, e, websocket.BinaryMessage, b)
			},
		},
		{
			name:     "ping → pong",
			contract: ref("a ping with a payload → a pong with the same payload"),
			run:      wsPingCheck,
		},
		{
			name:     "close",
			contract: ref("a close frame with status 1000 → a close frame back (the closing handshake), then the connection ends"),
			run:      wsCloseCheck,
		},
		{
			name:     fmt.Sprintf("%d frames in flight", wsPipeline),
			contract: ref(fmt.Sprintf("%d text frames sent at once (echo-ws-pipeline's load) → %d echoes, in the order sent", wsPipeline, wsPipeline)),
			run:      wsBurstCheck,
		},
		{
			name:     fmt.Sprintf("upgrade again after %d echoes", wsLimit),
			contract: ref(fmt.Sprintf("a connection that carried %d echoes closes, and a new upgrade with a new key is answered with its own Accept (echo-ws-limited's load)", wsLimit)),
			run:      wsReconnectCheck,
		},
	}
}

// wsDial upgrades a connection at the profile's path.
func wsDial(ctx context.Context, e *env) (*websocket.Conn, *http.Response, error) {
	unit, ok := e.proto.(protocol.WebSocket)
	if !ok {
		return nil, nil, fmt.Errorf("cannot check: %s opens no WebSocket (a check of the wrong profile)", e.proto.Describe())
	}
	c, resp, err := unit.DialWS(ctx, e.addr, wsPath(e), protocol.Config{Timeout: e.timeout})
	if err == nil {
		c.SetReadDeadline(time.Now().Add(e.timeout))
		c.SetWriteDeadline(time.Now().Add(e.timeout))
	}
	return c, resp, err
}

func wsPath(e *env) string {
	if e.profile.Path != "" {
		return e.profile.Path
	}
	return "/ws"
}

func wsRequest(e *env) string { return "GET " + wsPath(e) + " (WebSocket upgrade to " + e.addr + ")" }

// wsAnswer describes a failed upgrade's response.
func wsAnswer(resp *http.Response, err error) string {
	if resp == nil {
		return err.Error()
	}
	s := fmt.Sprintf("%s %s; Upgrade: %q; Sec-WebSocket-Accept: %q", resp.Proto, resp.Status, resp.Header.Get("Upgrade"), resp.Header.Get("Sec-WebSocket-Accept"))
	if resp.Request != nil {
		if key := wsKey(resp); key != "" {
			s += fmt.Sprintf(" (the key %s asks for %s)", key, wsAccept(key))
		}
	}
	return s + " (" + err.Error() + ")"
}

// wsKey is the Sec-WebSocket-Key the upgrade request sent (gorilla/websocket sets the
// header under its RFC spelling, not Go's canonical one).
func wsKey(resp *http.Response) string {
	if resp.Request == nil {
		return ""
	}
	//lint:ignore SA1008 gorilla sets the header under this spelling, which is the point
	if vs := resp.Request.Header["Sec-WebSocket-Key"]; len(vs) > 0 {
		return vs[0]
	}
	return resp.Request.Header.Get("Sec-WebSocket-Key")
}

// wsAccept is the Accept value a key asks for.
func wsAccept(key string) string {
	h := sha1.Sum([]byte(key + wsMagic))
	return base64.StdEncoding.EncodeToString(h[:])
}

func wsUpgradeCheck(ctx context.Context, e *env) result {
	const exp = "101 with the Accept of the key sent"
	c, resp, err := wsDial(ctx, e)
	if err != nil {
		return failed(wsRequest(e), exp, wsAnswer(resp, err))
	}
	defer c.Close()
	key := wsKey(resp)
	got := resp.Header.Get("Sec-WebSocket-Accept")
	want := wsAccept(key)
	if resp.StatusCode != http.StatusSwitchingProtocols || got != want {
		return failed(wsRequest(e)+", key "+key, "101 with Sec-WebSocket-Accept "+want, fmt.Sprintf("%d with %q", resp.StatusCode, got))
	}
	return passed(wsRequest(e)+", key "+key, "101 with Sec-WebSocket-Accept "+want, "101 with "+got)
}

// wsEcho sends one message and wants it back, of the same type.
func wsEcho(ctx context.Context, e *env, mt int, msg []byte) result {
	kind := map[int]string{websocket.TextMessage: "text", websocket.BinaryMessage: "binary"}[mt]
	req := fmt.Sprintf("%s, then a %s frame of %d bytes %q", wsRequest(e), kind, len(msg), printable(msg, 40))
	exp := fmt.Sprintf("a %s frame with the same %d bytes", kind, len(msg))
	c, resp, err := wsDial(ctx, e)
	if err != nil {
		return failed(req, exp, wsAnswer(resp, err))
	}
	defer c.Close()
	if err := c.WriteMessage(mt, msg); err != nil {
		return failed(req, exp, "write: "+err.Error())
	}
	gt, got, err := c.ReadMessage()
	if err != nil {
		return failed(req, exp, "read: "+err.Error())
	}
	if gt != mt || !bytes.Equal(got, msg) {
		return failed(req, exp, fmt.Sprintf("a %s frame of %d bytes %q", wsKind(gt), len(got), printable(got, 40)))
	}
	return passed(req, exp, "as expected")
}

func wsKind(mt int) string {
	if k, ok := map[int]string{websocket.TextMessage: "text", websocket.BinaryMessage: "binary"}[mt]; ok {
		return k
	}
	return "opcode " + strconv.Itoa(mt)
}

func wsPingCheck(ctx context.Context, e *env) result {
	payload := []byte("arena-ping-" + strconv.Itoa(e.rand().IntN(1e6)))
	req := fmt.Sprintf("%s, then a ping %q and a text frame \"after\"", wsRequest(e), payload)
	exp := fmt.Sprintf("a pong %q before the echo of \"after\"", payload)
	c, resp, err := wsDial(ctx, e)
	if err != nil {
		return failed(req, exp, wsAnswer(resp, err))
	}
	defer c.Close()
	var pong []byte
	pongs := 0
	c.SetPongHandler(func(s string) error { pong, pongs = []byte(s), pongs+1; return nil })
	if err := c.WriteControl(websocket.PingMessage, payload, time.Now().Add(e.timeout)); err != nil {
		return failed(req, exp, "write: "+err.Error())
	}
	if err := c.WriteMessage(websocket.TextMessage, []byte("after")); err != nil {
		return failed(req, exp, "write: "+err.Error())
	}
	if _, got, err := c.ReadMessage(); err != nil || string(got) != "after" {
		return failed(req, exp, fmt.Sprintf("read: %q, %v (pongs so far: %d)", got, err, pongs))
	}
	if pongs != 1 || !bytes.Equal(pong, payload) {
		return failed(req, exp, fmt.Sprintf("%d pongs, the last %q", pongs, pong))
	}
	return passed(req, exp, "as expected")
}

func wsCloseCheck(ctx context.Context, e *env) result {
	req := wsRequest(e) + ", then a close frame 1000 \"done\""
	const exp = "a close frame back, then the end of the connection"
	c, resp, err := wsDial(ctx, e)
	if err != nil {
		return failed(req, exp, wsAnswer(resp, err))
	}
	defer c.Close()
	if err := c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "done"), time.Now().Add(e.timeout)); err != nil {
		return failed(req, exp, "write: "+err.Error())
	}
	_, got, err := c.ReadMessage()
	var ce *websocket.CloseError
	// gorilla reports a connection that ended without a close frame as a CloseError 1006,
	// a code no close frame may carry (RFC 6455 §7.4.1).
	if !errors.As(err, &ce) || ce.Code == websocket.CloseAbnormalClosure {
		return failed(req, exp, fmt.Sprintf("no close frame: %q, %v", got, err))
	}
	return passed(req, exp, fmt.Sprintf("a close frame %d %q", ce.Code, ce.Text))
}

func wsBurstCheck(ctx context.Context, e *env) result {
	req := fmt.Sprintf("%s, then %d text frames \"m0\" … \"m%d\" in one write", wsRequest(e), wsPipeline, wsPipeline-1)
	exp := fmt.Sprintf("%d echoes in the order sent", wsPipeline)
	c, resp, err := wsDial(ctx, e)
	if err != nil {
		return failed(req, exp, wsAnswer(resp, err))
	}
	defer c.Close()
	var burst bytes.Buffer
	for i := range wsPipeline {
		burst.Write(maskedText("m" + strconv.Itoa(i)))
	}
	if _, err := c.NetConn().Write(burst.Bytes()); err != nil {
		return failed(req, exp, "write: "+err.Error())
	}
	for i := range wsPipeline {
		_, got, err := c.ReadMessage()
		if want := "m" + strconv.Itoa(i); err != nil || string(got) != want {
			return failed(req, exp, fmt.Sprintf("echo %d: %q, %v; want %q", i+1, got, err, want))
		}
	}
	return passed(req, exp, "as expected")
}

// maskedText is a client's text frame with payload s (under 126 bytes), masked with a
// fixed key, as the load's frames are.
func maskedText(s string) []byte {
	mask := [4]byte{0x12, 0x34, 0x56, 0x78}
	f := []byte{0x81, 0x80 | byte(len(s)), mask[0], mask[1], mask[2], mask[3]}
	for i := range len(s) {
		f = append(f, s[i]^mask[i%4])
	}
	return f
}

func wsReconnectCheck(ctx context.Context, e *env) result {
	req := fmt.Sprintf("%s, %d text echoes, close; then a second upgrade and one echo", wsRequest(e), wsLimit)
	exp := "every echo, and a second 101 with the Accept of its own key"
	for round := range 2 {
		c, resp, err := wsDial(ctx, e)
		if err != nil {
			return failed(req, exp, fmt.Sprintf("upgrade %d: %s", round+1, wsAnswer(resp, err)))
		}
		n := wsLimit
		if round == 1 {
			n = 1
		}
		for i := range n {
			msg := []byte("r" + strconv.Itoa(round) + "-" + strconv.Itoa(i))
			if err := c.WriteMessage(websocket.TextMessage, msg); err != nil {
				c.Close()
				return failed(req, exp, fmt.Sprintf("upgrade %d, write %d: %v", round+1, i+1, err))
			}
			if _, got, err := c.ReadMessage(); err != nil || !bytes.Equal(got, msg) {
				c.Close()
				return failed(req, exp, fmt.Sprintf("upgrade %d, echo %d: %q, %v", round+1, i+1, got, err))
			}
		}
		c.Close()
	}
	return passed(req, exp, "as expected")
}
