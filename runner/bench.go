// Package runner measures framework entries: it builds their images through the Docker
// Engine, starts each server on its CPU set, waits for it, drives the pinned load tool over
// it for runs × duration while reading the container's cgroup, and turns the runs into
// result files. The queue worker that runs approved jobs on the benchmark host lives here too.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/cgroup"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/runner/loadgen"
	"github.com/arenabot/arenabot/stats"
	"github.com/arenabot/arenabot/validate"
	"github.com/arenabot/arenabot/validate/protocol"
)

// Engine is the part of the Docker Engine API the runner uses; *docker.Engine implements it.
type Engine interface {
	Build(ctx context.Context, o docker.BuildOptions) (string, error)
	ImageExists(ctx context.Context, ref string) (bool, error)
	PullImage(ctx context.Context, ref string) error
	Start(ctx context.Context, o docker.RunOptions) (docker.Container, error)
	State(ctx context.Context, id string) (running bool, exitCode int, err error)
	Run(ctx context.Context, o docker.RunOptions, out io.Writer) (int, error)
	Logs(ctx context.Context, id string, tail int) (string, error)
	Remove(ctx context.Context, id string) error
	RemoveLabeled(ctx context.Context, key, value string) (int, error)
	RemoveImagesLabeled(ctx context.Context, key, value string) (int, error)
	Ping(ctx context.Context) error
}

var _ Engine = (*docker.Engine)(nil)

// Labels put on the containers the runner creates, beside build.build.LabelManaged and
// build.build.LabelEntry, so leftovers can be found and removed.
const (
	LabelProfile = "arenabot.profile"
	// LabelJob carries the queue job's ID on the images and containers the worker's jobs
	// create (through Config.Labels), so a job's leftovers can be removed after it.
	LabelJob = "arenabot.job"
)

// Config says how to measure. The zero value of each optional field is documented.
type Config struct {
	Root    string // the repository root; entries are under Root/frameworks
	DataDir string // the arena data (arenadata.Ensure); mounted read-only into every server

	Lite     bool          // no pinning, LiteConns, load tools in the load-generator image
	Runs     int           // runs per measurement; 0 means 3
	Duration time.Duration // one run; 0 means the profile's own duration, else DefaultDuration

	ServerCPUs  string // cpuset of the servers; "" means the lower half of the host's CPUs
	LoadgenCPUs string // cpuset of the load tools; "" means the upper half
	Threads     int    // load-tool threads; 0 means one per load-generator CPU

	// BuildArgs are passed to every entry build (GO_IMAGE=...). They set the global ARGs
	// a FROM reads, as --build-arg does.
	BuildArgs map[string]string
	// ImageMap names local stand-ins for base images (ARENA_IMAGE_MAP). A base image of any
	// FROM that is not on the host and cannot be pulled is built FROM its stand-in instead,
	// in a rewritten copy of the Dockerfile (the entry's file is not changed). Without one,
	// a FROM ${ARG} whose ARG BuildArgs does not set gets arenabot/<name>:local when that
	// exists (deploy/base-images.sh makes them); any other missing base image fails the
	// entry with a *build.BaseImageError.
	ImageMap build.ImageMap
	// BuildNetwork is the network of RUN steps; "" means "host".
	BuildNetwork string

	ReadyTimeout time.Duration // how long a server may take to answer its probe; 0 means 30s

	// Rule decides when a row measured against its Base has enough runs and what its Δ
	// says; the zero value means stats.DefaultRule (3 to 10 runs a side, ±2%).
	Rule stats.Rule
	// Budget is the time Measure may take before interleaved rows stop at the rule's
	// minimum runs; 0 means no budget (each row stops at the rule's maximum at the latest).
	Budget time.Duration

	// SkipValidation measures without validating the profiles first (harness benchmarks).
	SkipValidation bool
	Nofile         int64  // nofile limit of servers and tool containers; 0 means this process's hard limit
	CgroupRoot     string // "" means /sys/fs/cgroup
	ScratchDir     string // scripts and build logs; "" means a temporary directory

	Commit, Host string // recorded in every result
	// TagByCommit tags the entries' images by Commit (CommitImageTag) instead of ":local": a
	// job's checkout is exactly that commit, a working tree may not be.
	TagByCommit bool

	// Labels are added to the entries' images and to every container (arenabot.job=<id>).
	// The load-generator image does not get them: it outlives every job.
	Labels map[string]string

	// EngineWait is how long to wait, before an entry's build and before each row, for a
	// Docker daemon that does not answer a ping (restarting, say), polling every second; 0
	// means no check. When it does not come back in time, that row fails, and later rows
	// fail after one more ping.
	EngineWait time.Duration

	// OnRowStart, when set, is called as each row of the plan comes up, in plan order, before
	// it is measured or marked failed; OnRow is called when it is finished, with its Result
	// or Err. Both are called from Measure's goroutine.
	OnRowStart func(Row)
	OnRow      func(Row)

	Log      *slog.Logger // nil means discard
	Progress Progress     // nil means none
}

