package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/pkg/stdcopy"
)

// cleanupTimeout bounds the removal of a container after its ctx has ended.
const cleanupTimeout = 30 * time.Second

// logDrain bounds how long Run waits, after the container exited, for the rest of its log.
const logDrain = 5 * time.Second

// A Mount is a bind mount of a host path into a container.
type Mount struct {
	Source   string // host path; it must exist
	Target   string // path in the container
	ReadOnly bool
}

// RunOptions describes a container to create.
type RunOptions struct {
	Name        string // "" lets the daemon choose one
	Image       string
	Cmd         []string // nil runs the image's default command
	Env         []string // "KEY=value"
	HostNetwork bool     // share the host's network namespace
	CPUSet      string   // CPUs to pin to, "0-3" or "2,3"; "" means no pinning
	Memory      int64    // memory limit in bytes, swap included (no swap); 0 means none
	Nofile      int64    // nofile soft and hard limit; 0 means the daemon's default
	Mounts      []Mount
	Tmpfs       map[string]string // tmpfs mounts: path in the container → options ("rw,size=2g")
	Labels      map[string]string
	SecurityOpt []string // "no-new-privileges:true"; seccomp= takes the profile's content
	CapDrop     []string // capabilities to drop ("ALL"); applied before CapAdd
	CapAdd      []string // capabilities to add back ("CHOWN", "SETUID")
	PidsLimit   int64    // most processes and threads at once in the container; 0 means none

	// The compose stacks' services (runner/compose) need these too.
	Entrypoint  []string     // nil runs the image's entrypoint
	Ulimits     []Ulimit     // resource limits besides Nofile (memlock, nproc, ...)
	Healthcheck *Healthcheck // nil keeps the image's own (HEALTHCHECK), if any

	// RunLimit (Run only) is the most the container may run once started: past it, Run kills
	// it and fails with ErrRunLimit. The daemon's time to create and start it is not counted
	// (ctx bounds that). 0: no limit but ctx's.
	RunLimit time.Duration
}

// A Ulimit is one resource limit of a container; -1 means unlimited.
type Ulimit struct {
	Name       string // "memlock", "nofile"
	Soft, Hard int64
}

// A Healthcheck is the test Docker runs in a container to tell its health (State.Health).
type Healthcheck struct {
	Test        []string // ["CMD", "redis-cli", "ping"] or ["CMD-SHELL", "..."]
	Interval    time.Duration
	Timeout     time.Duration
	Retries     int
	StartPeriod time.Duration
}

// Labels returns extra with the pairs kv (key, value, key, value, …) added: the labels of a
// container or an image, the caller's own on top of its extra ones.
func Labels(extra map[string]string, kv ...string) map[string]string {
	out := maps.Clone(extra)
	if out == nil {
		out = make(map[string]string, len(kv)/2)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// A Container is a started container.
type Container struct {
	ID   string
	Name string
	Pid  int // the host PID of its init process; 0 if it had already exited when inspected
}

// create creates the container described by o.
func (e *Engine) create(ctx context.Context, o RunOptions) (string, error) {
	cfg := &container.Config{
		Image:      o.Image,
		Cmd:        o.Cmd,
		Entrypoint: o.Entrypoint,
		Env:        o.Env,
		Labels:     o.Labels,
		Tty:        false,
	}
	if h := o.Healthcheck; h != nil {
		cfg.Healthcheck = &container.HealthConfig{Test: h.Test, Interval: h.Interval, Timeout: h.Timeout,
			Retries: h.Retries, StartPeriod: h.StartPeriod}
	}
	hc := &container.HostConfig{
		AutoRemove:  false,
		LogConfig:   container.LogConfig{Type: "json-file", Config: map[string]string{"max-size": "10m"}},
		SecurityOpt: o.SecurityOpt,
		CapDrop:     o.CapDrop,
		CapAdd:      o.CapAdd,
	}
	if o.PidsLimit > 0 {
		hc.PidsLimit = &o.PidsLimit
	}
	if o.HostNetwork {
		hc.NetworkMode = "host"
	}
	hc.CpusetCpus = o.CPUSet
	if o.Memory > 0 {
		hc.Memory, hc.MemorySwap = o.Memory, o.Memory
	}
	if o.Nofile > 0 {
		hc.Ulimits = []*container.Ulimit{{Name: "nofile", Soft: o.Nofile, Hard: o.Nofile}}
	}
	for _, u := range o.Ulimits {
		hc.Ulimits = slices.DeleteFunc(hc.Ulimits, func(x *container.Ulimit) bool { return x.Name == u.Name })
		hc.Ulimits = append(hc.Ulimits, &container.Ulimit{Name: u.Name, Soft: u.Soft, Hard: u.Hard})
	}
	hc.Tmpfs = o.Tmpfs
	for _, m := range o.Mounts {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly})
	}
	// A create cancelled in flight may still complete in the daemon after the client gave
	// up, leaving a container nobody knows of. So the request runs to its answer (bounded),
	// and a container created after ctx ended is removed here.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	resp, err := e.cli.ContainerCreate(cctx, cfg, hc, nil, nil, o.Name)
	if err != nil {
		return "", fmt.Errorf("create container %s from %s: %w", o.Name, o.Image, err)
	}
	if ctx.Err() != nil {
		e.removeDetached(ctx, resp.ID)
		return "", fmt.Errorf("create container %s from %s: %w", o.Name, o.Image, ctx.Err())
	}
	return resp.ID, nil
}

