package measure

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/cgroup"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/runner/loadgen"
	"github.com/arenabot/arenabot/text"
)

// A toolCheck is a load tool found at its pinned version.
type toolCheck struct {
	tool    loadgen.Tool
	version string // the full version string recorded in results
}

// tools are the load tools of a Bencher: found and checked once (Prepare), then run for
// the warm-ups and the measured runs, natively on the load-generator CPUs or in the
// load-generator image (--lite).
type tools struct {
	eng    Engine
	cfg    Config
	images *build.Builder // the load-generator image, the scratch directory
	out    *reporter
	checks map[string]toolCheck // by the profiles' tool name
	grace  time.Duration        // toolGrace; a test's own when set
}

// prepare finds and checks every load tool the plan needs that is not checked yet.
func (tl *tools) prepare(ctx context.Context, plan Plan) error {
	need, err := planTools(plan)
	if err != nil {
		return err
	}
	for name, tool := range need {
		if _, ok := tl.checks[name]; ok {
			continue
		}
		full, err := tl.check(ctx, tool)
		if err != nil {
			return err
		}
		tl.checks[name] = toolCheck{tool: tool, version: full}
	}
	return nil
}

// planTools returns the load tools a plan's profiles need, by the profiles' tool name, in
// plan order.
func planTools(plan Plan) (iter.Seq2[string, loadgen.Tool], error) {
	var names []string
	tools := map[string]loadgen.Tool{}
	for _, t := range plan.Targets {
		for _, p := range t.Profiles {
			if _, ok := tools[p.Tool]; ok {
				continue
			}
			tool, err := loadgen.ForProfile(p)
			if err != nil {
				return nil, err
			}
			names = append(names, p.Tool)
			tools[p.Tool] = tool
		}
	}
	return func(yield func(string, loadgen.Tool) bool) {
		for _, n := range names {
			if !yield(n, tools[n]) {
				return
			}
		}
	}, nil
}

// check finds the tool, natively or in the load-generator image, and checks its version.
func (tl *tools) check(ctx context.Context, tool loadgen.Tool) (string, error) {
	var out strings.Builder
	if tl.cfg.Lite {
		if err := tl.images.Loadgen(ctx, tool); err != nil {
			return "", err
		}
		code, err := tl.eng.Run(ctx, tl.container(tool, append([]string{tool.Binary}, tool.VersionArgs...)), &out)
		if err != nil {
			return "", fmt.Errorf("%s in %s: %w", tool.Name, loadgen.ImageFor(tool), err)
		}
		_ = code // wrk -v exits 1; the output decides
		return checkedVersion(tool, out.String())
	}
	return nativeTool(ctx, tool)
}

// nativeTool finds an installed load tool on PATH and checks its version.
func nativeTool(ctx context.Context, tool loadgen.Tool) (string, error) {
	path, err := exec.LookPath(tool.Binary)
	if err != nil {
		return "", fmt.Errorf("load tool %s is not installed (not on PATH); install version %s (%s) or use --lite to run it in the pinned load-generator image", tool.Binary, tool.PinnedVersion, loadgen.Hint(tool))
	}
	if full, ok, err := loadgen.CheckBinaryVersion(tool, path); ok { // ghz: its build information
		if err != nil {
			return "", fmt.Errorf("load tool %s: %w; install %s (%s) or use --lite", tool.Binary, err, tool.PinnedVersion, loadgen.Hint(tool))
		}
		return full, nil
	}
	var out strings.Builder
	cmd := exec.CommandContext(ctx, path, tool.VersionArgs...)
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run() // wrk -v exits 1; the output decides
	return checkedVersion(tool, out.String())
}

// checkedVersion reads a tool's version from its output and checks that it is the pinned one.
func checkedVersion(tool loadgen.Tool, out string) (string, error) {
	full, upstream, err := tool.ParseVersion(out)
	if err != nil {
		return "", fmt.Errorf("load tool %s: cannot read its version (%v); install version %s", tool.Binary, err, tool.PinnedVersion)
	}
	if upstream != tool.PinnedVersion {
		return "", fmt.Errorf("load tool %s is version %s but the harness is pinned to %s; install %s %s (%s) or use --lite", tool.Binary, full, tool.PinnedVersion, tool.Binary, tool.PinnedVersion, loadgen.Hint(tool))
	}
	return full, nil
}

