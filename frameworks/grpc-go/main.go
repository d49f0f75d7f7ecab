// Command server is the arena's grpc-go entry: google.golang.org/grpc serving the arena's
// BenchmarkService (benchmark.proto) over h2c with prior knowledge on :8080 and over TLS
// (h2 by ALPN) on :8443, with the arena's certificate (TLS_CERT, TLS_KEY; default
// /certs/server.crt and /certs/server.key).
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	pb "arena/frameworks/grpc-go/benchmarkpb"
)

// maxCount bounds StreamSum's count, so one call cannot hold the server forever.
const maxCount = 1 << 20

type service struct {
	pb.UnimplementedBenchmarkServiceServer
}

func (service) GetSum(_ context.Context, r *pb.SumRequest) (*pb.SumReply, error) {
	return &pb.SumReply{Result: r.GetA() + r.GetB()}, nil
}

func (service) StreamSum(r *pb.StreamRequest, stream grpc.ServerStreamingServer[pb.SumReply]) error {
	n := r.GetCount()
	if n < 0 || n > maxCount {
		return status.Errorf(codes.InvalidArgument, "count %d is not in [0, %d]", n, maxCount)
	}
	sum := r.GetA() + r.GetB()
	reply := &pb.SumReply{}
	for i := range n {
		reply.Result = sum + i
		if err := stream.Send(reply); err != nil {
			return err
		}
	}
	return nil
}

func (service) CollectSum(stream grpc.ClientStreamingServer[pb.SumRequest, pb.SumReply]) error {
	var total int32
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return stream.SendAndClose(&pb.SumReply{Result: total})
		}
		if err != nil {
			return err
		}
		total += r.GetA() + r.GetB()
	}
}

func (service) EchoSum(stream grpc.BidiStreamingServer[pb.SumRequest, pb.SumReply]) error {
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := stream.Send(&pb.SumReply{Result: r.GetA() + r.GetB()}); err != nil {
			return err
		}
	}
}

func getenv(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func serve(addr string, opts ...grpc.ServerOption) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatalf("listen %s: %v", addr, err)
	}
	s := grpc.NewServer(opts...)
	pb.RegisterBenchmarkServiceServer(s, service{})
	log.Printf("serving BenchmarkService on %s", addr)
	log.Fatal(s.Serve(lis))
}

func main() {
	certFile := getenv("TLS_CERT", "/certs/server.crt")
	keyFile := getenv("TLS_KEY", "/certs/server.key")
	if cert, err := tls.LoadX509KeyPair(certFile, keyFile); err != nil {
		log.Printf("no TLS on :8443: %v", err)
	} else {
		creds := credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})
		go serve(":8443", grpc.Creds(creds))
	}
	serve(":8080")
}
