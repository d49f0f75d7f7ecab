package validate

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// TLSCheck is the section of checks an entry opts into with meta.json's "tls_check": the
// arena's TLS hardening checks against HTTP/1.1 over TLS on port 9000, where the server reads
// its pair from /certs-tls (a private copy of /certs, Target.CertsTLSDir) and picks up a new
// one without a restart. Run runs it when the name is among its profiles, after them.
const TLSCheck = "tls_check"

// TLSCheckPort is the port the section checks (frameworks.TLSCheckPort).
const TLSCheckPort = 9000

// TLSCheckDoc is where the section's contract is written down, in this repository.
const TLSCheckDoc = "docs/meta-json.md#tls_check"

// Rotation defaults: the rotation checks send rotationProbes requests, one every
// Target.RotationInterval (default 1 s), so the new pair must be served within 30 s.
const (
	rotationProbes          = 30
	defaultRotationInterval = time.Second
)

// tlsCheckPath is what the section's requests GET: the baseline endpoint every HTTP/1.1 entry
// serves. Any complete HTTP/1.1 response counts as served; the section checks TLS, not the
// endpoint.
const tlsCheckPath = "/baseline11?a=1&b=1"

// tls13Suites are the TLS 1.3 AEAD cipher suites the posture accepts (RFC 8446 §B.4, less
// the CCM ones, which no arena load tool offers).
var tls13Suites = []uint16{tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384, tls.TLS_CHACHA20_POLY1305_SHA256}

func tlsContract(text, rfc string) string {
	where := TLSCheckDoc
	if rfc != "" {
		where = rfc + "; " + where
	}
	return TLSCheck + " — " + text + " (" + where + ")"
}

