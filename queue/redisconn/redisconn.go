// Package redisconn turns the queue's Redis settings (a redis:// or rediss:// URL, a CA file
// and an optional client certificate) into go-redis options. The commands that reach the
// queue's Redis (serve, work, queue) share it, so that each accepts the same settings with
// the same errors; the queue itself takes a ready client and knows nothing of them.
package redisconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/redis/go-redis/v9"
)

// TLSFiles are the files of a TLS connection to Redis, all PEM.
type TLSFiles struct {
	CA   string // the CA that signed the server's certificate; "" means the system's roots
	Cert string // the client's certificate, for a server that asks for one (tls-auth-clients)
	Key  string // its private key; set with Cert or not at all
}

func (f TLSFiles) set() bool { return f.CA != "" || f.Cert != "" || f.Key != "" }

// Options parses url (redis://[user:password@]host:port[/db], or rediss:// for TLS) and,
// for rediss://, adds files to its TLS configuration: TLS 1.2 at least, the server's name
// checked against its certificate. Files given with a redis:// URL are an error: they would
// silently not be used.
func Options(url string, files TLSFiles) (*redis.Options, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("%w; want redis://[user:password@]host:port[/db] or rediss://… for TLS", err)
	}
	if o.TLSConfig == nil {
		if files.set() {
			return nil, errors.New("a CA or client certificate is set but the URL is redis://, which does not use TLS; use rediss://")
		}
		return o, nil
	}
	o.TLSConfig.MinVersion = tls.VersionTLS12
	if files.CA != "" {
		pem, err := os.ReadFile(files.CA)
		if err != nil {
			return nil, fmt.Errorf("the Redis CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the Redis CA %s holds no PEM certificate", files.CA)
		}
		o.TLSConfig.RootCAs = pool
	}
	if (files.Cert == "") != (files.Key == "") {
		return nil, errors.New("a Redis client certificate needs both its certificate and its key file")
	}
	if files.Cert != "" {
		pair, err := tls.LoadX509KeyPair(files.Cert, files.Key)
		if err != nil {
			return nil, fmt.Errorf("the Redis client certificate: %w", err)
		}
		o.TLSConfig.Certificates = []tls.Certificate{pair}
	}
	return o, nil
}

// Dial returns a client of the Redis at url with files (Options) once it answers a PING.
// The error names the address, never the URL: the URL may hold a password.
func Dial(ctx context.Context, url string, files TLSFiles) (*redis.Client, error) {
	o, err := Options(url, files)
	if err != nil {
		return nil, err
	}
	rdb := redis.NewClient(o)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("the Redis at %s does not answer: %w", o.Addr, err)
	}
	return rdb, nil
}
