package measure

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/cgroup"
	"github.com/arenabot/arenabot/runner/compose"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/runner/loadgen"
	"github.com/arenabot/arenabot/text"
	"github.com/arenabot/arenabot/validate"
	"github.com/arenabot/arenabot/validate/protocol"
)

// The labels of a compose stack's containers, beside build.LabelManaged, build.LabelEntry
// and LabelProfile (so the leftover sweep and a job's cleanup remove them): the stack's
// project, under the runner's name and compose's, and the service.
const (
	LabelStack          = "arenabot.stack"
	LabelStackService   = "arenabot.stack.service"
	labelComposeProject = "com.docker.compose.project"
	labelComposeService = "com.docker.compose.service"
)

// stackEngine is what a stack needs of the engine besides Engine: the containers' health
// and the API version (for Relax). *docker.Engine implements it.
type stackEngine interface {
	Health(ctx context.Context, id string) (docker.Health, error)
	Info(ctx context.Context) (docker.Info, error)
}

var _ stackEngine = (*docker.Engine)(nil)

// A StackError is a compose stack the runner cannot run for a row: a file it cannot
// honour, an image it cannot find, a service that exited or never became healthy. It
// fails that row (and the profile's validation); Cell is the one-line table cell.
type StackError struct {
	Service string // "" for the stack as a whole
	Msg     string // what went wrong and the fix
	Cell    string
}

func (e *StackError) Error() string { return e.Msg }

// Short is the table cell.
func (e *StackError) Short() string { return e.Cell }

// stackOnly reports whether every profile is a compose stack: the entry's own Dockerfile is
// then not built (its images come from its compose files).
func stackOnly(ps []profile.Profile) bool {
	if len(ps) == 0 {
		return false
	}
	for _, p := range ps {
		if !p.Compose {
			return false
		}
	}
	return true
}

// stackOnlyNames is stackOnly for profile names; unknown names are not stacks.
func stackOnlyNames(names []string) bool {
	var ps []profile.Profile
	for _, n := range names {
		p, ok := profile.Lookup(n)
		if !ok {
			return false
		}
		ps = append(ps, p)
	}
	return stackOnly(ps)
}

// entryProfiles are the profiles an entry subscribes to that the table knows.
func entryProfiles(e frameworks.Entry) []profile.Profile {
	var ps []profile.Profile
	for _, n := range e.Meta.Tests {
		if p, ok := profile.Lookup(n); ok {
			ps = append(ps, p)
		}
	}
	return ps
}

// A stackRunner runs the compose stacks of the stack profiles: it loads an entry's file,
// builds its services, starts them in order and waits for them, and validates over the
// stack's edge. It has the Bencher's parts it needs.
type stackRunner struct {
	eng      Engine
	cfg      *Config
	out      *reporter
	images   *build.Builder
	tools    *tools
	servers  *servers
	sidecars *sidecarStarter
}

// loadStack loads the entry's compose file for the profile with the arena's variables and
// relaxes what this host refuses, saying so; in --lite nothing is pinned, and on a host
// that lacks a service's CPUs the service gets the server CPU set.
func (sr *stackRunner) loadStack(ctx context.Context, e frameworks.Entry, p profile.Profile) (*compose.Stack, error) {
	return sr.loadStackNoting(ctx, e, p, sr.out.note)
}

