package protocol

import (
	"context"
	"errors"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// A GRPC protocol is spoken by a grpc-go client connection.
type GRPC interface {
	Protocol
	// Conn returns a client connection to addr (it connects on first use); the caller
	// closes it. Calls on it carry protobuf messages; RawCodec sends bytes as they are.
	Conn(addr string, cfg Config) (*grpc.ClientConn, error)
}

// The gRPC units: over h2c with prior knowledge (8080) and over TLS with ALPN h2 (8443).
var (
	GRPCH2C GRPC = grpcUnit{}
	GRPCTLS GRPC = grpcUnit{tls: true}
)

// ProbeRequest is the readiness probe's request message, benchmark.SumRequest{a: 1, b: 2}
// encoded (field 1 varint 1, field 2 varint 2): the body the old arena's ghz probe sent.
var ProbeRequest = []byte{0x08, 0x01, 0x10, 0x02}

type grpcUnit struct{ tls bool }

func (g grpcUnit) Scheme() string {
	if g.tls {
		return SchemeGRPCS
	}
	return SchemeGRPC
}

func (g grpcUnit) Describe() string {
	if g.tls {
		return "gRPC over TLS (ALPN h2)"
	}
	return "gRPC over h2c"
}

func (g grpcUnit) Conn(addr string, cfg Config) (*grpc.ClientConn, error) {
	creds := insecure.NewCredentials()
	if g.tls {
		creds = credentials.NewTLS(TLSConfig(cfg, []string{ALPNH2}))
	}
	return grpc.NewClient(addr,
		grpc.WithTransportCredentials(creds),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return dialTCP(ctx, addr, cfg) }),
	)
}

// Probe makes one unary call of the method path (“/benchmark.BenchmarkService/GetSum”)
// with ProbeRequest. Any status the server sends counts as an answer; Unavailable (no
// connection, or a transport that failed) and a deadline that passed do not.
func (g grpcUnit) Probe(ctx context.Context, addr, path string, cfg Config) error {
	conn, err := g.Conn(addr, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout())
	defer cancel()
	var reply []byte
	err = conn.Invoke(ctx, path, ProbeRequest, &reply, grpc.ForceCodec(RawCodec{}))
	switch status.Code(err) {
	case codes.OK:
		return nil
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return fmt.Errorf("gRPC %s on %s: %w", path, addr, err)
	}
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return nil // the server answered with a status of its own
	}
	return err
}

// RawCodec is a gRPC codec that sends a []byte message as it is and receives one into a
// *[]byte: calls without generated code, for probes and checks that compare bytes. Its
// name is "proto", so the content-type stays application/grpc(+proto).
type RawCodec struct{}

// Marshal returns v, which must be a []byte.
func (RawCodec) Marshal(v any) ([]byte, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, fmt.Errorf("raw codec: cannot send %T, only []byte", v)
	}
	return b, nil
}

// Unmarshal copies data into v, which must be a *[]byte.
func (RawCodec) Unmarshal(data []byte, v any) error {
	p, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("raw codec: cannot receive into %T, only *[]byte", v)
	}
	*p = append((*p)[:0], data...)
	return nil
}

// Name is "proto".
func (RawCodec) Name() string { return "proto" }
