// Command authsvc is the JWT check behind the production-stack profile's edge: nginx's
// auth_request sends every /api/ request's Authorization header to /_auth, and authsvc
// answers 200 with X-User-Id set to the token's subject, or 401.
//
// A token is accepted when it is "Bearer <header>.<payload>.<signature>" with the signature
// the unpadded base64url HMAC-SHA256 of "<header>.<payload>" under JWT_SECRET, and a JSON
// payload whose sub is a non-empty string or a number; an exp in the past (seconds since
// the epoch) refuses it. /_health answers 200.
//
// Environment: JWT_SECRET (required), AUTHSVC_LISTEN (default 0.0.0.0:9090). With -check
// it asks its own /_health once and exits 0 when that answers 200: a healthcheck for an
// image with no shell.
package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const defaultListen = "0.0.0.0:9090"

func main() {
	check := flag.Bool("check", false, "ask /_health once and exit 0 when it answers 200")
	flag.Parse()
	listen := os.Getenv("AUTHSVC_LISTEN")
	if listen == "" {
		listen = defaultListen
	}
	if *check {
		if err := healthCheck(listen); err != nil {
			fmt.Fprintln(os.Stderr, "authsvc:", err)
			os.Exit(1)
		}
		return
	}
	secret := os.Getenv("JWT_SECRET")
	if secret == "" {
		log.Fatal("authsvc: JWT_SECRET is not set; set it to the secret the tokens are signed with")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Addr: listen, Handler: newHandler([]byte(secret), time.Now), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	log.Printf("authsvc: listening on %s", listen)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// newHandler answers /_auth and /_health; now is the clock exp is checked against.
func newHandler(secret []byte, now func() time.Time) http.Handler {
	mux := http.NewServeMux()
	// nginx's auth_request repeats the original method (GET or POST) without the body.
	mux.HandleFunc("/_auth", func(w http.ResponseWriter, r *http.Request) {
		sub, err := verify(secret, r.Header.Get("Authorization"), now())
		if err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"unauthorized"}`))
			return
		}
		w.Header().Set("X-User-Id", sub)
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("GET /_health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("ok"))
	})
	return mux
}

// verify checks an Authorization header value and returns the token's subject.
func verify(secret []byte, authorization string, now time.Time) (string, error) {
	token, ok := strings.CutPrefix(authorization, "Bearer ")
	if !ok {
		return "", errors.New("no bearer token")
	}
	header, rest, ok1 := strings.Cut(strings.TrimSpace(token), ".")
	payload, sig, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || header == "" || payload == "" || strings.Contains(sig, ".") {
		return "", errors.New("not a three-part token")
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return "", errors.New("signature is not base64url")
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(header + "." + payload))
	if !hmac.Equal(got, mac.Sum(nil)) {
		return "", errors.New("bad signature")
	}
	body, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return "", errors.New("payload is not base64url")
	}
	var claims struct {
		Sub json.RawMessage `json:"sub"`
		Exp *float64        `json:"exp"`
	}
	if err := json.Unmarshal(body, &claims); err != nil {
		return "", errors.New("payload is not a JSON object")
	}
	if claims.Exp != nil && now.Unix() >= int64(*claims.Exp) {
		return "", errors.New("token expired")
	}
	return subject(claims.Sub)
}

// subject reads sub as a non-empty string, or an integer written as one.
func subject(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil && s != "" && !strings.ContainsAny(s, "\r\n") {
		return s, nil
	}
	var n int64
	if err := json.Unmarshal(raw, &n); err == nil {
		return strconv.FormatInt(n, 10), nil
	}
	return "", errors.New("no sub claim")
}

// healthCheck asks the service listening on listen for /_health.
func healthCheck(listen string) error {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("AUTHSVC_LISTEN %q: %w", listen, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + net.JoinHostPort(host, port) + "/_health")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/_health answered %s", resp.Status)
	}
	return nil
}
