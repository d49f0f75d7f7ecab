package validate

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/arenabot/arenabot/validate/protocol"
)

func TestAuthority(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:8443": "localhost:8443",
		"127.0.0.5:8082": "localhost:8082",
		"[::1]:8443":     "localhost:8443",
		"10.1.2.3:8443":  "10.1.2.3:8443",
		"edge:8443":      "edge:8443",
		"no port":        "no port",
	} {
		if got := authority(addr); got != want {
			t.Errorf("authority(%q) = %q, want %q", addr, got, want)
		}
	}
}

// TestRoundTripNamesLocalhost: a check's request over h2 to 127.0.0.1 carries the
// authority localhost:<port>, as the arena's suite sends it, so an edge that serves its
// site for localhost only (a caddy site address https://localhost:8443, which answers any
// other host with an empty 200) answers the check with the file.
func TestRoundTripNamesLocalhost(t *testing.T) {
	const body = "body{margin:0}"
	hosts := make(chan string, 8)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hosts <- r.Host
		if h, _, _ := net.SplitHostPort(r.Host); h != "localhost" {
			w.Header().Set("Content-Length", "0") // caddy's answer for a host no site matches
			return
		}
		w.Header().Set("Content-Type", "text/css")
		w.Write([]byte(body))
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)

	c := protocol.H2.Client(protocol.Config{})
	defer c.CloseIdleConnections()
	resp, err := roundTrip(t.Context(), c, protocol.H2, addr, request("GET", "/static/reset.css", nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Proto != "HTTP/2.0" || string(resp.Body) != body {
		t.Errorf("%s %d %q; want the file over h2", resp.Proto, resp.Status, resp.Body)
	}
	if h := <-hosts; h != "localhost:"+port || len(hosts) != 0 {
		t.Errorf("the server saw the host %q (and %d more requests); want localhost:%s once", h, len(hosts), port)
	}
}
