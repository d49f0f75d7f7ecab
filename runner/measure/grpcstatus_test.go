package measure

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/loadgen"
	"github.com/arenabot/arenabot/validate/validatetest"
)

func grpcData(t *testing.T) string {
	t.Helper()
	dir, err := arenadata.Ensure(filepath.Join(os.TempDir(), "arenabot-test-cache"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// unarySpec is a unary gRPC row's spec aimed at a fixture port.
func unarySpec(t *testing.T, name string, port int, d time.Duration) loadgen.Spec {
	t.Helper()
	p, ok := profile.Lookup(name)
	if !ok {
		t.Fatalf("no profile %s", name)
	}
	p.Port = port
	return loadgen.Spec{Profile: p, Host: "127.0.0.1", Conns: 2, Threads: 1, Duration: d, ScriptDir: t.TempDir()}
}

// TestGRPCStatusSample: beside an h2load run, the sample tells a server that answers
// grpc-status 0 with the sum from one that answers HTTP 200 with grpc-status 13 (which
// h2load counts as 2xx, as the run below shows), over h2c and over TLS, and from one that
// answers the wrong sum.
func TestGRPCStatusSample(t *testing.T) {
	dir := grpcData(t)
	h2load, err := exec.LookPath("h2load")
	if err != nil && os.Getenv("CI") == "" {
		t.Skip("h2load is not on PATH")
	}
	for _, tt := range []struct {
		mode, profile string
		want          string // in the failure's Short; "" for none
	}{
		{"", "unary-grpc", ""},
		{"", "unary-grpc-tls", ""},
		{"unary-grpc.status-13", "unary-grpc", "grpc-status 13 (Internal) in "},
		{"unary-grpc-tls.status-13", "unary-grpc-tls", "grpc-status 13 (Internal) in "},
		{"unary-grpc.getsum-load-wrong", "unary-grpc", "wrong sum in "},
	} {
		t.Run(tt.profile+"/"+tt.mode, func(t *testing.T) {
			s := validatetest.StartGRPC(t, dir, tt.mode)
			port := s.H2CPort
			if strings.HasSuffix(tt.profile, "-tls") {
				port = s.TLSPort
			}
			spec := unarySpec(t, tt.profile, port, time.Second)
			wait := sampleGRPC(t.Context(), spec)
			// The run the sample goes beside: the real h2load, which counts every answer 2xx.
			tool := loadgen.H2load()
			if err := tool.WriteFiles(spec); err != nil {
				t.Fatal(err)
			}
			args, err := tool.Args(spec)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := exec.CommandContext(t.Context(), h2load, args...).CombinedOutput()
			m, err := tool.Parse(out)
			err2 := wait()
			if err != nil || m.Status2xx == 0 || m.Status2xx != m.Requests {
				t.Errorf("h2load: %+v, %v; want every answer 2xx, whatever the grpc-status", m, err)
			}
			f, isFailure := errors.AsType[*GRPCStatusFailure](err2)
			switch {
			case tt.want == "" && err2 != nil:
				t.Errorf("sample of a correct server: %v", err2)
			case tt.want != "" && !isFailure:
				t.Errorf("sample: %v, want a *GRPCStatusFailure", err2)
			// At least 3 calls: the sample paces its calls at a 100th of the run, but each
			// call waits its turn on a loaded server; under .ci/flaky's load a 1 s run got
			// through only 6.
			case tt.want != "" && (!strings.HasPrefix(f.Short(), tt.want) || f.Failed != f.Sampled || f.Sampled < 3):
				t.Errorf("Short() = %q, want %q…, every one of at least 3 calls failed; %v", f.Short(), tt.want, f)
			case tt.want != "":
				t.Logf("h2load: %d answers, all 2xx; the sample: %s (cell %q)", m.Status2xx, f, ShortReason(f))
			}
		})
	}
	// Not a unary gRPC row: no sample.
	if err := sampleGRPC(t.Context(), loadgen.Spec{Profile: profile.Profile{Tool: profile.ToolGhz, Scheme: "grpc"}})(); err != nil {
		t.Errorf("sample of a ghz row: %v", err)
	}
}
