package validate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/validate/protocol"
)

// The arena's gRPC service (requests/benchmark.proto): package benchmark, service
// BenchmarkService. Its messages are built here from a descriptor rather than from generated
// code, so the main module carries no copy of an entry's generated package.
const (
	MethodGetSum    = "/benchmark.BenchmarkService/GetSum"
	MethodStreamSum = "/benchmark.BenchmarkService/StreamSum"
)

// StreamCount is how many replies the stream-grpc load asks StreamSum for (the arena's
// ghz data {"a":1,"b":2,"count":5000}).
const StreamCount = 5000

// grpcConcurrent is how many GetSum calls the concurrency check has in flight on one
// connection: h2load's -m 100.
const grpcConcurrent = 100

// newMessage returns an empty message of the named type, with values for its fields in
// order.
func newMessage(name string, values ...int32) (*dynamicpb.Message, error) {
	ds, err := protocol.BenchmarkMessages()
	if err != nil {
		return nil, err
	}
	m := dynamicpb.NewMessage(ds[name])
	for i, v := range values {
		m.Set(ds[name].Fields().Get(i), protoreflect.ValueOfInt32(v))
	}
	return m, nil
}

// replyResult reads SumReply.result.
func replyResult(m *dynamicpb.Message) int32 {
	return int32(m.Get(m.Descriptor().Fields().ByNumber(1)).Int())
}

// A GRPCStatusError is a call that ended with a grpc-status other than 0 (OK).
type GRPCStatusError struct {
	Code    uint32 // 13
	Name    string // "Internal"
	Message string // grpc-message
}