// tlsCheckSuite are the section's checks: the TLS posture (4), the TLS quality (1), SNI,
// session resumption (advisory), close_notify, then, one after another once every other check
// is done, testssl.sh -U and the two rotation checks.
var tlsCheckSuite = []check{
	{
		name:     "TLS posture: the arena's certificate",
		contract: tlsContract("the served certificate's SHA-256 fingerprint is that of /certs/server.crt (the data directory's "+certFile+"), copied to /certs-tls", ""),
		run: func(ctx context.Context, e *env) result {
			req, exp := "TLS handshake with "+e.addr+" for localhost", "the SHA-256 fingerprint of "+certFile
			want, err := e.data.cert()
			if err != nil {
				return failed(req, exp, "cannot check: "+err.Error())
			}
			exp += " (" + shortFP(want.der) + ")"
			tc, err := tlsDial(ctx, e, tlsClientConfig())
			if err != nil {
				return failed(req, exp, err.Error())
			}
			defer tc.Close()
			got, ok := leaf(tc)
			if !ok {
				return failed(req, exp, "no certificate")
			}
			if sha256Of(got.Raw) != sha256Of(want.der) {
				return failed(req, exp, "another certificate: "+certName(got))
			}
			return passed(req, exp, "SHA-256 "+shortFP(got.Raw))
		},
	},
	{
		name:     "TLS posture: TLS 1.3",
		contract: tlsContract("a client offering TLS 1.2 and 1.3 negotiates TLS 1.3", "RFC 8446"),
		run: func(ctx context.Context, e *env) result {
			const req, exp = "TLS handshake offering TLS 1.2 and TLS 1.3", "TLS 1.3"
			tc, err := tlsDial(ctx, e, tlsClientConfig())
			if err != nil {
				return failed(req, exp, err.Error())
			}
			defer tc.Close()
			v := tc.ConnectionState().Version
			if v != tls.VersionTLS13 {
				return failed(req, exp, tls.VersionName(v))
			}
			return passed(req, exp, tls.VersionName(v))
		},
	},
	{
		name:     "TLS posture: AEAD cipher suite",
		contract: tlsContract("the negotiated cipher suite is one of the TLS 1.3 AEAD suites: TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256", "RFC 8446 §9.1"),
		run: func(ctx context.Context, e *env) result {
			const req = "TLS handshake offering TLS 1.2 and TLS 1.3"
			exp := "one of " + suiteNames(tls13Suites)
			tc, err := tlsDial(ctx, e, tlsClientConfig())
			if err != nil {
				return failed(req, exp, err.Error())
			}
			defer tc.Close()
			s := tc.ConnectionState().CipherSuite
			if !slices.Contains(tls13Suites, s) {
				return failed(req, exp, tls.CipherSuiteName(s))
			}
			return passed(req, exp, tls.CipherSuiteName(s))
		},
	},
	{
		name:     "TLS posture: ALPN",
		contract: tlsContract("a client offering ALPN http/1.1 gets none or exactly http/1.1", "RFC 7301 §3.2"),
		run: func(ctx context.Context, e *env) result {
			const req, exp = "TLS handshake offering ALPN http/1.1", "ALPN none or http/1.1"
			tc, err := tlsDial(ctx, e, tlsClientConfig())
			if err != nil {
				// crypto/tls refuses a protocol it did not offer in the handshake itself.
				return failed(req, exp, err.Error())
			}
			defer tc.Close()
			p := tc.ConnectionState().NegotiatedProtocol
			if p != "" && p != "http/1.1" {
				return failed(req, exp, "ALPN "+alpnName(p))
			}
			return passed(req, exp, "ALPN "+alpnName(p))
		},
	},
	{
		name: "TLS quality: no legacy protocol or weak cipher",
		contract: tlsContract("the server refuses SSLv3, TLS 1.0 and TLS 1.1, and the NULL, aNULL, EXPORT, RC4, DES and 3DES cipher families: "+
			"a ClientHello offering only those gets an alert or a close, never a ServerHello that accepts it", "RFC 8996; RFC 7465"),
		run: qualityCheck,
	},
	{
		name:     "SNI with and without a server name",
		contract: tlsContract("a handshake with SNI localhost and one without SNI both complete, present the same certificate and are answered over HTTP/1.1", "RFC 6066 §3"),
		run:      sniCheck,
	},
	{
		name:     "session resumption",
		contract: tlsContract("a second connection resumes the first one's session (a TLS 1.3 ticket or a TLS 1.2 session), sparing a full handshake; the arena notes a miss without failing it", "RFC 8446 §2.2"),
		tier:     Advisory,
		run:      resumptionCheck,
	},
	{
		name:         "close_notify",
		contract:     tlsContract("after answering a request with Connection: close the server closes the connection, at a record boundary", "RFC 9112 §9.6"),
		advisoryPart: "the server sends a close_notify alert before it closes (RFC 8446 §6.1); the arena notes a close without one",
		run:          closeNotifyCheck,
	},
	{
		name:     "testssl.sh -U",
		contract: tlsContract("testssl.sh -U (its vulnerability checks) finds nothing of severity HIGH or CRITICAL; skipped where testssl.sh is not installed", ""),
		serial:   true,
		budget:   testsslTimeout + time.Minute,
		run:      testsslCheck,
	},
	{
		name: "certificate rotation within 30 s",
		contract: tlsContract("after a new pair replaces server.crt and server.key in /certs-tls, new connections get the new certificate within 30 s, "+
			"the server picking it up by itself (the validator does not restart it)", ""),
		serial: true,
		budget: 2 * rotationProbes * defaultRotationInterval,
		run: func(ctx context.Context, e *env) result {
			rot := e.rotate(ctx)
			req := "a new ECDSA P-256 pair for localhost written into /certs-tls, then a TLS handshake and GET " + tlsCheckPath + " every " + rot.every.String()
			exp := fmt.Sprintf("the new certificate (SHA-256 %x…) within %s", rot.fp[:8], rot.window())
			switch {
			case rot.skip != "":
				return result{status: Skip, reason: rot.skip}
			case rot.err != nil:
				return failed(req, exp, "cannot rotate: "+rot.err.Error())
			case rot.seen < 0:
				return failed(req, exp, fmt.Sprintf("still %s after %s (%d handshakes)", rot.lastCert(), rot.window(), len(rot.probes)))
			}
			return passed(req, exp, fmt.Sprintf("the new certificate after %s (handshake %d of %d)",
				rot.probes[rot.seen].at.Round(10*time.Millisecond), rot.seen+1, len(rot.probes)))
		},
	},
	{
		name:     "serving through rotation 30/30",
		contract: tlsContract("every one of the 30 requests sent on new connections while the pair is rotated is answered, with the old certificate or the new one", ""),
		serial:   true,
		budget:   2 * rotationProbes * defaultRotationInterval,
		run: func(ctx context.Context, e *env) result {
			rot := e.rotate(ctx)
			req := fmt.Sprintf("%d TLS handshakes, each with GET %s, one every %s after the rotation", rotationProbes, tlsCheckPath, rot.every)
			exp := fmt.Sprintf("%d/%d answered", rotationProbes, rotationProbes)
			switch {
			case rot.skip != "":
				return result{status: Skip, reason: rot.skip}
			case rot.err != nil:
				return failed(req, exp, "cannot rotate: "+rot.err.Error())
			}
			ok := 0
			var firstBad string
			for i, p := range rot.probes {
				if p.err == nil {
					ok++
				} else if firstBad == "" {
					firstBad = fmt.Sprintf("; request %d at %s: %v", i+1, p.at.Round(10*time.Millisecond), p.err)
				}
			}
			got := fmt.Sprintf("%d/%d answered%s", ok, rotationProbes, firstBad)
			if ok != rotationProbes {
				return failed(req, exp, got)
			}
			return passed(req, exp, got)
		},
	},
}

