package compose

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"
)

// A stack runs code from a pull request, as a server does, so Load confines it before any
// container starts (the runner then confines each service as it confines a server: every
// capability dropped but a server's, no-new-privileges, memory and pids limits).
//
// Mounts: a service may bind-mount only ${CERTS_DIR}, ${DATA_DIR} (or paths inside them)
// and paths inside the entry's own directory, after symbolic links are resolved, and
// always read-only: a bind the file leaves read-write is made read-only and a note says
// so (the arena's own files then run unedited). Any other host path, a named or anonymous
// volume, a tmpfs or any other type is refused.
//
// Keys that reach the host are refused rather than ignored: privileged, cap_add, devices,
// device_cgroup_rules, gpus, pid/ipc/uts/cgroup/userns_mode shared with the host or with
// another container, cgroup_parent, volumes_from, use_api_socket, extends (it reads
// another file), sysctls outside the IPC namespace (under network_mode: host a net.* one
// is the host's own setting), the scheduling ulimits (rtprio, rttime, nice), and any
// security_opt but seccomp unconfined and no-new-privileges (allowedSecurityOpts).
//
// Builds: a build context and its Dockerfile must be inside the job's checkout (the
// repository that holds frameworks/<entry>), opened through an os.Root so that neither
// .. nor an absolute path nor a symbolic link leads out of it; a build option that reaches
// beyond the context (additional_contexts, ssh, secrets, entitlements, privileged) is
// refused. No error quotes a file from outside the entry's checkout: the compose file
// itself is read through an os.Root of the entry directory, and compose-go reads nothing
// else (no include, extends, env_file or label_file).

// maxFileSize bounds a compose file; the arena's are under 4 KB.
const maxFileSize = 1 << 20

// allowedSecurityOpts are the security_opt values a service may set. The arena's own files
// set seccomp:unconfined (the colon is Docker's older spelling); no-new-privileges the
// runner sets on every service anyway.
var allowedSecurityOpts = []string{
	"seccomp:unconfined", "seccomp=unconfined",
	"no-new-privileges", "no-new-privileges:true", "no-new-privileges=true",
}

// schedulingUlimits are the ulimits that let a process take a CPU from the host (real-time
// scheduling, a higher nice priority).
var schedulingUlimits = []string{"rtprio", "rttime", "nice"}

// ipcSysctls are the sysctls Docker namespaces per container's IPC namespace: the only ones
// that do not reach the host. The runner does not apply them either (they stay in
// Unsupported).
var ipcSysctls = []string{"kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.sem",
	"kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced"}

// mountFix is the fix of every refused mount.
const mountFix = "bind only ${CERTS_DIR}, ${DATA_DIR} or paths inside them, or paths inside the entry's own directory, read-only (${DATA_DIR}/static:/data/static:ro); keep anything else inside the image"

// readFile reads the entry's compose file through an os.Root of the entry directory: a
// symbolic link that leads out of it is refused, and nothing of what it points at is read.
func readFile(entryDir, file string) ([]byte, error) {
	r, err := os.OpenRoot(entryDir)
	if err != nil {
		return nil, fmt.Errorf("compose: %w", err)
	}
	defer r.Close()
	f, err := r.Open(filepath.Base(file))
	if err != nil {
		return nil, &Error{File: file, Msg: "the file cannot be read inside the entry directory (a symbolic link out of it is refused)",
			Fix: "make the compose file a regular file of the entry directory"}
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, &Error{File: file, Msg: "the compose file is not a regular file", Fix: "make the compose file a regular file of the entry directory"}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("compose: %w", err)
	}
	if len(b) > maxFileSize {
		return nil, &Error{File: file, Msg: fmt.Sprintf("the file is larger than %d bytes", maxFileSize), Fix: "keep the compose file to the stack's services"}
	}
	return b, nil
}

// checkoutOf is the repository checkout an entry directory belongs to: the directory that
// holds its frameworks/ directory. An entry directory that is not inside a frameworks/
// directory is its own checkout.
func checkoutOf(entryDir string) string {
	parent := filepath.Dir(entryDir)
	if filepath.Base(parent) == "frameworks" {
		return filepath.Dir(parent)
	}
	return entryDir
}