// Mode says in a few words how measurements run: the CPU sets, or --lite. The bench header
// and the bot's reply show it.
func (c Config) Mode() string {
	if c.Lite {
		return "lite (no pinning, load tools in Docker)"
	}
	return fmt.Sprintf("server CPUs %s, load CPUs %s", orNone(c.ServerCPUs), orNone(c.LoadgenCPUs))
}

// Progress receives the runner's progress; every method is called from one goroutine.
type Progress interface {
	// Step is called when a measurement starts: done of total runs are finished.
	Step(desc string, done, total int)
	// Note is an informational line (a skipped profile, a build starting).
	Note(line string)
}

// A Row is the outcome of one measurement: a result, or why there is none.
type Row struct {
	Entry   frameworks.Entry
	Profile profile.Profile
	Conns   int
	Result  *result.Result
	Err     error
	// Advisories, on an entry's first row, are the advisory checks its validation missed
	// (WARN outcomes): reported beside the results, never a reason not to measure.
	Advisories []validate.Outcome
}

// Bencher runs plans. It is not safe for concurrent use: one bench at a time owns the host's
// ports and CPUs.
type Bencher struct {
	eng   Engine
	cfg   Config
	tools map[string]toolCheck

	images *build.Builder // the entries', the bases' and the load-generator image

	started    time.Time // when Measure began, for Budget
	engineGone error     // set when EngineWait passed without an answer

	sidecarTable map[string]profile.Sidecar // profile.Sidecars; tests change it
	seedItems    int64                      // rows of the items table once the Postgres seed is in
	sidecarNoted map[string]bool            // sidecar images whose stand-in was announced
}

type toolCheck struct {
	tool    loadgen.Tool
	version string // the full version string recorded in results
}