// tlsClientConfig is how the section's handshakes start: SNI localhost, ALPN http/1.1, TLS
// 1.2 or 1.3, any certificate (the posture compares it with the arena's itself).
func tlsClientConfig() *tls.Config {
	return &tls.Config{
		ServerName:         "localhost",
		NextProtos:         []string{"http/1.1"},
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, // compared with the arena's certificate by fingerprint
	}
}

// tlsDial connects to the section's address and completes a handshake with cfg, under the
// target's timeout.
func tlsDial(ctx context.Context, e *env, cfg *tls.Config) (*tls.Conn, error) {
	nc, err := dialTCP(ctx, e)
	if err != nil {
		return nil, err
	}
	return handshake(ctx, e, nc, cfg)
}

func dialTCP(ctx context.Context, e *env) (net.Conn, error) {
	d := net.Dialer{Timeout: e.timeout}
	nc, err := d.DialContext(ctx, "tcp", e.addr)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return nc, nil
}

func handshake(ctx context.Context, e *env, nc net.Conn, cfg *tls.Config) (*tls.Conn, error) {
	tc := tls.Client(nc, cfg)
	hctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		nc.Close()
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	return tc, nil
}

// get sends GET tlsCheckPath (with extra header lines) on tc and reads the response.
func get(ctx context.Context, e *env, tc *tls.Conn, headers ...string) (*response, *conn, error) {
	c := newConn(ctx, tc, e.timeout)
	if err := c.write(request("GET", tlsCheckPath, headers, nil)); err != nil {
		c.close()
		return nil, nil, err
	}
	r, err := c.response("GET")
	if err != nil {
		c.close()
		return nil, nil, err
	}
	return r, c, nil
}

// serve handshakes with cfg, sends one GET and returns the leaf certificate and the response.
func serve(ctx context.Context, e *env, cfg *tls.Config) (*x509.Certificate, *response, error) {
	tc, err := tlsDial(ctx, e, cfg)
	if err != nil {
		return nil, nil, err
	}
	defer tc.Close()
	cert, _ := leaf(tc)
	r, c, err := get(ctx, e, tc)
	if err != nil {
		return cert, nil, err
	}
	c.close()
	return cert, r, nil
}

func leaf(tc *tls.Conn) (*x509.Certificate, bool) {
	peers := tc.ConnectionState().PeerCertificates
	if len(peers) == 0 {
		return nil, false
	}
	return peers[0], true
}

func sha256Of(b []byte) [32]byte { return sha256.Sum256(b) }

// shortFP is the start of a certificate's SHA-256 fingerprint, for messages: "3fa2…".
func shortFP(der []byte) string {
	sum := sha256.Sum256(der)
	return fmt.Sprintf("%x…", sum[:8])
}

func certName(c *x509.Certificate) string {
	if c == nil {
		return "no certificate"
	}
	return fmt.Sprintf("subject %q, issuer %q, %s key, SHA-256 %s", c.Subject.String(), c.Issuer.String(), c.PublicKeyAlgorithm, shortFP(c.Raw))
}

func suiteNames(ids []uint16) string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = tls.CipherSuiteName(id)
	}
	return strings.Join(names, ", ")
}

