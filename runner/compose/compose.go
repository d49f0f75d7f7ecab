// Package compose reads an entry's compose file for the arena's compose-stack profiles
// (gateway-64, gateway-h3, production-stack) and turns it into a [Stack]: the services,
// their images or builds, and everything the runner needs to start them itself through the
// Docker Engine API, in dependency order, without docker compose.
//
// [Load] finds the file (compose.<profile>.yml, or the names the profile's row lists in
// ComposeFiles: gateway-64's file may have the arena's legacy name, compose.gateway.yml),
// loads it with compose-go under a fixed project name, interpolates only the variables the
// arena exports ([Variables]) and checks what the arena relies on: every service on the host
// network, every depends_on naming a service of the file with a known condition; and it
// confines the stack as a server is (confine.go): read-only binds of the arena's data and
// the entry's files only, builds inside the checkout, nothing that reaches the host.
// [Stack.Order] gives the start order and [Stack.Relax] lowers the settings a host refuses
// (a memlock -1 above the host's hard limit, a healthcheck start_interval an older Docker
// Engine lacks), saying what it changed.
//
// Every error about an entry's file is an [*Error] naming the file, the service and the fix.
//
// The package is a leaf: the standard library, compose-go and the profile table only.
package compose

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/template"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/text"
)

// The variables the arena exports for interpolation, as the old harness did, plus one CPU
// set per service name the reference stacks use (${SERVER_CPUSET:-20-31,84-95}).
const (
	VarCertsDir    = "CERTS_DIR"    // the directory of the TLS pair (server.crt, server.key)
	VarDataDir     = "DATA_DIR"     // the arena's data directory (static/, datasets, redis seed)
	VarDatabaseURL = "DATABASE_URL" // the Postgres sidecar's URL
)

// Variables are the names a compose file may interpolate: ${NAME} needs the caller to set
// it, ${NAME:-default} falls back to its default. Any other ${NAME} is an error unless it
// has a default. Nothing is read from the process environment or from .env files.
var Variables = []string{
	VarCertsDir, VarDataDir, VarDatabaseURL,
	"EDGE_CPUSET", "PROXY_CPUSET", "CACHE_CPUSET", "AUTHSVC_CPUSET", "SERVER_CPUSET",
}

// The conditions a depends_on entry may wait for.
const (
	ServiceStarted               = "service_started"
	ServiceHealthy               = "service_healthy"
	ServiceCompletedSuccessfully = "service_completed_successfully"
)

const (
	hostNetwork       = "host"
	projectPrefix     = "arenabot-"
	defaultDockerfile = "Dockerfile"
	unlimited         = -1 // a ulimit without a limit
)

// Stack is one entry's compose stack for one profile, in runner-neutral terms.
type Stack struct {
	File     string    // the compose file, as found below the entry directory given to Load
	Project  string    // "arenabot-<entry>-<profile>": the project label of every container
	Profile  string    // "gateway-64"
	Services []Service // sorted by name; Order gives the start order
	// Notes say what Load changed to confine the stack, one line each, for the notes under
	// the table: "service proxy: volume ${DATA_DIR}/static:/data/static mounted read-only: ...".
	Notes []string
}

// Service is one service of a stack. Every service runs on the host network (Load refuses
// anything else), so it has no ports or networks.
type Service struct {
	Name string
	// Image is the image to run; with Build, the tag to give the build: the file's image,
	// else compose's own name for it, "<project>-<service>".
	Image string
	Build *Build // nil: run Image as it is

	Entrypoint []string          // nil: the image's
	Command    []string          // nil: the image's
	Env        map[string]string // environment, interpolated; variables left unset are dropped

	CPUSet      string       // "20-31,84-95"; "" for any CPU
	Ulimits     []Ulimit     // sorted by name
	SecurityOpt []string     // ["seccomp:unconfined"]: only what allowedSecurityOpts allows
	Mounts      []Mount      // read-only binds of the allowed paths (confine.go)
	Healthcheck *Healthcheck // nil: none (or disabled)
	DependsOn   []Dependency // sorted by service
	Labels      map[string]string

	// Unsupported lists the keys the file sets for the service that a Stack does not carry
	// ("user", "cap_add", "ports", ...), in the file's terms, so the runner can say it did
	// not apply them rather than drop them silently.
	Unsupported []string
}

