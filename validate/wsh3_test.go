package validate_test

import (
	"slices"
	"testing"
	"time"

	"github.com/arenabot/arenabot/validate"
	"github.com/arenabot/arenabot/validate/validatetest"
)

// wsH3Profiles are the WebSocket and HTTP/3 profiles.
var wsH3Profiles = []string{"baseline-h3", "static-h3", "echo-ws", "echo-ws-pipeline", "echo-ws-limited"}

// TestWSH3CorrectServerPasses runs the WebSocket and h3 profiles against the correct
// fixture, whose h3 listens in UDP on its h2 port's number: every check passes. It logs how
// long the Run took.
func TestWSH3CorrectServerPasses(t *testing.T) {
	s := validatetest.Start(t, data(t), "")
	start := time.Now()
	out := validate.Run(t.Context(), target(t, s), wsH3Profiles)
	took := time.Since(start)
	n := 0
	for _, p := range wsH3Profiles {
		n += len(validate.Checks(p))
	}
	if len(out) != n {
		t.Errorf("%d outcomes, want one per check: %d", len(out), n)
	}
	for _, o := range out {
		if o.Status != validate.Pass {
			t.Errorf("%s", o)
		}
	}
	_, _, _, line := validate.Summary(out)
	t.Logf("one Run of the WebSocket and h3 profiles against the correct fixture: %s in %v", line, took.Round(time.Millisecond))
}

// TestH3TransportModes: a server with no h3 on the port, or QUIC without ALPN h3, fails
// every check that goes over HTTP/3, and only those: the readiness probe over TCP h2 passes.
// These modes cannot break "h3 over QUIC" alone (every other check of the profile is a
// request over h3), so the modes test breaks it with h3-probe-status instead.
func TestH3TransportModes(t *testing.T) {
	dir := data(t)
	for _, p := range []string{"baseline-h3", "static-h3"} {
		var want []string
		for _, name := range validate.Checks(p) {
			if name != "readiness over TCP h2" {
				want = append(want, name)
			}
		}
		for _, b := range []string{"h3-no-udp", "h3-alpn-not-h3"} {
			mode := p + "." + b
			t.Run(mode, func(t *testing.T) {
				t.Parallel()
				s := validatetest.Start(t, dir, mode)
				out := validate.Run(t.Context(), target(t, s), []string{p})
				if got := failing(t, out); !slices.Equal(got, want) {
					t.Errorf("mode %s (%s): failing checks %q, want %q", mode, validatetest.Describe(mode), got, want)
				}
				for _, o := range out {
					if o.Check == "h3 over QUIC" {
						t.Log(o)
					}
				}
			})
		}
	}
}