func (e *GRPCStatusError) Error() string {
	s := fmt.Sprintf("grpc-status %d (%s)", e.Code, e.Name)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// statusError turns a call's error into a *GRPCStatusError when it carries a status.
func statusError(err error) error {
	if err == nil {
		return nil
	}
	if st, ok := status.FromError(err); ok && st.Code() != codes.OK {
		return &GRPCStatusError{Code: uint32(st.Code()), Name: st.Code().String(), Message: st.Message()}
	}
	return err
}

// A GRPCClient calls an entry's BenchmarkService over one gRPC client connection of a
// protocol unit (validate/protocol: h2c with prior knowledge, or TLS with ALPN h2, where no
// certificate is verified, as the load tools verify none).
type GRPCClient struct {
	cc *grpc.ClientConn
}

// DialGRPC returns a client of the BenchmarkService at addr ("127.0.0.1:8080") over TLS
// or h2c; it connects on the first call.
func DialGRPC(addr string, useTLS bool, timeout time.Duration) (*GRPCClient, error) {
	unit := protocol.GRPCH2C
	if useTLS {
		unit = protocol.GRPCTLS
	}
	return dialUnit(unit, addr, timeout)
}

func dialUnit(unit protocol.GRPC, addr string, timeout time.Duration) (*GRPCClient, error) {
	cc, err := unit.Conn(addr, protocol.Config{Timeout: timeout})
	if err != nil {
		return nil, fmt.Errorf("%s client for %s: %w", unit.Describe(), addr, err)
	}
	return &GRPCClient{cc: cc}, nil
}

// Close closes the connection.
func (c *GRPCClient) Close() error { return c.cc.Close() }

// GetSum calls GetSum(SumRequest{a, b}) and returns SumReply.result; a call that ends with
// a non-zero grpc-status returns a *GRPCStatusError.
func (c *GRPCClient) GetSum(ctx context.Context, a, b int32) (int32, error) {
	req, err := newMessage("SumRequest", a, b)
	if err != nil {
		return 0, err
	}
	reply, err := newMessage("SumReply")
	if err != nil {
		return 0, err
	}
	if err := c.cc.Invoke(ctx, MethodGetSum, req, reply); err != nil {
		return 0, statusError(err)
	}
	return replyResult(reply), nil
}

// StreamSum calls StreamSum(StreamRequest{a, b, count}) and returns the results of every
// reply, in order, until the server ends the stream; a stream that ends with a non-zero
// grpc-status returns the replies so far and a *GRPCStatusError. It stops reading after
// limit replies.
func (c *GRPCClient) StreamSum(ctx context.Context, a, b, count int32, limit int) ([]int32, error) {
	req, err := newMessage("StreamRequest", a, b, count)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.cc.NewStream(ctx, &grpc.StreamDesc{StreamName: "StreamSum", ServerStreams: true}, MethodStreamSum)
	if err != nil {
		return nil, statusError(err)
	}
	if err := st.SendMsg(req); err != nil {
		return nil, statusError(err)
	}
	if err := st.CloseSend(); err != nil {
		return nil, statusError(err)
	}
	var got []int32
	for len(got) <= limit {
		reply, err := newMessage("SumReply")
		if err != nil {
			return got, err
		}
		if err := st.RecvMsg(reply); errors.Is(err, io.EOF) {
			return got, nil
		} else if err != nil {
			return got, statusError(err)
		}
		got = append(got, replyResult(reply))
	}
	return got, nil
}

// grpcChecks are the checks of the gRPC profiles, over the profile's transport (h2c on 8080
// for unary-grpc and stream-grpc, TLS on 8443 for the -tls twins). Every gRPC profile is
// probed with GetSum; the unary ones then check GetSum, the stream ones StreamSum.
func grpcChecks(p string, stream bool) []check {
	ref := func(text string) string { return contract(p, text, "") }
	checks := []check{{
		name:     "probe GetSum 1+2",
		contract: ref("the readiness probe and the unary load's request, GetSum(SumRequest{a: 1, b: 2}) → grpc-status 0, SumReply{result: 3}"),
		run: func(ctx context.Context, e *env) result {
			return expectSums(ctx, e, [][2]int32{{1, 2}})
		},
	}}
	if !stream {
		return append(checks, check{
			name:     "GetSum random",
			contract: ref("GetSum(SumRequest{a, b}) → grpc-status 0, SumReply{result: a+b}, for any int32 a and b whose sum is one"),
			run: func(ctx context.Context, e *env) result {
				rng := e.rand()
				var pairs [][2]int32
				for range 10 {
					pairs = append(pairs, [2]int32{int32(100 + rng.IntN(1<<20)), int32(100 + rng.IntN(1<<20))})
				}
				return expectSums(ctx, e, pairs)
			},
		}, check{
			name:     "100 concurrent GetSum",
			contract: ref("100 GetSum calls in flight at once on one connection (h2load -m 100) → each grpc-status 0 with its sum"),
			run:      concurrentSums,
		})
	}
	return append(checks, check{
		name:     "StreamSum 1+2 count 5000",
		contract: ref("the stream load's request, StreamSum(StreamRequest{a: 1, b: 2, count: 5000}) → exactly 5000 replies, the i-th (from 0) SumReply{result: 3+i}, then grpc-status 0"),
		run: func(ctx context.Context, e *env) result {
			return expectStream(ctx, e, 1, 2, StreamCount)
		},
	}, check{
		name:     "StreamSum random",
		contract: ref("StreamSum(StreamRequest{a, b, count}) → exactly count replies, the i-th (from 0) SumReply{result: a+b+i}, then grpc-status 0"),
		run: func(ctx context.Context, e *env) result {
			rng := e.rand()
			for range 3 {
				a, b, n := int32(100+rng.IntN(1<<20)), int32(100+rng.IntN(1<<20)), int32(1+rng.IntN(300))
				if r := expectStream(ctx, e, a, b, n); r.status != Pass {
					return r
				}
			}
			return passed("3 × StreamSum with random a, b and count ≤ 300 "+grpcOver(e), "count replies a+b+i each, then grpc-status 0", "as expected")
		},
	})
}

// grpcOver says where a check's calls go: "over h2c to 127.0.0.1:8080".
func grpcOver(e *env) string {
	t := "h2c"
	if e.profile.Scheme == profile.SchemeGRPCS {
		t = "TLS"
	}
	return "over " + t + " to " + e.addr
}

func dialEnv(e *env) (*GRPCClient, error) {
	unit, ok := e.proto.(protocol.GRPC)
	if !ok {
		return nil, fmt.Errorf("scheme %s has no gRPC unit", e.profile.Scheme)
	}
	return dialUnit(unit, e.addr, e.timeout)
}

// expectSums calls GetSum for each pair on one connection and wants each sum with
// grpc-status 0.
func expectSums(ctx context.Context, e *env, pairs [][2]int32) result {
	var shown []string
	for _, p := range pairs {
		shown = append(shown, fmt.Sprintf("{a: %d, b: %d}", p[0], p[1]))
	}
	req := "GetSum(SumRequest" + strings.Join(shown, ", ") + ") " + grpcOver(e)
	if len(pairs) > 1 {
		req = fmt.Sprintf("%d × GetSum(SumRequest%s, …) %s", len(pairs), shown[0], grpcOver(e))
	}
	c, err := dialEnv(e)
	if err != nil {
		return failed(req, "grpc-status 0 with the sum", err.Error())
	}
	defer c.Close()
	for _, p := range pairs {
		want := p[0] + p[1]
		exp := fmt.Sprintf("grpc-status 0, SumReply{result: %d}", want)
		cctx, cancel := context.WithTimeout(ctx, e.timeout)
		got, err := c.GetSum(cctx, p[0], p[1])
		cancel()
		if err != nil {
			return failed(fmt.Sprintf("GetSum(SumRequest{a: %d, b: %d}) %s", p[0], p[1], grpcOver(e)), exp, err.Error())
		}
		if got != want {
			return failed(fmt.Sprintf("GetSum(SumRequest{a: %d, b: %d}) %s", p[0], p[1], grpcOver(e)), exp, fmt.Sprintf("grpc-status 0, SumReply{result: %d}", got))
		}
	}
	return passed(req, "grpc-status 0 with each sum", fmt.Sprintf("%d sums, grpc-status 0", len(pairs)))
}

// concurrentSums has grpcConcurrent GetSum calls in flight on one connection.
func concurrentSums(ctx context.Context, e *env) result {
	req := fmt.Sprintf("%d concurrent GetSum(SumRequest{a: i, b: 1000}), i = 0…%d, on one connection %s", grpcConcurrent, grpcConcurrent-1, grpcOver(e))
	exp := "grpc-status 0 and i+1000 for every call"
	c, err := dialEnv(e)
	if err != nil {
		return failed(req, exp, err.Error())
	}
	defer c.Close()
	// One call first, so that all of them share the connection it opens.
	cctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	if _, err := c.GetSum(cctx, 0, 0); err != nil {
		return failed(req, exp, "the first call: "+err.Error())
	}
	errs := make([]string, grpcConcurrent)
	var wg sync.WaitGroup
	for i := range grpcConcurrent {
		wg.Go(func() {
			got, err := c.GetSum(cctx, int32(i), 1000)
			switch {
			case err != nil:
				errs[i] = fmt.Sprintf("call %d: %v", i, err)
			case got != int32(i)+1000:
				errs[i] = fmt.Sprintf("call %d: SumReply{result: %d}, expected %d", i, got, i+1000)
			}
		})
	}
	wg.Wait()
	var fails []string
	for _, s := range errs {
		if s != "" {
			fails = append(fails, s)
		}
	}
	if len(fails) > 0 {
		return failed(req, exp, fmt.Sprintf("%d of %d calls missed; first: %s", len(fails), grpcConcurrent, fails[0]))
	}
	return passed(req, exp, fmt.Sprintf("%d calls, grpc-status 0 each", grpcConcurrent))
}

// expectStream calls StreamSum and wants exactly n replies a+b+i, then grpc-status 0.
func expectStream(ctx context.Context, e *env, a, b, n int32) result {
	req := fmt.Sprintf("StreamSum(StreamRequest{a: %d, b: %d, count: %d}) %s", a, b, n, grpcOver(e))
	exp := fmt.Sprintf("exactly %d replies, SumReply{result: %d}, {result: %d}, … {result: %d}, then grpc-status 0", n, a+b, a+b+1, a+b+n-1)
	c, err := dialEnv(e)
	if err != nil {
		return failed(req, exp, err.Error())
	}
	defer c.Close()
	// A stream of 5000 replies may take longer than one read timeout on a loaded machine.
	cctx, cancel := context.WithTimeout(ctx, 4*e.timeout)
	defer cancel()
	got, err := c.StreamSum(cctx, a, b, n, int(n)+10)
	for i, v := range got {
		if i < int(n) && v != a+b+int32(i) {
			return failed(req, exp, fmt.Sprintf("reply %d (from 0) is SumReply{result: %d}, expected %d", i, v, a+b+int32(i)))
		}
	}
	switch {
	case err != nil:
		return failed(req, exp, fmt.Sprintf("after %d replies: %v", len(got), err))
	case len(got) != int(n):
		more := ""
		if len(got) > int(n) {
			more = " or more"
		}
		return failed(req, exp, fmt.Sprintf("%d replies%s, then grpc-status 0", len(got), more))
	}
	return passed(req, exp, strconv.Itoa(len(got))+" replies in order, then grpc-status 0")
}
