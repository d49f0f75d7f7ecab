package arenadata

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"time"
)

// The TLS pair is an ECDSA P-256 key derived from a fixed seed and a self-signed
// certificate signed with RFC 6979 deterministic ECDSA (crypto/ecdsa signs
// deterministically when given no randomness), so both files are the same on every run.
// P-256 rather than Ed25519 because every TLS stack the entries use accepts it (.NET, for
// one, cannot load Ed25519 certificates).

// Names and addresses the certificate is valid for.
var (
	certDNSNames = []string{"localhost"}
	certIPs      = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
)

// Validity of the certificate.
var (
	certNotBefore = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	certNotAfter  = time.Date(2045, 1, 1, 0, 0, 0, 0, time.UTC)
)

func certFiles() []file {
	return []file{
		{CertFile, func(w io.Writer) error {
			der, _, err := tlsPair()
			if err != nil {
				return err
			}
			return pem.Encode(w, &pem.Block{Type: "CERTIFICATE", Bytes: der})
		}},
		{KeyFile, func(w io.Writer) error {
			_, key, err := tlsPair()
			if err != nil {
				return err
			}
			return pem.Encode(w, &pem.Block{Type: "PRIVATE KEY", Bytes: key})
		}},
	}
}

// tlsPair returns the certificate (DER) and the private key (PKCS#8 DER).
func tlsPair() (cert, key []byte, err error) {
	seed := sha256.Sum256([]byte("arenadata/" + KeyFile))
	priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), seed[:])
	if err != nil {
		return nil, nil, fmt.Errorf("tls key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(0x61726e61), // "arna"
		Subject:               pkix.Name{CommonName: "localhost", Organization: []string{"arenabot test data"}},
		NotBefore:             certNotBefore,
		NotAfter:              certNotAfter,
		DNSNames:              certDNSNames,
		IPAddresses:           certIPs,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	// A nil random source makes the ECDSA signature deterministic (RFC 6979).
	cert, err = x509.CreateCertificate(nil, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		return nil, nil, fmt.Errorf("tls certificate: %w", err)
	}
	key, err = x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, nil, fmt.Errorf("tls key: %w", err)
	}
	return cert, key, nil
}
