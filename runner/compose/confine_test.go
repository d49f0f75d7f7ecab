package compose

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// hostile is a service of a gateway-64 file with the extra lines given.
func hostile(lines string) string {
	return "services:\n  evil:\n    image: x\n    network_mode: host\n" + lines
}

// TestConfineRefusals: every key of a stack service that reaches the host, every mount
// outside the allowed paths and every build that leaves the checkout is refused at Load
// with an *Error naming the file, the service, what is refused as written and the fix.
func TestConfineRefusals(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		files map[string]string // more files of the arena checkout
		links map[string]string // symbolic links: path in the checkout → target
		want  []string          // substrings of the message, in order
	}{
		{"host root", hostile("    volumes: [\"/:/host\"]\n"),
			nil, nil, []string{`service "evil": volume /:/host binds a host path outside the arena's data`, "fix: bind only ${CERTS_DIR}, ${DATA_DIR}"}},
		{"docker socket", hostile("    volumes: [\"/var/run/docker.sock:/var/run/docker.sock\"]\n"),
			nil, nil, []string{`volume /var/run/docker.sock:/var/run/docker.sock binds a host path outside`, "fix: bind only"}},
		{"etc read-only", hostile("    volumes: [\"/etc:/etc2:ro\"]\n"),
			nil, nil, []string{`volume /etc:/etc2:ro binds a host path outside`}},
		{"data dir parent", hostile("    volumes: [\"${DATA_DIR}/..:/d:ro\"]\n"),
			nil, nil, []string{`volume ${DATA_DIR}/..:/d:ro binds a host path outside the arena's data`}},
		{"entry symlink out", hostile("    volumes: [\"./conf:/conf:ro\"]\n"),
			nil, map[string]string{"frameworks/x/conf": "/etc"}, []string{`volume ./conf:/conf:ro leads, through a symbolic link, outside the paths a service may bind`, "fix: bind only"}},
		{"checkout outside the entry", hostile("    volumes: [\"../other:/o:ro\"]\n"),
			map[string]string{"frameworks/other/f": "x"}, nil, []string{`volume ../other:/o:ro binds a host path outside`}},
		{"named volume", hostile("    volumes: [\"cache:/var/cache\"]\nvolumes:\n  cache: {}\n"),
			nil, nil, []string{`volume cache:/var/cache is a named volume, which would outlive the row`, "fix: bind only"}},
		{"anonymous volume", hostile("    volumes: [\"/var/cache\"]\n"),
			nil, nil, []string{`volume /var/cache is an anonymous volume`}},
		{"tmpfs volume", hostile("    volumes: [{type: tmpfs, target: /t}]\n"),
			nil, nil, []string{`volume /t of type tmpfs is not supported`}},
		{"privileged", hostile("    privileged: true\n"),
			nil, nil, []string{`service "evil": privileged: true would give the service every capability`, "fix: remove privileged"}},
		{"cap_add", hostile("    cap_add: [SYS_ADMIN, NET_ADMIN]\n"),
			nil, nil, []string{`cap_add [SYS_ADMIN, NET_ADMIN]: the arena does not add capabilities`, "fix: remove cap_add"}},
		{"devices", hostile("    devices: [\"/dev/mem:/dev/mem\"]\n"),
			nil, nil, []string{`devices, device_cgroup_rules and gpus would give the service the host's devices`}},
		{"pid host", hostile("    pid: host\n"),
			nil, nil, []string{`pid: host shares the pid namespace of the host or of another container`, "fix: remove pid"}},
		{"ipc host", hostile("    ipc: host\n"), nil, nil, []string{`ipc: host shares the ipc namespace`}},
		{"pid of another container", hostile("    pid: container:arenabot-redis\n"), nil, nil, []string{`pid: container:arenabot-redis shares`}},
		{"uts host", hostile("    uts: host\n"), nil, nil, []string{`uts: host shares`}},
		{"userns host", hostile("    userns_mode: host\n"), nil, nil, []string{`userns_mode: host would run the service in the host's user namespace`}},
		{"cgroup host", hostile("    cgroup: host\n"), nil, nil, []string{`cgroup: host would show the service the host's cgroup tree`}},
		{"cgroup_parent", hostile("    cgroup_parent: /system.slice\n"), nil, nil, []string{`cgroup_parent /system.slice would place the service outside`}},
		{"volumes_from", hostile("    volumes_from: [\"container:x\"]\n"), nil, nil, []string{`volumes_from [container:x] would mount another container's volumes`}},
		{"use_api_socket", hostile("    use_api_socket: true\n"), nil, nil, []string{`use_api_socket would give the service the Docker socket`}},
		{"sysctl kernel", hostile("    sysctls: {kernel.core_pattern: \"|/tmp/x\"}\n"),
			nil, nil, []string{`sysctl kernel.core_pattern is not namespaced to the container`, "fix: remove it"}},
		{"sysctl net", hostile("    sysctls: [net.ipv4.ip_forward=1]\n"), nil, nil, []string{`sysctl net.ipv4.ip_forward is not namespaced`, "net.* one is the host's own setting"}},
		{"ulimit rtprio", hostile("    ulimits: {rtprio: 99}\n"), nil, nil, []string{`ulimit rtprio would let the service take CPU time from the host`}},
		{"apparmor unconfined", hostile("    security_opt: [\"apparmor=unconfined\"]\n"),
			nil, nil, []string{`security_opt "apparmor=unconfined" is not allowed`, "fix: remove it; a service may set only seccomp:unconfined, seccomp=unconfined, no-new-privileges"}},
		{"label disable", hostile("    security_opt: [\"label:disable\"]\n"), nil, nil, []string{`security_opt "label:disable" is not allowed`}},
		{"seccomp host file", hostile("    security_opt: [\"seccomp=/etc/docker/seccomp.json\"]\n"), nil, nil, []string{`security_opt "seccomp=/etc/docker/seccomp.json" is not allowed`}},
		{"no-new-privileges false", hostile("    security_opt: [\"no-new-privileges:false\"]\n"), nil, nil, []string{`security_opt "no-new-privileges:false" is not allowed`}},
		{"extends", hostile("    extends: {file: /etc/group, service: a}\n"),
			nil, nil, []string{`extends is not supported by the arena`, "fix: write the service out in full"}},
		{"include", "include: [/etc/group]\n" + hostile(""), nil, nil, []string{`include is not supported by the arena`}},
		{"build context /etc", "services:\n  evil:\n    build: {context: /etc, dockerfile: passwd}\n    network_mode: host\n",
			nil, nil, []string{`service "evil": build context /etc is outside the repository`, "fix: give build.context relative to the compose file's directory, inside the repository"}},
		{"build context climbing", "services:\n  evil:\n    build: {context: ../../.., dockerfile: etc/passwd}\n    network_mode: host\n",
			nil, nil, []string{`build context ../../.. is outside the repository`}},
		{"dockerfile out of the context", "services:\n  evil:\n    build: {context: ., dockerfile: ../../../../../../../../etc/passwd}\n    network_mode: host\n",
			nil, nil, []string{`build.dockerfile ../../../../../../../../etc/passwd is not inside the build context .`, "fix: give build.dockerfile relative to build.context"}},
		{"absolute dockerfile", "services:\n  evil:\n    build: {context: ., dockerfile: /etc/passwd}\n    network_mode: host\n",
			nil, nil, []string{`build.dockerfile /etc/passwd is not inside the build context .`}},
		{"context symlink out", "services:\n  evil:\n    build: {context: ./ctx, dockerfile: passwd}\n    network_mode: host\n",
			nil, map[string]string{"frameworks/x/ctx": "/etc"}, []string{`build context ctx is not a directory inside the repository (a symbolic link out of it is refused)`}},
		{"dockerfile symlink out", "services:\n  evil:\n    build: {context: ., dockerfile: Dockerfile}\n    network_mode: host\n",
			nil, map[string]string{"frameworks/x/Dockerfile": "/etc/passwd"}, []string{`build.dockerfile Dockerfile is not a file inside the repository (a symbolic link out of it is refused)`}},
		{"additional contexts", "services:\n  evil:\n    build: {context: ., additional_contexts: {etc: /etc}}\n    network_mode: host\n",
			map[string]string{"frameworks/x/Dockerfile": "FROM scratch\n"}, nil, []string{`build.additional_contexts is not supported`}},
		{"build ssh", "services:\n  evil:\n    build: {context: ., ssh: [default]}\n    network_mode: host\n",
			map[string]string{"frameworks/x/Dockerfile": "FROM scratch\n"}, nil, []string{`build.ssh and build.secrets are not supported`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"frameworks/x/compose.gateway.yml": tt.file}
			for k, v := range tt.files {
				files[k] = v
			}
			root := arena(t, files)
			for link, target := range tt.links {
				if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
					t.Fatal(err)
				}
			}
			data := filepath.Join(root, "data")
			env := map[string]string{VarDataDir: data, VarCertsDir: filepath.Join(data, "certs"), VarDatabaseURL: "postgres://x"}
			_, err := Load(filepath.Join(root, "frameworks", "x"), "gateway-64", env)
			if err == nil {
				t.Fatal("Load succeeded, want a refusal")
			}
			ce, ok := errors.AsType[*Error](err)
			if !ok {
				t.Fatalf("Load error %T is not an *Error: %v", err, err)
			}
			msg := strings.ReplaceAll(err.Error(), root+string(filepath.Separator), "")
			t.Log(msg)
			if !strings.HasPrefix(msg, "frameworks/x/compose.gateway.yml: ") || ce.Fix == "" {
				t.Errorf("error %q; want it to name the file and a fix", msg)
			}
			if strings.Contains(msg, "root:x:0:0") || strings.Contains(msg, "root:x:0:") {
				t.Errorf("error %q quotes a host file", msg)
			}
			containsInOrder(t, msg, tt.want)
		})
	}
}