// loadStackNoting is loadStack saying what it relaxed through note.
func (sr *stackRunner) loadStackNoting(ctx context.Context, e frameworks.Entry, p profile.Profile, note func(string)) (*compose.Stack, error) {
	env := map[string]string{
		compose.VarCertsDir:    filepath.Join(sr.cfg.DataDir, arenadata.CertsDir),
		compose.VarDataDir:     sr.cfg.DataDir,
		compose.VarDatabaseURL: envValue(sr.sidecars.table[profile.SidecarPostgres].ServerEnv, "DATABASE_URL"),
	}
	st, err := compose.Load(e.Dir, p.Name, env)
	if err != nil {
		if ce, ok := errors.AsType[*compose.Error](err); ok {
			return nil, &StackError{Service: ce.Service, Msg: ce.Error(), Cell: "compose: " + stackCell(ce)}
		}
		return nil, err
	}
	h := compose.Host{Ulimits: map[string]int64{"nofile": sr.cfg.Nofile}}
	if m := host.HardMemlock(); m != 0 {
		h.Ulimits["memlock"] = m
	}
	if se, ok := sr.eng.(stackEngine); ok {
		if in, err := se.Info(ctx); err == nil {
			h.NoStartInterval = apiBefore(in.APIVersion, 1, 44)
		}
	}
	for _, line := range append(slices.Clone(st.Notes), st.Relax(h)...) {
		note(fmt.Sprintf("%s %s: %s", e.Name, p.Name, line))
	}
	for i := range st.Services {
		sv := &st.Services[i]
		if len(sv.Unsupported) > 0 {
			note(fmt.Sprintf("%s %s: service %s: not applied by the runner: %s", e.Name, p.Name, sv.Name, strings.Join(sv.Unsupported, ", ")))
		}
		switch {
		case sr.cfg.Lite:
			sv.CPUSet = ""
		case sv.CPUSet != "" && !host.CPUSetFits(sv.CPUSet, host.NumCPU()):
			sv.CPUSet = sr.cfg.ServerCPUs
		}
	}
	return st, nil
}

// stackCell is a compose error's table cell: the service and the problem, without the file
// and the fix.
func stackCell(e *compose.Error) string {
	msg := e.Msg
	if i := strings.IndexByte(msg, ';'); i > 0 {
		msg = msg[:i]
	}
	if e.Service != "" {
		msg = e.Service + ": " + msg
	}
	if len(msg) > 80 {
		msg = msg[:79] + "…"
	}
	return msg
}

// apiBefore reports whether the API version v ("1.41") is before major.minor.
func apiBefore(v string, major, minor int) bool {
	a, b, ok := strings.Cut(v, ".")
	ma, err1 := strconv.Atoi(a)
	mi, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return false
	}
	return ma < major || ma == major && mi < minor
}

// stackImages builds every service with a build section through images (so the image map
// and the stand-ins apply to every FROM) and finds every other service's image (on the
// host, pulled, or its stand-in), setting each service's Image to what it runs.
func (sr *stackRunner) stackImages(ctx context.Context, images *build.Builder, e frameworks.Entry, st *compose.Stack) error {
	for i := range st.Services {
		sv := &st.Services[i]
		if sv.Build == nil {
			ref, note, err := images.Image(ctx, sv.Name, sv.Image)
			if bi, ok := errors.AsType[*build.BaseImageError](err); ok {
				return &StackError{Service: sv.Name, Cell: "image missing: " + sv.Image,
					Msg: fmt.Sprintf("%s: service %s: image %s is not on this host and cannot be pulled (%s), and no stand-in replaces it; load it (docker load) or map it with ARENA_IMAGE_MAP=%s=<local image>", st.File, sv.Name, sv.Image, bi.PullErr, build.MapPattern(sv.Image))}
			}
			if err != nil {
				return err
			}
			if note != "" {
				sr.out.note(e.Name + ": " + note)
			}
			sv.Image = ref
			continue
		}
		if sv.Build.Target != "" {
			return &StackError{Service: sv.Name, Cell: sv.Name + ": build.target unsupported",
				Msg: fmt.Sprintf("%s: service %s: build.target %q is not supported by the runner's builds (the last stage is built); make the stage to run the Dockerfile's last", st.File, sv.Name, sv.Build.Target)}
		}
		sum := sha256.Sum256([]byte(sv.Build.Context + "\x00" + sv.Build.Dockerfile))
		tag := strings.ToLower(st.Project+"-"+sv.Name) + ":" + hex.EncodeToString(sum[:6])
		ref, err := images.Service(ctx, build.Service{Name: e.Name + "-" + sv.Name, Context: sv.Build.Context,
			Dockerfile: sv.Build.Dockerfile, Args: sv.Build.Args, Tag: tag})
		if err != nil {
			return err
		}
		sv.Image = ref
	}
	return nil
}

