package compose

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/profile"
)

// A listening is a port a service of a stack listens on, and where the test read it.
type listening struct {
	service string
	port    int
	udp     bool
	from    string // "Dockerfile EXPOSE 9090", "command --port 6379", "nginx.conf listen 8443 ssl"
}

// TestStackPorts keeps the stack rows' StackPorts (profile/profiles.go) true to the stacks
// this repository ships, so that serve --runner and doctor, which read profile.HostPorts,
// know every port a stack listens on. For every entry's compose file it reads the ports each
// service listens on from the file and the files its image is built from: the Dockerfile's
// EXPOSE, the command's --port and --listen, *_LISTEN / *_ADDR / *_PORT variables, and the
// nginx and Caddy configurations the Dockerfile copies in (listen directives; site
// addresses, the admin endpoint and the HTTP redirect listener). Every such port must be in
// the row; every loopback address the stack's services talk to (upstreams, *_URL variables)
// must be a port of the stack or of the row's sidecars; and nethttp-stack, which follows the
// arena's layout for all three profiles, must listen on every port the rows list.
func TestStackPorts(t *testing.T) {
	root := filepath.Join("..", "..", "frameworks")
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() || strings.HasPrefix(d.Name(), "_") || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
			continue
		}
		for _, name := range composeProfiles() {
			st, err := Load(filepath.Join(root, d.Name()), name, env)
			if errors.Is(err, ErrNoFile) {
				continue
			}
			t.Run(d.Name()+"/"+name, func(t *testing.T) {
				if err != nil {
					t.Fatal(err) // TestEntries says why
				}
				p, _ := profile.Lookup(name)
				ls, targets := stackListens(t, st)
				checkStackPorts(t, st, p, ls, targets, d.Name() == "nethttp-stack")
			})
		}
	}
}

// checkStackPorts compares what a stack listens on with its row. complete: the stack follows
// the arena's layout, so it must also listen on every port the row lists.
func checkStackPorts(t *testing.T, st *Stack, p profile.Profile, ls []listening, targets map[int]string, complete bool) {
	t.Helper()
	for _, l := range ls {
		i := slices.IndexFunc(p.StackPorts, func(sp profile.StackPort) bool { return sp.Port == l.port })
		switch {
		case i < 0:
			t.Errorf("%s: service %s listens on port %d (%s), which %s's StackPorts in profile/profiles.go do not list; add {Service: %q, Port: %d} there so that serve --runner and doctor keep it free, or move the service to a listed port",
				st.File, l.service, l.port, l.from, p.Name, l.service, l.port)
		case l.udp && !p.StackPorts[i].UDP:
			t.Errorf("%s: service %s listens on UDP %d (%s), but %s's StackPorts list it for TCP only; set UDP: true there", st.File, l.service, l.port, l.from, p.Name)
		}
	}
	for port, from := range targets {
		listened := slices.ContainsFunc(ls, func(l listening) bool { return l.port == port }) ||
			slices.ContainsFunc(p.Sidecars, func(s string) bool { return profile.Sidecars[s].Port == port })
		if !listened {
			t.Errorf("%s: %s talks to 127.0.0.1:%d, where no service of the stack and no sidecar of %s listens", st.File, from, port, p.Name)
		}
	}
	if !complete {
		return
	}
	for _, sp := range p.StackPorts {
		if !slices.ContainsFunc(ls, func(l listening) bool { return l.service == sp.Service && l.port == sp.Port && l.udp == sp.UDP }) {
			t.Errorf("%s: %s's StackPorts list %+v, but no service of the shipped stack listens so (it listens on %v); correct the row in profile/profiles.go", st.File, p.Name, sp, ls)
		}
	}
}

