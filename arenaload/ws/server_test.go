package ws

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// echoServer is a gorilla/websocket echo server that counts what it does.
type echoServer struct {
	upgrades, echoes, active atomic.Int64
	// transform, when set, changes each payload before it is echoed.
	transform func([]byte) []byte
}

var upgrader = websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 4096}

func (s *echoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.active.Add(1)
	defer s.active.Add(-1)
	if r.URL.Path == "/stats" {
		_ = json.NewEncoder(w).Encode(map[string]int64{
			"upgrades": s.upgrades.Load(), "echoes": s.echoes.Load(), "active": s.active.Load() - 1,
		})
		return
	}
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	s.upgrades.Add(1)
	defer c.Close()
	c.SetReadLimit(maxMessage)
	for {
		mt, p, err := c.ReadMessage()
		if err != nil {
			return
		}
		if s.transform != nil {
			p = s.transform(p)
		}
		if err := c.WriteMessage(mt, p); err != nil {
			return
		}
		s.echoes.Add(1)
	}
}

// settle waits until no handler of s runs any more, so that its counts are final.
func (s *echoServer) settle(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for s.active.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d server handlers still running 5 s after the run", s.active.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// startEcho starts s on loopback and returns its ws:// URL.
func startEcho(t testing.TB, s *echoServer) string {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws"
}

// rawHandler serves one upgraded connection of a hand-written server; br holds what the
// client sent after its request.
type rawHandler func(nc net.Conn, br *bufio.Reader)

// startRaw starts a hand-written WebSocket server on loopback: it answers the upgrade with
// 101 and the Sec-WebSocket-Accept accept returns for the client's key (acceptKey when nil,
// no header when accept returns ""), then runs h. It returns the ws:// URL and the number
// of upgrades answered.
func startRaw(t testing.TB, accept func(key string) string, h rawHandler) (string, *atomic.Int64) {
	t.Helper()
	if accept == nil {
		accept = acceptKey
	}
	var upgrades atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Sec-WebSocket-Version") != "13" || !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			http.Error(w, "not a websocket upgrade", http.StatusBadRequest)
			return
		}
		key := r.Header.Get("Sec-WebSocket-Key")
		nc, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer nc.Close()
		resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		if a := accept(key); a != "" {
			resp += "Sec-WebSocket-Accept: " + a + "\r\n"
		}
		upgrades.Add(1) // before the 101 leaves: the generator may count it the moment it arrives
		if _, err := nc.Write([]byte(resp + "\r\n")); err != nil {
			upgrades.Add(-1)
			return
		}
		h(nc, brw.Reader)
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws", &upgrades
}

// serverEnv names the environment variable that turns the test binary into an echo server
// process (for BenchmarkEcho, whose CPU figures must be the generator's alone).
const serverEnv = "ARENALOAD_WS_ECHO_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		serveEchoProcess()
		return
	}
	os.Exit(m.Run())
}

// serveEchoProcess runs the gorilla echo server on loopback, prints its address and serves
// until stdin closes.
func serveEchoProcess() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	go func() { _ = http.Serve(ln, &echoServer{}) }()
	buf := make([]byte, 1)
	_, _ = os.Stdin.Read(buf)
}