// BuildStacks builds the images of an entry's compose stacks, one per compose-stack
// profile it subscribes to, and returns their tags: what arenabot build does for an entry
// that runs only in stacks.
func (b *Bencher) BuildStacks(ctx context.Context, e frameworks.Entry) ([]string, error) {
	var tags []string
	for _, p := range entryProfiles(e) {
		if !p.Compose || !p.Runnable() {
			continue
		}
		st, err := b.stacks.loadStack(ctx, e, p)
		if err != nil {
			return tags, err
		}
		if err := b.stacks.stackImages(ctx, b.images, e, st); err != nil {
			return tags, err
		}
		for _, sv := range st.Services {
			if sv.Build != nil && !slices.Contains(tags, sv.Image) {
				tags = append(tags, sv.Image)
			}
		}
	}
	return tags, nil
}

// A runningStack is a compose stack's containers, in start order.
type runningStack struct {
	st         *compose.Stack
	srv        *servers
	ctx        context.Context
	containers []stackContainer
}

type stackContainer struct {
	service string
	c       docker.Container
}

// stop removes the stack's containers, last started first, even after ctx has ended.
func (r *runningStack) stop() {
	for _, sc := range slices.Backward(r.containers) {
		r.srv.remove(r.ctx, sc.c.ID)
	}
	r.containers = nil
}

// group is the stack's cgroups joined: CPU and memory are counted over every service.
func (r *runningStack) group(root string) (*cgroup.Group, error) {
	var gs []*cgroup.Group
	for _, sc := range r.containers {
		g, err := cgroup.ForContainer(root, sc.c.Pid, sc.c.ID)
		if err != nil {
			return nil, fmt.Errorf("cgroup of service %s: %w", sc.service, err)
		}
		gs = append(gs, g)
	}
	if len(gs) == 0 {
		return nil, errors.New("the stack has no running container")
	}
	return cgroup.Join(gs...), nil
}

// healthWait bounds the wait for a service_healthy dependency beyond what its healthcheck
// itself allows (start_period + retries × (interval + timeout)).
const healthWait = 2 * time.Minute

// startStack builds the stack's images and starts its services in dependency order on the
// host network, each after its dependencies reached their condition, then waits until the
// profile's probe and the edge answer. On an error nothing of the stack is left running.
func (sr *stackRunner) startStack(ctx context.Context, e frameworks.Entry, p profile.Profile, st *compose.Stack, env []string) (*runningStack, error) {
	if err := sr.stackImages(ctx, sr.images, e, st); err != nil {
		return nil, err
	}
	order, err := st.Order()
	if err != nil {
		return nil, err
	}
	rs := &runningStack{st: st, srv: sr.servers, ctx: ctx}
	byName := map[string]docker.Container{}
	for _, sv := range order {
		for _, d := range sv.DependsOn {
			if err := sr.waitDependency(ctx, st, d, byName[d.Service]); err != nil {
				rs.stop()
				return nil, err
			}
		}
		c, err := sr.eng.Start(ctx, sr.serviceOptions(e, p, st, sv))
		if err != nil {
			rs.stop()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &StackError{Service: sv.Name, Cell: "service " + sv.Name + " did not start",
				Msg: fmt.Sprintf("%s: service %s did not start from %s: %v", st.File, sv.Name, sv.Image, err)}
		}
		rs.containers = append(rs.containers, stackContainer{service: sv.Name, c: c})
		byName[sv.Name] = c
		sr.cfg.Log.Info("stack service started", "stack", st.Project, "service", sv.Name, "image", sv.Image, "cpus", text.Or(sv.CPUSet, "—"))
	}
	if err := sr.waitStack(ctx, e, p, rs); err != nil {
		rs.stop()
		return nil, err
	}
	return rs, nil
}

