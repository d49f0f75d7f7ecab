package host

import (
	"slices"
	"testing"
)

func TestSplitCPUs(t *testing.T) {
	for _, tt := range []struct {
		n               int
		server, loadgen string
	}{
		{1, "0", "0"}, {2, "0", "1"}, {4, "0-1", "2-3"}, {128, "0-63", "64-127"}, {3, "0", "1-2"},
	} {
		s, l := SplitCPUs(tt.n)
		if s != tt.server || l != tt.loadgen {
			t.Errorf("SplitCPUs(%d) = %s, %s; want %s, %s", tt.n, s, l, tt.server, tt.loadgen)
		}
	}
}

func TestParseCPUSet(t *testing.T) {
	got, err := ParseCPUSet("0-2,5,7-8")
	if err != nil || !slices.Equal(got, []int{0, 1, 2, 5, 7, 8}) {
		t.Errorf("ParseCPUSet = %v, %v", got, err)
	}
	for _, bad := range []string{"", "a", "3-1", "1,,2", "-1"} {
		if _, err := ParseCPUSet(bad); err == nil {
			t.Errorf("ParseCPUSet(%q) succeeded, want an error", bad)
		}
	}
	if err := CheckCPUSet("0-7,64-71", 16); err == nil {
		t.Error("CheckCPUSet accepted CPUs the host does not have")
	}
	if err := CheckCPUSet("0-1", 2); err != nil {
		t.Errorf("CheckCPUSet(0-1, 2) = %v", err)
	}
}
