package measure

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/cgroup"
	"github.com/arenabot/arenabot/runner/compose"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/text"
	"github.com/arenabot/arenabot/validate/protocol"
)

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
func (sr *stackStage) startStack(ctx context.Context, e frameworks.Entry, p profile.Profile, st *compose.Stack, env []string) (*runningStack, error) {
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
func (sr *stackStage) serviceOptions(e frameworks.Entry, p profile.Profile, st *compose.Stack, sv *compose.Service) docker.RunOptions {
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
func (sr *stackStage) waitDependency(ctx context.Context, st *compose.Stack, d compose.Dependency, c docker.Container) error {
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
	var h docker.Health
	return poll(ctx, time.Now().Add(limit), dependencyPace, func() error {
		var err error
		h, err = se.Health(ctx, c.ID)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return halt{err}
		}
		switch d.Condition {
		case compose.ServiceHealthy:
			if h.Status == "healthy" {
				return nil
			}
			if !h.Running {
				return halt{&StackError{Service: d.Service, Cell: fmt.Sprintf("%s exited with status %d", d.Service, h.ExitCode),
					Msg: fmt.Sprintf("%s: service %s exited with status %d before it was healthy; container log: %s", st.File, d.Service, h.ExitCode, sr.servers.logTail(ctx, c.ID))}}
			}
			if h.Status == "unhealthy" {
				return halt{&StackError{Service: d.Service, Cell: d.Service + " unhealthy",
					Msg: fmt.Sprintf("%s: service %s is unhealthy (last check: %s); fix its healthcheck or the service", st.File, d.Service, text.Or(h.Log, "—"))}}
			}
		case compose.ServiceCompletedSuccessfully:
			if !h.Running {
				if h.ExitCode == 0 {
					return nil
				}
				return halt{&StackError{Service: d.Service, Cell: fmt.Sprintf("%s exited with status %d", d.Service, h.ExitCode),
					Msg: fmt.Sprintf("%s: service %s exited with status %d, and a service waits for it to complete successfully; container log: %s", st.File, d.Service, h.ExitCode, sr.servers.logTail(ctx, c.ID))}}
			}
		}
		return errNotYet
	}, func(error) error {
		what := "healthy"
		if d.Condition == compose.ServiceCompletedSuccessfully {
			what = "completed"
		}
		return &StackError{Service: d.Service, Cell: fmt.Sprintf("%s not %s after %s", d.Service, what, limit),
			Msg: fmt.Sprintf("%s: service %s was not %s after %s (health %s, last check: %s); container log: %s", st.File, d.Service, what, limit, text.Or(h.Status, "—"), text.Or(h.Log, "—"), sr.servers.logTail(ctx, c.ID))}
	})
}

// dependencyPace is how a dependency's health is polled; errNotYet is a poll's "not yet"
// when only the state says so.
var (
	dependencyPace = pace{first: 50 * time.Millisecond, most: 500 * time.Millisecond}
	errNotYet      = errors.New("not yet")
)

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
func (sr *stackStage) waitStack(ctx context.Context, e frameworks.Entry, p profile.Profile, rs *runningStack) error {
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
		err = poll(ctx, deadline, stackPace, func() error {
			err := proto.Probe(ctx, addr, pr.path, protocol.Config{Timeout: 2 * time.Second})
			if err == nil {
				return nil
			}
			for _, sc := range rs.containers {
				if running, code, serr := sr.eng.State(ctx, sc.c.ID); serr == nil && !running {
					return halt{&ReadyError{
						Msg:  fmt.Sprintf("%s: service %s of the %s stack exited with status %d before %s answered; container log: %s", e.Name, sc.service, p.Name, code, probeURL(proto, addr, pr.path), sr.servers.logTail(ctx, sc.c.ID)),
						Cell: fmt.Sprintf("%s exited with status %d", sc.service, code),
					}}
				}
			}
			return err
		}, func(last error) error {
			return &ReadyError{
				Msg:   fmt.Sprintf("%s: the %s stack did not answer %s within %s (last error: %v)", e.Name, p.Name, probeURL(proto, addr, pr.path), sr.cfg.ReadyTimeout, last),
				Cell:  "stack not ready after " + sr.cfg.ReadyTimeout.String(),
				Cause: last,
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// stackPace is how a stack's probes are polled.
var stackPace = pace{first: 20 * time.Millisecond, most: 200 * time.Millisecond}