// Start creates and starts a detached container and returns it with the host PID of its
// init process. When Start fails (ctx ending included) no container is left behind.
func (e *Engine) Start(ctx context.Context, o RunOptions) (Container, error) {
	id, err := e.create(ctx, o)
	if err != nil {
		return Container{}, err
	}
	if err := e.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		e.removeDetached(ctx, id)
		return Container{}, startErr(o, err)
	}
	in, err := e.cli.ContainerInspect(ctx, id)
	if err != nil {
		e.removeDetached(ctx, id)
		return Container{}, fmt.Errorf("inspect container %s: %w", shortID(id), notFound(err))
	}
	c := Container{ID: id, Name: strings.TrimPrefix(in.Name, "/")}
	if in.State != nil {
		c.Pid = in.State.Pid
	}
	return c, nil
}

// State reports whether the container is running and, once it has stopped, its exit code.
// A missing container is an error wrapping ErrNotFound.
func (e *Engine) State(ctx context.Context, id string) (running bool, exitCode int, err error) {
	in, err := e.cli.ContainerInspect(ctx, id)
	if err != nil {
		return false, 0, fmt.Errorf("state of container %s: %w", shortID(id), notFound(err))
	}
	if in.State == nil {
		return false, 0, fmt.Errorf("state of container %s: the daemon reported none", shortID(id))
	}
	return in.State.Running, in.State.ExitCode, nil
}

// Health is a container's health as the daemon tells it.
type Health struct {
	Running  bool
	ExitCode int    // once it has stopped
	Status   string // "starting", "healthy", "unhealthy"; "" without a healthcheck
	Log      string // the last check's output, one line
}

// Health reports a container's state and the health its healthcheck gives it. A missing
// container is an error wrapping ErrNotFound.
func (e *Engine) Health(ctx context.Context, id string) (Health, error) {
	in, err := e.cli.ContainerInspect(ctx, id)
	if err != nil {
		return Health{}, fmt.Errorf("health of container %s: %w", shortID(id), notFound(err))
	}
	if in.State == nil {
		return Health{}, fmt.Errorf("health of container %s: the daemon reported no state", shortID(id))
	}
	h := Health{Running: in.State.Running, ExitCode: in.State.ExitCode}
	if in.State.Health != nil {
		h.Status = in.State.Health.Status
		if n := len(in.State.Health.Log); n > 0 {
			h.Log = oneLine(in.State.Health.Log[n-1].Output)
		}
	}
	return h, nil
}