// New returns a Bencher over an engine.
func New(eng Engine, cfg Config) *Bencher {
	if cfg.Runs <= 0 {
		cfg.Runs = 3
	}
	if cfg.ReadyTimeout <= 0 {
		cfg.ReadyTimeout = 30 * time.Second
	}
	if cfg.Nofile <= 0 {
		_ = host.RaiseNofile() // as far as it may; a failure shows in the limit itself
		cfg.Nofile = host.HardNofile()
	}
	if cfg.CgroupRoot == "" {
		cfg.CgroupRoot = "/sys/fs/cgroup"
	}
	if cfg.BuildNetwork == "" {
		cfg.BuildNetwork = "host"
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.ServerCPUs == "" && cfg.LoadgenCPUs == "" && !cfg.Lite {
		cfg.ServerCPUs, cfg.LoadgenCPUs = host.SplitCPUs(host.NumCPU())
	}
	images := build.New(eng, build.Config{
		Root: cfg.Root, BuildArgs: cfg.BuildArgs, ImageMap: cfg.ImageMap, BuildNetwork: cfg.BuildNetwork,
		ScratchDir: cfg.ScratchDir, Commit: cfg.Commit, TagByCommit: cfg.TagByCommit, Labels: cfg.Labels,
		Log: cfg.Log, Progress: cfg.Progress,
	})
	return &Bencher{eng: eng, cfg: cfg, tools: map[string]toolCheck{}, images: images,
		sidecarTable: profile.Sidecars, seedItems: arenadata.DBItemCount, sidecarNoted: map[string]bool{}}
}

// Config returns the effective configuration.
func (b *Bencher) Config() Config { return b.cfg }

// Prepare checks everything a plan needs before anything is measured: the load tools and
// their pinned versions, and the load-generator image in --lite mode. It also removes
// containers left over by an earlier run.
func (b *Bencher) Prepare(ctx context.Context, plan Plan) error {
	if n, err := b.eng.RemoveLabeled(ctx, build.LabelManaged, "true"); err != nil {
		return fmt.Errorf("remove leftover containers: %w", err)
	} else if n > 0 {
		b.note(fmt.Sprintf("removed %d leftover container(s) of an earlier run", n))
	}
	if _, err := b.images.Scratch(); err != nil {
		return err
	}
	tools, err := planTools(plan)
	if err != nil {
		return err
	}
	for name, tool := range tools {
		if _, ok := b.tools[name]; ok {
			continue
		}
		full, err := b.checkTool(ctx, tool)
		if err != nil {
			return err
		}
		b.tools[name] = toolCheck{tool: tool, version: full}
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

// checkTool finds the tool, natively or in the load-generator image, and checks its version.
func (b *Bencher) checkTool(ctx context.Context, tool loadgen.Tool) (string, error) {
	var out strings.Builder
	if b.cfg.Lite {
		if err := b.images.Loadgen(ctx); err != nil {
			return "", err
		}
		code, err := b.eng.Run(ctx, b.toolContainer(append([]string{tool.Binary()}, tool.VersionArgs()...)), &out)
		if err != nil {
			return "", fmt.Errorf("%s in %s: %w", tool.Name(), loadgen.Image, err)
		}
		_ = code // wrk -v exits 1; the output decides
		return checkedVersion(tool, out.String())
	}
	return nativeTool(ctx, tool)
}

// nativeTool finds an installed load tool on PATH and checks its version.
func nativeTool(ctx context.Context, tool loadgen.Tool) (string, error) {
	path, err := exec.LookPath(tool.Binary())
	if err != nil {
		return "", fmt.Errorf("load tool %s is not installed (not on PATH); install version %s (%s) or use --lite to run it in the pinned load-generator image", tool.Binary(), tool.PinnedVersion(), loadgen.Hint(tool))
	}
	if full, ok, err := loadgen.CheckBinaryVersion(tool, path); ok { // ghz: its build information
		if err != nil {
			return "", fmt.Errorf("load tool %s: %w; install %s (%s) or use --lite", tool.Binary(), err, tool.PinnedVersion(), loadgen.Hint(tool))
		}
		return full, nil
	}
	var out strings.Builder
	cmd := exec.CommandContext(ctx, path, tool.VersionArgs()...)
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run() // wrk -v exits 1; the output decides
	return checkedVersion(tool, out.String())
}

// checkedVersion reads a tool's version from its output and checks that it is the pinned one.
func checkedVersion(tool loadgen.Tool, out string) (string, error) {
	full, upstream, err := tool.ParseVersion(out)
	if err != nil {
		return "", fmt.Errorf("load tool %s: cannot read its version (%v); install version %s", tool.Binary(), err, tool.PinnedVersion())
	}
	if upstream != tool.PinnedVersion() {
		return "", fmt.Errorf("load tool %s is version %s but the harness is pinned to %s; install %s %s (%s) or use --lite", tool.Binary(), full, tool.PinnedVersion(), tool.Binary(), tool.PinnedVersion(), loadgen.Hint(tool))
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

// Measure runs a plan and returns one row per entry × profile × connection count, in plan
// order. Each entry's selected profiles are validated first; a profile that fails is not
// measured and its rows carry a *ValidationFailure. A failure of a build, a readiness probe
// or a load tool fails that entry's or that row's measurement and the run goes on; only a
// cancelled ctx stops it early.
func (b *Bencher) Measure(ctx context.Context, plan Plan) ([]Row, error) {
	b.started = time.Now()
	runs := &tally{b: b, total: plan.Runs(b.cfg.Runs, b.rule())}
	var rows []Row
	for _, t := range plan.Targets {
		for _, s := range t.Skipped {
			b.note(fmt.Sprintf("%s: skipping %s", t.Entry.Name, s))
		}
		entryErr := b.waitEngine(ctx)
		var image string
		if entryErr == nil {
			image, entryErr = b.images.Entry(ctx, t.Entry)
		}
		var invalid map[string]error
		var advisories []validate.Outcome
		if entryErr == nil && !b.cfg.SkipValidation {
			invalid, advisories, entryErr = b.gate(ctx, image, t)
		}
		var base *baseSide
		if t.Base != nil && entryErr == nil {
			base = b.prepareBase(ctx, t)
		}
		per := b.cfg.Runs
		if base != nil {
			per = 2 * b.rule().MinRuns
		}
		first := true
		for _, p := range t.Profiles {
			for _, conns := range p.ConnCounts(plan.Lite) {
				row := Row{Entry: t.Entry, Profile: p, Conns: conns}
				if first {
					row.Advisories, first = advisories, false
				}
				start := runs.done
				runs.desc = fmt.Sprintf("%s %s %dc", t.Entry.Name, p.Name, conns)
				if b.cfg.OnRowStart != nil {
					b.cfg.OnRowStart(row)
				}
				if entryErr != nil {
					row.Err = entryErr
				} else if invalid[p.Name] != nil {
					row.Err = invalid[p.Name]
				} else if err := ctx.Err(); err != nil {
					row.Err = err
				} else if err := b.waitEngine(ctx); err != nil {
					row.Err = err
				} else {
					b.step(runs.desc, runs.done, runs.total)
					if base != nil {
						row.Result, row.Err = b.measurePair(ctx, image, t.Entry, base, p, conns, runs)
					} else {
						row.Result, row.Err = b.measureOne(ctx, image, t.Entry, p, conns, runs.ran)
					}
				}
				// A row that failed early leaves its runs undone: the total drops by them.
				runs.total -= max(per-(runs.done-start), 0)
				if row.Err != nil {
					b.cfg.Log.Info("measurement failed", "framework", t.Entry.Name, "test", p.Name, "conns", conns, "err", row.Err)
				}
				if b.cfg.OnRow != nil {
					b.cfg.OnRow(row)
				}
				rows = append(rows, row)
			}
		}
	}
	return rows, ctx.Err()
}

// Build builds an entry's image as Measure does and returns its tag. It needs neither
// Prepare nor the host lock: a build uses no fixed port and no CPU set.
func (b *Bencher) Build(ctx context.Context, e frameworks.Entry) (string, error) {
	return b.images.Entry(ctx, e)
}

// measureOne starts the profile's sidecars and a fresh container for one profile and
// connection count, waits until it answers, runs the load tool Runs times, and removes the
// container and the sidecars.
func (b *Bencher) measureOne(ctx context.Context, image string, e frameworks.Entry, p profile.Profile, conns int, ranOne func()) (*result.Result, error) {
	s, err := b.open(ctx, image, e, p, conns)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if err := b.warmUp(ctx, s.tool.tool, s.spec, p.Warmup); err != nil {
		return nil, fmt.Errorf("%s %s %dc warm-up: %w", e.Name, p.Name, conns, err)
	}
	var runs []result.Run
	for i := 0; i < b.cfg.Runs; i++ {
		run, err := b.measuredRun(ctx, s, fmt.Sprintf("%s %s %dc run %d", e.Name, p.Name, conns, i+1))
		if err != nil {
			return nil, fmt.Errorf("%s %s %dc run %d: %w", e.Name, p.Name, conns, i+1, err)
		}
		runs = append(runs, run)
		ranOne()
	}
	r := b.newResult(e, p, conns, s.spec, s.tool, s.side.versions())
	r.FromRuns(runs)
	return r, nil
}

// A session is one server container ready for a profile's load: its sidecars, its cgroup
// and the load tool's command line.
type session struct {
	side  *sidecars
	stop  func()
	group *cgroup.Group
	tool  toolCheck
	spec  loadgen.Spec
	args  []string
}

// close removes the server container and the sidecars.
func (s *session) close() {
	s.stop()
	s.side.stop()
}

// open starts the profile's sidecars and a fresh server container from image, waits until it
// answers and prepares the load tool's run for conns connections.
func (b *Bencher) open(ctx context.Context, image string, e frameworks.Entry, p profile.Profile, conns int) (*session, error) {
	if need := int64(conns) + host.NofileMargin; b.cfg.Nofile < need {
		return nil, fmt.Errorf("%s %dc needs an open-files limit of at least %d for the server and the load tool; this host allows %d: raise the runner's and the Docker daemon's limit (LimitNOFILE= in their systemd units, or ulimit -n) or run fewer connections", p.Name, conns, need, b.cfg.Nofile)
	}
	side, err := b.startSidecars(ctx, e, p, p.Sidecars)
	if err != nil {
		return nil, err
	}
	c, stop, err := b.serve(ctx, image, e, p, side.env())
	if err != nil {
		side.stop()
		return nil, err
	}
	s := &session{side: side, stop: stop, tool: b.tools[p.Tool]}
	if s.group, err = cgroup.ForContainer(b.cfg.CgroupRoot, c.Pid, c.ID); err != nil {
		s.close()
		return nil, fmt.Errorf("cgroup of %s: %w", e.Name, err)
	}
	if s.spec, s.args, err = b.toolRun(s.tool.tool, p, conns); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// newResult is a row's result before its runs are in.
func (b *Bencher) newResult(e frameworks.Entry, p profile.Profile, conns int, spec loadgen.Spec, tc toolCheck, sidecars []string) *result.Result {
	return &result.Result{
		Framework:   e.Meta.DisplayName,
		Language:    e.Meta.Language,
		Connections: conns,
		Threads:     spec.Threads,
		Duration:    spec.Duration.String(),
		Pipeline:    max(p.Pipeline, 1),
		Entry:       e.Name,
		Profile:     p.Name,
		Lite:        b.cfg.Lite,
		TargetRate:  spec.Rate,
		Tool:        tc.tool.Name(),
		ToolVersion: tc.version,
		Sidecars:    sidecars,
		Commit:      b.cfg.Commit,
		Host:        b.cfg.Host,
		Time:        time.Now().UTC().Truncate(time.Second),
	}
}

// toolRun returns the load tool's Spec and arguments for one row, with the helper files
// the arguments name written.
func (b *Bencher) toolRun(tool loadgen.Tool, p profile.Profile, conns int) (loadgen.Spec, []string, error) {
	scratch, err := b.images.Scratch()
	if err != nil {
		return loadgen.Spec{}, nil, err
	}
	spec := loadgen.Spec{
		Profile:   p,
		Host:      "127.0.0.1",
		Conns:     conns,
		Threads:   min(b.threads(), conns),
		Duration:  b.duration(p),
		DataDir:   b.cfg.DataDir,
		ScriptDir: filepath.Join(scratch, "scripts"),
		Rate:      p.Rate(b.cfg.Lite),
	}
	if err := os.MkdirAll(spec.ScriptDir, 0o755); err != nil {
		return spec, nil, err
	}
	if _, ok := tool.(loadgen.RunLog); ok {
		if spec.OutDir, err = b.outDir(); err != nil {
			return spec, nil, err
		}
	}
	if err := tool.WriteFiles(spec); err != nil {
		return spec, nil, err
	}
	args, err := tool.Args(spec)
	return spec, args, err
}

// warmUp runs the load tool once for d (the profile's Warmup: the arena warms stream-grpc
// for 2 s), before the measured runs, and throws its output away. The server's CPU and
// memory windows begin after it.
func (b *Bencher) warmUp(ctx context.Context, tool loadgen.Tool, spec loadgen.Spec, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	spec.Duration = d
	args, err := tool.Args(spec)
	if err != nil {
		return err
	}
	_, err = b.execTool(ctx, tool, args, spec.Duration)
	if rl, ok := tool.(loadgen.RunLog); ok && rl.LogFile(spec) != "" {
		os.Remove(rl.LogFile(spec)) // the warm-up's log is not a run's
	}
	return err
}

// serve starts a server container for a profile, with env (the sidecars'), and waits until
// it answers; stop removes it, even after ctx has ended (a leaked container skews the next
// measurement).
func (b *Bencher) serve(ctx context.Context, image string, e frameworks.Entry, p profile.Profile, env []string) (c docker.Container, stop func(), err error) {
	o := b.serverContainer(image, e, p)
	o.Env = env
	c, err = b.eng.Start(ctx, o)
	if err != nil {
		return c, nil, fmt.Errorf("start %s: %w", e.Name, err)
	}
	stop = func() { b.removeContainer(ctx, c.ID) }
	if err := b.waitReady(ctx, c, e, p); err != nil {
		stop()
		return c, nil, err
	}
	return c, stop, nil
}

// runOnce runs the load tool once inside a cgroup window.
func (b *Bencher) runOnce(ctx context.Context, tool loadgen.Tool, args []string, spec loadgen.Spec, group *cgroup.Group) (result.Run, error) {
	win, err := group.Begin()
	if err != nil {
		return result.Run{}, fmt.Errorf("cgroup: %w", err)
	}
	sampled := sampleGRPC(ctx, spec) // unary gRPC: the grpc-status h2load cannot see (grpcstatus.go)
	if rl, ok := tool.(loadgen.RunLog); ok && rl.LogFile(spec) != "" {
		// h2load appends to its log: start each run with none.
		if err := os.Remove(rl.LogFile(spec)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return result.Run{}, fmt.Errorf("%s run log: %w", tool.Name(), err)
		}
	}
	out, runErr := b.execTool(ctx, tool, args, spec.Duration)
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
		return result.Run{}, fmt.Errorf("%s output: %w (last output: %s)", tool.Name(), err, lastLine(out))
	}
	if rl, ok := tool.(loadgen.RunLog); ok && rl.LogFile(spec) != "" {
		err := rl.ReadLog(spec, &m)
		os.Remove(rl.LogFile(spec)) // one run's log at a time: it grows with the run
		if err != nil {
			return result.Run{}, err
		}
	}
	run := toRun(m, usage)
	return run, successful(run)
}

// measuredRun runs the load tool once on a session's server; a run in which no response
// came back at all (a machine stalled while the tool's connections were being made, so a
// short run ended before any answer) is run once more, saying so; a second one fails.
func (b *Bencher) measuredRun(ctx context.Context, s *session, desc string) (result.Run, error) {
	run, err := b.runOnce(ctx, s.tool.tool, s.args, s.spec, s.group)
	if ns, ok := errors.AsType[*NoSuccessError](err); ok && ns.Run.Requests == 0 && ctx.Err() == nil {
		b.note(fmt.Sprintf("%s: no response came back in the run; running it once more", desc))
		run, err = b.runOnce(ctx, s.tool.tool, s.args, s.spec, s.group)
	}
	return run, err
}

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
func (b *Bencher) outDir() (string, error) {
	scratch, err := b.images.Scratch()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(scratch, "out")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o777)
}

// execTool runs the load tool natively (pinned with taskset) or in the load-generator image.
func (b *Bencher) execTool(ctx context.Context, tool loadgen.Tool, args []string, d time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	argv := append([]string{tool.Binary()}, args...)
	var out strings.Builder
	if b.cfg.Lite {
		code, err := b.eng.Run(ctx, b.toolContainer(argv), &out)
		if err != nil {
			return nil, fmt.Errorf("%s in Docker: %w", tool.Name(), err)
		}
		if code != 0 {
			return nil, fmt.Errorf("%s exited with status %d: %s", tool.Name(), code, lastLine([]byte(out.String())))
		}
		return []byte(out.String()), nil
	}
	if err := host.RaiseNofile(); err != nil {
		b.cfg.Log.Warn("cannot raise the open-files limit for the load tools", "err", err)
	}
	if b.cfg.LoadgenCPUs != "" {
		argv = append([]string{"taskset", "-c", b.cfg.LoadgenCPUs}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s did not finish within %s", tool.Name(), d+30*time.Second)
		}
		return nil, fmt.Errorf("%s: %w: %s", tool.Name(), err, lastLine([]byte(out.String())))
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
		LatencyUS: result.Latency{
			Mean: us(m.Latency.Mean), P50: us(m.Latency.P50), P90: us(m.Latency.P90),
			P99: us(m.Latency.P99), P999: us(m.Latency.P999), Max: us(m.Latency.Max),
		},
		Errors: result.SocketErrors{
			Connect: m.Errors.Connect, Read: m.Errors.Read, Write: m.Errors.Write, Timeout: m.Errors.Timeout,
		},
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

// serverContainer is how every server runs: host network, the server CPU set, a raised
// nofile limit, the arena data mounted read-only, labels for cleanup.
func (b *Bencher) serverContainer(image string, e frameworks.Entry, p profile.Profile) docker.RunOptions {
	cpus := b.cfg.ServerCPUs
	if p.ServerCPUs != profile.ServerCPUsStd && !b.cfg.Lite && host.CPUSetFits(p.ServerCPUs, host.NumCPU()) {
		cpus = p.ServerCPUs
	}
	if b.cfg.Lite {
		cpus = ""
	}
	mounts := []docker.Mount{
		{Source: filepath.Join(b.cfg.DataDir, arenadata.DatasetFile), Target: "/data/dataset.json", ReadOnly: true},
		{Source: filepath.Join(b.cfg.DataDir, arenadata.StaticDir), Target: "/data/static", ReadOnly: true},
		{Source: filepath.Join(b.cfg.DataDir, arenadata.CertsDir), Target: "/certs", ReadOnly: true},
	}
	// The large files (download, static-large), where the data directory has them:
	// arenadata.Ensure writes them; a hand-made data directory may not.
	if large := filepath.Join(b.cfg.DataDir, arenadata.LargeDir); isDir(large) {
		mounts = append(mounts, docker.Mount{Source: large, Target: "/data/large", ReadOnly: true})
	}
	return docker.RunOptions{
		Name:        "arenabot-bench-" + e.Name,
		Image:       image,
		HostNetwork: true,
		CPUSet:      cpus,
		Memory:      p.Memory,
		Nofile:      b.cfg.Nofile,
		Mounts:      mounts,
		Labels:      docker.Labels(b.cfg.Labels, build.LabelManaged, "true", build.LabelEntry, e.Name, LabelProfile, p.Name),
	}
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// toolContainer runs a load tool in the pinned image: host network, the load-generator CPU
// set, data and scripts mounted at the same paths as on the host.
func (b *Bencher) toolContainer(argv []string) docker.RunOptions {
	mounts := []docker.Mount{{Source: b.cfg.DataDir, Target: b.cfg.DataDir, ReadOnly: true}}
	if scratch, err := b.images.Scratch(); err == nil {
		mounts = append(mounts, docker.Mount{Source: scratch, Target: scratch, ReadOnly: true})
		if out, err := b.outDir(); err == nil { // the tools' run files (Spec.OutDir), writable
			mounts = append(mounts, docker.Mount{Source: out, Target: out})
		}
	}
	return docker.RunOptions{
		Image:       loadgen.Image,
		Cmd:         argv,
		HostNetwork: true,
		CPUSet:      b.cfg.LoadgenCPUs,
		Nofile:      b.cfg.Nofile,
		Mounts:      mounts,
		Labels:      docker.Labels(b.cfg.Labels, build.LabelManaged, "true", build.LabelEntry, "loadgen"),
	}
}

// waitReady polls the profile's probe in the probe's own protocol (validate/protocol: HTTP/1.1,
// over TLS, h2 by ALPN, h2c with prior knowledge, a gRPC call) with a short backoff until
// any answer comes, the container exits, or ReadyTimeout passes.
func (b *Bencher) waitReady(ctx context.Context, c docker.Container, e frameworks.Entry, p profile.Profile) error {
	port, scheme := p.ProbeAt()
	proto, err := protocol.For(scheme)
	if err != nil {
		return fmt.Errorf("readiness probe of %s: %w", p.Name, err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	// "GET http://127.0.0.1:8080/baseline11?a=1&b=1", "GET https://127.0.0.1:8443/… (h2 over TLS (ALPN h2))"
	url := probeURL(proto, addr, p.Probe)
	deadline := time.Now().Add(b.cfg.ReadyTimeout)
	wait := 5 * time.Millisecond
	start := time.Now()
	for {
		err := proto.Probe(ctx, addr, p.Probe, protocol.Config{Timeout: 2 * time.Second})
		if err == nil {
			b.cfg.Log.Debug("server ready", "framework", e.Name, "test", p.Name, "duration", time.Since(start))
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if running, code, serr := b.eng.State(ctx, c.ID); serr == nil && !running {
			return &ReadyError{
				Msg:  fmt.Sprintf("%s exited with status %d before answering %s; container log: %s", e.Name, code, url, b.logTail(ctx, c.ID)),
				Cell: fmt.Sprintf("exited with status %d before answering", code),
			}
		}
		if time.Now().After(deadline) {
			return &ReadyError{
				Msg:   fmt.Sprintf("%s did not answer %s within %s (last error: %v); make the server listen on 0.0.0.0:%d; container log: %s", e.Name, url, b.cfg.ReadyTimeout, err, port, b.logTail(ctx, c.ID)),
				Cell:  "not ready after " + b.cfg.ReadyTimeout.String(),
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

// probeURL renders a probe: "GET <URL>", with the protocol when the URL's scheme does not
// say it (h2 over TLS, h2c); for gRPC the call.
func probeURL(proto protocol.Protocol, addr, path string) string {
	if hp, ok := proto.(protocol.HTTP); ok {
		u := "GET " + hp.URL(addr, path)
		if proto.Scheme() == protocol.SchemeHTTP || proto.Scheme() == protocol.SchemeHTTPS {
			return u
		}
		return u + " (" + proto.Describe() + ")"
	}
	return "the call " + path + " on " + addr + " (" + proto.Describe() + ")"
}

func (b *Bencher) logTail(ctx context.Context, id string) string {
	logs, err := b.eng.Logs(ctx, id, 5)
	if err != nil || strings.TrimSpace(logs) == "" {
		return "(empty)"
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(logs), "\n", " ⏎ ")), " ")
}

// enginePoll is how often waitEngine pings a daemon that does not answer.
const enginePoll = time.Second

// waitEngine returns nil when the Docker daemon answers a ping. When it does not, it waits
// for it, polling, up to EngineWait, and says so through the progress notes. After one
// wait that ran out, it pings once and does not wait again.
func (b *Bencher) waitEngine(ctx context.Context) error {
	if b.cfg.EngineWait <= 0 {
		return nil
	}
	err := b.eng.Ping(ctx)
	if err == nil {
		b.engineGone = nil
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if b.engineGone != nil {
		return b.engineGone
	}
	b.cfg.Log.Warn("docker does not answer", "err", err)
	b.note(fmt.Sprintf("Docker does not answer; waiting up to %s for it to come back", b.cfg.EngineWait))
	start := time.Now()
	deadline := start.Add(b.cfg.EngineWait)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(enginePoll, time.Until(deadline))):
		}
		if err = b.eng.Ping(ctx); err == nil {
			b.note(fmt.Sprintf("Docker answers again after %s", time.Since(start).Round(time.Second)))
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	b.engineGone = fmt.Errorf("the Docker daemon on the runner host did not answer for %s, so this and the remaining measurements were not run; the operator must check the daemon (systemctl status docker), then comment the command again", b.cfg.EngineWait)
	b.cfg.Log.Error("docker unreachable", "duration", b.cfg.EngineWait, "err", err)
	return b.engineGone
}

// DefaultDuration is the length of one run unless the profile or the configuration says
// otherwise.
const DefaultDuration = profile.DefaultDuration

func (b *Bencher) duration(p profile.Profile) time.Duration {
	switch {
	case b.cfg.Duration > 0:
		return b.cfg.Duration
	case p.Duration > 0:
		return p.Duration
	default:
		return DefaultDuration
	}
}

func (b *Bencher) threads() int {
	if b.cfg.Threads > 0 {
		return b.cfg.Threads
	}
	if b.cfg.Lite || b.cfg.LoadgenCPUs == "" {
		return max(host.NumCPU()/2, 1)
	}
	return max(host.CPUSetSize(b.cfg.LoadgenCPUs), 1)
}

func (b *Bencher) step(desc string, done, total int) {
	if b.cfg.Progress != nil {
		b.cfg.Progress.Step(desc, done, total)
	}
}

func (b *Bencher) note(line string) {
	b.cfg.Log.Info(line)
	if b.cfg.Progress != nil {
		b.cfg.Progress.Note(line)
	}
}

func lastLine(out []byte) string {
	s := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return "(no output)"
	}
	return s
}