// CheckNativeTools checks that every load tool the plan needs is installed at its pinned
// version, as Prepare does in full mode, but without Docker or the host lock: a caller runs
// it first, so a missing or wrong tool is reported at once, not after waiting for the host.
func CheckNativeTools(ctx context.Context, plan Plan) error {
	tools, err := planTools(plan)
	if err != nil {
		return err
	}
	for _, tool := range tools {
		if _, err := nativeTool(ctx, tool); err != nil {
			return err
		}
	}
	return nil
}

// warmUp runs the load tool once for d (the profile's Warmup: the arena warms stream-grpc
// for 2 s), before the measured runs, and throws its output away. The server's CPU and
// memory windows begin after it.
func (tl *tools) warmUp(ctx context.Context, tool loadgen.Tool, spec loadgen.Spec, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	spec.Duration = d
	args, err := tool.Args(spec)
	if err != nil {
		return err
	}
	_, err = tl.exec(ctx, tool, args, spec.Duration)
	_ = tool.ClearLog(spec) // the warm-up's log is not a run's
	return err
}

// runOnce runs the load tool once inside a cgroup window.
func (tl *tools) runOnce(ctx context.Context, tool loadgen.Tool, args []string, spec loadgen.Spec, group *cgroup.Group) (result.Run, error) {
	win, err := group.Begin()
	if err != nil {
		return result.Run{}, fmt.Errorf("cgroup: %w", err)
	}
	sampled := sampleGRPC(ctx, spec) // unary gRPC: the grpc-status h2load cannot see (grpcstatus.go)
	// h2load appends to its log: start each run with none.
	if err := tool.ClearLog(spec); err != nil {
		return result.Run{}, err
	}
	out, runErr := tl.exec(ctx, tool, args, spec.Duration)
	usage, err := win.End()
	sampleErr := sampled()
	if runErr != nil {
		return result.Run{}, runErr
	}
	if err != nil {
		return result.Run{}, fmt.Errorf("cgroup: %w", err)
	}
	if sampleErr != nil {
		return result.Run{}, sampleErr
	}
	m, err := tool.Parse(out)
	if err != nil {
		return result.Run{}, fmt.Errorf("%s output: %w (last output: %s)", tool.Name, err, text.LastLine(string(out)))
	}
	if err := tool.ReadLog(spec, &m); err != nil {
		return result.Run{}, err
	}
	run := toRun(m, usage)
	return run, successful(run)
}

// measuredRun runs the load tool once on a session's server. A tool killed for running
// past its duration and grace (overrunError: under .ci/flaky's load h2load once stopped its
// clients and never exited) is run once more; a second one fails the row. A run in which no response
// came back at all, and no socket error either, may only have been too short: a stalled
// machine can spend a 1 s run making 4096 connections, or sharing its bandwidth among 128
// uploads of up to 20 MB that all finish after the end. Such a run is run once more for
// twice as long and at least retryAtLeast, saying so (a rate is per second whatever the
// length); a second one fails the row, and a server that does not answer fails it so, only
// later. The same holds for each of a session's loads (production-stack's reads and writes).
func (tl *tools) measuredRun(ctx context.Context, s *session, desc string) (result.Run, error) {
	run, err := tl.sessionRun(ctx, s)
	if _, ok := errors.AsType[*overrunError](err); ok && ctx.Err() == nil {
		// A tool killed past its grace left no numbers: run once more, the same length.
		tl.out.note(fmt.Sprintf("%s: %s; running it once more", desc, text.OneLine(err.Error())))
		run, err = tl.sessionRun(ctx, s)
	}
	if ns, ok := errors.AsType[*NoSuccessError](err); ok && ns.Run.Requests == 0 && ctx.Err() == nil {
		longer, lerr := s.lasting(max(2*s.spec.Duration, retryAtLeast))
		if lerr != nil {
			return run, err
		}
		what := "no response came back"
		if ns.Part != "" {
			what = "its " + ns.Part + " got no response"
		}
		tl.out.note(fmt.Sprintf("%s: %s in the %s run; running it once more for %s", desc, what, s.spec.Duration, longer.spec.Duration))
		run, err = tl.sessionRun(ctx, longer)
	}
	return run, err
}

