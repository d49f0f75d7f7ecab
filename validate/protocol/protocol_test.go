package protocol_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arenabot/arenabot/internal/deptest"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/validate/protocol"
)

// TestFor: every scheme of the profile table has its unit, and every unit's scheme is one
// of the table's.
func TestFor(t *testing.T) {
	if _, err := protocol.For("gopher"); !errors.Is(err, protocol.ErrUnknown) || !strings.Contains(err.Error(), "h3") {
		t.Errorf("For(gopher) = %v; want ErrUnknown listing the units", err)
	}
	for _, scheme := range profile.Schemes {
		p, err := protocol.For(scheme)
		if err != nil || p.Scheme() != scheme || p.Describe() == "" {
			t.Errorf("For(%q) = %v, %v", scheme, p, err)
		}
	}
	for _, p := range protocol.All() {
		if !slices.Contains(profile.Schemes, p.Scheme()) {
			t.Errorf("unit %s has scheme %q, which no profile can have", p.Describe(), p.Scheme())
		}
	}
	// Every profile's probe has a unit: the runner waits for every runnable row in its own
	// protocol.
	for _, p := range profile.All {
		_, scheme := p.ProbeAt()
		if _, err := protocol.For(scheme); p.Runnable() && err != nil {
			t.Errorf("%s: probe scheme %q: %v", p.Name, scheme, err)
		}
	}
	// The constants are the profile table's.
	for got, want := range map[string]string{
		protocol.SchemeHTTP: profile.SchemeHTTP, protocol.SchemeHTTPS: profile.SchemeHTTPS, protocol.SchemeH2: profile.SchemeH2,
		protocol.SchemeH2C: profile.SchemeH2C, protocol.SchemeGRPC: profile.SchemeGRPC, protocol.SchemeGRPCS: profile.SchemeGRPCS,
		protocol.SchemeH3: profile.SchemeH3, protocol.SchemeWS: profile.SchemeWS,
	} {
		if got != want {
			t.Errorf("scheme %q, the profile table says %q", got, want)
		}
	}
	for _, p := range []protocol.Protocol{protocol.H1, protocol.H1TLS} {
		if _, ok := p.(protocol.Stream); !ok {
			t.Errorf("%s is not a Stream", p.Describe())
		}
	}
	for _, p := range []protocol.Protocol{protocol.H1, protocol.H1TLS, protocol.H2, protocol.H2C, protocol.H3} {
		if _, ok := p.(protocol.HTTP); !ok {
			t.Errorf("%s is not HTTP", p.Describe())
		}
	}
	for _, p := range []protocol.Protocol{protocol.GRPCH2C, protocol.GRPCTLS} {
		if _, ok := p.(protocol.GRPC); !ok {
			t.Errorf("%s is not GRPC", p.Describe())
		}
	}
}

// echoProto answers the request's protocol.
var echoProto = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/missing" {
		w.WriteHeader(http.StatusNotFound)
	}
	io.WriteString(w, r.Proto)
})

// servers are one server per protocol, by scheme: HTTP/1.1 plain and over TLS (ALPN
// http/1.1 only), h2 over TLS (ALPN h2 and http/1.1), h2c prior knowledge only.
type servers struct {
	addr  map[string]string
	roots *x509.CertPool
}