// serviceOptions is how a service runs: its image, entrypoint, command, environment,
// ulimits, security options and binds as the file says (as compose.Load allowed them: the
// binds read-only), on the host network, confined as a server is, labelled with the job,
// the entry, the profile and the stack.
func (sr *stackRunner) serviceOptions(e frameworks.Entry, p profile.Profile, st *compose.Stack, sv *compose.Service) docker.RunOptions {
	var env []string
	for _, k := range slices.Sorted(maps.Keys(sv.Env)) {
		env = append(env, k+"="+sv.Env[k])
	}
	// compose.Load let through only binds of the arena's data, its certificates and the
	// entry's own files, and only read-only; read-only they stay here whatever a caller did.
	var mounts []docker.Mount
	for _, m := range sv.Mounts {
		mounts = append(mounts, docker.Mount{Source: m.Source, Target: m.Target, ReadOnly: true})
	}
	// The file's security options are compose.Load's allowlist (seccomp unconfined, which
	// the arena's own files set, and no-new-privileges, which confine sets anyway).
	secopt := slices.DeleteFunc(slices.Clone(sv.SecurityOpt), func(o string) bool { return strings.HasPrefix(o, "no-new-privileges") })
	var ulimits []docker.Ulimit
	for _, u := range sv.Ulimits {
		ulimits = append(ulimits, docker.Ulimit{Name: u.Name, Soft: u.Soft, Hard: u.Hard})
	}
	labels := map[string]string{}
	maps.Copy(labels, sv.Labels)
	maps.Copy(labels, sr.cfg.Labels)
	o := docker.RunOptions{
		Name:        st.Project + "-" + sv.Name,
		Image:       sv.Image,
		Cmd:         sv.Command,
		Entrypoint:  sv.Entrypoint,
		Env:         env,
		HostNetwork: true,
		CPUSet:      sv.CPUSet,
		Nofile:      sr.cfg.Nofile, // unless the file sets nofile (Ulimits, relaxed)
		Ulimits:     ulimits,
		Mounts:      mounts,
		SecurityOpt: secopt,
		Labels: docker.Labels(labels, build.LabelManaged, "true", build.LabelEntry, e.Name, LabelProfile, p.Name,
			LabelStack, st.Project, LabelStackService, sv.Name, labelComposeProject, st.Project, labelComposeService, sv.Name),
	}
	// Every service of the stack is the entry's code or its choice of image: confined as the
	// servers are (confine.go).
	confine(&o, serverCaps, sr.cfg.serverMemory(p), sr.cfg.PidsLimit)
	if h := sv.Healthcheck; h != nil {
		o.Healthcheck = &docker.Healthcheck{Test: h.Test, Interval: h.Interval, Timeout: h.Timeout, Retries: h.Retries, StartPeriod: h.StartPeriod}
	}
	return o
}

// waitDependency waits, bounded, until the started service c reached the condition of d:
// started (it is), healthy (the engine's health state), or exited with status 0.
func (sr *stackRunner) waitDependency(ctx context.Context, st *compose.Stack, d compose.Dependency, c docker.Container) error {
	if d.Condition == compose.ServiceStarted {
		return nil
	}
	se, ok := sr.eng.(stackEngine)
	if !ok {
		return fmt.Errorf("the engine cannot report container health (needed for %s's %s)", d.Service, d.Condition)
	}
	limit := healthWait
	if sv, ok := st.Service(d.Service); ok && sv.Healthcheck != nil && d.Condition == compose.ServiceHealthy {
		hc := sv.Healthcheck
		iv, to := cmpOr(hc.Interval, 30*time.Second), cmpOr(hc.Timeout, 30*time.Second)
		limit = min(hc.StartPeriod+time.Duration(max(hc.Retries, 3)+1)*(iv+to), healthWait)
	}
	deadline := time.Now().Add(limit)
	wait := 50 * time.Millisecond
	for {
		h, err := se.Health(ctx, c.ID)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return err
		}
		switch d.Condition {
		case compose.ServiceHealthy:
			if h.Status == "healthy" {
				return nil
			}
			if !h.Running {
				return &StackError{Service: d.Service, Cell: fmt.Sprintf("%s exited with status %d", d.Service, h.ExitCode),
					Msg: fmt.Sprintf("%s: service %s exited with status %d before it was healthy; container log: %s", st.File, d.Service, h.ExitCode, sr.servers.logTail(ctx, c.ID))}
			}
			if h.Status == "unhealthy" {
				return &StackError{Service: d.Service, Cell: d.Service + " unhealthy",
					Msg: fmt.Sprintf("%s: service %s is unhealthy (last check: %s); fix its healthcheck or the service", st.File, d.Service, text.Or(h.Log, "—"))}
			}
		case compose.ServiceCompletedSuccessfully:
			if !h.Running {
				if h.ExitCode == 0 {
					return nil
				}
				return &StackError{Service: d.Service, Cell: fmt.Sprintf("%s exited with status %d", d.Service, h.ExitCode),
					Msg: fmt.Sprintf("%s: service %s exited with status %d, and a service waits for it to complete successfully; container log: %s", st.File, d.Service, h.ExitCode, sr.servers.logTail(ctx, c.ID))}
			}
		}
		if time.Now().After(deadline) {
			what := "healthy"
			if d.Condition == compose.ServiceCompletedSuccessfully {
				what = "completed"
			}
			return &StackError{Service: d.Service, Cell: fmt.Sprintf("%s not %s after %s", d.Service, what, limit),
				Msg: fmt.Sprintf("%s: service %s was not %s after %s (health %s, last check: %s); container log: %s", st.File, d.Service, what, limit, text.Or(h.Status, "—"), text.Or(h.Log, "—"), sr.servers.logTail(ctx, c.ID))}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, 500*time.Millisecond)
	}
}