// TestConfineComposeFileSymlink: a compose file that is a symbolic link out of the entry
// directory is not read, so nothing of what it points at reaches the error.
func TestConfineComposeFileSymlink(t *testing.T) {
	root := arena(t, map[string]string{"frameworks/x/meta.json": "{}"})
	if err := os.Symlink("/etc/group", filepath.Join(root, "frameworks", "x", "compose.gateway.yml")); err != nil {
		t.Fatal(err)
	}
	_, err := Load(filepath.Join(root, "frameworks", "x"), "gateway-64", env)
	if err == nil || !strings.Contains(err.Error(), "the file cannot be read inside the entry directory (a symbolic link out of it is refused)") {
		t.Fatalf("Load = %v; want the symbolic link refused", err)
	}
	if b, _ := os.ReadFile("/etc/group"); len(b) > 0 {
		first, _, _ := strings.Cut(string(b), "\n")
		if strings.Contains(err.Error(), first) {
			t.Errorf("the error quotes /etc/group: %v", err)
		}
	}
}

// TestConfineAllowed: the paths a stack may bind (the certificates, the data and files of
// the entry's own directory, through symbolic links that stay inside them) load, always
// read-only, and a read-write bind is made read-only with a note naming it; the allowed
// security options and IPC sysctls load.
func TestConfineAllowed(t *testing.T) {
	root := arena(t, map[string]string{
		"frameworks/x/compose.gateway.yml": `
services:
  edge:
    image: x
    network_mode: host
    volumes:
      - ${CERTS_DIR}:/certs:ro
      - ${DATA_DIR}/static:/data/static
      - ./conf/nginx.conf:/etc/nginx/nginx.conf
      - ./same:/same:ro
    security_opt: [seccomp:unconfined, seccomp=unconfined, no-new-privileges]
    sysctls: {kernel.shmmax: "1000000", fs.mqueue.msg_max: "100"}
`,
		"frameworks/x/conf/nginx.conf": "events {}\n",
		"data/static/reset.css":        "*{}\n",
		"data/certs/server.crt":        "crt\n",
	})
	if err := os.Symlink("conf", filepath.Join(root, "frameworks", "x", "same")); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(root, "data")
	e := map[string]string{VarDataDir: data, VarCertsDir: filepath.Join(data, "certs")}
	dir := filepath.Join(root, "frameworks", "x")
	st, err := Load(dir, "gateway-64", e)
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{
		{Type: "bind", Source: filepath.Join(data, "certs"), Target: "/certs", ReadOnly: true},
		{Type: "bind", Source: filepath.Join(data, "static"), Target: "/data/static", ReadOnly: true},
		{Type: "bind", Source: filepath.Join(dir, "conf", "nginx.conf"), Target: "/etc/nginx/nginx.conf", ReadOnly: true},
		{Type: "bind", Source: filepath.Join(dir, "conf"), Target: "/same", ReadOnly: true},
	}
	if diff := cmp.Diff(want, st.Services[0].Mounts); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}
	wantNotes := []string{
		"service edge: volume ${DATA_DIR}/static:/data/static mounted read-only: a stack binds only read-only; add :ro to say so",
		"service edge: volume ./conf/nginx.conf:/etc/nginx/nginx.conf mounted read-only: a stack binds only read-only; add :ro to say so",
	}
	if diff := cmp.Diff(wantNotes, st.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	if got := st.Services[0].SecurityOpt; !cmp.Equal(got, []string{"seccomp:unconfined", "seccomp=unconfined", "no-new-privileges"}) {
		t.Errorf("security_opt %v", got)
	}
	if got := st.Services[0].Unsupported; !cmp.Equal(got, []string{"sysctls"}) {
		t.Errorf("unsupported %v; want the IPC sysctls noted as not applied", got)
	}
}