// sniCheck handshakes with SNI localhost and without SNI: both must complete, present the
// same certificate and answer a GET.
func sniCheck(ctx context.Context, e *env) result {
	const req = "TLS handshake with SNI localhost, then one without SNI, each with GET " + tlsCheckPath
	const exp = "both handshakes complete with the same certificate and are answered"
	with, r1, err := serve(ctx, e, tlsClientConfig())
	if err != nil {
		return failed(req, exp, "with SNI localhost: "+err.Error())
	}
	cfg := tlsClientConfig()
	cfg.ServerName = "" // with InsecureSkipVerify, crypto/tls then sends no server_name extension
	without, r2, err := serve(ctx, e, cfg)
	if err != nil {
		return failed(req, exp, "without SNI: "+err.Error())
	}
	if with == nil || without == nil || sha256Of(with.Raw) != sha256Of(without.Raw) {
		return failed(req, exp, "with SNI: "+certName(with)+"; without SNI: "+certName(without))
	}
	return passed(req, exp, fmt.Sprintf("both: %s %d", r1.Proto, r1.Status)+sameStatus(r1, r2))
}

func sameStatus(a, b *response) string {
	if a.Status == b.Status {
		return ""
	}
	return fmt.Sprintf(" (without SNI: %d)", b.Status)
}

// countingCache is a client session cache that counts the sessions the server issued.
type countingCache struct {
	tls.ClientSessionCache
	mu   sync.Mutex
	puts int
}

func (c *countingCache) Put(key string, cs *tls.ClientSessionState) {
	c.mu.Lock()
	if cs != nil {
		c.puts++
	}
	c.mu.Unlock()
	c.ClientSessionCache.Put(key, cs)
}

func (c *countingCache) issued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.puts
}

// resumptionCheck connects twice with one session cache: the second handshake should resume.
// The first connection reads a response, so that the TLS 1.3 tickets sent after the
// handshake are received.
func resumptionCheck(ctx context.Context, e *env) result {
	const req = "a TLS connection with GET " + tlsCheckPath + ", then a second one offering its session"
	const exp = "the second handshake resumes the first session"
	cache := &countingCache{ClientSessionCache: tls.NewLRUClientSessionCache(4)}
	cfg := tlsClientConfig()
	cfg.ClientSessionCache = cache
	if _, _, err := serve(ctx, e, cfg); err != nil {
		return failed(req, exp, "first connection: "+err.Error())
	}
	tc, err := tlsDial(ctx, e, cfg)
	if err != nil {
		return failed(req, exp, "second connection: "+err.Error())
	}
	defer tc.Close()
	if !tc.ConnectionState().DidResume {
		if cache.issued() == 0 {
			return failed(req, exp, "a full handshake: the server issued no session ticket")
		}
		return failed(req, exp, "a full handshake: the server issued a session ticket but did not accept it")
	}
	return passed(req, exp, "resumed")
}

// rawWatch records whether the TCP connection under a TLS one reached its end: when a TLS
// read ends with io.EOF and the TCP one has not, the TLS layer ended on a close_notify alert.
type rawWatch struct {
	net.Conn
	mu  sync.Mutex
	err error
}

func (w *rawWatch) Read(p []byte) (int, error) {
	n, err := w.Conn.Read(p)
	if err != nil && !isTimeout(err) {
		w.mu.Lock()
		if w.err == nil {
			w.err = err
		}
		w.mu.Unlock()
	}
	return n, err
}

func (w *rawWatch) ended() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// closeNotifyCheck sends a request with Connection: close and reads until the server ends the
// connection: with a close_notify alert (PASS), a TCP close at a record boundary without one
// (a WARN, the arena's NOTE), a close in the middle of a record, or no close at all (FAIL).
func closeNotifyCheck(ctx context.Context, e *env) result {
	const req = "GET " + tlsCheckPath + " with Connection: close over TLS, then read to the end"
	const exp = "a close_notify alert, then the close"
	nc, err := dialTCP(ctx, e)
	if err != nil {
		return failed(req, exp, err.Error())
	}
	raw := &rawWatch{Conn: nc}
	tc, err := handshake(ctx, e, raw, tlsClientConfig())
	if err != nil {
		return failed(req, exp, err.Error())
	}
	r, c, err := get(ctx, e, tc, "Connection: close")
	if err != nil {
		return failed(req, exp, err.Error())
	}
	defer c.close()
	answered := fmt.Sprintf("%s %d, then ", r.Proto, r.Status)
	var tail int64
	buf := make([]byte, 4096)
	var rerr error
	for {
		var n int
		n, rerr = c.br.Read(buf)
		tail += int64(n)
		if rerr != nil || tail > 1<<20 {
			break
		}
	}
	switch {
	case tail > 1<<20:
		return failed(req, exp, answered+"more than 1 MiB after the response")
	case errors.Is(rerr, io.EOF) && raw.ended() == nil:
		return passed(req, exp, answered+"close_notify")
	case errors.Is(rerr, io.EOF) || errors.Is(rerr, syscall.ECONNRESET):
		how := "closed"
		if errors.Is(rerr, syscall.ECONNRESET) {
			how = "reset"
		}
		return result{status: Fail, advisory: true, request: req, expected: exp,
			got: answered + "the connection " + how + " without a close_notify alert"}
	case errors.As(rerr, new(errTimeout)):
		return failed(req, exp, fmt.Sprintf("%sthe connection still open %v later (Connection: close was asked for)", answered, e.timeout))
	}
	return failed(req, exp, answered+rerr.Error())
}

