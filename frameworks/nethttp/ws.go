package main

import (
	"net/http"
	"time"

	"github.com/gorilla/websocket"
)

// upgrader accepts the arena's WebSocket clients, which send no Origin.
var upgrader = websocket.Upgrader{
	ReadBufferSize:  4096,
	WriteBufferSize: 4096,
	CheckOrigin:     func(*http.Request) bool { return true },
}

// wsIdle is how long an upgraded connection may stay silent.
const wsIdle = 2 * time.Minute

// wsEcho upgrades GET /ws and echoes every text and binary message, in order, with its
// type. gorilla/websocket answers pings with pongs and a close frame with a close frame.
func wsEcho(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered the client
	}
	defer c.Close()
	c.SetReadLimit(1 << 20)
	for {
		c.SetReadDeadline(time.Now().Add(wsIdle))
		mt, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		if err := c.WriteMessage(mt, msg); err != nil {
			return
		}
	}
}