// stackListens returns the ports the stack's services listen on and the loopback ports they
// talk to (port → who).
func stackListens(t *testing.T, st *Stack) ([]listening, map[int]string) {
	t.Helper()
	var ls []listening
	targets := map[int]string{}
	for _, sv := range st.Services {
		var got []listening
		add := func(port int, udp bool, from string) {
			got = append(got, listening{sv.Name, port, udp, from})
		}
		if sv.Build != nil {
			dockerfile := filepath.Join(sv.Build.Context, sv.Build.Dockerfile)
			b, err := os.ReadFile(dockerfile)
			if err != nil {
				t.Fatalf("service %s: %v", sv.Name, err)
			}
			for _, m := range regexp.MustCompile(`(?im)^\s*EXPOSE\s+(.+)$`).FindAllStringSubmatch(string(b), -1) {
				for _, f := range strings.Fields(m[1]) {
					num, proto, _ := strings.Cut(f, "/")
					add(atoi(t, num), proto == "udp", "Dockerfile EXPOSE "+f)
				}
			}
			for _, m := range regexp.MustCompile(`(?im)^\s*(?:COPY|ADD)\s+(\S+)\s+\S+\s*$`).FindAllStringSubmatch(string(b), -1) {
				src := m[1]
				base := filepath.Base(src)
				if !strings.HasSuffix(base, ".conf") && base != "Caddyfile" {
					continue
				}
				conf, err := os.ReadFile(filepath.Join(sv.Build.Context, src))
				if err != nil {
					t.Fatalf("service %s: %s copies %s: %v", sv.Name, dockerfile, src, err)
				}
				from := base
				if base == "Caddyfile" {
					caddyListens(t, string(conf), func(port int, udp bool, what string) { add(port, udp, from+" "+what) })
					for _, m := range regexp.MustCompile(`(?m)^\s*reverse_proxy\s+(\S+)`).FindAllStringSubmatch(uncommented(conf), -1) {
						loopback(targets, m[1], sv.Name+"'s "+from)
					}
				} else {
					for _, m := range regexp.MustCompile(`(?m)^\s*listen\s+([^;]+);`).FindAllStringSubmatch(uncommented(conf), -1) {
						f := strings.Fields(m[1])
						add(addrPort(t, f[0]), slices.Contains(f[1:], "quic"), from+" listen "+m[1])
					}
					for _, m := range regexp.MustCompile(`(?m)^\s*(?:server|proxy_pass)\s+([^;\s]+)`).FindAllStringSubmatch(uncommented(conf), -1) {
						loopback(targets, m[1], sv.Name+"'s "+from)
					}
				}
			}
		}
		args := append(slices.Clone(sv.Entrypoint), sv.Command...)
		for i, a := range args {
			flag, val, eq := strings.Cut(a, "=")
			if !regexp.MustCompile(`^--?(port|listen|addr|address)$`).MatchString(flag) {
				continue
			}
			if !eq {
				if i+1 >= len(args) {
					continue
				}
				val = args[i+1]
			}
			add(addrPort(t, val), false, "command "+flag+" "+val)
		}
		for k, v := range sv.Env {
			if strings.Contains(k, "LISTEN") || strings.HasSuffix(k, "_ADDR") || k == "PORT" || strings.HasSuffix(k, "_PORT") {
				add(addrPort(t, v), false, "environment "+k+"="+v)
			}
			if strings.HasSuffix(k, "_URL") {
				loopback(targets, v, sv.Name+"'s "+k)
			}
		}
		if len(got) == 0 {
			t.Errorf("%s: cannot tell which ports service %s listens on; EXPOSE them in its Dockerfile, or give them on its command line (--port) or in a *_LISTEN variable", st.File, sv.Name)
		}
		ls = append(ls, got...)
	}
	// One port a service both EXPOSEs and configures is one listening.
	slices.SortFunc(ls, func(a, b listening) int {
		return strings.Compare(fmt.Sprint(a.service, a.port, !a.udp), fmt.Sprint(b.service, b.port, !b.udp))
	})
	return slices.CompactFunc(ls, func(a, b listening) bool { return a.service == b.service && a.port == b.port && a.udp == b.udp }), targets
}