func startServers(t *testing.T) servers {
	t.Helper()
	s := servers{addr: map[string]string{}, roots: x509.NewCertPool()}
	quiet := log.New(io.Discard, "", 0) // handshakes the tests fail on purpose
	h1 := httptest.NewServer(echoProto)
	t.Cleanup(h1.Close)
	s.addr[protocol.SchemeHTTP] = h1.Listener.Addr().String()

	h1tls := httptest.NewUnstartedServer(echoProto)
	h1tls.Config.ErrorLog = quiet
	h1tls.StartTLS() // without EnableHTTP2: ALPN http/1.1 only
	t.Cleanup(h1tls.Close)
	s.addr[protocol.SchemeHTTPS] = h1tls.Listener.Addr().String()
	s.roots.AddCert(h1tls.Certificate())

	h2 := httptest.NewUnstartedServer(echoProto)
	h2.Config.ErrorLog = quiet
	h2.EnableHTTP2 = true
	h2.StartTLS()
	t.Cleanup(h2.Close)
	s.addr[protocol.SchemeH2] = h2.Listener.Addr().String()
	s.roots.AddCert(h2.Certificate())

	h2c := httptest.NewUnstartedServer(echoProto)
	h2c.Config.ErrorLog = quiet
	h2c.Config.Protocols = new(http.Protocols)
	h2c.Config.Protocols.SetUnencryptedHTTP2(true)
	h2c.Start()
	t.Cleanup(h2c.Close)
	s.addr[protocol.SchemeH2C] = h2c.Listener.Addr().String()
	return s
}

// get fetches path with the unit's client and returns the protocol the server saw.
func get(t *testing.T, p protocol.HTTP, addr, path string, cfg protocol.Config) (string, *http.Response, error) {
	t.Helper()
	c := p.Client(cfg)
	defer c.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, p.URL(addr, path), nil)
	resp, err := c.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), resp, err
}

func TestHTTPUnits(t *testing.T) {
	s := startServers(t)
	cfg := protocol.Config{Timeout: 2 * time.Second}
	for _, tt := range []struct {
		unit   protocol.HTTP
		server string
		want   string // the protocol both ends spoke; "" for no answer
	}{
		{protocol.H1, protocol.SchemeHTTP, "HTTP/1.1"},
		{protocol.H1TLS, protocol.SchemeHTTPS, "HTTP/1.1"},
		{protocol.H1TLS, protocol.SchemeH2, "HTTP/1.1"}, // no ALPN offered: HTTP/1.1
		{protocol.H2, protocol.SchemeH2, "HTTP/2.0"},
		{protocol.H2, protocol.SchemeHTTPS, "HTTP/1.1"}, // falls back, as curl --http2
		{protocol.H2C, protocol.SchemeH2C, "HTTP/2.0"},
		{protocol.H2C, protocol.SchemeHTTP, ""}, // an HTTP/1.1 server does not speak h2c
		{protocol.H1, protocol.SchemeH2C, ""},   // an h2c-only server does not answer HTTP/1.1
	} {
		t.Run(tt.unit.Scheme()+" to "+tt.server, func(t *testing.T) {
			addr := s.addr[tt.server]
			body, resp, err := get(t, tt.unit, addr, "/x", cfg)
			perr := tt.unit.Probe(t.Context(), addr, "/missing", cfg)
			if tt.want == "" {
				if err == nil || perr == nil {
					t.Errorf("got %q (%v), probe %v; want no answer", body, err, perr)
				}
				return
			}
			if err != nil || body != tt.want || resp.Proto != tt.want {
				t.Fatalf("got %q (response %v), %v; want %s", body, resp, err, tt.want)
			}
			if perr != nil {
				t.Errorf("probe of a 404: %v; any answer counts", perr)
			}
		})
	}
}

