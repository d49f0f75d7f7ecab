package main

import (
	"context"
	"crypto/tls"
	"errors"
	"log"
	"net/http"
	"time"
)

// A listener is one of the arena's ports with the protocols net/http speaks on it.
type listener struct {
	addr  string
	tls   bool           // serve over TLS with the arena's pair
	proto http.Protocols // what the port speaks
}

// listeners are the arena's ports (docs/profiles.md): 8080 HTTP/1.1; 8081 HTTP/1.1 over TLS
// (ALPN http/1.1); 8443 h2 over TLS (ALPN h2, then http/1.1); 8082 h2c with prior knowledge
// only, so an HTTP/1.1 request there gets no answer. PORT moves the first one only.
func listeners(port string) []listener {
	var h1, h1tls, h2, h2c http.Protocols
	h1.SetHTTP1(true)
	h1tls.SetHTTP1(true)
	h2.SetHTTP1(true)
	h2.SetHTTP2(true)
	h2c.SetUnencryptedHTTP2(true)
	return []listener{
		{addr: "0.0.0.0:" + port, proto: h1},
		{addr: "0.0.0.0:8081", tls: true, proto: h1tls},
		{addr: "0.0.0.0:8443", tls: true, proto: h2},
		{addr: "0.0.0.0:8082", proto: h2c},
	}
}

// listenAndServe runs h on every listener until ctx ends, then shuts them down. Without the TLS pair
// (TLS_CERT, TLS_KEY; the arena mounts them at /certs) the TLS ports stay closed. It
// returns the first listener's error, if one fails.
func listenAndServe(ctx context.Context, h http.Handler, port string) error {
	cert, certErr := tls.LoadX509KeyPair(envOr("TLS_CERT", "/certs/server.crt"), envOr("TLS_KEY", "/certs/server.key"))
	if certErr != nil {
		log.Printf("TLS pair not loaded, 8081 and 8443 stay closed: %v", certErr)
	}
	var servers []*http.Server
	errc := make(chan error, 4)
	for _, l := range listeners(port) {
		if l.tls && certErr != nil {
			continue
		}
		proto := l.proto
		srv := &http.Server{
			Addr:              l.addr,
			Handler:           h,
			Protocols:         &proto,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       120 * time.Second,
		}
		servers = append(servers, srv)
		if l.tls {
			srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
			go func() { errc <- srv.ListenAndServeTLS("", "") }()
		} else {
			go func() { errc <- srv.ListenAndServe() }()
		}
		log.Printf("listening on %s (TLS %v)", l.addr, l.tls)
	}
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	// Finish the requests in flight, but not for longer than a stop allows.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	for _, srv := range servers {
		if serr := srv.Shutdown(shutdownCtx); serr != nil {
			log.Printf("shutdown %s: %v", srv.Addr, serr)
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
