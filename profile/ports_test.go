package profile_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/profile"
)

// TestHostPorts: the ports measuring the table's profiles takes on the host network are the
// entries' four, the sidecars' two and production-stack's authsvc, each naming its users;
// a stack row lists the ports its load and probe go to.
func TestHostPorts(t *testing.T) {
	var got []string
	for _, h := range profile.HostPorts() {
		s := fmt.Sprint(h.Port)
		if h.UDP {
			s += "+udp"
		}
		got = append(got, s)
		if len(h.Users) == 0 || h.Who() == "" {
			t.Errorf("port %d: no users", h.Port)
		}
	}
	want := []string{"5432", "6379", "8080", "8081", "8082", "8443+udp", "9090"}
	if !slices.Equal(got, want) {
		t.Errorf("HostPorts() = %v, want %v", got, want)
	}
	for port, who := range map[int]string{
		9090: "production-stack's authsvc",
		6379: "crud's redis sidecar; production-stack's cache",
		8082: "server of baseline-h2c and json-h2c",
		8080: "server of baseline, pipelined, limited-conn and ",
		8443: "server of baseline-h2, static-h2, baseline-h3 and 3 more profiles; proxy of gateway-64 and gateway-h3; production-stack's edge",
	} {
		h, ok := profile.HostPortOf(port)
		if !ok || !strings.HasPrefix(h.Who(), who) {
			t.Errorf("HostPortOf(%d) = %q, %v; want %q", port, h.Who(), ok, who)
		}
	}
	if h, ok := profile.HostPortOf(9300); ok {
		t.Errorf("HostPortOf(9300) = %+v; no profile uses 9300", h)
	}
	for _, p := range profile.All {
		if !p.Compose {
			if p.StackPorts != nil {
				t.Errorf("%s: StackPorts %v on a profile without a compose stack", p.Name, p.StackPorts)
			}
			continue
		}
		probe, _ := p.ProbeAt()
		for _, port := range []int{p.Port, probe} {
			i := slices.IndexFunc(p.StackPorts, func(sp profile.StackPort) bool { return sp.Port == port })
			if i < 0 || p.Scheme == profile.SchemeH3 && port == p.Port && !p.StackPorts[i].UDP {
				t.Errorf("%s: StackPorts %v do not list port %d (scheme %s) its load or probe goes to", p.Name, p.StackPorts, port, p.Scheme)
			}
		}
	}
}
