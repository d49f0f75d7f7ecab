package validate_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/validate"
	"github.com/arenabot/arenabot/validate/validatetest"
)

// grpcProfiles are the gRPC profiles validate has checks for.
var grpcProfiles = []string{"unary-grpc", "unary-grpc-tls", "stream-grpc", "stream-grpc-tls"}

// grpcBreaks names, for every check of the gRPC profiles, the behaviour of the gRPC
// fixture under which exactly that check fails (the mode is "<profile>.<behaviour>").
var grpcBreaks = map[string]string{
	"probe GetSum 1+2":         "getsum-load-wrong",
	"GetSum random":            "getsum-random-wrong",
	"100 concurrent GetSum":    "getsum-concurrent",
	"StreamSum 1+2 count 5000": "stream-load-short",
	"StreamSum random":         "stream-random-wrong",
}

// grpcTarget points Run at the fixture's port for the profile: h2c for unary-grpc and
// stream-grpc, TLS for their -tls twins.
func grpcTarget(t testing.TB, s *validatetest.GRPCServer, p string) validate.Target {
	tg := validate.Target{Host: "127.0.0.1", Port: s.H2CPort, DataDir: data(t), Timeout: testTimeout}
	if pr, _ := profile.Lookup(p); pr.Scheme == profile.SchemeGRPCS {
		tg.Port = s.TLSPort
	}
	return tg
}

func TestGRPCCorrectServerPasses(t *testing.T) {
	s := validatetest.StartGRPC(t, data(t), "")
	for _, p := range grpcProfiles {
		out := validate.Run(t.Context(), grpcTarget(t, s, p), []string{p})
		if len(out) < 2 {
			t.Errorf("%s: %d outcomes, want its checks", p, len(out))
		}
		for _, o := range out {
			if o.Status != validate.Pass {
				t.Errorf("%s", o)
			}
		}
	}
}

// TestEachGRPCCheckCatchesItsMode starts the gRPC fixture once per check of each gRPC
// profile with the mode that breaks that check, and wants exactly that check to FAIL (they
// are all required) while the profile's others pass. The -tls profiles' checks run over TLS.
func TestEachGRPCCheckCatchesItsMode(t *testing.T) {
	used := map[string]bool{}
	for _, p := range grpcProfiles {
		for _, info := range validate.Describe(p) {
			name := info.Name
			b, ok := grpcBreaks[name]
			if !ok {
				t.Errorf("check %s: %q has no mode that breaks it", p, name)
				continue
			}
			mode := p + "." + b
			used[mode] = true
			if info.Tier != validate.Required {
				t.Errorf("%s: %q is %s, want required", p, name, info.Tier)
			}
			t.Run(p+"/"+name, func(t *testing.T) {
				t.Parallel()
				s := validatetest.StartGRPC(t, data(t), mode)
				out := validate.Run(t.Context(), grpcTarget(t, s, p), []string{p})
				if got := failing(t, out); !slices.Equal(got, []string{name}) {
					t.Errorf("mode %s (%s): failing checks %q, want exactly [%q]", mode, validatetest.DescribeGRPC(mode), got, name)
					for _, o := range out {
						t.Log(o)
					}
					return
				}
				for _, o := range out {
					if o.Status != validate.Fail {
						continue
					}
					if o.Request == "" || o.Expected == "" || o.Got == "" || !strings.Contains(o.Contract, validate.DocsFile+"#"+p) {
						t.Errorf("failing outcome lacks a part: %#v", o)
					}
					over := "over h2c to "
					if strings.HasSuffix(p, "-tls") {
						over = "over TLS to "
					}
					if !strings.Contains(o.Request, over) {
						t.Errorf("request %q does not say it went %s…", o.Request, over)
					}
					t.Log(o)
				}
			})
		}
	}
	for _, m := range validatetest.GRPCModes() {
		if !used[m] && !strings.HasSuffix(m, ".status-13") && !strings.HasSuffix(m, ".no-tls") {
			t.Errorf("mode %s breaks no check", m)
		}
	}
}

// TestGRPCMoreWaysToBreak: a server that answers every GetSum with HTTP 200 and
// grpc-status 13 fails every unary check with the status shown; a TLS port that speaks
// h2c fails every check of the -tls profiles.
func TestGRPCMoreWaysToBreak(t *testing.T) {
	for _, tt := range []struct {
		mode, profile, got string
	}{
		{"unary-grpc.status-13", "unary-grpc", "grpc-status 13 (Internal)"},
		{"unary-grpc-tls.status-13", "unary-grpc-tls", "grpc-status 13 (Internal)"},
		{"unary-grpc-tls.no-tls", "unary-grpc-tls", ""},
		{"stream-grpc-tls.no-tls", "stream-grpc-tls", ""},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			s := validatetest.StartGRPC(t, data(t), tt.mode)
			out := validate.Run(t.Context(), grpcTarget(t, s, tt.profile), []string{tt.profile})
			if got, want := failing(t, out), validate.Checks(tt.profile); !slices.Equal(got, want) {
				t.Errorf("mode %s: failing checks %q, want all of %q", tt.mode, got, want)
			}
			for _, o := range out {
				if !strings.Contains(o.Got, tt.got) {
					t.Errorf("got %q, want it to say %q", o.Got, tt.got)
				}
			}
			t.Log(out[0])
		})
	}
}