func TestTLS(t *testing.T) {
	s := startServers(t)
	addr := s.addr[protocol.SchemeH2]
	// Verified against the servers' own certificates (httptest's are for example.com).
	good := protocol.Config{Timeout: 2 * time.Second, Roots: s.roots, ServerName: "example.com"}
	if _, _, err := get(t, protocol.H2, addr, "/", good); err != nil {
		t.Errorf("verified against the server's certificate: %v", err)
	}
	other := x509.NewCertPool()
	if _, _, err := get(t, protocol.H2, addr, "/", protocol.Config{Timeout: 2 * time.Second, Roots: other}); err == nil {
		t.Error("a certificate outside Roots was accepted")
	}
	for _, tt := range []struct {
		server string
		alpn   []string
		want   string
	}{
		{protocol.SchemeH2, nil, ""}, // H1TLS offers none by default, as wrk
		{protocol.SchemeHTTPS, []string{protocol.ALPNHTTP1}, protocol.ALPNHTTP1},
		{protocol.SchemeH2, []string{protocol.ALPNH2, protocol.ALPNHTTP1}, protocol.ALPNH2},
		// A Go server that offers only h2 accepts a client that offers only http/1.1
		// without ALPN (crypto/tls's fallback for http/1.1).
		{protocol.SchemeH2, []string{protocol.ALPNHTTP1}, ""},
	} {
		nc, err := protocol.H1TLS.Dial(t.Context(), s.addr[tt.server], protocol.Config{ALPN: tt.alpn})
		if err != nil {
			t.Errorf("ALPN %q: %v", tt.alpn, err)
			continue
		}
		if got := nc.(*tls.Conn).ConnectionState().NegotiatedProtocol; got != tt.want {
			t.Errorf("offering ALPN %q: negotiated %q, want %q", tt.alpn, got, tt.want)
		}
		nc.Close()
	}
	// A refused port is an error.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().String()
	ln.Close()
	for _, p := range protocol.All() {
		if err := p.Probe(t.Context(), closed, "/", protocol.Config{Timeout: time.Second}); err == nil {
			t.Errorf("%s: probe of a closed port succeeded", p.Describe())
		}
	}
}

func TestGRPCProbe(t *testing.T) {
	for _, tt := range []struct {
		name   string
		answer error
	}{
		{"OK", nil},
		{"Unimplemented", status.Error(codes.Unimplemented, "no such method")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []byte
			srv := grpc.NewServer(grpc.ForceServerCodec(protocol.RawCodec{}), grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
				var req []byte
				if err := stream.RecvMsg(&req); err != nil {
					return err
				}
				got = req
				if tt.answer != nil {
					return tt.answer
				}
				return stream.SendMsg([]byte{0x08, 0x03})
			}))
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go srv.Serve(ln)
			t.Cleanup(srv.Stop)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			if err := protocol.GRPCH2C.Probe(ctx, ln.Addr().String(), "/benchmark.BenchmarkService/GetSum", protocol.Config{Timeout: 2 * time.Second}); err != nil {
				t.Fatalf("probe: %v", err)
			}
			if string(got) != string(protocol.ProbeRequest) {
				t.Errorf("the server got %x, want the probe request %x", got, protocol.ProbeRequest)
			}
		})
	}
}

func TestRawCodec(t *testing.T) {
	var c protocol.RawCodec
	if b, err := c.Marshal([]byte("ab")); err != nil || string(b) != "ab" {
		t.Errorf("Marshal = %q, %v", b, err)
	}
	if _, err := c.Marshal("ab"); err == nil {
		t.Error("Marshal of a string succeeded")
	}
	var out []byte
	if err := c.Unmarshal([]byte("cd"), &out); err != nil || string(out) != "cd" {
		t.Errorf("Unmarshal = %q, %v", out, err)
	}
	if err := c.Unmarshal([]byte("cd"), out); err == nil {
		t.Error("Unmarshal into a []byte succeeded")
	}
	if c.Name() != "proto" {
		t.Errorf("Name() = %q", c.Name())
	}
}

// TestDeps: the units use the standard library and grpc-go (with what it needs), nothing
// from this module.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{ThirdParty: ThirdParty})
}

// ThirdParty are grpc-go and the modules it needs: what the units may depend on, and so
// what validate may (validate's TestDeps).
var ThirdParty = []string{"google.golang.org/grpc", "google.golang.org/protobuf", "google.golang.org/genproto",
	"golang.org/x/net", "golang.org/x/sys", "golang.org/x/text",
	"github.com/quic-go/quic-go", "github.com/quic-go/qpack", "golang.org/x/crypto", "github.com/gorilla/websocket"}