func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// edgeProbe is what the arena's suite waits for before checking a stack: the edge serving a
// static file over h2.
const edgeProbe = "/static/reset.css"

// waitStack polls the profile's probe (the server, on 8080), then the edge (/static/reset.css
// over h2 on 8443), until each answers, a container exits, or ReadyTimeout passes.
func (sr *stackRunner) waitStack(ctx context.Context, e frameworks.Entry, p profile.Profile, rs *runningStack) error {
	port, scheme := p.ProbeAt()
	probes := []struct {
		port   int
		scheme string
		path   string
	}{{port, scheme, p.Probe}, {profile.PortTLS, profile.SchemeH2, edgeProbe}}
	deadline := time.Now().Add(sr.cfg.ReadyTimeout)
	for _, pr := range probes {
		proto, err := protocol.For(pr.scheme)
		if err != nil {
			return fmt.Errorf("readiness probe of %s: %w", p.Name, err)
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(pr.port))
		wait := 20 * time.Millisecond
		for {
			err := proto.Probe(ctx, addr, pr.path, protocol.Config{Timeout: 2 * time.Second})
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			for _, sc := range rs.containers {
				if running, code, serr := sr.eng.State(ctx, sc.c.ID); serr == nil && !running {
					return &ReadyError{
						Msg:  fmt.Sprintf("%s: service %s of the %s stack exited with status %d before %s answered; container log: %s", e.Name, sc.service, p.Name, code, probeURL(proto, addr, pr.path), sr.servers.logTail(ctx, sc.c.ID)),
						Cell: fmt.Sprintf("%s exited with status %d", sc.service, code),
					}
				}
			}
			if time.Now().After(deadline) {
				return &ReadyError{
					Msg:   fmt.Sprintf("%s: the %s stack did not answer %s within %s (last error: %v)", e.Name, p.Name, probeURL(proto, addr, pr.path), sr.cfg.ReadyTimeout, err),
					Cell:  "stack not ready after " + sr.cfg.ReadyTimeout.String(),
					Cause: err,
				}
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
			wait = min(wait*2, 200*time.Millisecond)
		}
	}
	return nil
}

// stackSidecars are the profile's sidecars, without Redis when the stack has its own cache
// service (it takes 6379).
func stackSidecars(p profile.Profile, st *compose.Stack) []string {
	names := slices.Clone(p.Sidecars)
	if _, ok := st.Service("cache"); ok {
		names = slices.DeleteFunc(names, func(n string) bool { return n == profile.SidecarRedis })
	}
	return names
}

// sidecarsFor loads the entry's stack for p and starts the profile's sidecars for it, as a
// row and the validation both begin; the stack itself is not started yet.
func (sr *stackRunner) sidecarsFor(ctx context.Context, e frameworks.Entry, p profile.Profile) (*compose.Stack, *sidecars, error) {
	st, err := sr.loadStack(ctx, e, p)
	if err != nil {
		return nil, nil, err
	}
	side, err := sr.sidecars.startAll(ctx, e, p, stackSidecars(p, st))
	if err != nil {
		return nil, nil, err
	}
	return st, side, nil
}

// openStack is open for a compose-stack profile: the sidecars, the entry's stack, and the
// load tool's run (production-stack: the reads and the writes).
func (sr *stackRunner) openStack(ctx context.Context, e frameworks.Entry, p profile.Profile, conns int) (*session, error) {
	st, side, err := sr.sidecarsFor(ctx, e, p)
	if err != nil {
		return nil, err
	}
	rs, err := sr.startStack(ctx, e, p, st, side.env())
	if err != nil {
		side.stop()
		return nil, err
	}
	s := &session{side: side, stop: rs.stop, tool: sr.tools.checks[p.Tool]}
	if s.group, err = rs.group(sr.cfg.CgroupRoot); err != nil {
		s.close()
		return nil, err
	}
	lp := p
	if w, ok := stackWrites[p.Name]; ok {
		token, err := sr.bearer()
		if err != nil {
			s.close()
			return nil, err
		}
		lp.Headers = append(slices.Clone(p.Headers), token)
		wp := p
		wp.Requests, wp.Body, wp.Streams = []string{w.requests}, w.body, w.streams
		wp.Headers = []string{"Content-Type: application/json", token}
		wconns := max(conns/w.connDivisor, w.minConns)
		s.writes = &session{tool: s.tool}
		if s.writes.spec, s.writes.args, err = sr.tools.spec(s.tool.tool, wp, wconns); err != nil {
			s.close()
			return nil, err
		}
		s.writes.spec.OutDir = "" // one request log per run: the reads'
		s.writes.spec.Threads = min(w.threads, wconns)
		if s.writes.args, err = s.tool.tool.Args(s.writes.spec); err != nil {
			s.close()
			return nil, err
		}
	}
	if s.spec, s.args, err = sr.tools.spec(s.tool.tool, lp, conns); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// A writeLoad is the second load a profile runs beside its first, in parallel, over the
// same window: production-stack's writes.
type writeLoad struct {
	requests, body string // in requests/
	streams        int
	connDivisor    int // connections: the row's ÷ connDivisor, at least minConns
	minConns       int
	threads        int
}

// stackWrites are the profiles with a write load (compose.md: -c max(C/8, 8) -m 8 -t 8).
var stackWrites = map[string]writeLoad{
	"production-stack": {requests: arenadata.ProductionWrites, body: arenadata.ProductionWriteBody, streams: 8, connDivisor: 8, minConns: 8, threads: 8},
}

// bearer is the Authorization header with the arena's token.
func (sr *stackRunner) bearer() (string, error) {
	tok, err := os.ReadFile(filepath.Join(sr.cfg.DataDir, arenadata.JWTTokenFile))
	if err != nil {
		return "", fmt.Errorf("the arena's token: %w; remove the arena data directory so the runner writes it anew", err)
	}
	return "Authorization: Bearer " + strings.TrimSpace(string(tok)), nil
}

// runWithWrites runs a session's load and its write load in parallel inside one cgroup
// window. The run's counts are both loads' sums and its RPS both 2xx counts ÷ the first
// load's duration (the arena's rule); its latency is the first load's; each load's own
// counts are kept in Parts.
func (tl *tools) runWithWrites(ctx context.Context, s *session) (result.Run, error) {
	tool := s.tool.tool
	win, err := s.group.Begin()
	if err != nil {
		return result.Run{}, fmt.Errorf("cgroup: %w", err)
	}
	if err := tool.ClearLog(s.spec); err != nil {
		win.End()
		return result.Run{}, err
	}
	type out struct {
		b   []byte
		err error
	}
	wc := make(chan out, 1)
	go func() {
		b, err := tl.exec(ctx, tool, s.writes.args, s.writes.spec.Duration)
		wc <- out{b, err}
	}()
	rb, rerr := tl.exec(ctx, tool, s.args, s.spec.Duration)
	w := <-wc
	usage, uerr := win.End()
	if err := cmpErr(rerr, w.err, uerr); err != nil {
		return result.Run{}, err
	}
	reads, err := tool.Parse(rb)
	if err != nil {
		return result.Run{}, fmt.Errorf("%s output (reads): %w (last output: %s)", tool.Name, err, text.LastLine(string(rb)))
	}
	writes, err := tool.Parse(w.b)
	if err != nil {
		return result.Run{}, fmt.Errorf("%s output (writes): %w (last output: %s)", tool.Name, err, text.LastLine(string(w.b)))
	}
	if err := tool.ReadLog(s.spec, &reads); err != nil {
		return result.Run{}, err
	}
	parts := []result.Part{part("reads", reads), part("writes", writes)}
	sum := reads
	sum.Requests += writes.Requests
	sum.Status2xx += writes.Status2xx
	sum.Bytes += writes.Bytes
	sum.Errors.Connect += writes.Errors.Connect
	sum.Errors.Read += writes.Errors.Read
	sum.Errors.Write += writes.Errors.Write
	sum.Errors.Timeout += writes.Errors.Timeout
	run := toRun(sum, usage)
	run.Parts = parts
	if err := successful(run); err != nil {
		return run, err
	}
	// A run whose writes got no 2xx measured the reads alone, not the profile's mix.
	if writes.Status2xx == 0 {
		return run, &NoSuccessError{Run: toRun(writes, usage), Part: "writes"}
	}
	return run, nil
}

func part(name string, m loadgen.Measurement) result.Part {
	return result.Part{Name: name, Requests: m.Requests, Status2xx: m.Status2xx, DurationS: m.Duration.Seconds(), RPS: m.RPS()}
}

func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// validateImage validates the profiles: the compose-stack ones each on its own stack, the
// others in one container of image (validateServer). A stack that did not come up, or a
// sidecar that did not, leaves its profile unchecked: unready holds why.
func (b *Bencher) validateImage(ctx context.Context, image string, e frameworks.Entry, profiles []string) ([]validate.Outcome, map[string]error, error) {
	var stacks, others []string
	for _, name := range profiles {
		if p, ok := profile.Lookup(name); ok && p.Compose && p.Runnable() {
			stacks = append(stacks, name)
		} else {
			others = append(others, name)
		}
	}
	var out []validate.Outcome
	var unready map[string]error
	if len(others) > 0 {
		var err error
		if out, unready, err = b.validateServer(ctx, image, e, others); err != nil {
			return nil, nil, err
		}
	}
	for _, name := range stacks {
		p, _ := profile.Lookup(name)
		o, err := b.stacks.validateStack(ctx, e, p)
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if err != nil {
			_, side := errors.AsType[*SidecarError](err)
			_, stack := errors.AsType[*StackError](err)
			_, ready := errors.AsType[*ReadyError](err)
			_, base := errors.AsType[*build.BaseImageError](err)
			_, failed := errors.AsType[*build.BuildFailure](err)
			if !side && !stack && !ready && !base && !failed {
				return nil, nil, err
			}
			if unready == nil {
				unready = map[string]error{}
			}
			unready[name] = err
			continue
		}
		out = append(out, o...)
	}
	slices.SortStableFunc(out, func(a, b validate.Outcome) int { return order(a.Profile) - order(b.Profile) })
	return out, unready, nil
}

// validateStack starts the profile's sidecars and the entry's stack as a row does and runs
// the profile's checks over its edge.
func (sr *stackRunner) validateStack(ctx context.Context, e frameworks.Entry, p profile.Profile) ([]validate.Outcome, error) {
	st, side, err := sr.sidecarsFor(ctx, e, p)
	if err != nil {
		return nil, err
	}
	defer side.stop()
	rs, err := sr.startStack(ctx, e, p, st, side.env())
	if err != nil {
		return nil, err
	}
	defer rs.stop()
	start := time.Now()
	out := validate.Run(ctx, validate.Target{Host: "127.0.0.1", DataDir: sr.cfg.DataDir}, []string{p.Name})
	sr.cfg.Log.Info("validated", "framework", e.Name, "test", p.Name, "duration", time.Since(start).Round(time.Millisecond))
	return out, ctx.Err()
}

// stackOutcome is the one FAIL of a profile whose stack did not come up.
func stackOutcome(name string, err error) validate.Outcome {
	return validate.Outcome{Profile: name, Check: "compose stack", Status: validate.Fail,
		Expected: "the entry's compose stack up and answering (" + validate.DocsFile + "#" + name + ")", Got: err.Error()}
}
