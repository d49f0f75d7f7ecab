package validatetest

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// The fixture's HTTP/3 (baseline-h3, static-h3): quic-go's http3.Server on UDP at
// 127.0.0.1:H2Port, the port number of the h2 listener in TCP, as an h3 entry serves h3 and
// h2 on 8443; the same handler, under the same mode.

// h3Behaviours break the checks of the h3 profiles, one check each except the extras.
var h3Behaviours = map[string]struct {
	desc     string
	profiles []string
}{
	"h3-probe-status": {"over HTTP/3, GET /baseline2?a=1&b=1 answers 503 (h2 on TCP answers it 200)", []string{"baseline-h3", "static-h3"}},
	"h2-probe-down":   {"nothing listens on the port in TCP: no h2 beside h3", []string{"baseline-h3", "static-h3"}},
	// Not one check each: every check over h3 fails with them, the TCP probe alone passes
	// (TestH3TransportModes).
	"h3-no-udp":      {"nothing listens on the port in UDP: no h3 (extra)", []string{"baseline-h3", "static-h3"}},
	"h3-alpn-not-h3": {"the UDP port speaks QUIC but offers ALPN hq-interop, not h3 (extra)", []string{"baseline-h3", "static-h3"}},
}

// h3SumBehaviours are the baseline behaviours baseline-h3's /baseline2 checks can see.
var h3SumBehaviours = []string{"get-wrong-sum", "get-content-type", "get-random-wrong-sum"}

// h3Modes adds the modes of the h3 profiles to m: their own, baseline's /baseline2 ones for
// baseline-h3 and static's for static-h3. It runs after the static modes are in m.
func h3Modes(m map[string]string) {
	for b, x := range h3Behaviours {
		for _, p := range x.profiles {
			m[p+"."+b] = x.desc
		}
	}
	for _, b := range h3SumBehaviours {
		m["baseline-h3."+b] = baselineBehaviours[b]
	}
	for _, b := range staticBehaviours {
		m["static-h3."+b] = m["static."+b]
	}
	// static's probe-status also answers GET /baseline2?a=1&b=1 with 503 (baseline's
	// behaviour of the same name), which "h3 over QUIC" asks for: static-h3's probe mode
	// breaks the static probe alone.
	delete(m, "static-h3.probe-status")
	m["static-h3.static-probe-status"] = m["static.probe-status"]
}

// listenPair listens on a TCP port of 127.0.0.1 and on the same port number in UDP.
func listenPair() (net.Listener, net.PacketConn, error) {
	var last error
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, err
		}
		pc, err := net.ListenPacket("udp", ln.Addr().String())
		if err == nil {
			return ln, pc, nil
		}
		ln.Close()
		last = err // the number is taken in UDP: another one
	}
	return nil, nil, fmt.Errorf("no port free in both TCP and UDP: %w", last)
}

// startH3 serves handler over HTTP/3 on pc with cert, or does what the mode says instead;
// it takes pc over.
func (s *Server) startH3(pc net.PacketConn, cert tls.Certificate, handler http.Handler) error {
	s.h3pc = pc
	tc := &tls.Config{Certificates: []tls.Certificate{cert}}
	switch s.mode {
	case "h3-no-udp":
		pc.Close()
		s.h3pc = nil
		return nil
	case "h3-alpn-not-h3":
		tc.NextProtos = []string{"hq-interop"}
		ln, err := quic.Listen(pc, tc, nil)
		if err != nil {
			return err
		}
		s.h3ln = ln
		// Handshakes fail on ALPN; a connection that completes (none should) is dropped.
		s.wg.Go(func() {
			for {
				c, err := ln.Accept(context.Background())
				if err != nil {
					return
				}
				c.CloseWithError(0, "")
			}
		})
		return nil
	}
	if s.mode == "h3-probe-status" {
		inner := handler
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/baseline2" && r.URL.RawQuery == "a=1&b=1" {
				http.Error(w, "not over HTTP/3", http.StatusServiceUnavailable)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	s.h3 = &http3.Server{Handler: handler, TLSConfig: http3.ConfigureTLSConfig(tc),
		ConnContext: func(ctx context.Context, _ *quic.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, new(atomic.Int64))
		}}
	srv := s.h3
	s.wg.Go(func() { srv.Serve(pc) }) // until closeH3
	return nil
}

// closeH3 stops the HTTP/3 server and releases the UDP port.
func (s *Server) closeH3() {
	if s.h3 != nil {
		s.h3.Close()
	}
	if s.h3ln != nil {
		s.h3ln.Close()
	}
	if s.h3pc != nil {
		s.h3pc.Close()
	}
}
