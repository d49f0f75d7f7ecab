package loadgen

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/validate/validatetest"
)

var (
	unaryProfile = profile.Profile{Name: "unary-grpc", Tool: profile.ToolH2load, Pipeline: 1, Streams: 100,
		Scheme: "grpc", Port: profile.PortH1, Path: "/benchmark.BenchmarkService/GetSum",
		Headers: []string{"content-type: application/grpc", "te: trailers"}}
	unaryTLSProfile = profile.Profile{Name: "unary-grpc-tls", Tool: profile.ToolH2load, Pipeline: 1, Streams: 100,
		Scheme: "grpcs", Port: profile.PortTLS, Path: "/benchmark.BenchmarkService/GetSum",
		Headers: []string{"content-type: application/grpc", "te: trailers"}}
)

// TestH2loadGRPCArgs: the arena's h2load command line for the unary gRPC profiles, the
// 9-byte frame as the body of every request.
func TestH2loadGRPCArgs(t *testing.T) {
	s := Spec{Profile: unaryProfile, Host: "127.0.0.1", Conns: 512, Threads: 2, Duration: 5 * time.Second, DataDir: "/d", ScriptDir: "/s"}
	want := []string{"-c", "512", "-t", "2", "-m", "100", "-D", "5s", "-p", "h2c",
		"-H", "content-type: application/grpc", "-H", "te: trailers", "-d", "/s/grpc-sum.bin",
		"http://127.0.0.1:8080/benchmark.BenchmarkService/GetSum"}
	if got, err := H2load().Args(s); err != nil || !slices.Equal(got, want) {
		t.Errorf("Args(unary-grpc) = %q, %v\nwant %q", got, err, want)
	}
	s.Profile = unaryTLSProfile
	want = []string{"-c", "512", "-t", "2", "-m", "100", "-D", "5s",
		"-H", "content-type: application/grpc", "-H", "te: trailers", "-d", "/s/grpc-sum.bin",
		"https://127.0.0.1:8443/benchmark.BenchmarkService/GetSum"}
	if got, err := H2load().Args(s); err != nil || !slices.Equal(got, want) {
		t.Errorf("Args(unary-grpc-tls) = %q, %v\nwant %q", got, err, want)
	}
	s.ScriptDir = ""
	if got, err := H2load().Args(s); err == nil {
		t.Errorf("Args without a script directory = %q, want an error", got)
	}
	dir := t.TempDir()
	if err := H2load().WriteFiles(Spec{Profile: unaryProfile, ScriptDir: dir}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, GRPCSumFile)); err != nil || !bytes.Equal(b, []byte{0, 0, 0, 0, 4, 0x08, 0x01, 0x10, 0x02}) {
		t.Errorf("%s = % x, %v; want 00 00000004 08 01 10 02", GRPCSumFile, b, err)
	}
}

// TestH2loadCountsGRPCErrorsAsSuccess runs the real h2load with the unary-grpc arguments
// against the gRPC fixture: a correct server's answers are 2xx, and so are those of a server
// that answers every call HTTP 200 with grpc-status 13. h2load cannot tell them apart; the
// runner's grpc-status sample does (runner.TestGRPCStatusSample).
func TestH2loadCountsGRPCErrorsAsSuccess(t *testing.T) {
	h2load := needTool(t, "h2load")
	dir := ghzDataDir(t)
	for _, mode := range []string{"", "unary-grpc.status-13"} {
		for _, p := range []profile.Profile{unaryProfile, unaryTLSProfile} {
			s := validatetest.StartGRPC(t, dir, mode)
			p.Port = s.H2CPort
			if p.Scheme == "grpcs" {
				p.Port = s.TLSPort
			}
			spec := Spec{Profile: p, Host: "127.0.0.1", Conns: 2, Threads: 1, Duration: time.Second, ScriptDir: t.TempDir()}
			if err := H2load().WriteFiles(spec); err != nil {
				t.Fatal(err)
			}
			args, err := H2load().Args(spec)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := runTool(t, 30*time.Second, h2load, args...)
			m, err := H2load().Parse(out)
			if err != nil {
				t.Fatalf("%s %q: %v\n%s", p.Name, mode, err, out)
			}
			if m.Status2xx == 0 || m.Status2xx != m.Requests {
				t.Errorf("%s %q: %+v; want every answer 2xx", p.Name, mode, m)
			}
			t.Logf("%s mode %q: %d answers, all HTTP 2xx (%.0f/s)", p.Name, mode, m.Status2xx, m.RPS())
		}
	}
}
