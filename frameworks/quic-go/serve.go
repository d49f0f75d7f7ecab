package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// Limits of the servers. baseline-h3 and static-h3 open 64 connections with 64 streams
// each; a connection may have up to maxStreams request streams open at once, and
// quic-go runs one goroutine per open stream, so that also bounds its goroutines.
const (
	maxStreams        = 256
	idleTimeout       = 120 * time.Second
	readHeaderTimeout = 10 * time.Second
	shutdownTimeout   = 3 * time.Second
	altSvcMaxAge      = 86400 // seconds a client may remember the h3 endpoint
)

// sockets are the listeners the servers run on: h1 speaks HTTP/1.1, tls h2 (then
// HTTP/1.1) over TLS, and udp HTTP/3 over QUIC. The arena's are TCP 8080, TCP 8443 and
// UDP 8443; tests use ephemeral ports.
type sockets struct {
	h1  net.Listener
	tls net.Listener
	udp net.PacketConn
}

// listen opens the arena's ports on every IPv4 address: h1Port for HTTP/1.1 and
// tlsPort both over TCP (h2) and over UDP (HTTP/3).
func listen(h1Port, tlsPort string) (sockets, error) {
	var s sockets
	var err error
	if s.h1, err = net.Listen("tcp", "0.0.0.0:"+h1Port); err != nil {
		return s, err
	}
	if s.tls, err = net.Listen("tcp", "0.0.0.0:"+tlsPort); err != nil {
		s.h1.Close()
		return s, err
	}
	if s.udp, err = net.ListenPacket("udp", "0.0.0.0:"+tlsPort); err != nil {
		s.h1.Close()
		s.tls.Close()
		return s, err
	}
	return s, nil
}

// quicConfig is the QUIC transport's configuration: quic-go's defaults but for more
// streams per connection. 0-RTT stays off, so no request can be replayed.
func quicConfig() *quic.Config {
	return &quic.Config{
		MaxIncomingStreams: maxStreams,
		MaxIdleTimeout:     30 * time.Second,
	}
}

// altSvc is the Alt-Svc field value that announces HTTP/3 on the UDP socket's port.
func altSvc(udp net.PacketConn) string {
	port := 0
	if a, ok := udp.LocalAddr().(*net.UDPAddr); ok {
		port = a.Port
	}
	return fmt.Sprintf(`h3=":%d"; ma=%d`, port, altSvcMaxAge)
}

// withAltSvc adds the Alt-Svc header to every answer of h, so that clients of the TCP
// TLS port learn that the same origin speaks HTTP/3.
func withAltSvc(h http.Handler, value string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Alt-Svc"] = []string{value}
		h.ServeHTTP(w, r)
	})
}

// serve runs h on the three sockets until ctx ends or one of the servers fails, then
// shuts them all down, giving requests in flight shutdownTimeout to finish. It returns
// the first failure, nil after ctx ended. The sockets are closed when it returns.
func serve(ctx context.Context, h http.Handler, s sockets, cert tls.Certificate) error {
	var h1Proto, h2Proto http.Protocols
	h1Proto.SetHTTP1(true)
	h2Proto.SetHTTP1(true)
	h2Proto.SetHTTP2(true)

	h1 := &http.Server{
		Handler:           h,
		Protocols:         &h1Proto,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
	}
	h2 := &http.Server{
		Handler:           withAltSvc(h, altSvc(s.udp)),
		Protocols:         &h2Proto,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
	}
	h3 := &http3.Server{
		Handler: h,
		// http3.Server offers ALPN h3 only, whatever NextProtos says.
		TLSConfig:   &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13},
		QUICConfig:  quicConfig(),
		IdleTimeout: idleTimeout,
	}

	errc := make(chan error, 3)
	var wg sync.WaitGroup
	run := func(name string, f func() error) {
		wg.Go(func() {
			err := f()
			if errors.Is(err, http.ErrServerClosed) || errors.Is(err, quic.ErrServerClosed) {
				err = nil
			}
			if err != nil {
				err = fmt.Errorf("%s: %w", name, err)
			}
			errc <- err
		})
	}
	run("HTTP/1.1 on "+s.h1.Addr().String(), func() error { return h1.Serve(s.h1) })
	run("h2 on "+s.tls.Addr().String(), func() error { return h2.ServeTLS(s.tls, "", "") })
	run("HTTP/3 on "+s.udp.LocalAddr().String(), func() error { return h3.Serve(s.udp) })
	log.Printf("listening: HTTP/1.1 on tcp %s, h2 on tcp %s, HTTP/3 on udp %s",
		s.h1.Addr(), s.tls.Addr(), s.udp.LocalAddr())

	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	var sw sync.WaitGroup
	for name, shut := range map[string]func(context.Context) error{
		"HTTP/1.1": h1.Shutdown, "h2": h2.Shutdown, "HTTP/3": h3.Shutdown,
	} {
		sw.Go(func() {
			if serr := shut(shutdownCtx); serr != nil && !errors.Is(serr, context.DeadlineExceeded) {
				log.Printf("shutdown %s: %v", name, serr)
			}
		})
	}
	sw.Wait()
	s.udp.Close() // http3.Server.Serve leaves the socket it was given open
	wg.Wait()
	close(errc)
	for e := range errc {
		err = errors.Join(err, e)
	}
	return err
}