// Build says how to build a service's image.
type Build struct {
	Context    string            // absolute directory
	Dockerfile string            // relative to Context ("frameworks/nethttp-stack/Dockerfile")
	Args       map[string]string // build arguments with a value
	Target     string            // the stage to build; "" for the last
}

// Ulimit is one resource limit; -1 means unlimited.
type Ulimit struct {
	Name       string // "nofile", "memlock"
	Soft, Hard int64
}

// Mount is a bind mount of one of the paths a stack may mount (confine.go): always
// read-only.
type Mount struct {
	Type     string // "bind"
	Source   string // absolute host path, symbolic links resolved
	Target   string // path in the container
	ReadOnly bool   // always true
}

// Healthcheck is a service's health test, as Docker runs it.
type Healthcheck struct {
	Test          []string // ["CMD", "wget", ...] or ["CMD-SHELL", "..."]
	Interval      time.Duration
	Timeout       time.Duration
	Retries       int
	StartPeriod   time.Duration
	StartInterval time.Duration
}

// Dependency is one depends_on entry: start after Service reached Condition.
type Dependency struct {
	Service   string
	Condition string // ServiceStarted, ServiceHealthy or ServiceCompletedSuccessfully
}

// Service returns the service called name.
func (s *Stack) Service(name string) (*Service, bool) {
	i := slices.IndexFunc(s.Services, func(sv Service) bool { return sv.Name == name })
	if i < 0 {
		return nil, false
	}
	return &s.Services[i], true
}

// An Error says what is wrong with an entry's compose file and how to fix it.
type Error struct {
	File    string // "frameworks/x/compose.gateway.yml", or the entry directory when no file is found
	Service string // "" when the file as a whole is wrong
	Msg     string
	Fix     string
	Err     error // the cause, when there is one (compose-go's error, ErrNoFile)
}

// ErrNoFile is wrapped when the entry has no compose file for the profile.
var ErrNoFile = errors.New("no compose file")

// Error returns one line: the file, the service, the problem and the fix.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	b.WriteString(": ")
	if e.Service != "" {
		fmt.Fprintf(&b, "service %q: ", e.Service)
	}
	b.WriteString(e.Msg)
	if e.Fix != "" {
		b.WriteString("; fix: ")
		b.WriteString(e.Fix)
	}
	return text.OneLine(b.String())
}

func (e *Error) Unwrap() error { return e.Err }

// FileNames returns the compose file names Load looks for, for a profile, in order: the
// profile row's ComposeFiles, or compose.<profile>.yml.
func FileNames(profileName string) []string {
	if p, ok := profile.Lookup(profileName); ok && len(p.ComposeFiles) > 0 {
		return p.ComposeFiles
	}
	return []string{"compose." + profileName + ".yml"}
}

