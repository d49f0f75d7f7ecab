package validatetest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The fixture's other protocols: besides HTTP/1.1 on Port it serves, from the same handlers
// and under the same mode,
//   - HTTP/1.1 over TLS on TLSPort (8081's contract): the raw HTTP/1.1 server on a TLS
//     listener with the arena's certificate, ALPN http/1.1;
//   - h2 over TLS on H2Port (8443's): net/http with ALPN h2 and http/1.1;
//   - HTTP/3 on H2Port in UDP (8443's too, h3.go): quic-go's http3.Server;
//   - h2c with prior knowledge on H2CPort (8082's): net/http, HTTP/1.1 off.
//
// net/http requests are turned into the raw server's req and answered by its handle.

// protocolBehaviours break the checks of the TLS, h2 and h2c profiles, each for the
// profiles listed.
var protocolBehaviours = map[string]struct {
	desc     string
	profiles []string
}{
	"tls-own-cert":     {"the TLS ports present a certificate of their own, not the arena's", []string{"json-tls", "static-tls", "baseline-h2", "static-h2", "8gbit"}},
	"tls-alpn-h2-only": {"the 8081 port refuses a handshake that offers ALPN without h2", []string{"json-tls", "static-tls", "8gbit"}},
	"h2-http1-only":    {"the 8443 port speaks HTTP/1.1 only (ALPN http/1.1)", []string{"baseline-h2", "static-h2"}},
	"h2c-accepts-h1":   {"the 8082 port answers HTTP/1.1 as well as h2c", []string{"baseline-h2c"}},
	// Not one check each (TestMoreWaysToBreak).
	"tls-no-alpn": {"the 8081 port selects no ALPN protocol (extra)", []string{"json-tls"}},
}

// protocolProfiles lists, for the behaviours every HTTP/1.1 profile shares, the TLS, h2
// and h2c profiles they apply to as well.
var protocolProfiles = map[string][]string{
	"baseline": {"baseline-h2", "baseline-h2c"},
	"json":     {"json-tls", "json-h2c"},
	"static":   {"static-tls", "static-h2"},
}

// h2BaselineBehaviours are the baseline behaviours the h2 baseline checks can see (GET only).
var h2BaselineBehaviours = []string{"probe-status", "get-wrong-sum", "get-content-type", "get-random-wrong-sum"}

// staticBehaviours are the static behaviours, which static-tls and static-h2 share.
var staticBehaviours = []string{"probe-status", "static-identity", "static-content-type", "static-css-type",
	"static-uncompressed", "static-404", "static-no-vary", "static-mislabel"}

// protocolModes adds the modes of the TLS, h2 and h2c profiles to m.
func protocolModes(m map[string]string) {
	for b, x := range protocolBehaviours {
		for _, p := range x.profiles {
			m[p+"."+b] = x.desc
		}
	}
	for _, p := range protocolProfiles["baseline"] {
		for _, b := range h2BaselineBehaviours {
			m[p+"."+b] = baselineBehaviours[b]
		}
	}
	for _, p := range protocolProfiles["json"] {
		for b, d := range jsonBehaviours {
			m[p+"."+b] = d
		}
	}
	m["json-tls.probe-status"] = "GET /json/1?m=1 answers 500"
	m["json-h2c.probe-status"] = baselineBehaviours["probe-status"]
	for _, p := range protocolProfiles["static"] {
		for _, b := range staticBehaviours {
			m[p+"."+b] = m["static."+b]
		}
	}
}

