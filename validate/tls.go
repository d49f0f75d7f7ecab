package validate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/validate/protocol"
)

// certFile is the arena's TLS certificate inside the data directory (arenadata's
// CertFile), mounted into every server at /certs/server.crt with its key beside it.
const certFile = "certs/server.crt"

// arenaCert is the arena's certificate, parsed.
type arenaCert struct {
	der  []byte
	cert *x509.Certificate
}

func loadCert(dir string) (*arenaCert, error) {
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(certFile)))
	if err != nil {
		return nil, fmt.Errorf("the arena's certificate: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("the arena's certificate: %s holds no PEM CERTIFICATE", certFile)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("the arena's certificate: %w", err)
	}
	return &arenaCert{der: block.Bytes, cert: c}, nil
}

const certContract = "the TLS handshake presents the arena's certificate: the data directory's " + certFile +
	", mounted at /certs/server.crt with its key at /certs/server.key (ECDSA P-256, self-signed for localhost); " +
	"every entry's TLS costs the same handshake"

// tlsChecks are the checks of the HTTP/1.1-over-TLS profiles (8081) before their
// workload's: the probe, the arena's certificate and ALPN http/1.1 (with a GET of target).
// Every other check of theirs dials as wrk does, offering no ALPN.
func tlsChecks(p, probe, target string) []check {
	return []check{
		probeCheck(p, probe),
		certCheck(p, nil),
		{
			name:         "ALPN http/1.1",
			contract:     contract(p, "a client that offers ALPN http/1.1 (as curl --http1.1) completes the handshake and GET "+target+" → 200 over HTTP/1.1", ""),
			advisoryPart: "the server selects http/1.1 by ALPN rather than none (RFC 7301 §3.2)",
			run: func(ctx context.Context, e *env) result {
				req := "TLS handshake offering ALPN http/1.1, then GET " + target
				const exp = "the handshake, ALPN http/1.1 selected, and HTTP/1.1 200"
				c, err := dialWith(ctx, e, protocol.H1TLS, protocol.Config{ALPN: []string{protocol.ALPNHTTP1}})
				if err != nil {
					return failed(req, exp, err.Error())
				}
				defer c.close()
				alpn := c.nc.(*tls.Conn).ConnectionState().NegotiatedProtocol
				raw := request("GET", target, nil, nil)
				if err := c.write(raw); err != nil {
					return failed(req, exp, err.Error())
				}
				r, err := c.response("GET")
				if err != nil {
					return failed(req, exp, err.Error())
				}
				if r.Status != 200 || r.Proto != "HTTP/1.1" {
					return failed(req, exp, describe(r))
				}
				if alpn != protocol.ALPNHTTP1 {
					return result{status: Fail, advisory: true, request: req, expected: exp,
						got: fmt.Sprintf("ALPN %s, then %s", alpnName(alpn), describe(r))}
				}
				return passed(req, exp, "ALPN http/1.1, then "+describe(r))
			},
		},
	}
}

// h2TLSChecks are the TLS checks of the h2 profiles (8443): the arena's certificate and
// h2 by ALPN.
func h2TLSChecks(p, path string) []check {
	return []check{
		certCheck(p, []string{protocol.ALPNH2, protocol.ALPNHTTP1}),
		{
			name:     "ALPN h2",
			contract: contract(p, "a client that offers ALPN h2 and http/1.1 (as h2load and curl --http2) gets h2: GET "+path+" → 200 over HTTP/2", "RFC 9113 §3.2"),
			run: func(ctx context.Context, e *env) result {
				req := "TLS handshake offering ALPN h2, http/1.1, then GET " + path
				const exp = "ALPN h2 selected and HTTP/2 200"
				hp := protocol.H2
				c := hp.Client(protocol.Config{Timeout: e.timeout})
				defer c.CloseIdleConnections()
				hr, err := http.NewRequestWithContext(ctx, http.MethodGet, hp.URL(e.addr, path), nil)
				if err != nil {
					return failed(req, exp, err.Error())
				}
				hr.Host = authority(e.addr)
				resp, err := c.Do(hr)
				if err != nil {
					return failed(req, exp, err.Error())
				}
				io.Copy(io.Discard, io.LimitReader(resp.Body, maxBodyBytes))
				resp.Body.Close()
				alpn := ""
				if resp.TLS != nil {
					alpn = resp.TLS.NegotiatedProtocol
				}
				got := fmt.Sprintf("ALPN %s, then %s %d", alpnName(alpn), resp.Proto, resp.StatusCode)
				if alpn != protocol.ALPNH2 || resp.ProtoMajor != 2 || resp.StatusCode != 200 {
					return failed(req, exp, got)
				}
				return passed(req, exp, got)
			},
		},
	}
}