// Load finds the entry's compose file for the profile in entryDir, loads it with the
// arena's variables env (keys from Variables) and returns the stack. The project name is
// always "arenabot-<entry directory name>-<profile>"; a top-level name: in the file does not
// change it. Paths (build contexts, bind sources) come back absolute. The stack is
// confined (confine.go): binds only of env's CERTS_DIR and DATA_DIR and of the entry
// directory, read-only; builds only inside the checkout, the directory that holds the
// entry's frameworks/ directory (entryDir itself when it is not in one); nothing that
// reaches the host.
func Load(entryDir, profileName string, env map[string]string) (*Stack, error) {
	p, ok := profile.Lookup(profileName)
	if !ok || !p.Compose {
		return nil, &Error{File: entryDir, Msg: fmt.Sprintf("profile %q is not a compose-stack profile", profileName),
			Fix: "use one of " + strings.Join(composeProfiles(), ", ")}
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if !slices.Contains(Variables, k) {
			return nil, fmt.Errorf("compose: variable %s is not one the arena exports (%s)", k, strings.Join(Variables, ", "))
		}
	}
	file, err := find(entryDir, profileName)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(entryDir)
	if err != nil {
		return nil, fmt.Errorf("compose: %w", err)
	}
	content, err := readFile(abs, file)
	if err != nil {
		return nil, err
	}
	c, err := newConfines(file, abs, env)
	if err != nil {
		return nil, err
	}
	project := loader.NormalizeProjectName(projectPrefix + filepath.Base(abs) + "-" + profileName)
	vars := &lookup{env: env}
	details := types.ConfigDetails{
		WorkingDir:  abs,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(abs, filepath.Base(file)), Content: content}},
		Environment: types.Mapping(maps.Clone(env)),
	}
	proj, err := loader.LoadWithContext(context.Background(), details, func(o *loader.Options) {
		o.SetProjectName(project, true)
		o.SkipConsistencyCheck = true // Load checks depends_on itself, with the fix
		// Nothing but the entry's one file is read: include, extends' file, env_file and
		// label_file would have compose-go read any path of the host, and its parse errors
		// quote what it read.
		o.SkipInclude, o.SkipExtends = true, true
		o.SkipResolveEnvironment, o.SkipResolveLabels = true, true
		o.Interpolate.LookupValue = vars.get
		o.Interpolate.Substitute = vars.substitute
	})
	if err != nil {
		return nil, loadError(file, err)
	}
	if topInclude.Match(content) {
		return nil, &Error{File: file, Msg: "include is not supported by the arena",
			Fix: "put every service of the stack in this one file"}
	}
	st := &Stack{File: file, Project: project, Profile: profileName}
	for _, name := range slices.Sorted(maps.Keys(proj.Services)) {
		sv, err := convert(file, project, proj.Services[name])
		if err != nil {
			return nil, err
		}
		if err := c.service(&sv, proj.Services[name]); err != nil {
			return nil, err
		}
		st.Services = append(st.Services, sv)
	}
	st.Notes = c.notes
	if len(st.Services) == 0 {
		return nil, &Error{File: file, Msg: "the file has no services", Fix: "declare the stack's services under services:"}
	}
	if err := st.checkDeps(); err != nil {
		return nil, err
	}
	if _, err := st.Order(); err != nil {
		return nil, err
	}
	return st, nil
}

func composeProfiles() []string {
	var names []string
	for _, n := range profile.Names() {
		if p, _ := profile.Lookup(n); p.Compose {
			names = append(names, n)
		}
	}
	return names
}

