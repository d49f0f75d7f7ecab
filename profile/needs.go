package profile

import (
	"strconv"
	"strings"
)

// HostCPUs is the number of online CPUs a host needs to run the profile at full size: its
// fixed cpusets (the server's, its sidecars') name CPUs by number, so a host must have the
// highest of them. 0: any host (the profile runs on the host's own split). A --lite run
// pins nothing and needs no more than the machine it is on.
func (p Profile) HostCPUs() int {
	n := cpusetNeeds(p.ServerCPUs)
	for _, s := range p.Sidecars {
		n = max(n, cpusetNeeds(Sidecars[s].CPUs))
	}
	return n
}

// cpusetNeeds is the highest CPU number a cpuset ("0-3,64-67") names, plus one; 0 for
// ServerCPUsStd. The profile table's sets are well formed (TestHostCPUs parses each).
func cpusetNeeds(set string) int {
	n := 0
	for part := range strings.SplitSeq(set, ",") {
		_, hi, _ := strings.Cut(part, "-")
		if hi == "" {
			hi = part
		}
		if v, err := strconv.Atoi(strings.TrimSpace(hi)); err == nil {
			n = max(n, v+1)
		}
	}
	return n
}