// startProtocols starts the TLS, h2 and h2c listeners.
func (s *Server) startProtocols() error {
	cert, err := tls.LoadX509KeyPair(filepath.Join(s.dataDir, "certs", "server.crt"), filepath.Join(s.dataDir, "certs", "server.key"))
	if err != nil {
		return fmt.Errorf("the arena's TLS pair: %w", err)
	}
	if s.mode == "tls-own-cert" {
		if cert, err = ownCert(); err != nil {
			return err
		}
	}
	h1 := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}}
	switch s.mode {
	case "tls-no-alpn":
		h1.NextProtos = nil
	case "tls-alpn-h2-only":
		h1.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			if len(hello.SupportedProtos) > 0 && !slices.Contains(hello.SupportedProtos, "h2") {
				return nil, errors.New("this server wants h2")
			}
			return nil, nil
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.tlsLn = tls.NewListener(ln, h1)
	s.TLSPort = ln.Addr().(*net.TCPAddr).Port
	s.wg.Go(func() { s.acceptOn(s.tlsLn) })

	quiet := log.New(io.Discard, "", 0) // handshakes the checks fail on purpose
	handler := http.HandlerFunc(s.serveHTTP)
	connIndex := func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, new(atomic.Int64))
	}

	h2 := &http.Server{Handler: handler, ErrorLog: quiet, ConnContext: connIndex, Protocols: new(http.Protocols),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	h2.Protocols.SetHTTP1(true)
	if s.mode != "h2-http1-only" {
		h2.Protocols.SetHTTP2(true)
	}
	h2ln, pc, err := listenPair()
	if err != nil {
		return err
	}
	s.H2Port = h2ln.Addr().(*net.TCPAddr).Port
	if s.mode == "h2-probe-down" {
		h2ln.Close() // the port's number stays the h3 server's, in UDP
	} else {
		s.https = append(s.https, h2)
		s.wg.Go(func() { h2.ServeTLS(h2ln, "", "") })
	}
	if err := s.startH3(pc, cert, handler); err != nil {
		return err
	}

	h2c := &http.Server{Handler: handler, ErrorLog: quiet, ConnContext: connIndex, Protocols: new(http.Protocols)}
	h2c.Protocols.SetUnencryptedHTTP2(true)
	if s.mode == "h2c-accepts-h1" {
		h2c.Protocols.SetHTTP1(true)
	}
	h2cln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.H2CPort = h2cln.Addr().(*net.TCPAddr).Port
	s.https = append(s.https, h2c)
	s.wg.Go(func() { h2c.Serve(h2cln) })
	return nil
}

// closeProtocols closes the TLS listener and the net/http servers.
func (s *Server) closeProtocols() {
	if s.tlsLn != nil {
		s.tlsLn.Close()
	}
	for _, h := range s.https {
		h.Close()
	}
	s.closeH3()
}

// connKey keys the request counter of a net/http connection in its context.
type connKey struct{}

// serveHTTP answers a net/http request with the raw server's handle.
func (s *Server) serveHTTP(w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(io.LimitReader(hr.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		http.Error(w, "body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	r := &req{method: hr.Method, target: hr.URL.RequestURI(), proto: hr.Proto, path: hr.URL.Path, query: hr.URL.RawQuery,
		header: map[string][]string{}, body: body, bodyLen: int64(len(body))}
	if len(body) > keepMax && r.path != "/echo" {
		r.body = nil
	}
	if n, ok := hr.Context().Value(connKey{}).(*atomic.Int64); ok {
		r.index = int(n.Add(1) - 1)
	}
	for name, vs := range hr.Header {
		r.header[strings.ToLower(name)] = vs
	}
	rep := s.handle(r)
	for _, h := range rep.headers {
		name, value, _ := strings.Cut(h, ": ")
		w.Header().Add(name, value)
	}
	if rep.file != "" {
		f, err := os.Open(rep.file)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil {
			w.Header().Set("Content-Length", strconv.FormatInt(fi.Size(), 10))
		}
		w.WriteHeader(rep.status)
		io.Copy(w, f)
		return
	}
	w.WriteHeader(rep.status)
	w.Write(rep.body)
}

// ownCert is a self-signed certificate for localhost that is not the arena's.
func ownCert() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "localhost", Organization: []string{"not the arena"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