// find returns the path of the entry's compose file for the profile.
func find(entryDir, profileName string) (string, error) {
	names := FileNames(profileName)
	var found []string
	for _, n := range names {
		p := filepath.Join(entryDir, n)
		if _, err := os.Stat(p); err == nil {
			found = append(found, p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("compose: %w", err)
		}
	}
	switch len(found) {
	case 0:
		return "", &Error{File: entryDir, Msg: fmt.Sprintf("no compose file for %s (looked for %s)", profileName, strings.Join(names, " and ")),
			Fix: fmt.Sprintf("add %s, or remove %s from meta.json's tests", names[0], profileName), Err: ErrNoFile}
	case 1:
		return found[0], nil
	}
	return "", &Error{File: entryDir, Msg: fmt.Sprintf("both %s and %s exist for %s", filepath.Base(found[0]), filepath.Base(found[1]), profileName),
		Fix: "keep one of them (" + names[0] + " is the arena's name)"}
}

// lookup is the interpolation environment: the arena's variables only.
type lookup struct {
	env map[string]string
}

func (l *lookup) get(name string) (string, bool) {
	if !slices.Contains(Variables, name) {
		return "", false
	}
	v, ok := l.env[name]
	return v, ok
}

// substitute interpolates one string as compose does, except that a ${NAME} (or $NAME)
// that is not set and has no default is an error naming the variable.
func (l *lookup) substitute(s string, m template.Mapping) (string, error) {
	return template.SubstituteWithOptions(s, m, template.WithoutLogging,
		template.WithReplacementFunction(func(sub string, m template.Mapping, cfg *template.Config) (string, error) {
			var missing string
			record := func(name string) (string, bool) {
				v, ok := m(name)
				if !ok {
					missing = name
				}
				return v, ok
			}
			v, applied, err := template.DefaultReplacementAppliedFunc(sub, record, cfg)
			if err == nil && !applied && missing != "" {
				return "", &unsetError{name: missing}
			}
			return v, err
		}))
}

// unsetError is a variable without a value and without a default.
type unsetError struct{ name string }

func (e *unsetError) Error() string { return "variable " + e.name + " is not set" }

// topInclude finds a top-level include: (which Load does not follow).
var topInclude = regexp.MustCompile(`(?m)^["']?include["']?\s*:`)

// servicePath finds the service in compose-go's "... services.<name>.<key>..." messages.
var servicePath = regexp.MustCompile(`services\.([A-Za-z0-9._-]+?)\.`)

// unknownKey finds the key in compose-go's schema error for a key the schema does not have.
var unknownKey = regexp.MustCompile(`services\.[A-Za-z0-9._-]+?\.([A-Za-z0-9_-]+) false schema`)

// loadError turns compose-go's error into an *Error with the service and a fix.
func loadError(file string, err error) error {
	service := ""
	if m := servicePath.FindStringSubmatch(err.Error()); m != nil {
		service = m[1]
	}
	if ue, ok := errors.AsType[*unsetError](err); ok {
		if slices.Contains(Variables, ue.name) {
			return &Error{File: file, Service: service, Msg: fmt.Sprintf("${%s} has no value for this run", ue.name),
				Fix: fmt.Sprintf("the arena sets it only where the profile needs it; give a default where the stack can do without: ${%s:-value}", ue.name), Err: err}
		}
		return &Error{File: file, Service: service,
			Msg: fmt.Sprintf("${%s} is not a variable the arena sets (it sets %s)", ue.name, strings.Join(Variables, ", ")),
			Fix: fmt.Sprintf("use one of the arena's variables or give a default: ${%s:-value}", ue.name), Err: err}
	}
	if m := unknownKey.FindStringSubmatch(err.Error()); m != nil {
		return &Error{File: file, Service: service, Msg: fmt.Sprintf("unknown key %q", m[1]),
			Fix: "correct or remove it (the keys are the compose specification's: https://compose-spec.io)", Err: err}
	}
	return &Error{File: file, Service: service, Msg: strings.ReplaceAll(err.Error(), "\n", " "),
		Fix: "correct the file (the compose specification: https://compose-spec.io)", Err: err}
}

// convert checks one compose-go service and turns it into a Service.
func convert(file, project string, s types.ServiceConfig) (Service, error) {
	bad := func(msg, fix string) error { return &Error{File: file, Service: s.Name, Msg: msg, Fix: fix} }
	if s.NetworkMode != hostNetwork {
		mode := s.NetworkMode
		if mode == "" {
			mode = "not set (compose's default network)"
		}
		return Service{}, bad("network_mode is "+mode+"; the arena runs stacks on the host network",
			"set network_mode: host and have the services talk over 127.0.0.1")
	}
	if len(s.EnvFiles) > 0 {
		return Service{}, bad("env_file is not read by the arena", "put the variables in environment:")
	}
	if s.Image == "" && s.Build == nil {
		return Service{}, bad("neither image nor build is set", "name an image or a build context")
	}
	sv := Service{
		Name:        s.Name,
		Image:       s.Image,
		Entrypoint:  s.Entrypoint,
		Command:     s.Command,
		CPUSet:      s.CPUSet,
		SecurityOpt: s.SecurityOpt,
		Labels:      map[string]string(s.Labels),
		Env:         values(s.Environment),
	}
	if s.Build != nil && sv.Image == "" {
		sv.Image = project + "-" + s.Name
	}
	sv.Unsupported = unsupported(s)
	for _, name := range slices.Sorted(maps.Keys(s.Ulimits)) {
		u := s.Ulimits[name]
		soft, hard := int64(u.Soft), int64(u.Hard)
		if u.Single != 0 {
			soft, hard = int64(u.Single), int64(u.Single)
		}
		sv.Ulimits = append(sv.Ulimits, Ulimit{Name: name, Soft: soft, Hard: hard})
	}
	if h := s.HealthCheck; h != nil && !h.Disable && len(h.Test) > 0 && h.Test[0] != "NONE" {
		hc := &Healthcheck{Test: h.Test}
		hc.Interval = duration(h.Interval)
		hc.Timeout = duration(h.Timeout)
		hc.StartPeriod = duration(h.StartPeriod)
		hc.StartInterval = duration(h.StartInterval)
		if h.Retries != nil {
			hc.Retries = int(*h.Retries)
		}
		sv.Healthcheck = hc
	}
	for _, dep := range slices.Sorted(maps.Keys(s.DependsOn)) {
		c := s.DependsOn[dep].Condition
		if c == "" {
			c = ServiceStarted
		}
		sv.DependsOn = append(sv.DependsOn, Dependency{Service: dep, Condition: c})
	}
	return sv, nil
}

// unsupported lists the keys set for s that a Service does not carry. Resource limits are
// among them: the runner sets its own per profile.
func unsupported(s types.ServiceConfig) []string {
	var keys []string
	add := func(set bool, key string) {
		if set {
			keys = append(keys, key)
		}
	}
	add(len(s.CapAdd) > 0, "cap_add")
	add(len(s.CapDrop) > 0, "cap_drop")
	add(s.CPUS != 0 || s.CPUQuota != 0 || s.CPUShares != 0 || s.CPUCount != 0, "cpus")
	add(len(s.Devices) > 0, "devices")
	add(len(s.ExtraHosts) > 0, "extra_hosts")
	add(s.Init != nil && *s.Init, "init")
	add(s.Ipc != "", "ipc")
	add(s.MemLimit != 0 || (s.Deploy != nil && s.Deploy.Resources.Limits != nil), "mem_limit")
	add(s.Pid != "", "pid")
	add(len(s.Ports) > 0, "ports")
	add(s.Privileged, "privileged")
	add(s.ReadOnly, "read_only")
	add(s.ShmSize != 0, "shm_size")
	add(s.StopGracePeriod != nil, "stop_grace_period")
	add(s.StopSignal != "", "stop_signal")
	add(len(s.Sysctls) > 0, "sysctls")
	add(len(s.Tmpfs) > 0, "tmpfs")
	add(s.User != "", "user")
	add(s.WorkingDir != "", "working_dir")
	return keys
}

// values keeps the entries that have a value.
func values(m types.MappingWithEquals) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}

