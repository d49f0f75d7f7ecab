// Command server is the arena's quic-go entry: one net/http handler served as HTTP/3 by
// quic-go's http3.Server on UDP 8443, as h2 over TLS (advertising HTTP/3 with Alt-Svc)
// by net/http on TCP 8443, and as HTTP/1.1 on TCP 8080.
package main

import (
	"context"
	"crypto/tls"
	"log"
	"mime"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	mainMIME()
	cert, err := tls.LoadX509KeyPair(envOr("TLS_CERT", "/certs/server.crt"), envOr("TLS_KEY", "/certs/server.key"))
	if err != nil {
		log.Fatalf("TLS pair not loaded; HTTP/3 and h2 need it: %v", err)
	}
	socks, err := listen(envOr("PORT", "8080"), envOr("TLS_PORT", "8443"))
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, routes(envOr("STATIC_DIR", "/data/static")), socks, cert); err != nil {
		log.Fatal(err)
	}
}

// mainMIME adds the types Go's built-in table lacks (web fonts); a scratch image has no
// /etc/mime.types to find them in.
func mainMIME() {
	mime.AddExtensionType(".woff2", "font/woff2")
	mime.AddExtensionType(".woff", "font/woff")
}

// envOr is the environment variable key, or def when it is unset or empty.
func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
