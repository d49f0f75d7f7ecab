package host

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestRaiseNofile: a tool started natively gets the hard open-files limit as its soft one,
// not the lower soft limit Go gives child processes back by default.
func TestRaiseNofile(t *testing.T) {
	if err := RaiseNofile(); err != nil {
		t.Fatal(err)
	}
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", "-c", "ulimit -n").Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(string(out))
	if canRaiseLimits(t) && r.Max < 64000 {
		t.Errorf("with CAP_SYS_RESOURCE the hard nofile limit stays %d; want room for async's 32,000 connections", r.Max)
	}
	if got != strconv.FormatUint(r.Max, 10) && !(got == "unlimited" && r.Max == ^uint64(0)) {
		t.Errorf("a child's soft nofile limit is %s; want the hard limit %d", got, r.Max)
	}
}

// canRaiseLimits reports whether this process has CAP_SYS_RESOURCE (bit 24 of CapEff), which
// raising a hard limit needs (sandboxes may drop it even for root).
func canRaiseLimits(t *testing.T) bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return caps&(1<<24) != 0
		}
	}
	return false
}
