package measure

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/runnertest"
)

// The hostile stacks: what a pull request could put in an entry's compose file to reach the
// benchmark host (issue 40), each on the real engine as a job runs it. Every one but the
// read-write data mount is refused when the file is loaded, before any image is built or
// any container started; the data mount is made read-only and the service's write fails.

// hostileStackRow measures the stack entry with the given gateway-64 file (and more files
// of the entry) as a row does, and returns the failed row and the containers started.
func hostileStackRow(t *testing.T, compose string, files map[string]string, cfg Config) (*recording, []string, result.Row) {
	t.Helper()
	eng, data := stackHost(t)
	return hostileStackRowOn(t, eng, data, compose, files, cfg)
}

// hostileStackRowOn is hostileStackRow on a host the test already holds.
func hostileStackRowOn(t *testing.T, eng *recording, data, compose string, files map[string]string, cfg Config) (*recording, []string, result.Row) {
	t.Helper()
	if files == nil {
		files = map[string]string{}
	}
	files["compose.gateway.yml"] = compose
	return measureEvilStack(t, eng, data, runnertest.EntryDir(t, "evilstack", files), cfg)
}

// measureEvilStack measures entry e's gateway-64 row once, which must fail, and returns the
// row and the notes the run printed.
func measureEvilStack(t *testing.T, eng *recording, data string, e frameworks.Entry, cfg Config) (*recording, []string, result.Row) {
	t.Helper()
	e.Meta.DisplayName, e.Meta.Tests = "evilstack", []string{"gateway-64"}
	cfg.Runs, cfg.Duration, cfg.SkipValidation = 1, time.Second, true
	b := stackBencher(t, eng, data, cfg)
	rows, err := b.Measure(t.Context(), Plan{Lite: true, Targets: []Target{{Entry: e, Profiles: []profile.Profile{stackProfile()}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Err == "" {
		t.Fatalf("rows %+v; want the one row failed", rows)
	}
	t.Logf("cell %q; error: %v", rows[0].Short, rows[0].Err)
	return eng, b.cfg.Progress.(*runnertest.Notes).Lines, rows[0]
}

// refusedAtLoad checks that the row failed with the compose file's refusal (a StackError's),
// in its cell and its message, and that nothing was built or started.
func refusedAtLoad(t *testing.T, row result.Row, eng *recording, notes []string, cell, msg string) {
	t.Helper()
	if got := row.Short; !strings.HasPrefix(got, "compose: ") || !strings.Contains(got, cell) {
		t.Errorf("cell %q; want the compose refusal %q", got, cell)
	}
	if !strings.Contains(row.Err, msg) || !strings.Contains(row.Err, "; fix: ") || strings.Contains(row.Err, "\n") {
		t.Errorf("error %q; want one line with %q and the fix", row.Err, msg)
	}
	if s := eng.started(); len(s) != 0 {
		t.Errorf("%d containers started (%s first); want none", len(s), s[0].Name)
	}
	if b := building(notes); len(b) != 0 {
		t.Errorf("built %q; want nothing built", b)
	}
}

// TestHostileStackHostMounts: a service that binds the host's / read-write and the Docker
// socket (before: it started, wrote into the host's /tmp and listed the socket while the
// row was measured) is refused before anything starts, and the file it would have written
// is not on the host.
func TestHostileStackHostMounts(t *testing.T) {
	marker := fmt.Sprintf("/tmp/arenabot-hostile-%d", os.Getpid())
	file := `services:
  evil:
    image: arenabot/debian:local
    network_mode: host
    command: ["sh", "-c", "touch /host` + marker + `; ls /var/run/docker.sock; sleep 60"]
    volumes:
      - /:/host
      - /var/run/docker.sock:/var/run/docker.sock
`
	eng, data := stackHost(t)
	start := time.Now()
	eng, notes, row := hostileStackRowOn(t, eng, data, file, nil, Config{})
	t.Logf("refused in %s", time.Since(start).Round(time.Millisecond))
	refusedAtLoad(t, row, eng, notes, "evil: volume /:/host binds a host path outside the arena's data",
		`compose.gateway.yml: service "evil": volume /:/host binds a host path outside the arena's data, its certificates and the entry's directory; fix: bind only ${CERTS_DIR}, ${DATA_DIR}`)
	if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s exists on the host (%v)", marker, err)
		os.Remove(marker)
	}
	// The socket alone is refused as well.
	eng, notes, row = hostileStackRowOn(t, &recording{WithoutRegistry: eng.WithoutRegistry}, data, strings.Replace(file, "      - /:/host\n", "", 1), nil, Config{})
	refusedAtLoad(t, row, eng, notes, "evil: volume /var/run/docker.sock:/var/run/docker.sock binds",
		"volume /var/run/docker.sock:/var/run/docker.sock binds a host path outside")
}

// TestHostileStackDataWrite: a service that mounts ${DATA_DIR} without :ro (before: it wrote
// a file into the cached arena data every later job mounts) gets it read-only, with a note
// under the table saying so; it runs confined as a server is (every capability dropped but
// serverCaps, no-new-privileges): its write fails, and the arena data is as it was.
func TestHostileStackDataWrite(t *testing.T) {
	// The service reports by its exit status: 0 it wrote the data; 7 the write failed and
	// it runs with serverCaps (CapEff 4eb) and NoNewPrivs; 8 the write failed but it is not
	// confined. A stack whose service exits fails its row with the status in the cell.
	const probe = `if touch /data/hostile-write 2>/dev/null || mkdir /data/static/hostile 2>/dev/null; then exit 0; fi; ` +
		`grep -q '^CapEff:[[:space:]]*00000000000004eb$' /proc/self/status && grep -q '^NoNewPrivs:[[:space:]]*1$' /proc/self/status && exit 7; exit 8`
	file := `services:
  evil:
    image: arenabot/debian:local
    network_mode: host
    command: ["sh", "-c", "` + probe + `"]
    volumes:
      - ${DATA_DIR}:/data
    security_opt: [seccomp:unconfined]
`
	_, data := runnertest.Engine(t, "")
	before := treeSum(t, data)
	t.Cleanup(func() {
		os.Remove(filepath.Join(data, "hostile-write"))
		os.Remove(filepath.Join(data, "static", "hostile"))
	})
	eng, notes, row := hostileStackRow(t, file, nil, Config{ReadyTimeout: 20 * time.Second})
	if got := row.Short; got != "evil exited with status 7" {
		t.Errorf("cell %q; want %q (the write refused, the service confined)", got, "evil exited with status 7")
	}
	if after := treeSum(t, data); after != before {
		t.Errorf("the arena data changed under the row (%s → %s)", before, after)
	}
	wantNote := "evilstack gateway-64: service evil: volume ${DATA_DIR}:/data mounted read-only: a stack binds only read-only; add :ro to say so"
	if !slices.Contains(notes, wantNote) {
		t.Errorf("notes %q; want %q", notes, wantNote)
	}
	s := eng.started()
	if len(s) != 1 {
		t.Fatalf("%d containers started; want the one service", len(s))
	}
	o := s[0]
	if len(o.Mounts) != 1 || !o.Mounts[0].ReadOnly || !slices.Equal(o.CapDrop, []string{"ALL"}) || !slices.Equal(o.CapAdd, serverCaps) ||
		!slices.Contains(o.SecurityOpt, noNewPrivileges) || !slices.Contains(o.SecurityOpt, "seccomp:unconfined") || o.Memory <= 0 || o.PidsLimit <= 0 {
		t.Errorf("the service ran with mounts %+v, cap drop %v add %v, security %v, memory %d, pids %d; want it confined as a server", o.Mounts, o.CapDrop, o.CapAdd, o.SecurityOpt, o.Memory, o.PidsLimit)
	}
}

// treeSum is a digest of the names, sizes, modes and times of everything under dir.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d %v %d\n", p, fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// TestHostileStackBuildContext: a service built from the host's /etc with the Dockerfile
// passwd (before: /etc was sent to the builder, and the row's error quoted passwd's first
// line) is refused before any build, and the error names the line and the fix and quotes
// nothing of the file; nor does a Dockerfile that is a symbolic link to it get read.
func TestHostileStackBuildContext(t *testing.T) {
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(passwd), "\n")
	for _, c := range []struct {
		name, file, cell, msg string
		link                  bool
	}{
		{"context /etc", "services:\n  evil:\n    build: {context: /etc, dockerfile: passwd}\n    network_mode: host\n",
			"evil: build context /etc is outside the repository", "build context /etc is outside the repository; fix: give build.context relative to the compose file's directory, inside the repository", false},
		{"Dockerfile linked to passwd", "services:\n  evil:\n    build: {context: ., dockerfile: Dockerfile}\n    network_mode: host\n",
			"evil: build.dockerfile Dockerfile is not a file inside the repository", "(a symbolic link out of it is refused); fix: give build.dockerfile relative to build.context", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var row result.Row
			var eng *recording
			var notes []string
			if c.link {
				eng, notes, row = hostileLinkedRow(t, c.file)
			} else {
				eng, notes, row = hostileStackRow(t, c.file, nil, Config{})
			}
			refusedAtLoad(t, row, eng, notes, c.cell, c.msg)
			for _, leak := range []string{first, strings.ToUpper(first), "root:x:0:0"} {
				if leak != "" && (strings.Contains(row.Err, leak) || strings.Contains(row.Short, leak)) {
					t.Errorf("the row's error quotes /etc/passwd: %v", row.Err)
				}
			}
		})
	}
}

// hostileLinkedRow is hostileStackRow for an entry whose Dockerfile links to /etc/passwd.
func hostileLinkedRow(t *testing.T, compose string) (*recording, []string, result.Row) {
	t.Helper()
	eng, data := stackHost(t)
	e := runnertest.EntryDir(t, "evilstack", map[string]string{"compose.gateway.yml": compose})
	if err := os.Symlink("/etc/passwd", filepath.Join(e.Dir, "Dockerfile")); err != nil {
		t.Fatal(err)
	}
	return measureEvilStack(t, eng, data, e, Config{})
}

// TestHostileStackPrivileges: the keys that reach the host (before: privileged, cap_add,
// devices, pid and sysctls were noted as not applied, userns_mode dropped without a word,
// and security_opt apparmor=unconfined and label:disable passed to the engine) each fail the
// row with the compose file's refusal, before anything starts.
func TestHostileStackPrivileges(t *testing.T) {
	for _, c := range []struct{ key, lines, msg string }{
		{"privileged", "    privileged: true\n", "privileged: true would give the service every capability"},
		{"cap_add", "    cap_add: [SYS_ADMIN]\n", "cap_add [SYS_ADMIN]: the arena does not add capabilities"},
		{"devices", "    devices: [\"/dev/kmsg:/dev/kmsg\"]\n", "devices, device_cgroup_rules and gpus would give the service the host's devices"},
		{"pid", "    pid: host\n", "pid: host shares the pid namespace of the host"},
		{"ipc", "    ipc: host\n", "ipc: host shares the ipc namespace of the host"},
		{"userns_mode", "    userns_mode: host\n", "userns_mode: host would run the service in the host's user namespace"},
		{"sysctls", "    sysctls: [kernel.core_pattern=|/tmp/x]\n", "sysctl kernel.core_pattern is not namespaced to the container"},
		{"volumes_from", "    volumes_from: [\"container:arenabot-redis\"]\n", "volumes_from [container:arenabot-redis] would mount another container's volumes"},
		{"apparmor", "    security_opt: [apparmor=unconfined]\n", `security_opt "apparmor=unconfined" is not allowed`},
		{"label", "    security_opt: [\"label:disable\"]\n", `security_opt "label:disable" is not allowed`},
	} {
		t.Run(c.key, func(t *testing.T) {
			file := "services:\n  evil:\n    image: arenabot/debian:local\n    network_mode: host\n    command: [\"sleep\", \"60\"]\n" + c.lines
			eng, notes, row := hostileStackRow(t, file, nil, Config{})
			refusedAtLoad(t, row, eng, notes, "evil: "+c.msg[:min(len(c.msg), 30)], c.msg)
		})
	}
}

// TestArenaStacksConfined: the arena's own compose files (nethttp-stack's gateway-64,
// gateway-h3 and production-stack, as the old arena writes them: ${CERTS_DIR} and
// ${DATA_DIR} mounts, seccomp:unconfined, memlock -1, cpusets) load unedited through the
// runner, with nothing made read-only behind their back, and every service would run
// confined as a server: cap drop ALL plus serverCaps, no-new-privileges beside the file's
// seccomp:unconfined, the memory and pids limits, its binds read-only. (TestStacks runs
// them.)
func TestArenaStacksConfined(t *testing.T) {
	data := t.TempDir()
	e, err := frameworks.Load(filepath.Join("..", "..", "frameworks"), "nethttp-stack", profile.Names())
	if err != nil {
		t.Fatal(err)
	}
	notes := &runnertest.Notes{}
	b := New(nil, Config{DataDir: data, Root: filepath.Join("..", ".."), Progress: notes})
	for _, name := range []string{"gateway-64", "gateway-h3", "production-stack"} {
		p, _ := profile.Lookup(name)
		st, err := b.stages.stack.loadStackNoting(t.Context(), e, p, notes.Note)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range st.Services {
			sv := &st.Services[i]
			o := b.stages.stack.serviceOptions(e, p, st, sv)
			if !slices.Equal(o.CapDrop, []string{"ALL"}) || !slices.Equal(o.CapAdd, serverCaps) || o.Memory != b.cfg.serverMemory(p) ||
				o.PidsLimit != b.cfg.PidsLimit || !slices.Equal(o.SecurityOpt, []string{"seccomp:unconfined", noNewPrivileges}) {
				t.Errorf("%s %s: cap drop %v add %v, memory %d, pids %d, security %v; want it confined as a server", name, sv.Name, o.CapDrop, o.CapAdd, o.Memory, o.PidsLimit, o.SecurityOpt)
			}
			for _, m := range o.Mounts {
				if !m.ReadOnly || !strings.HasPrefix(m.Source, data) {
					t.Errorf("%s %s: mount %+v; want the arena data, read-only", name, sv.Name, m)
				}
			}
		}
	}
	for _, l := range notes.Lines {
		if strings.Contains(l, "read-only") || strings.Contains(l, "not applied") {
			t.Errorf("note %q; want the arena's own files to run as written", l)
		}
	}
}
