// Command tlscheck is a server written for meta.json's tls_check: baseline on :8080, and
// HTTP/1.1 over TLS on :9000 with the pair it reads from /certs-tls, read again whenever
// the files change, so a rotated pair is served without a restart.
package main

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
)

// pair is the pair in /certs-tls, loaded again when its files change.
type pair struct {
	mu    sync.Mutex
	cert  *tls.Certificate
	stamp string
}

func (p *pair) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	const crt, key = "/certs-tls/server.crt", "/certs-tls/server.key"
	stamp := ""
	for _, f := range []string{crt, key} {
		if fi, err := os.Stat(f); err == nil {
			stamp += fi.ModTime().String() + strconv.FormatInt(fi.Size(), 10)
		}
	}
	if p.cert == nil || stamp != p.stamp {
		c, err := tls.LoadX509KeyPair(crt, key)
		if err != nil {
			if p.cert != nil {
				return p.cert, nil // mid-rotation: the old pair until the new one is whole
			}
			return nil, err
		}
		p.cert, p.stamp = &c, stamp
	}
	return p.cert, nil
}

func main() {
	mux := http.NewServeMux()
	mux.HandleFunc("/baseline11", func(w http.ResponseWriter, r *http.Request) {
		a, _ := strconv.Atoi(r.URL.Query().Get("a"))
		b, _ := strconv.Atoi(r.URL.Query().Get("b"))
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, a+b)
	})
	p := &pair{}
	tlsSrv := &http.Server{
		Addr:         ":9000",
		Handler:      mux,
		TLSConfig:    &tls.Config{GetCertificate: p.get, MinVersion: tls.VersionTLS13},
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){}, // HTTP/1.1 only
	}
	go func() { panic(tlsSrv.ListenAndServeTLS("", "")) }()
	panic(http.ListenAndServe(":8080", mux))
}
