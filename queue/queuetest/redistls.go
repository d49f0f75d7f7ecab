package queuetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TLSFiles are the PEM files of a TLS server StartRedis made: its CA, and a client
// certificate that CA signed.
type TLSFiles struct {
	CA         string
	ClientCert string
	ClientKey  string
}

// TLS makes StartRedis serve over TLS only (tls-port, port 0), with a CA, a server
// certificate for 127.0.0.1 and localhost, and a client certificate, all made for the test
// in its data directory. Clients may present the client certificate or none
// (tls-auth-clients optional). Server.TLS names the files.
func TLS() Option {
	return func(c *serverConfig) { c.tls = true }
}

// Users makes StartRedis start with these ACL rules, one "user NAME …" directive each
// without the word user ("runner on >pw ~arena:* +ping"), and with the default user off:
// every client must AUTH as one of them.
func Users(rules ...string) Option {
	return func(c *serverConfig) { c.users = append(c.users, rules...) }
}

// tlsArgs makes the certificates in dir and returns the arguments that serve TLS only on
// port.
func tlsArgs(t testing.TB, dir string, port int) (TLSFiles, []string) {
	t.Helper()
	files, server := makeCerts(t, dir)
	return files, []string{
		"--port", "0",
		"--tls-port", fmt.Sprint(port),
		"--tls-cert-file", server[0],
		"--tls-key-file", server[1],
		"--tls-ca-cert-file", files.CA,
		"--tls-auth-clients", "optional",
	}
}

// userArgs are the arguments of ACL rules, the default user first turned off. redis-server
// takes each word of a rule as its own argument.
func userArgs(rules []string) []string {
	var args []string
	for _, r := range append([]string{"default off resetkeys -@all"}, rules...) {
		args = append(append(args, "--user"), strings.Fields(r)...)
	}
	return args
}

// makeCerts writes a CA, a server certificate (127.0.0.1, localhost) and a client
// certificate into dir; it returns the CA and client files and the server's pair.
func makeCerts(t testing.TB, dir string) (TLSFiles, [2]string) {
	t.Helper()
	caKey, caCert := newCert(t, nil, nil, &x509.Certificate{
		Subject:               pkix.Name{CommonName: "arenabot test CA"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	})
	srvKey, srvCert := newCert(t, caKey, caCert, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "redis"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	cliKey, cliCert := newCert(t, caKey, caCert, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "runner"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	key := func(k *ecdsa.PrivateKey) []byte {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	files := TLSFiles{
		CA:         write("ca.crt", "CERTIFICATE", caCert.Raw),
		ClientCert: write("client.crt", "CERTIFICATE", cliCert.Raw),
		ClientKey:  write("client.key", "PRIVATE KEY", key(cliKey)),
	}
	server := [2]string{write("server.crt", "CERTIFICATE", srvCert.Raw), write("server.key", "PRIVATE KEY", key(srvKey))}
	return files, server
}

// newCert makes a key and a certificate from tmpl, signed by parent (self-signed when
// parent is nil).
func newCert(t testing.TB, parentKey *ecdsa.PrivateKey, parent, tmpl *x509.Certificate) (*ecdsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, k
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &k.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return k, c
}

// pingTLS is ping over TLS, trusting the CA in ca: any answer but -LOADING means the server
// is up (with ACLs, an unauthenticated PING is refused, and that refusal is an answer).
func pingTLS(addr, ca string) error {
	pemCA, err := os.ReadFile(ca)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pemCA)
	d := &net.Dialer{Timeout: time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
	if err != nil {
		return err
	}
	line, err := answerPing(conn)
	if err != nil {
		return err
	}
	if strings.HasPrefix(line, "-LOADING") {
		return fmt.Errorf("PING: %s", line)
	}
	return nil
}