// An allowedRoot is a directory a service may bind read-only, and how messages name it.
type allowedRoot struct {
	name     string // "${DATA_DIR}", "." (the entry directory)
	path     string // absolute, as given
	resolved string // symbolic links resolved
}

// confines checks one stack's services against what a stack may do.
type confines struct {
	file     string
	entry    string // the entry directory, absolute
	checkout string // the checkout, absolute
	roots    []allowedRoot
	notes    []string
}

func newConfines(file, entryDir string, env map[string]string) (*confines, error) {
	c := &confines{file: file, entry: entryDir, checkout: checkoutOf(entryDir)}
	for _, v := range []struct{ name, path string }{
		{"${" + VarCertsDir + "}", env[VarCertsDir]},
		{"${" + VarDataDir + "}", env[VarDataDir]},
		{".", entryDir},
	} {
		if v.path == "" {
			continue
		}
		abs, err := filepath.Abs(v.path)
		if err != nil {
			return nil, fmt.Errorf("compose: %w", err)
		}
		res, err := resolve(abs)
		if err != nil {
			return nil, fmt.Errorf("compose: %w", err)
		}
		c.roots = append(c.roots, allowedRoot{name: v.name, path: abs, resolved: res})
	}
	return c, nil
}

// resolve resolves the symbolic links of p's longest existing prefix and joins the rest:
// the path a bind of p mounts, whether or not p exists yet.
func resolve(p string) (string, error) {
	p = filepath.Clean(p)
	var rest []string
	for {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			slices.Reverse(rest)
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		rest = append(rest, filepath.Base(p))
		p = parent
	}
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// shown is a host path as messages show it: under the variable or the entry directory it
// is written with, else as it is.
func (c *confines) shown(p string) string {
	// As written first (compose-go leaves ${DATA_DIR}/.. uncleaned): the host's own paths
	// stay off the pull request.
	for _, r := range c.roots {
		if r.name != "." && strings.HasPrefix(p, r.path+"/") && !within(p, r.path) {
			return r.name + p[len(r.path):]
		}
	}
	for _, r := range c.roots {
		if within(p, r.path) {
			rel, _ := filepath.Rel(r.path, p)
			switch {
			case r.name == "." && rel == ".":
				return "."
			case r.name == ".":
				return "./" + filepath.ToSlash(rel)
			case rel == ".":
				return r.name
			}
			return r.name + "/" + filepath.ToSlash(rel)
		}
	}
	if within(p, c.checkout) {
		rel, _ := filepath.Rel(c.entry, p)
		return filepath.ToSlash(rel)
	}
	return p
}

// written is a volume as the file writes it, its host path shown.
func (c *confines) written(v types.ServiceVolumeConfig) string {
	src := v.Source
	if v.Type == types.VolumeTypeBind {
		src = c.shown(src)
	}
	out := v.Target
	if src != "" {
		out = src + ":" + v.Target
	}
	if v.ReadOnly {
		out += ":ro"
	}
	return out
}

// service checks what the stack's service s may do and sets sv's mounts and build.
func (c *confines) service(sv *Service, s types.ServiceConfig) error {
	bad := func(msg, fix string) error { return &Error{File: c.file, Service: s.Name, Msg: msg, Fix: fix} }
	hostShared := func(key, v string) error {
		if v == "host" || strings.HasPrefix(v, "container:") || strings.HasPrefix(v, types.ServicePrefix) {
			return bad(fmt.Sprintf("%s: %s shares the %s namespace of the host or of another container", key, v, key),
				fmt.Sprintf("remove %s: every service runs in its own (the network is the host's: network_mode: host)", key))
		}
		return nil
	}
	switch {
	case s.Privileged:
		return bad("privileged: true would give the service every capability and the host's devices",
			"remove privileged; every service runs with the capabilities a server has")
	case len(s.CapAdd) > 0:
		return bad(fmt.Sprintf("cap_add [%s]: the arena does not add capabilities", strings.Join(s.CapAdd, ", ")),
			"remove cap_add; every service runs with the capabilities a server has (CHOWN, DAC_OVERRIDE, FOWNER, KILL, SETGID, SETUID, NET_BIND_SERVICE)")
	case len(s.Devices) > 0 || len(s.DeviceCgroupRules) > 0 || len(s.Gpus) > 0:
		return bad("devices, device_cgroup_rules and gpus would give the service the host's devices", "remove them")
	case s.CgroupParent != "":
		return bad("cgroup_parent "+s.CgroupParent+" would place the service outside the runner's cgroups", "remove cgroup_parent")
	case len(s.VolumesFrom) > 0:
		return bad(fmt.Sprintf("volumes_from [%s] would mount another container's volumes", strings.Join(s.VolumesFrom, ", ")),
			"remove volumes_from; bind the paths the service needs read-only")
	case s.UserNSMode != "":
		return bad("userns_mode: "+s.UserNSMode+" would run the service in the host's user namespace", "remove userns_mode")
	case s.Cgroup == "host":
		return bad("cgroup: host would show the service the host's cgroup tree", "remove cgroup")
	case s.UseAPISocket:
		return bad("use_api_socket would give the service the Docker socket (root on the host)", "remove use_api_socket")
	case s.Extends != nil:
		return bad("extends is not supported by the arena (it reads another service's definition, possibly from another file)",
			"write the service out in full in this file")
	}
	for _, kv := range []struct{ key, v string }{{"pid", s.Pid}, {"ipc", s.Ipc}, {"uts", s.Uts}} {
		if err := hostShared(kv.key, kv.v); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Sysctls)) {
		if !slices.Contains(ipcSysctls, name) && !strings.HasPrefix(name, "fs.mqueue.") {
			return bad(fmt.Sprintf("sysctl %s is not namespaced to the container (under network_mode: host a net.* one is the host's own setting)", name),
				"remove it; tune the server inside its own process")
		}
	}
	for _, u := range sv.Ulimits {
		if slices.Contains(schedulingUlimits, u.Name) {
			return bad(fmt.Sprintf("ulimit %s would let the service take CPU time from the host", u.Name), "remove the ulimit "+u.Name)
		}
	}
	for _, o := range s.SecurityOpt {
		if !slices.Contains(allowedSecurityOpts, o) {
			return bad(fmt.Sprintf("security_opt %q is not allowed", o),
				"remove it; a service may set only "+strings.Join(allowedSecurityOpts, ", "))
		}
	}
	sv.Mounts = nil
	for _, v := range s.Volumes {
		m, err := c.mount(s.Name, v)
		if err != nil {
			return err
		}
		sv.Mounts = append(sv.Mounts, m)
	}
	if s.Build != nil {
		b, err := c.build(s.Name, s.Build)
		if err != nil {
			return err
		}
		sv.Build = b
	}
	return nil
}

