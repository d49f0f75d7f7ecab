package compose

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEntries loads every compose file the repository's entries ship, one subtest per entry
// and profile, so a contributor's bad file fails with its entry's name and the fix.
func TestEntries(t *testing.T) {
	root := filepath.Join("..", "..", "frameworks")
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	loaded := map[string][]string{} // entry → the profiles whose files it ships
	for _, d := range dirs {
		if !d.IsDir() || strings.HasPrefix(d.Name(), "_") || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
			continue
		}
		for _, p := range composeProfiles() {
			st, err := Load(filepath.Join(root, d.Name()), p, env)
			if errors.Is(err, ErrNoFile) {
				continue
			}
			t.Run(d.Name()+"/"+p, func(t *testing.T) {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := st.Order(); err != nil {
					t.Error(err)
				}
			})
			loaded[d.Name()] = append(loaded[d.Name()], p)
		}
	}
	if got := loaded["nethttp-stack"]; !slices.Equal(got, []string{"gateway-64", "gateway-h3", "production-stack"}) {
		t.Errorf("nethttp-stack ships compose files for %v, want all three stack profiles", got)
	}
}

// TestNethttpStack checks what the runner and the old harness rely on in the nethttp-stack
// entry's files: the services (two, or four for production-stack), the edge's mounts, the
// start order.
func TestNethttpStack(t *testing.T) {
	dir := filepath.Join("..", "..", "frameworks", "nethttp-stack")
	for _, tt := range []struct {
		profile string
		order   []string
		edge    string
	}{
		{"gateway-64", []string{"server", "proxy"}, "proxy"},
		{"gateway-h3", []string{"server", "proxy"}, "proxy"},
		{"production-stack", []string{"authsvc", "cache", "server", "edge"}, "edge"},
	} {
		t.Run(tt.profile, func(t *testing.T) {
			st, err := Load(dir, tt.profile, env)
			if err != nil {
				t.Fatal(err)
			}
			if st.Project != "arenabot-nethttp-stack-"+tt.profile {
				t.Errorf("project %q", st.Project)
			}
			order, err := st.Order()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, sv := range order {
				names = append(names, sv.Name)
			}
			if !slices.Equal(names, tt.order) {
				t.Errorf("Order() = %v, want %v", names, tt.order)
			}
			edge, _ := st.Service(tt.edge)
			wantMounts := []Mount{
				{Type: "bind", Source: env[VarCertsDir], Target: "/certs", ReadOnly: true},
				{Type: "bind", Source: env[VarDataDir] + "/static", Target: "/data/static", ReadOnly: true},
			}
			if !slices.Equal(edge.Mounts, wantMounts) {
				t.Errorf("%s mounts %+v, want %+v", tt.edge, edge.Mounts, wantMounts)
			}
			server, _ := st.Service("server")
			if server.Build == nil || server.Build.Dockerfile != "frameworks/nethttp-stack/Dockerfile" ||
				server.Env["DATABASE_URL"] != env[VarDatabaseURL] {
				t.Errorf("server build %+v env %v", server.Build, server.Env)
			}
			for _, sv := range st.Services {
				if sv.CPUSet == "" || !slices.Contains(sv.SecurityOpt, "seccomp:unconfined") {
					t.Errorf("service %s: cpuset %q, security_opt %v", sv.Name, sv.CPUSet, sv.SecurityOpt)
				}
			}
		})
	}
}
