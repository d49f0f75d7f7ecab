package arenadata_test

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/arenabot/arenabot/arenadata"
)

func loadPair(t *testing.T) (tls.Certificate, *x509.Certificate) {
	t.Helper()
	dir := tree(t)
	pair, err := tls.X509KeyPair(readFile(t, dir, arenadata.CertFile), readFile(t, dir, arenadata.KeyFile))
	if err != nil {
		t.Fatalf("certificate and key do not make a pair: %v", err)
	}
	return pair, pair.Leaf
}

func TestCertificate(t *testing.T) {
	_, cert := loadPair(t)
	if cert.Issuer.String() != cert.Subject.String() {
		t.Errorf("issuer %q differs from subject %q, want a self-signed certificate", cert.Issuer, cert.Subject)
	}
	if cert.Subject.CommonName != "localhost" {
		t.Errorf("CN %q, want localhost", cert.Subject.CommonName)
	}
	if !slices.Equal(cert.DNSNames, []string{"localhost"}) {
		t.Errorf("DNS SANs %q, want [localhost]", cert.DNSNames)
	}
	var ips []string
	for _, ip := range cert.IPAddresses {
		ips = append(ips, ip.String())
	}
	if !slices.Equal(ips, []string{"127.0.0.1", "::1"}) {
		t.Errorf("IP SANs %q, want [127.0.0.1 ::1]", ips)
	}
	if want := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC); !cert.NotBefore.Equal(want) {
		t.Errorf("NotBefore %v, want %v", cert.NotBefore, want)
	}
	if want := time.Date(2045, 1, 1, 0, 0, 0, 0, time.UTC); !cert.NotAfter.Equal(want) {
		t.Errorf("NotAfter %v, want %v", cert.NotAfter, want)
	}
	if _, ok := cert.PublicKey.(*ecdsa.PublicKey); !ok {
		t.Errorf("public key is %T, want ECDSA (P-256 loads in every TLS stack)", cert.PublicKey)
	}
	if err := cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature); err != nil {
		t.Errorf("not self-signed: %v", err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	for _, name := range []string{"localhost", "127.0.0.1", "::1"} {
		_, err := cert.Verify(x509.VerifyOptions{
			DNSName:     name,
			Roots:       roots,
			CurrentTime: time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC),
		})
		if err != nil {
			t.Errorf("verify for %s: %v", name, err)
		}
	}
}

// TestTLSHandshake serves TLS with the pair and connects to it, verifying the server by
// name and by address.
func TestTLSHandshake(t *testing.T) {
	pair, cert := loadPair(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				io.WriteString(c, "ok")
			}()
		}
	}()

	roots := x509.NewCertPool()
	roots.AddCert(cert)
	for _, serverName := range []string{"localhost", "127.0.0.1"} {
		t.Run(serverName, func(t *testing.T) {
			d := &net.Dialer{Timeout: 10 * time.Second}
			c, err := tls.DialWithDialer(d, "tcp", ln.Addr().String(), &tls.Config{RootCAs: roots, ServerName: serverName})
			if err != nil {
				t.Fatalf("handshake: %v", err)
			}
			defer c.Close()
			got, err := io.ReadAll(c)
			if err != nil || string(got) != "ok" {
				t.Errorf("read %q, %v; want ok", got, err)
			}
		})
	}
}