// mount checks one volume: a bind of an allowed path, made read-only.
func (c *confines) mount(service string, v types.ServiceVolumeConfig) (Mount, error) {
	bad := func(msg string) error {
		return &Error{File: c.file, Service: service, Msg: fmt.Sprintf("volume %s %s", c.written(v), msg), Fix: mountFix}
	}
	switch v.Type {
	case types.VolumeTypeBind:
	case types.VolumeTypeVolume:
		if v.Source == "" {
			return Mount{}, bad("is an anonymous volume, which the arena does not create")
		}
		return Mount{}, bad("is a named volume, which would outlive the row")
	default:
		return Mount{}, bad("of type " + v.Type + " is not supported")
	}
	if !filepath.IsAbs(v.Source) {
		return Mount{}, bad("is not a host path")
	}
	res, err := resolve(v.Source)
	if err != nil {
		return Mount{}, bad("cannot be resolved")
	}
	ok := slices.ContainsFunc(c.roots, func(r allowedRoot) bool { return within(res, r.resolved) })
	if !ok {
		if slices.ContainsFunc(c.roots, func(r allowedRoot) bool { return within(filepath.Clean(v.Source), r.path) }) {
			return Mount{}, bad("leads, through a symbolic link, outside the paths a service may bind")
		}
		return Mount{}, bad("binds a host path outside the arena's data, its certificates and the entry's directory")
	}
	if !v.ReadOnly {
		c.notes = append(c.notes, fmt.Sprintf("service %s: volume %s mounted read-only: a stack binds only read-only; add :ro to say so",
			service, c.written(v)))
	}
	return Mount{Type: types.VolumeTypeBind, Source: res, Target: v.Target, ReadOnly: true}, nil
}

