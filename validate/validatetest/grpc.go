package validatetest

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/arenabot/arenabot/validate/protocol"
)

// grpcBehaviours break the checks of the gRPC profiles, each for the profiles listed.
var grpcBehaviours = map[string]struct {
	desc     string
	profiles []string
}{
	"getsum-load-wrong":   {"GetSum(1, 2) answers 4", []string{"unary-grpc", "unary-grpc-tls", "stream-grpc", "stream-grpc-tls"}},
	"getsum-random-wrong": {"GetSum with a >= 100 answers one too many", []string{"unary-grpc", "unary-grpc-tls"}},
	"getsum-concurrent":   {"GetSum with b = 1000 takes 20 ms, and with 20 or more such calls in flight answers grpc-status 8 (ResourceExhausted)", []string{"unary-grpc", "unary-grpc-tls"}},
	"stream-load-short":   {"StreamSum with count 5000 sends 4999 replies", []string{"stream-grpc", "stream-grpc-tls"}},
	"stream-random-wrong": {"StreamSum with another count sends a last reply one too large", []string{"stream-grpc", "stream-grpc-tls"}},
	// Not one check each: for TestGRPCMoreWaysToBreak and the runner's counting test.
	"status-13": {"every GetSum is answered HTTP 200 with grpc-status 13 (Internal)", []string{"unary-grpc", "unary-grpc-tls"}},
	"no-tls":    {"the TLS port serves gRPC over h2c, without TLS", []string{"unary-grpc-tls", "stream-grpc-tls"}},
}

// grpcModes are every mode StartGRPC accepts, with what it breaks.
var grpcModes = func() map[string]string {
	m := map[string]string{}
	for b, x := range grpcBehaviours {
		for _, p := range x.profiles {
			m[p+"."+b] = x.desc
		}
	}
	return m
}()

// GRPCModes returns every mode StartGRPC accepts, sorted: "<profile>.<behaviour>".
func GRPCModes() []string { return slices.Sorted(maps.Keys(grpcModes)) }

// DescribeGRPC says what a gRPC mode breaks, or "" for an unknown mode.
func DescribeGRPC(mode string) string { return grpcModes[mode] }

// A GRPCServer is a running gRPC fixture on 127.0.0.1: the arena's BenchmarkService over
// h2c with prior knowledge on one port and over TLS (the arena's certificate) on another,
// served by grpc-go with messages built from a descriptor.
type GRPCServer struct {
	H2CAddr string // "127.0.0.1:41234"
	H2CPort int
	TLSAddr string
	TLSPort int

	behaviour string
	inFlight  atomic.Int32
}

// StartGRPC starts a gRPC fixture for the test, with the TLS pair of the arena data in
// dataDir, and stops it when the test ends. mode is "" for a server that fulfils the
// contract, or one of GRPCModes ("unary-grpc.getsum-random-wrong").
func StartGRPC(t testing.TB, dataDir, mode string) *GRPCServer {
	t.Helper()
	s := &GRPCServer{}
	if mode != "" {
		if _, ok := grpcModes[mode]; !ok {
			t.Fatalf("validatetest: unknown gRPC mode %q (see GRPCModes)", mode)
		}
		_, s.behaviour, _ = strings.Cut(mode, ".")
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dataDir, "certs", "server.crt"), filepath.Join(dataDir, "certs", "server.key"))
	if err != nil {
		t.Fatalf("validatetest: %v", err)
	}
	desc, err := benchmarkService(s)
	if err != nil {
		t.Fatal(err)
	}
	serve := func(opts ...grpc.ServerOption) (string, int) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("validatetest: %v", err)
		}
		gs := grpc.NewServer(opts...)
		gs.RegisterService(desc, s)
		go gs.Serve(ln)
		t.Cleanup(gs.Stop)
		return ln.Addr().String(), ln.Addr().(*net.TCPAddr).Port
	}
	s.H2CAddr, s.H2CPort = serve()
	if s.behaviour == "no-tls" {
		s.TLSAddr, s.TLSPort = serve()
	} else {
		s.TLSAddr, s.TLSPort = serve(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})))
	}
	return s
}

// messages are the descriptors of the service's messages, by name.
type messages map[string]protoreflect.MessageDescriptor

func (ms messages) new(name string) *dynamicpb.Message { return dynamicpb.NewMessage(ms[name]) }

func get(m *dynamicpb.Message, n protoreflect.FieldNumber) int32 {
	return int32(m.Get(m.Descriptor().Fields().ByNumber(n)).Int())
}

func (ms messages) reply(v int32) *dynamicpb.Message {
	r := ms.new("SumReply")
	r.Set(ms["SumReply"].Fields().ByNumber(1), protoreflect.ValueOfInt32(v))
	return r
}

// benchmarkService describes BenchmarkService's GetSum and StreamSum, served by s.
func benchmarkService(s *GRPCServer) (*grpc.ServiceDesc, error) {
	ds, err := protocol.BenchmarkMessages()
	if err != nil {
		return nil, fmt.Errorf("validatetest: %w", err)
	}
	ms := messages(ds)
	return &grpc.ServiceDesc{
		ServiceName: "benchmark.BenchmarkService",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "GetSum",
			Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				req := ms.new("SumRequest")
				if err := dec(req); err != nil {
					return nil, err
				}
				sum, err := s.getSum(get(req, 1), get(req, 2))
				if err != nil {
					return nil, err
				}
				return ms.reply(sum), nil
			},
		}},
		Streams: []grpc.StreamDesc{{
			StreamName:    "StreamSum",
			ServerStreams: true,
			Handler: func(_ any, stream grpc.ServerStream) error {
				req := ms.new("StreamRequest")
				if err := stream.RecvMsg(req); err != nil {
					return err
				}
				a, b, n := get(req, 1), get(req, 2), get(req, 3)
				switch {
				case s.behaviour == "stream-load-short" && n == 5000:
					n--
				case n < 0 || n > 1<<20:
					return status.Errorf(codes.InvalidArgument, "count %d", n)
				}
				for i := range n {
					v := a + b + i
					if s.behaviour == "stream-random-wrong" && n != 5000 && i == n-1 {
						v++
					}
					if err := stream.SendMsg(ms.reply(v)); err != nil {
						return err
					}
				}
				return nil
			},
		}},
	}, nil
}

// getSum is GetSum as the mode has it.
func (s *GRPCServer) getSum(a, b int32) (int32, error) {
	switch s.behaviour {
	case "status-13":
		return 0, status.Error(codes.Internal, "validatetest: status-13 mode")
	case "getsum-load-wrong":
		if a == 1 && b == 2 {
			return 4, nil
		}
	case "getsum-random-wrong":
		if a >= 100 {
			return a + b + 1, nil
		}
	case "getsum-concurrent":
		if b != 1000 { // the other checks run alongside; only the concurrency check's calls count
			break
		}
		n := s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		time.Sleep(20 * time.Millisecond)
		if n >= 20 {
			return 0, status.Errorf(codes.ResourceExhausted, "%d calls in flight", n)
		}
	}
	return a + b, nil
}