// certCheck wants the arena's certificate in the handshake, offering alpn.
func certCheck(p string, alpn []string) check {
	return check{
		name:     "arena certificate",
		contract: contract(p, certContract, ""),
		run: func(ctx context.Context, e *env) result {
			req := "TLS handshake with " + e.addr + " for localhost"
			exp := "the arena's certificate (" + certFile + ")"
			want, err := e.data.cert()
			if err != nil {
				return failed(req, exp, "cannot check: "+err.Error())
			}
			c, err := dialWith(ctx, e, protocol.H1TLS, protocol.Config{ALPN: alpn})
			if err != nil {
				return failed(req, exp, err.Error())
			}
			defer c.close()
			peers := c.nc.(*tls.Conn).ConnectionState().PeerCertificates
			if len(peers) == 0 {
				return failed(req, exp, "no certificate")
			}
			got := peers[0]
			if !bytes.Equal(got.Raw, want.der) {
				sum := sha256.Sum256(got.Raw)
				return failed(req, exp, fmt.Sprintf("another certificate: subject %q, issuer %q, %s key, SHA-256 %x…",
					got.Subject.String(), got.Issuer.String(), got.PublicKeyAlgorithm, sum[:8]))
			}
			roots := x509.NewCertPool()
			roots.AddCert(want.cert)
			if _, err := got.Verify(x509.VerifyOptions{Roots: roots, DNSName: "localhost"}); err != nil {
				return failed(req, exp, "the arena's certificate, but it does not verify for localhost: "+err.Error())
			}
			return passed(req, exp, "the arena's certificate, for "+got.Subject.CommonName)
		},
	}
}

func alpnName(p string) string {
	if p == "" {
		return "none"
	}
	return strconv.Quote(p)
}

// h2BaselineChecks are the checks of baseline-h2 (8443) and baseline-h2c (8082): GET
// /baseline2?a=…&b=… answers text/plain the sum, over h2 (after the TLS checks) or h2c
// with prior knowledge (which must not answer HTTP/1.1 with 200), as the arena checked. The
// profile's row says which (its Scheme).
func h2BaselineChecks(p string) []check {
	const probe = "/baseline2?a=1&b=1"
	ref := func(text string) string { return contract(p, text, "") }
	checks := []check{probeCheck(p, probe)}
	if row(p).Scheme == profile.SchemeH2 {
		checks = append(checks, h2TLSChecks(p, "/baseline2?a=2&b=3")...)
	} else {
		checks = append(checks, check{
			name:     "HTTP/1.1 not answered 200",
			contract: ref("the port speaks h2c with prior knowledge only: an HTTP/1.1 GET " + probe + " is not answered 200 (any other status, a close or no answer will do)"),
			run:      h1RefusedCheck(probe),
		})
	}
	return append(checks, sumChecks(p)...)
}

// sumChecks are the GET /baseline2 checks the h2, h2c and h3 baselines share.
func sumChecks(p string) []check {
	ref := func(text string) string { return contract(p, text, "") }
	return []check{
		{
			name:     "GET sum 13+42",
			contract: ref(`GET /baseline2?a=13&b=42 → 200 text/plain "55"`),
			run: func(ctx context.Context, e *env) result {
				return expectText(ctx, e, "GET", request("GET", "/baseline2?a=13&b=42", nil, nil), "55")
			},
		},
		{
			name:     "GET Content-Type",
			contract: ref(`GET /baseline2?a=13&b=42 → 200 text/plain "55"`),
			run: func(ctx context.Context, e *env) result {
				return expectType(ctx, e, "GET", request("GET", "/baseline2?a=13&b=42", nil, nil), "text/plain")
			},
		},
		{
			name:     "GET random sum",
			contract: ref("GET /baseline2?a={a}&b={b} → 200 text/plain a+b, for any integers"),
			run: func(ctx context.Context, e *env) result {
				rng := e.rand()
				a, b := 100+rng.IntN(900), 100+rng.IntN(900)
				return expectText(ctx, e, "GET", request("GET", fmt.Sprintf("/baseline2?a=%d&b=%d", a, b), nil, nil), strconv.Itoa(a+b))
			},
		},
	}
}

// h1RefusedCheck sends an HTTP/1.1 GET to the h2c port and wants anything but 200.
func h1RefusedCheck(path string) func(ctx context.Context, e *env) result {
	return func(ctx context.Context, e *env) result {
		raw := request("GET", path, nil, nil)
		const exp = "no 200: another status, a close, or no answer"
		c, err := dialWith(ctx, e, protocol.H1, protocol.Config{})
		if err != nil {
			return failed(show(raw), exp, err.Error())
		}
		defer c.close()
		if err := c.write(raw); err != nil {
			return passed(show(raw), exp, "the request was refused: "+err.Error())
		}
		r, err := c.response("GET")
		switch {
		case err != nil && ctx.Err() != nil:
			return failed(show(raw), exp, err.Error())
		case errors.As(err, new(errTimeout)):
			return passed(show(raw), exp, fmt.Sprintf("no answer within %v", e.timeout))
		case err != nil:
			return passed(show(raw), exp, err.Error())
		case r.Status == 200:
			return failed(show(raw), exp, describe(r))
		}
		return passed(show(raw), exp, describe(r))
	}
}