// build checks a build section: the context a directory of the checkout, the Dockerfile a
// regular file inside the context, both opened through an os.Root of the checkout.
func (c *confines) build(service string, b *types.BuildConfig) (*Build, error) {
	bad := func(msg, fix string) error { return &Error{File: c.file, Service: service, Msg: msg, Fix: fix} }
	switch {
	case b.DockerfileInline != "":
		return nil, bad("build.dockerfile_inline is not supported", "put the Dockerfile in the build context and name it in build.dockerfile")
	case len(b.AdditionalContexts) > 0:
		return nil, bad("build.additional_contexts is not supported", "build from one context inside the repository")
	case len(b.SSH) > 0 || len(b.Secrets) > 0:
		return nil, bad("build.ssh and build.secrets are not supported (a build gets no credential of the host)", "remove them")
	case len(b.Entitlements) > 0 || b.Privileged:
		return nil, bad("build.entitlements and build.privileged are not supported", "remove them; RUN steps run unprivileged")
	}
	out := &Build{Context: b.Context, Dockerfile: b.Dockerfile, Args: values(b.Args), Target: b.Target}
	if out.Dockerfile == "" {
		out.Dockerfile = defaultDockerfile
	}
	// The context as the file may have written it: relative to the entry directory, or the
	// absolute path when that is shorter (/etc rather than ../../../../../etc).
	ctxShown := b.Context
	if rel, err := filepath.Rel(c.entry, b.Context); err == nil && filepath.IsAbs(b.Context) && len(rel) <= len(b.Context) {
		ctxShown = filepath.ToSlash(rel)
	}
	ctxFix := "give build.context relative to the compose file's directory, inside the repository (../../ for the repository root)"
	rel, err := filepath.Rel(c.checkout, b.Context)
	if err != nil || !filepath.IsAbs(b.Context) || (rel != "." && !filepath.IsLocal(rel)) {
		return nil, bad(fmt.Sprintf("build context %s is outside the repository", ctxShown), ctxFix)
	}
	r, err := os.OpenRoot(c.checkout)
	if err != nil {
		return nil, fmt.Errorf("compose: %w", err)
	}
	defer r.Close()
	if fi, err := r.Stat(rel); err != nil || !fi.IsDir() {
		return nil, bad(fmt.Sprintf("build context %s is not a directory inside the repository (a symbolic link out of it is refused)", ctxShown), ctxFix)
	}
	dfFix := "give build.dockerfile relative to build.context (frameworks/<dir>/Dockerfile with context ../../)"
	df := out.Dockerfile
	if filepath.IsAbs(df) {
		dr, err := filepath.Rel(b.Context, df)
		if err != nil || !filepath.IsLocal(dr) {
			return nil, bad(fmt.Sprintf("build.dockerfile %s is not inside the build context %s", df, ctxShown), dfFix)
		}
		df = dr
	}
	if !filepath.IsLocal(df) {
		return nil, bad(fmt.Sprintf("build.dockerfile %s is not inside the build context %s", df, ctxShown),
			"give build.dockerfile relative to build.context (frameworks/<dir>/Dockerfile with context ../../)")
	}
	out.Dockerfile = df
	switch fi, err := r.Stat(filepath.Join(rel, df)); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, bad(fmt.Sprintf("build.dockerfile %s does not exist in the context %s", df, ctxShown), dfFix)
	case err != nil || !fi.Mode().IsRegular():
		return nil, bad(fmt.Sprintf("build.dockerfile %s is not a file inside the repository (a symbolic link out of it is refused)", df), dfFix)
	}
	return out, nil
}
