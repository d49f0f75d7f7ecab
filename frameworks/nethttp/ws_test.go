package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// TestWSEcho: /ws upgrades, echoes text and binary messages in order with their type, and
// answers a close with a close.
func TestWSEcho(t *testing.T) {
	s := httptest.NewServer((&server{}).routes(t.TempDir(), t.TempDir()))
	defer s.Close()
	c, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(s.URL, "http")+"/ws", nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	if resp.StatusCode != 101 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	msgs := []struct {
		mt   int
		data string
	}{{websocket.TextMessage, "hello"}, {websocket.BinaryMessage, "\x00\x01\xff"}, {websocket.TextMessage, "third"}}
	for _, m := range msgs {
		if err := c.WriteMessage(m.mt, []byte(m.data)); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range msgs {
		mt, got, err := c.ReadMessage()
		if err != nil || mt != m.mt || string(got) != m.data {
			t.Errorf("echo %d %q %v; want %d %q", mt, got, err, m.mt, m.data)
		}
	}
	c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bye"))
	if _, _, err := c.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Errorf("after close: %v; want the close frame back", err)
	}
}