// Run runs a container to completion, streaming its stdout and stderr, demultiplexed, into
// out (nil discards them), removes it, and returns its exit code. When ctx ends first the
// container is killed and removed, and the error wraps ctx's; when it runs past o.RunLimit,
// the same, and the error wraps ErrRunLimit (out has its output up to the kill).
func (e *Engine) Run(ctx context.Context, o RunOptions, out io.Writer) (int, error) {
	if out == nil {
		out = io.Discard
	}
	begin := time.Now()
	id, err := e.create(ctx, o)
	if err != nil {
		return 0, err
	}
	defer e.removeDetached(ctx, id)

	// Waiting before the start cannot miss the exit.
	waitCtx, stopWait := context.WithCancel(ctx)
	defer stopWait()
	waitC, waitErrC := e.cli.ContainerWait(waitCtx, id, container.WaitConditionNextExit)
	if err := e.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return 0, startErr(o, err)
	}
	setup := time.Since(begin)
	var limit <-chan time.Time
	if o.RunLimit > 0 {
		timer := time.NewTimer(o.RunLimit)
		defer timer.Stop()
		limit = timer.C
	}

	// The log stream ends on its own once the container has stopped; it is cut after
	// logDrain, or at once when Run fails, and Run never returns while it still writes.
	logCtx, stopLogs := context.WithCancel(context.WithoutCancel(ctx))
	defer stopLogs()
	logsDone := make(chan error, 1)
	if rc, err := e.cli.ContainerLogs(logCtx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: true}); err != nil {
		logsDone <- err
	} else {
		go func() {
			defer rc.Close()
			_, err := stdcopy.StdCopy(out, out, rc)
			logsDone <- err
		}()
	}
	logsErr := func(drain time.Duration) error {
		select {
		case err := <-logsDone:
			return err
		case <-time.After(drain):
			stopLogs()
			<-logsDone
			return nil
		}
	}

	select {
	case res := <-waitC:
		logErr := logsErr(logDrain)
		if res.Error != nil && res.Error.Message != "" {
			return 0, fmt.Errorf("wait for container %s: %s", shortID(id), res.Error.Message)
		}
		if logErr != nil && !errors.Is(logErr, context.Canceled) {
			return int(res.StatusCode), fmt.Errorf("logs of container %s: %w", shortID(id), logErr)
		}
		return int(res.StatusCode), nil
	case <-limit:
		e.kill(ctx, id)
		logsErr(logDrain) // the output up to the kill, for the caller to show
		return 0, fmt.Errorf("container %s did not exit within %s of its start (the daemon took %s to create and start it): %w",
			shortID(id), o.RunLimit, setup.Round(time.Millisecond), ErrRunLimit)
	case err := <-waitErrC:
		if ctx.Err() != nil {
			e.kill(ctx, id)
			logsErr(0)
			return 0, fmt.Errorf("run container %s: %w", shortID(id), ctx.Err())
		}
		logsErr(0)
		return 0, fmt.Errorf("wait for container %s: %w", shortID(id), err)
	}
}

// startErr explains a failed start, with a hint where the cause is a known host limit.
func startErr(o RunOptions, err error) error {
	if o.Nofile > 0 && strings.Contains(err.Error(), "rlimit") && strings.Contains(err.Error(), "not permitted") {
		return fmt.Errorf("start container %s from %s: nofile %d is more than the runtime may set (above the daemon's own hard limit without CAP_SYS_RESOURCE, or above fs.nr_open); lower Nofile or raise the daemon's limit: %w",
			o.Name, o.Image, o.Nofile, err)
	}
	return fmt.Errorf("start container %s from %s: %w", o.Name, o.Image, err)
}

// kill kills a container even though ctx has ended.
func (e *Engine) kill(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	e.cli.ContainerKill(ctx, id, "KILL") // the removal that follows forces it anyway
}

// removeDetached removes a container even though ctx has ended; errors are dropped, since
// its callers already return a more useful one.
func (e *Engine) removeDetached(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	e.Remove(ctx, id)
}

// Logs returns the last tail lines of the container's stdout and stderr, interleaved as they
// were written; tail <= 0 returns all of it.
func (e *Engine) Logs(ctx context.Context, id string, tail int) (string, error) {
	opts := container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: "all"}
	if tail > 0 {
		opts.Tail = strconv.Itoa(tail)
	}
	rc, err := e.cli.ContainerLogs(ctx, id, opts)
	if err != nil {
		return "", fmt.Errorf("logs of container %s: %w", shortID(id), notFound(err))
	}
	defer rc.Close()
	var b strings.Builder
	if _, err := stdcopy.StdCopy(&b, &b, rc); err != nil {
		return b.String(), fmt.Errorf("logs of container %s: %w", shortID(id), err)
	}
	return b.String(), nil
}

// Remove force-removes a container, running or not, with its anonymous volumes. A
// container that does not exist (or is already being removed) is not an error.
func (e *Engine) Remove(ctx context.Context, id string) error {
	err := e.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err == nil || cerrdefs.IsNotFound(err) || (cerrdefs.IsConflict(err) && strings.Contains(err.Error(), "already in progress")) {
		return nil
	}
	return fmt.Errorf("remove container %s: %w", shortID(id), err)
}