// sessionRun runs a session's load once: with its write load beside it when it has one.
func (tl *tools) sessionRun(ctx context.Context, s *session) (result.Run, error) {
	if s.writes != nil {
		return tl.runWithWrites(ctx, s)
	}
	return tl.runOnce(ctx, s.tool.tool, s.args, s.spec, s.group)
}

// lasting is the session with its loads (a write load's too) running for d.
func (s *session) lasting(d time.Duration) (*session, error) {
	longer := *s
	longer.spec.Duration = d
	var err error
	if longer.args, err = s.tool.tool.Args(longer.spec); err != nil {
		return nil, err
	}
	if s.writes != nil {
		if longer.writes, err = s.writes.lasting(d); err != nil {
			return nil, err
		}
	}
	return &longer, nil
}

// retryAtLeast is the shortest run a run with no response is tried again for: a 2 s run of
// fasthttp json at 4096 connections brought nothing back twice in a fresh CI run.
const retryAtLeast = 5 * time.Second

// successful fails a run without one response the profile counts.
func successful(run result.Run) error {
	if run.Status2xx == 0 {
		return &NoSuccessError{Run: run}
	}
	return nil
}

// outDir returns the directory the load tools write their run files into (Spec.OutDir),
// made on first use and writable by whatever user the tool's container runs as; the runner
// removes each file after reading it.
func (tl *tools) outDir() (string, error) {
	scratch, err := tl.images.Scratch()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(scratch, "out")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o777)
}

// toolGrace is how long a load tool may take past its run's duration (connecting, the
// in-flight requests, its report) before it is killed and the run fails.
const toolGrace = 30 * time.Second

// An overrunError is a load tool killed for running past its run's duration and grace: it
// hung, and the run has no numbers.
type overrunError struct{ err error }

func (e *overrunError) Error() string { return e.err.Error() }
func (e *overrunError) Unwrap() error { return e.err }

// containerSetup bounds the daemon's time to create and start a load tool's container
// (lite), which a busy daemon (builds, image removals) can stretch; it is not the tool's.
const containerSetup = 2 * time.Minute

// exec runs the load tool natively (pinned with taskset) or in the load-generator image.
// A tool still running toolGrace after the run's duration is killed; the error gives its
// last line of output (h2load and wrk print what phase they are in).
func (tl *tools) exec(ctx context.Context, tool loadgen.Tool, args []string, d time.Duration) ([]byte, error) {
	argv := append([]string{tool.Binary}, args...)
	var out strings.Builder
	grace := tl.grace
	if grace == 0 {
		grace = toolGrace
	}
	if tl.cfg.Lite {
		ctx, cancel := context.WithTimeout(ctx, containerSetup+d+grace)
		defer cancel()
		c := tl.container(tool, argv)
		c.RunLimit = d + grace
		code, err := tl.eng.Run(ctx, c, &out)
		if err != nil {
			err = fmt.Errorf("%s in Docker: %w (its last output: %s)", tool.Name, err, text.LastLine(out.String()))
			if errors.Is(err, docker.ErrRunLimit) {
				err = &overrunError{err}
			}
			return nil, err
		}
		if code != 0 {
			return nil, fmt.Errorf("%s exited with status %d: %s", tool.Name, code, text.LastLine(out.String()))
		}
		return []byte(out.String()), nil
	}
	if err := host.RaiseNofile(); err != nil {
		tl.cfg.Log.Warn("cannot raise the open-files limit for the load tools", "err", err)
	}
	if tl.cfg.LoadgenCPUs != "" {
		argv = append([]string{"taskset", "-c", tl.cfg.LoadgenCPUs}, argv...)
	}
	ctx, cancel := context.WithTimeout(ctx, d+grace)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, &overrunError{fmt.Errorf("%s did not finish within %s (its last output: %s)", tool.Name, d+grace, text.LastLine(out.String()))}
		}
		return nil, fmt.Errorf("%s: %w: %s", tool.Name, err, text.LastLine(out.String()))
	}
	return []byte(out.String()), nil
}

