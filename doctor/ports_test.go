package doctor

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/runner/loadgen"
)

// TestRunnerPortsFromProfiles: doctor checks every port profile.HostPorts lists, the
// stacks' too, and names who listens there.
func TestRunnerPortsFromProfiles(t *testing.T) {
	var got []int
	for _, p := range RunnerPorts {
		got = append(got, p.Number)
		h, ok := profile.HostPortOf(p.Number)
		if !ok || p.UDP != h.UDP || p.Use != h.Who() {
			t.Errorf("%+v: want the port of profile.HostPorts with its users (%+v)", p, h)
		}
	}
	if len(got) != len(profile.HostPorts()) || !slices.Contains(got, profile.PortAuthsvc) {
		t.Errorf("RunnerPorts %v; want every port of profile.HostPorts, production-stack's authsvc (%d) among them", got, profile.PortAuthsvc)
	}
}

// TestStackPortHeld: a process that holds production-stack's authsvc port (9090) fails
// doctor's check of it, which names the holder and the stack's service. The test listens on
// 9090 only while it holds the host lock, as a run's servers do, so no other run's stack is
// disturbed.
func TestStackPortHeld(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	unlock, err := host.LockHost(ctx, nil)
	if err != nil {
		t.Skipf("another run kept the host lock for 30 s (%v): 9090 may be its stack's", err)
	}
	t.Cleanup(unlock) // after the listener's cleanup
	l, err := net.Listen("tcp", fmt.Sprintf(":%d", profile.PortAuthsvc))
	if err != nil {
		t.Skipf("port %d is taken on this host already: %v", profile.PortAuthsvc, err)
	}
	t.Cleanup(func() { l.Close() })

	env := brokenHost(t) // a private host lock: the ports are probed, not only looked up
	cfg := RunnerConfig{WorkDir: t.TempDir(), Tools: []loadgen.Tool{}}
	lines := RunAll(t.Context(), RunnerChecks(cfg, env))
	got := byName(lines)["port 9090"]
	t.Logf("%s", printed([]Line{got}))
	self := fmt.Sprintf("tcp taken by %s (pid %d)", strings.TrimSpace(comm(t)), os.Getpid())
	if got.Status != Fail || got.Value != self || got.Fix != "stop it: a measurement listens there (production-stack's authsvc)" {
		t.Errorf("%+v: want FAIL %q naming production-stack's authsvc", got, self)
	}
}

// comm is this process's command name as /proc tells it.
func comm(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