// RemoveLabeled force-removes every container, running or not, that carries the label
// key=value, and returns how many it removed.
func (e *Engine) RemoveLabeled(ctx context.Context, key, value string) (int, error) {
	list, err := e.cli.ContainerList(ctx, container.ListOptions{
		All:     true,
		Filters: filters.NewArgs(filters.Arg("label", key+"="+value)),
	})
	if err != nil {
		return 0, fmt.Errorf("list containers labelled %s=%s: %w", key, value, err)
	}
	var n int
	var errs []error
	for _, c := range list {
		if err := e.Remove(ctx, c.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// ImageExists reports whether the daemon has an image by this reference (a tag or an ID).
func (e *Engine) ImageExists(ctx context.Context, ref string) (bool, error) {
	_, err := e.cli.ImageInspect(ctx, ref)
	if err == nil {
		return true, nil
	}
	if cerrdefs.IsNotFound(err) {
		return false, nil
	}
	return false, fmt.Errorf("inspect image %s: %w", ref, err)
}

// PullTimeout bounds one PullImage.
const PullTimeout = 5 * time.Minute

// A PullError is a pull that the daemon refused or that failed midway: no registry
// reachable, no such image, no access.
type PullError struct {
	Ref string // the reference asked for
	Msg string // the daemon's reason, one line
}

func (e *PullError) Error() string { return "pull " + e.Ref + ": " + e.Msg }

// PullImage pulls an image by reference ("alpine:3.23", a name without a tag means :latest)
// from its registry, reading the daemon's progress stream to its end, within PullTimeout or
// ctx's deadline if sooner. A pull that the daemon refuses or that fails midway returns a
// *PullError; an ended ctx returns ctx's error, wrapped.
func (e *Engine) PullImage(ctx context.Context, ref string) error {
	pctx, cancel := context.WithTimeout(ctx, PullTimeout)
	defer cancel()
	rc, err := e.cli.ImagePull(pctx, ref, image.PullOptions{})
	if err == nil {
		defer rc.Close()
		var msg string
		_, msg, err = readBuildStream(rc, &lineLog{})
		if err == nil && msg != "" {
			return &PullError{Ref: ref, Msg: oneLine(msg)}
		}
	}
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("pull %s: %w", ref, ctx.Err())
	case pctx.Err() != nil:
		return &PullError{Ref: ref, Msg: fmt.Sprintf("no answer within %s", PullTimeout)}
	}
	return &PullError{Ref: ref, Msg: oneLine(strings.TrimPrefix(err.Error(), "Error response from daemon: "))}
}

// RemoveImage removes an image by reference (a tag untags it; the image goes with its last
// tag), with its untagged parents. An image that does not exist is not an error.
func (e *Engine) RemoveImage(ctx context.Context, ref string) error {
	_, err := e.cli.ImageRemove(ctx, ref, image.RemoveOptions{Force: true, PruneChildren: true})
	if err == nil || cerrdefs.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("remove image %s: %w", ref, err)
}

// shortID shortens a container ID for messages.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// ImageLabelValues returns the values the label key has on the images that carry it (not
// the intermediate ones), each once, in no particular order.
func (e *Engine) ImageLabelValues(ctx context.Context, key string) ([]string, error) {
	list, err := e.cli.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(filters.Arg("label", key))})
	if err != nil {
		return nil, fmt.Errorf("list images labelled %s: %w", key, err)
	}
	seen := map[string]bool{}
	var values []string
	for _, img := range list {
		if v, ok := img.Labels[key]; ok && !seen[v] {
			seen[v] = true
			values = append(values, v)
		}
	}
	return values, nil
}

// RemoveImagesLabeled removes every image that carries the label key=value (any value when
// value is ""), with its untagged parents, and returns how many it removed. The parents of
// other build stages are not parents of the labelled image, so they stay as build cache.
// Images still used by a container are removed too (Force); remove the containers first.
func (e *Engine) RemoveImagesLabeled(ctx context.Context, key, value string) (int, error) {
	label := key
	if value != "" {
		label += "=" + value
	}
	// Intermediate images are not listed: they go with the image on top of them
	// (PruneChildren), and removing one that still has children would be refused.
	list, err := e.cli.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(filters.Arg("label", label))})
	if err != nil {
		return 0, fmt.Errorf("list images labelled %s: %w", label, err)
	}
	var n int
	var errs []error
	for _, img := range list {
		if err := e.RemoveImage(ctx, img.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