func duration(d *types.Duration) time.Duration {
	if d == nil {
		return 0
	}
	return time.Duration(*d)
}

// checkDeps checks that every depends_on names a service of the stack with a known condition.
func (s *Stack) checkDeps() error {
	for _, sv := range s.Services {
		for _, d := range sv.DependsOn {
			dep, ok := s.Service(d.Service)
			if !ok {
				return &Error{File: s.File, Service: sv.Name, Msg: fmt.Sprintf("depends_on names %q, which is not a service of the file", d.Service),
					Fix: "name one of " + strings.Join(s.names(), ", ") + ", or remove the entry"}
			}
			switch d.Condition {
			case ServiceStarted, ServiceCompletedSuccessfully:
			case ServiceHealthy:
				if dep.Healthcheck == nil {
					return &Error{File: s.File, Service: sv.Name, Msg: fmt.Sprintf("depends_on %q with condition service_healthy, but %q has no healthcheck", d.Service, d.Service),
						Fix: fmt.Sprintf("give %q a healthcheck, or wait for service_started", d.Service)}
				}
			default:
				return &Error{File: s.File, Service: sv.Name, Msg: fmt.Sprintf("depends_on %q has the unknown condition %q", d.Service, d.Condition),
					Fix: "use service_started, service_healthy or service_completed_successfully"}
			}
		}
	}
	return nil
}

func (s *Stack) names() []string {
	names := make([]string, len(s.Services))
	for i, sv := range s.Services {
		names[i] = sv.Name
	}
	return names
}