func toRun(m loadgen.Measurement, u cgroup.Usage) result.Run {
	run := result.Run{
		RPS:        m.RPS(),
		Requests:   m.Requests,
		Status2xx:  m.Status2xx,
		NonSuccess: m.Requests - m.Status2xx,
		DurationS:  m.Duration.Seconds(),
		Bytes:      m.Bytes,
		LatencyUS:  m.Latency,
		Errors:     m.Errors,
		CPUCores:   u.Cores(),
		MemoryPeak: u.MemoryPeak,
	}
	if g := m.Generator; g != nil {
		run.Reconnects = g.Reconnects
		run.ToolCPUS = g.CPU.Seconds()
		run.MaxScheduleLag = us(g.MaxScheduleLag)
		run.ToolLimit = g.Limit
	}
	return run
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// container is how a load tool runs in its pinned image: host network, the load-generator CPU
// set, data and scripts mounted at the same paths as on the host.
func (tl *tools) container(tool loadgen.Tool, argv []string) docker.RunOptions {
	mounts := []docker.Mount{{Source: tl.cfg.DataDir, Target: tl.cfg.DataDir, ReadOnly: true}}
	if scratch, err := tl.images.Scratch(); err == nil {
		mounts = append(mounts, docker.Mount{Source: scratch, Target: scratch, ReadOnly: true})
		if out, err := tl.outDir(); err == nil { // the tools' run files (Spec.OutDir), writable
			mounts = append(mounts, docker.Mount{Source: out, Target: out})
		}
	}
	return docker.RunOptions{
		Image:       loadgen.ImageFor(tool),
		Cmd:         argv,
		HostNetwork: true,
		CPUSet:      tl.cfg.LoadgenCPUs,
		Nofile:      tl.cfg.Nofile,
		Mounts:      mounts,
		Labels:      docker.Labels(tl.cfg.Labels, build.LabelManaged, "true", build.LabelEntry, "loadgen"),
	}
}

// spec returns the load tool's Spec and arguments for one row, with the helper files
// the arguments name written.
func (tl *tools) spec(tool loadgen.Tool, p profile.Profile, conns int) (loadgen.Spec, []string, error) {
	scratch, err := tl.images.Scratch()
	if err != nil {
		return loadgen.Spec{}, nil, err
	}
	spec := loadgen.Spec{
		Profile:   p,
		Host:      "127.0.0.1",
		Conns:     conns,
		Threads:   min(tl.threads(), conns),
		Duration:  tl.duration(p),
		DataDir:   tl.cfg.DataDir,
		ScriptDir: filepath.Join(scratch, "scripts"),
		Rate:      p.Rate(tl.cfg.Lite),
	}
	if err := os.MkdirAll(spec.ScriptDir, 0o755); err != nil {
		return spec, nil, err
	}
	if tool.Log != nil {
		if spec.OutDir, err = tl.outDir(); err != nil {
			return spec, nil, err
		}
	}
	if err := tool.WriteFiles(spec); err != nil {
		return spec, nil, err
	}
	args, err := tool.Args(spec)
	return spec, args, err
}

func (tl *tools) duration(p profile.Profile) time.Duration {
	switch {
	case tl.cfg.Duration > 0:
		return tl.cfg.Duration
	case p.Duration > 0:
		return p.Duration
	default:
		return DefaultDuration
	}
}

func (tl *tools) threads() int {
	if tl.cfg.Threads > 0 {
		return tl.cfg.Threads
	}
	if tl.cfg.Lite || tl.cfg.LoadgenCPUs == "" {
		return max(host.NumCPU()/2, 1)
	}
	return max(host.CPUSetSize(tl.cfg.LoadgenCPUs), 1)
}