// rotation is what the rotation checks found, once per Run: the two checks share it.
type rotation struct {
	skip   string // why it was not done
	err    error  // it could not be done
	every  time.Duration
	fp     [32]byte // the new certificate's
	probes []rotationProbe
	seen   int // index of the first probe served the new certificate; -1 for none
}

type rotationProbe struct {
	at   time.Duration // since the new pair was written
	cert *x509.Certificate
	err  error
}

func (r *rotation) window() time.Duration { return time.Duration(rotationProbes) * r.every }

// lastCert describes the certificate the last probe got.
func (r *rotation) lastCert() string {
	for _, p := range slices.Backward(r.probes) {
		if p.cert != nil {
			return "the old certificate (" + certName(p.cert) + ")"
		}
	}
	return "no certificate"
}

// rotate replaces the pair in e.certsTLS once, probes the server rotationProbes times and
// puts the original pair back; later calls return the same result.
func (e *env) rotate(ctx context.Context) *rotation {
	e.rotationOnce.Do(func() { e.rotation = doRotate(ctx, e) })
	return e.rotation
}

func doRotate(ctx context.Context, e *env) *rotation {
	r := &rotation{every: e.rotationEvery, seen: -1}
	if r.every <= 0 {
		r.every = defaultRotationInterval
	}
	if e.certsTLS == "" {
		r.skip = "no /certs-tls directory to rotate the pair in (the runner mounts one for entries with tls_check)"
		return r
	}
	crtPath, keyPath := filepath.Join(e.certsTLS, "server.crt"), filepath.Join(e.certsTLS, "server.key")
	oldCrt, err := os.ReadFile(crtPath)
	if err != nil {
		r.err = err
		return r
	}
	oldKey, err := os.ReadFile(keyPath)
	if err != nil {
		r.err = err
		return r
	}
	crt, key, der, err := newPair()
	if err != nil {
		r.err = err
		return r
	}
	r.fp = sha256Of(der)
	if err := writePair(crtPath, keyPath, crt, key); err != nil {
		r.err = err
		return r
	}
	defer writePair(crtPath, keyPath, oldCrt, oldKey) // as it was, for whatever runs next
	start := time.Now()
	for i := range rotationProbes {
		select {
		case <-ctx.Done():
			r.err = ctx.Err()
			return r
		case <-time.After(time.Until(start.Add(time.Duration(i+1) * r.every))):
		}
		cert, _, err := serve(ctx, e, tlsClientConfig())
		r.probes = append(r.probes, rotationProbe{at: time.Since(start), cert: cert, err: err})
		if r.seen < 0 && cert != nil && sha256Of(cert.Raw) == r.fp {
			r.seen = i
		}
	}
	return r
}

// newPair makes a self-signed ECDSA P-256 pair for localhost, like the arena's: the
// certificate and the PKCS#8 key in PEM, and the certificate's DER.
func newPair() (crt, key, der []byte, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "localhost", Organization: []string{"arenabot tls_check rotation"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err = x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		return nil, nil, nil, err
	}
	pk, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}), der, nil
}

// writePair replaces the key, then the certificate, each atomically (a new file renamed over
// the old one), so a server never reads half a file.
func writePair(crtPath, keyPath string, crt, key []byte) error {
	if err := replaceFile(keyPath, key); err != nil {
		return err
	}
	return replaceFile(crtPath, crt)
}

func replaceFile(name string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+"-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // a no-op once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil { // the server may run as any user
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}