// caddyListens reads a Caddyfile's listeners: its site addresses (https on TCP and, with h3
// among the protocols, on UDP), the HTTP→HTTPS redirect listener unless auto_https is off or
// disable_redirects, and the admin endpoint unless admin is off.
func caddyListens(t *testing.T, conf string, add func(port int, udp bool, what string)) {
	t.Helper()
	conf = uncommented([]byte(conf))
	httpPort, httpsPort := 80, 443
	admin, redirects, h3 := "localhost:2019", true, true
	global, sites, _ := strings.Cut(conf, "\n}")
	if !strings.HasPrefix(strings.TrimSpace(global), "{") { // no global options block
		global, sites = "", conf
	}
	for line := range strings.Lines(global) {
		f := strings.Fields(line)
		switch {
		case len(f) < 2:
		case f[0] == "admin":
			admin = f[1]
		case f[0] == "http_port":
			httpPort = atoi(t, f[1])
		case f[0] == "https_port":
			httpsPort = atoi(t, f[1])
		case f[0] == "auto_https":
			redirects = f[1] != "off" && f[1] != "disable_redirects"
		case f[0] == "protocols":
			h3 = slices.Contains(f[1:], "h3")
		}
	}
	if admin != "off" {
		add(addrPort(t, admin), false, "admin "+admin)
	}
	https := false
	depth := 0
	for line := range strings.Lines(sites) {
		s := strings.TrimSpace(line)
		if depth == 0 && strings.HasSuffix(s, "{") {
			for _, a := range strings.FieldsFunc(strings.TrimSuffix(s, "{"), func(r rune) bool { return r == ',' || r == ' ' }) {
				port, tls := httpsPort, !strings.HasPrefix(a, "http://")
				if !tls {
					port = httpPort
				}
				if u, err := url.Parse(a); err == nil && u.Port() != "" {
					port = atoi(t, u.Port())
				} else if _, p, err := net.SplitHostPort(a); err == nil {
					port = atoi(t, p)
				}
				add(port, tls && h3, "site "+a)
				https = https || tls
			}
		}
		depth += strings.Count(s, "{") - strings.Count(s, "}")
	}
	if https && redirects {
		add(httpPort, false, "HTTP→HTTPS redirects")
	}
}

// uncommented is a configuration file without its comments.
func uncommented(b []byte) string {
	return regexp.MustCompile(`(?m)#.*$`).ReplaceAllString(string(b), "")
}

// loopback records a URL or host:port that names this host's loopback address.
func loopback(targets map[int]string, s, who string) {
	if !strings.Contains(s, "://") {
		s = "tcp://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Port() == "" || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" && u.Hostname() != "::1") {
		return
	}
	if n, err := strconv.Atoi(u.Port()); err == nil {
		targets[n] = who
	}
}

// addrPort reads the port of "8080", ":8080", "127.0.0.1:8080" or "[::]:8080".
func addrPort(t *testing.T, s string) int {
	t.Helper()
	if _, p, err := net.SplitHostPort(s); err == nil {
		s = p
	}
	return atoi(t, s)
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > 65535 {
		t.Fatalf("%q is not a port", s)
	}
	return n
}

// TestCaddyListens: a Caddyfile with Caddy's defaults listens on more than its site: the
// admin endpoint on 2019 and the HTTP→HTTPS redirects on 80, and HTTP/3 on UDP.
func TestCaddyListens(t *testing.T) {
	for _, tt := range []struct{ conf, want string }{
		{"example.com {\n\treverse_proxy 127.0.0.1:8080\n}\n", "[2019 443+udp 80]"},
		{"{\n\tadmin off\n\tauto_https disable_redirects\n\tservers {\n\t\tprotocols h1 h2\n\t}\n}\n\nhttps://:8443, :9443 {\n}\n", "[8443 9443]"},
		{"# a comment {\n{\n\thttp_port 8000\n}\nhttp://:8001 {\n}\n:8443 {\n}\n", "[2019 8001 8443+udp 8000]"},
	} {
		var got []string
		caddyListens(t, tt.conf, func(port int, udp bool, what string) {
			s := strconv.Itoa(port)
			if udp {
				s += "+udp"
			}
			got = append(got, s)
		})
		if fmt.Sprint(got) != tt.want {
			t.Errorf("caddyListens(%q) = %v, want %s", tt.conf, got, tt.want)
		}
	}
}
