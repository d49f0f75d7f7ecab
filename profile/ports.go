package profile

import (
	"slices"
	"strconv"
	"strings"
)

// PortAuthsvc is where production-stack's authsvc listens (AUTHSVC_LISTEN in the arena's
// stack), on the host network like every service of a stack.
const PortAuthsvc = 9090

// A StackPort is a host port a service of a compose-stack profile's stack listens on, in
// the arena's layout for that profile (the old arena's stacks and this repository's
// frameworks/nethttp-stack, which follows it). runner/compose's TestStackPorts reads the
// shipped stacks' compose files, Dockerfiles and edge configurations and fails when one
// listens on a port its profile's row does not list, or a row lists one the shipped stack
// does not listen on.
type StackPort struct {
	Service string // the compose service: "edge", "authsvc"
	Port    int
	UDP     bool // also UDP (the HTTP/3 edge)
}

// A PortUser is one profile's use of a host port: its entry's server, one of its
// sidecars or one service of its compose stack.
type PortUser struct {
	Profile string // "production-stack"
	Service string // "server", "postgres sidecar", "authsvc"
}

// A HostPort is a port of the host network that measuring some profile listens on.
type HostPort struct {
	Port  int
	UDP   bool       // some user listens on UDP too (HTTP/3)
	Users []PortUser // in the table's order
}

// ServiceServer is the PortUser.Service of an entry's own server.
const ServiceServer = "server"

// HostPorts lists every port of the host network the profiles of All use, by port: the
// ports the entries' servers are loaded and probed on (Port, ProbePort; UDP too for
// SchemeH3), the ports of the sidecars the profiles list, and for the compose stacks every
// StackPort of the row (which include the load's and the probe's ports). A process of the
// host that holds one of them breaks the rows of its users.
func HostPorts() []HostPort {
	byPort := map[int]*HostPort{}
	add := func(port int, udp bool, u PortUser) {
		h := byPort[port]
		if h == nil {
			h = &HostPort{Port: port}
			byPort[port] = h
		}
		h.UDP = h.UDP || udp
		if !slices.Contains(h.Users, u) {
			h.Users = append(h.Users, u)
		}
	}
	for _, p := range All {
		if p.Compose {
			for _, sp := range p.StackPorts {
				add(sp.Port, sp.UDP, PortUser{p.Name, sp.Service})
			}
		} else {
			add(p.Port, p.Scheme == SchemeH3, PortUser{p.Name, ServiceServer})
			if port, _ := p.ProbeAt(); port != p.Port {
				add(port, false, PortUser{p.Name, ServiceServer})
			}
		}
		for _, name := range p.Sidecars {
			add(Sidecars[name].Port, false, PortUser{p.Name, name + " sidecar"})
		}
	}
	out := make([]HostPort, 0, len(byPort))
	for _, h := range byPort {
		out = append(out, *h)
	}
	slices.SortFunc(out, func(a, b HostPort) int { return a.Port - b.Port })
	return out
}

// HostPortOf returns the HostPorts entry for port; false when no profile uses it.
func HostPortOf(port int) (HostPort, bool) {
	all := HostPorts()
	i := slices.IndexFunc(all, func(h HostPort) bool { return h.Port == port })
	if i < 0 {
		return HostPort{}, false
	}
	return all[i], true
}

// Who names the port's users, a service with the profiles that run it: "production-stack's
// authsvc"; "server of baseline, pipelined, limited-conn and 20 more profiles; ...". At most
// three profile names per service are written out.
func (h HostPort) Who() string {
	var services []string
	profiles := map[string][]string{}
	for _, u := range h.Users {
		if profiles[u.Service] == nil {
			services = append(services, u.Service)
		}
		profiles[u.Service] = append(profiles[u.Service], u.Profile)
	}
	parts := make([]string, 0, len(services))
	for _, s := range services {
		ps := profiles[s]
		switch {
		case len(ps) == 1:
			parts = append(parts, ps[0]+"'s "+s)
		case len(ps) <= 3:
			parts = append(parts, s+" of "+strings.Join(ps[:len(ps)-1], ", ")+" and "+ps[len(ps)-1])
		default:
			parts = append(parts, s+" of "+strings.Join(ps[:3], ", ")+" and "+strconv.Itoa(len(ps)-3)+" more profiles")
		}
	}
	return strings.Join(parts, "; ")
}
