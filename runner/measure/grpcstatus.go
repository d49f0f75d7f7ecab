package measure

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/loadgen"
	"github.com/arenabot/arenabot/validate"

	"github.com/arenabot/arenabot/internal/clock"
)

// h2load counts a unary gRPC call answered with HTTP 200 as a success whatever grpc-status
// its trailers carry: it reads the HTTP status only (its --log-file has no trailers either).
// So beside every h2load run of a unary gRPC row the runner makes a bounded sample of the same
// call, GetSum(SumRequest{a: 1, b: 2}), through a real gRPC client over the row's transport
// (h2c or TLS, the same host and port), spread over the run: a call answered with a grpc-status
// other than 0, or with a wrong sum, fails the row with that status. Validation has already
// shown the server answers grpc-status 0 when idle; the sample shows it still does under load.
const (
	grpcSampleCalls   = 100             // calls sampled per run, at most
	grpcSampleTimeout = 2 * time.Second // per call
)

// A GRPCStatusFailure is a unary gRPC run whose sampled calls were answered with a
// grpc-status other than 0 (or a wrong sum): what h2load counted as successes were not.
type GRPCStatusFailure struct {
	Sampled, Failed int
	First           string         // the first failure: "grpc-status 13 (Internal): boom"
	FirstStatus     string         // its kind: "grpc-status 13 (Internal)", "wrong sum"
	Statuses        map[string]int // failed calls by kind
}

func (f *GRPCStatusFailure) Error() string {
	var by []string
	for s, n := range f.Statuses {
		by = append(by, fmt.Sprintf("%d × %s", n, s))
	}
	return fmt.Sprintf("%d of %d GetSum calls sampled during the run were not answered with grpc-status 0 and the sum (%s; first: %s); h2load counts any HTTP 200 as a success, so the run's figures are not the server's successes",
		f.Failed, f.Sampled, strings.Join(by, ", "), f.First)
}

// Short is the table cell: "grpc-status 13 (Internal) in 100 of 100 sampled calls".
func (f *GRPCStatusFailure) Short() string {
	return fmt.Sprintf("%s in %d of %d sampled calls", f.FirstStatus, f.Failed, f.Sampled)
}

// sampleGRPC starts the sample for a run of spec when it is a unary gRPC row measured by
// h2load, and returns a function that waits for it and reports what it found; for other
// rows it does nothing. The sample spreads its calls over the run's duration and stops when
// wait is called or ctx ends.
func sampleGRPC(ctx context.Context, spec loadgen.Spec) (wait func() error) {
	p := spec.Profile
	if p.Tool != profile.ToolH2load || (p.Scheme != "grpc" && p.Scheme != "grpcs") {
		return func() error { return nil }
	}
	addr := net.JoinHostPort(spec.Host, strconv.Itoa(p.Port))
	ctx, stop := context.WithCancel(ctx)
	var (
		wg  sync.WaitGroup
		err error
	)
	wg.Go(func() {
		err = sampleGetSum(ctx, addr, p.Scheme == "grpcs", grpcSampleCalls, spec.Duration/grpcSampleCalls)
	})
	return func() error {
		stop()
		wg.Wait()
		return err
	}
}

// sampleGetSum calls GetSum(1, 2) up to n times, every interval, on one connection, until
// ctx ends. Calls that got no answer (no connection, a deadline that passed: the server is
// busy) are not counted; a call answered with a non-zero grpc-status or a wrong sum is. It
// returns a *GRPCStatusFailure when any was.
func sampleGetSum(ctx context.Context, addr string, useTLS bool, n int, interval time.Duration) error {
	c, err := validate.DialGRPC(addr, useTLS, grpcSampleTimeout)
	if err != nil {
		return fmt.Errorf("grpc-status sample: %w", err)
	}
	defer c.Close()
	f := &GRPCStatusFailure{Statuses: map[string]int{}}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		if i > 0 {
			_ = clock.Sleep(ctx, interval) // a cancelled ctx ends the loop
		}
		cctx, cancel := context.WithTimeout(ctx, grpcSampleTimeout)
		sum, err := c.GetSum(cctx, 1, 2)
		cancel()
		se, isStatus := errors.AsType[*validate.GRPCStatusError](err)
		switch {
		case err == nil && sum == 3:
			f.Sampled++
			continue
		case err == nil:
			f.Sampled++
			f.Failed++
			f.Statuses["wrong sum"]++
			if f.First == "" {
				f.First, f.FirstStatus = fmt.Sprintf("grpc-status 0 with SumReply{result: %d}, expected 3", sum), "wrong sum"
			}
			continue
		case !isStatus || se.Name == "Unavailable" || se.Name == "DeadlineExceeded" || se.Name == "Canceled":
			continue // no answer from the server (or the run ended): not a status it sent
		}
		f.Sampled++
		f.Failed++
		kind := fmt.Sprintf("grpc-status %d (%s)", se.Code, se.Name)
		f.Statuses[kind]++
		if f.First == "" {
			f.First, f.FirstStatus = se.Error(), kind
		}
	}
	if f.Failed > 0 {
		return f
	}
	return nil
}
