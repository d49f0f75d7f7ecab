package profile

import (
	"regexp"
	"testing"
)

// TestHostCPUs: a profile with a fixed cpuset needs a host with its highest CPU; a profile
// on the host's split, or whose sidecars are unpinned, needs none; a sidecar's set counts.
func TestHostCPUs(t *testing.T) {
	want := map[string]int{
		"baseline":          0,
		"api-4":             4,
		"api-16":            72,
		"latency-500k-8cpu": 68,
	}
	for name, n := range want {
		p, ok := Lookup(name)
		if !ok {
			t.Fatalf("no profile %s", name)
		}
		if got := p.HostCPUs(); got != n {
			t.Errorf("%s.HostCPUs() = %d, want %d", name, got, n)
		}
	}
	if got := (Profile{Sidecars: []string{SidecarRedis}}).HostCPUs(); got != 65 {
		t.Errorf("a profile with the pinned Redis sidecar needs %d CPUs, want 65", got)
	}
	set := regexp.MustCompile(`^\d+(-\d+)?(,\d+(-\d+)?)*$`)
	for _, p := range All {
		if p.ServerCPUs != ServerCPUsStd && !set.MatchString(p.ServerCPUs) {
			t.Errorf("%s: ServerCPUs %q is not a cpuset HostCPUs can read", p.Name, p.ServerCPUs)
		}
	}
}
