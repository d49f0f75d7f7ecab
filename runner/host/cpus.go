package host

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
)

// NumCPU is the number of CPUs this host has; tests replace it.
var NumCPU = runtime.NumCPU

// SplitCPUs divides n CPUs between servers (the lower half) and load tools (the upper half),
// the arena's layout. One CPU is shared by both.
func SplitCPUs(n int) (server, loadgen string) {
	if n <= 1 {
		return "0", "0"
	}
	half := n / 2
	return cpuRange(0, half-1), cpuRange(half, n-1)
}

func cpuRange(lo, hi int) string {
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// ParseCPUSet reads a cpuset ("0-3,8,10-11") into the CPU numbers it names.
func ParseCPUSet(s string) ([]int, error) {
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("cpuset %q: empty element", s)
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cpuset %q: %q is not a CPU number", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("cpuset %q: bad range %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// CheckCPUSet reports whether a cpuset is well formed and names only CPUs the host has.
func CheckCPUSet(s string, n int) error {
	cpus, err := ParseCPUSet(s)
	if err != nil {
		return err
	}
	for _, c := range cpus {
		if c >= n {
			return fmt.Errorf("cpuset %q names CPU %d but this host has CPUs 0-%d", s, c, n-1)
		}
	}
	return nil
}

// CPUSetFits reports whether a cpuset names only CPUs of an n-CPU host.
func CPUSetFits(s string, n int) bool { return CheckCPUSet(s, n) == nil }

// CPUSetSize is the number of CPUs a cpuset names (0 for a bad one).
func CPUSetSize(s string) int {
	cpus, _ := ParseCPUSet(s)
	return len(cpus)
}
