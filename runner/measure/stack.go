package measure

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/compose"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/validate"
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

// A stackStage runs a profile's load against the entry's compose stack: it loads the
// entry's file, builds its services, starts them in order and waits for them (stackrun.go),
// and validates over the stack's edge. It has the Bencher's parts it needs.
type stackStage struct {
	eng      Engine
	cfg      *Config
	out      *reporter
	images   *build.Builder
	tools    *tools
	servers  *servers
	sidecars *sidecarStarter
}

// ownImage is false: a stack's images come from its compose file.
func (sr *stackStage) ownImage() bool { return false }

// prebuild builds the services of the entry's stack for p ahead.
func (sr *stackStage) prebuild(ctx context.Context, e frameworks.Entry, p profile.Profile) func(*build.Builder) {
	if !p.Runnable() {
		return nil
	}
	return func(images *build.Builder) {
		// Quiet: the row says what it relaxes when it loads the file again.
		st, err := sr.loadStackNoting(ctx, e, p, func(string) {})
		if err == nil {
			err = sr.stackImages(ctx, images, e, st)
		}
		if err != nil {
			sr.cfg.Log.Info("stack images not built ahead", "entry", e.Name, "test", p.Name, "err", err) // the row reports it
		}
	}
}

// open starts the profile's sidecars and the entry's stack and prepares the load tool's
// run (production-stack: the reads and the writes).
func (sr *stackStage) open(ctx context.Context, _ string, e frameworks.Entry, p profile.Profile, conns int) (*session, error) {
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
	if err := sr.tools.load(s, p, conns); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// validate validates each profile on its own stack. A stack that did not come up, or a
// sidecar that did not, leaves its profile unchecked: unready holds why.
func (sr *stackStage) validate(ctx context.Context, _ string, e frameworks.Entry, names []string) ([]validate.Outcome, map[string]error, error) {
	var out []validate.Outcome
	var unready map[string]error
	for _, name := range names {
		p, _ := profile.Lookup(name)
		o, err := sr.validateStack(ctx, e, p)
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
	return out, unready, nil
}

// loadStack loads the entry's compose file for the profile with the arena's variables and
// relaxes what this host refuses, saying so; in --lite nothing is pinned, and on a host
// that lacks a service's CPUs the service gets the server CPU set.
func (sr *stackStage) loadStack(ctx context.Context, e frameworks.Entry, p profile.Profile) (*compose.Stack, error) {
	return sr.loadStackNoting(ctx, e, p, sr.out.note)
}

// loadStackNoting is loadStack saying what it relaxed through note.
func (sr *stackStage) loadStackNoting(ctx context.Context, e frameworks.Entry, p profile.Profile, note func(string)) (*compose.Stack, error) {
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
func (sr *stackStage) stackImages(ctx context.Context, images *build.Builder, e frameworks.Entry, st *compose.Stack) error {
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
		if b.stages.of(p).ownImage() || !p.Runnable() {
			continue
		}
		st, err := b.stages.stack.loadStack(ctx, e, p)
		if err != nil {
			return tags, err
		}
		if err := b.stages.stack.stackImages(ctx, b.images, e, st); err != nil {
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
func (sr *stackStage) sidecarsFor(ctx context.Context, e frameworks.Entry, p profile.Profile) (*compose.Stack, *sidecars, error) {
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

// validateStack starts the profile's sidecars and the entry's stack as a row does and runs
// the profile's checks over its edge.
func (sr *stackStage) validateStack(ctx context.Context, e frameworks.Entry, p profile.Profile) ([]validate.Outcome, error) {
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
