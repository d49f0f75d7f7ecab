package measure

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/runner/runnertest"
)

// TestLoadStack loads nethttp-stack's real files as a row does, without Docker: the
// arena's variables are set, what the host refuses is relaxed with a note per change, the
// CPU sets are cleared in --lite and, on a host without the file's CPUs, become the server
// set.
func TestLoadStack(t *testing.T) {
	e, err := frameworks.Load(filepath.Join("..", "..", "frameworks"), "nethttp-stack", profile.Names())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := profile.Lookup("production-stack")
	saved := host.NumCPU
	host.NumCPU = func() int { return 2 } // a host without the file's CPUs (0-14,64-78, ...)
	t.Cleanup(func() { host.NumCPU = saved })
	for _, lite := range []bool{true, false} {
		notes := &runnertest.Notes{}
		b := New(nil, Config{DataDir: "/data", Lite: lite, Nofile: 20000, ServerCPUs: "0", LoadgenCPUs: "1", Progress: notes})
		st, err := b.stages.stack.loadStack(t.Context(), e, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Services) != 4 {
			t.Fatalf("%d services, want 4", len(st.Services))
		}
		for _, sv := range st.Services {
			want := "0" // the server set
			if lite {
				want = ""
			}
			if sv.CPUSet != want {
				t.Errorf("lite %v: service %s cpuset %q, want %q", lite, sv.Name, sv.CPUSet, want)
			}
			for _, u := range sv.Ulimits {
				if u.Name == "nofile" && u.Hard != 20000 {
					t.Errorf("service %s nofile %d, want the host's 20000", sv.Name, u.Hard)
				}
			}
		}
		server, _ := st.Service("server")
		if server.Env["DATABASE_URL"] != "postgres://bench:bench@localhost:5432/benchmark" {
			t.Errorf("server env %v; want the Postgres sidecar's DATABASE_URL", server.Env)
		}
		edge, _ := st.Service("edge")
		if len(edge.Mounts) != 2 || edge.Mounts[0].Source != "/data/certs" || !edge.Mounts[0].ReadOnly {
			t.Errorf("edge mounts %+v; want the certificates from CERTS_DIR, read-only", edge.Mounts)
		}
		all := strings.Join(notes.Lines, "\n")
		if !strings.Contains(all, "nethttp-stack production-stack: service edge: ulimit nofile 1048576 lowered to 20000: the host's hard limit") {
			t.Errorf("notes %q; want each relaxation said", notes.Lines)
		}
	}
}

func TestAPIBefore(t *testing.T) {
	for v, want := range map[string]bool{"1.41": true, "1.43": true, "1.44": false, "1.47": false, "2.0": false, "": false} {
		if got := apiBefore(v, 1, 44); got != want {
			t.Errorf("apiBefore(%q, 1.44) = %v, want %v", v, got, want)
		}
	}
}
