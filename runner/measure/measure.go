// Package measure measures framework entries: it has their images built (runner/build),
// validates the selected profiles on a running server, starts each server on its CPU set
// beside the sidecars its profile needs, waits until it answers, and drives the pinned load
// tool over it for runs × duration while reading the container's cgroup, alone or
// interleaved run by run against a base, and turns the runs into results, one row
// (result.Row) per entry × profile × connection count. A profiled row gets one more run
// afterwards, recorded with perf (cpuprof) and not counted in the numbers: its CPU profile.
package measure

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	"github.com/arenabot/arenabot/text"
	"github.com/arenabot/arenabot/validate"
)

// Engine is the part of the Docker Engine API a measurement uses: the builder's, and the
// containers'; *docker.Engine implements it.
type Engine interface {
	build.Engine
	Start(ctx context.Context, o docker.RunOptions) (docker.Container, error)
	State(ctx context.Context, id string) (running bool, exitCode int, err error)
	Logs(ctx context.Context, id string, tail int) (string, error)
	Remove(ctx context.Context, id string) error
	RemoveLabeled(ctx context.Context, key, value string) (int, error)
	Ping(ctx context.Context) error
}

var _ Engine = (*docker.Engine)(nil)

// LabelProfile is on the containers of a row, beside build.LabelManaged and
// build.LabelEntry, with the profile's name.
const LabelProfile = "arenabot.profile"

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
	// MakeStandIn makes a missing stand-in on first use (build.Config.MakeStandIn); nil
	// means a missing one is an error naming the fix.
	MakeStandIn func(ctx context.Context, image string, note func(string)) (bool, error)
	// BuildNetwork is the network of RUN steps; "" means "host".
	BuildNetwork string
	// BuildTimeout, BuildMemory and BuildCgroupParent limit every image build: its wall
	// clock (0 means build.DefaultTimeout), its RUN steps' memory (0 means
	// build.DefaultMemory, negative none) and the cgroup parent whose pids.max bounds the
	// builds' processes ("" none). See build.Config.
	BuildTimeout      time.Duration
	BuildMemory       int64
	BuildCgroupParent string

	ReadyTimeout time.Duration // how long a server may take to answer its probe; 0 means 30s

	// Rule decides when a row measured against its Base has enough runs and what its Δ
	// says; the zero value means stats.DefaultRule (3 to 10 runs a side, ±2%).
	Rule stats.Rule
	// Budget is the time Measure may take before interleaved rows stop at the rule's
	// minimum runs; 0 means no budget (each row stops at the rule's maximum at the latest).
	Budget time.Duration

	// Perf is the perf binary of the profiling runs; "" means "perf" from PATH.
	// ProfileFrequency is their sampling rate per CPU; 0 means cpuprof.DefaultFrequency.
	Perf             string
	ProfileFrequency int

	// SkipValidation measures without validating the profiles first (harness benchmarks).
	SkipValidation bool
	Nofile         int64  // nofile limit of servers and tool containers; 0 means this process's hard limit
	ServerMemory   int64  // memory limit of a server whose profile sets none; 0 means DefaultServerMemory
	PidsLimit      int64  // pids limit of servers and sidecars; 0 means DefaultPidsLimit
	CgroupRoot     string // "" means /sys/fs/cgroup
	ScratchDir     string // scripts and build logs; "" means a temporary directory

	Commit, Host string // recorded in every result
	// HostFacts, recorded in every result, describe the machine (host.Facts); nil records
	// none.
	HostFacts *result.HostFacts
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
	OnRowStart func(result.Row)
	OnRow      func(result.Row)
	// BuildLogGoes says that a failed build's log file goes with the run's workspace (a
	// job's): the row's error points at the log's tail (result.Row.BuildLog), below the
	// table, instead of at the file.
	BuildLogGoes bool

	Log      *slog.Logger // nil means discard
	Progress Progress     // nil means none
}

// Mode says in a few words how measurements run: the CPU sets, or --lite. The bench header
// and the bot's reply show it.
func (c Config) Mode() string {
	if c.Lite {
		return "lite (no pinning, load tools in Docker)"
	}
	return fmt.Sprintf("server CPUs %s, load CPUs %s", text.Or(c.ServerCPUs, "—"), text.Or(c.LoadgenCPUs, "—"))
}

// Progress receives the runner's progress; every method is called from one goroutine.
type Progress interface {
	// Step is called when a measurement starts: done of total runs are finished.
	Step(desc string, done, total int)
	// Note is an informational line (a skipped profile, a build starting).
	Note(line string)
}

// Bencher runs plans. It is not safe for concurrent use: one bench at a time owns the host's
// ports and CPUs.
type Bencher struct {
	eng Engine
	cfg Config
	out *reporter

	images   *build.Builder  // the entries', the bases' and the load-generator image
	tools    *tools          // the load tools, checked and run
	servers  *servers        // the server containers and their readiness
	sidecars *sidecarStarter // the sidecars a profile needs
	prof     *profiler       // the profiling runs
	stages   stages          // what a profile's load goes to: one server, or a compose stack

	started time.Time // when Measure began, for Budget
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
	if cfg.ServerMemory <= 0 {
		cfg.ServerMemory = DefaultServerMemory
	}
	if cfg.PidsLimit <= 0 {
		cfg.PidsLimit = DefaultPidsLimit
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
	if cfg.Rule == (stats.Rule{}) {
		cfg.Rule = stats.DefaultRule
	}
	if cfg.ServerCPUs == "" && cfg.LoadgenCPUs == "" && !cfg.Lite {
		cfg.ServerCPUs, cfg.LoadgenCPUs = host.SplitCPUs(host.NumCPU())
	}
	images := build.New(eng, build.Config{
		Root: cfg.Root, BuildArgs: cfg.BuildArgs, ImageMap: cfg.ImageMap, MakeStandIn: cfg.MakeStandIn, BuildNetwork: cfg.BuildNetwork,
		Timeout: cfg.BuildTimeout, Memory: cfg.BuildMemory, CgroupParent: cfg.BuildCgroupParent,
		ScratchDir: cfg.ScratchDir, Commit: cfg.Commit, TagByCommit: cfg.TagByCommit, Labels: cfg.Labels,
		Log: cfg.Log, Progress: cfg.Progress,
	})
	out := &reporter{log: cfg.Log, progress: cfg.Progress}
	srv := &servers{eng: eng, cfg: cfg, out: out}
	b := &Bencher{eng: eng, cfg: cfg, out: out, images: images, servers: srv,
		tools: &tools{eng: eng, cfg: cfg, images: images, out: out, checks: map[string]toolCheck{}},
		sidecars: &sidecarStarter{eng: eng, cfg: cfg, images: images, srv: srv, out: out,
			table: profile.Sidecars, seedItems: arenadata.DBItemCount, noted: map[string]bool{}},
	}
	b.prof = &profiler{images: images, tools: b.tools, out: out, log: cfg.Log, perf: cfg.Perf, freq: cfg.ProfileFrequency}
	b.stages = stages{
		server: &serverStage{cfg: &b.cfg, servers: srv, sidecars: b.sidecars, tools: b.tools},
		stack:  &stackStage{eng: eng, cfg: &b.cfg, out: out, images: images, tools: b.tools, servers: srv, sidecars: b.sidecars},
	}
	return b
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
		b.out.note(fmt.Sprintf("removed %d leftover container(s) of an earlier run", n))
	}
	if _, err := b.images.Scratch(); err != nil {
		return err
	}
	return b.tools.prepare(ctx, plan)
}

// Measure runs a plan and returns one row per entry × profile × connection count, in plan
// order, as the arena reports it: its result, or why there is none (the error's text and
// cell, a failed build's log tail), an entry's advisories on its first row, and a profiled
// row's files. Each entry's selected profiles are validated first; a profile that fails is
// not measured and its rows say the validation failed (ValidationFailure). A failure of a build, a readiness probe
// or a load tool fails that entry's or that row's measurement and the run goes on; only a
// cancelled ctx stops it early.
func (b *Bencher) Measure(ctx context.Context, plan Plan) ([]result.Row, error) {
	b.started = time.Now()
	runs := &tally{out: b.out, total: plan.Runs(b.cfg.Runs, b.cfg.Rule)}
	var rows []result.Row
	for _, t := range plan.Targets {
		for _, s := range t.Skipped {
			b.out.note(fmt.Sprintf("%s: skipping %s", t.Entry.Name, s))
		}
		entryErr := b.servers.waitEngine(ctx)
		var image string
		if entryErr == nil && b.stages.ownImage(t.Profiles) { // a stack's images come from its compose file
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
			per = 2 * b.cfg.Rule.MinRuns
		}
		first := true
		for _, p := range t.Profiles {
			for _, conns := range p.ConnCounts(plan.Lite) {
				var adv []validate.Outcome
				if first {
					adv, first = advisories, false
				}
				row := newRow(t.Entry, p, conns, adv)
				profiled := profile.CPUProfiled(plan.CPUProfile, conns, p.ConnCounts(plan.Lite))
				start := runs.done
				runs.desc = fmt.Sprintf("%s %s %dc", t.Entry.Name, p.Name, conns)
				if b.cfg.OnRowStart != nil {
					b.cfg.OnRowStart(row)
				}
				var err error
				switch {
				case entryErr != nil:
					err = entryErr
				case invalid[p.Name] != nil:
					err = invalid[p.Name]
				case ctx.Err() != nil:
					err = ctx.Err()
				default:
					if err = b.servers.waitEngine(ctx); err != nil {
						break
					}
					b.out.step(runs.desc, runs.done, runs.total)
					var cpu *cpuRun
					if base != nil {
						row.Result, cpu, err = b.measurePair(ctx, image, t.Entry, base, p, conns, runs, profiled)
					} else {
						row.Result, cpu, err = b.measureOne(ctx, image, t.Entry, p, conns, runs.ran, profiled)
					}
					if cpu != nil && row.Result != nil {
						row.Pprof, row.Flame = cpu.pprof, cpu.flame
					}
				}
				// A row that failed early leaves its runs undone: the total drops by them.
				runs.total -= max(per-(runs.done-start), 0)
				if err != nil {
					b.cfg.Log.Info("measurement failed", "framework", t.Entry.Name, "test", p.Name, "conns", conns, "err", err)
					failRow(&row, err, b.cfg.BuildLogGoes)
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
	if !b.stages.ownImage(entryProfiles(e)) {
		tags, err := b.BuildStacks(ctx, e)
		return strings.Join(tags, ", "), err
	}
	return b.images.Entry(ctx, e)
}

// measureOne starts the profile's sidecars and a fresh container for one profile and
// connection count, waits until it answers, runs the load tool Runs times, profiles one
// more run when profiled is set, and removes the container and the sidecars.
func (b *Bencher) measureOne(ctx context.Context, image string, e frameworks.Entry, p profile.Profile, conns int, ranOne func(), profiled bool) (*result.Result, *cpuRun, error) {
	s, err := b.open(ctx, image, e, p, conns)
	if err != nil {
		return nil, nil, err
	}
	defer s.close()
	if err := b.tools.warmUp(ctx, s.tool.tool, s.spec, p.Warmup); err != nil {
		return nil, nil, fmt.Errorf("%s %s %dc warm-up: %w", e.Name, p.Name, conns, err)
	}
	var runs []result.Run
	for i := 0; i < b.cfg.Runs; i++ {
		run, err := b.tools.measuredRun(ctx, s, fmt.Sprintf("%s %s %dc run %d", e.Name, p.Name, conns, i+1))
		if err != nil {
			return nil, nil, fmt.Errorf("%s %s %dc run %d: %w", e.Name, p.Name, conns, i+1, err)
		}
		runs = append(runs, run)
		ranOne()
	}
	r := b.newResult(e, p, conns, s.spec, s.tool, s.side.versions())
	r.FromRuns(runs)
	var cpu *cpuRun
	if profiled {
		cpu = b.prof.run(ctx, s, e, p, conns, runs)
		cpu.attach(r, nil, p, conns)
	}
	return r, cpu, nil
}

// A session is one server container ready for a profile's load: its sidecars, its cgroup
// and the load tool's command line.
type session struct {
	entry string // the entry's name
	cpus  string // the server's CPU set; "" when nothing is pinned (--lite)
	side  *sidecars
	stop  func()
	group *cgroup.Group
	tool  toolCheck
	spec  loadgen.Spec
	args  []string
	// writes is the write load run beside this one (Profile.Writes; writes.go).
	writes *session
}

// close removes the server container and the sidecars.
func (s *session) close() {
	s.stop()
	s.side.stop()
}

// open starts the profile's stage for a row (its sidecars and a fresh server container from
// image, or the entry's stack), waits until it answers and prepares the load tool's run for
// conns connections.
func (b *Bencher) open(ctx context.Context, image string, e frameworks.Entry, p profile.Profile, conns int) (*session, error) {
	if need := int64(conns) + host.NofileMargin; b.cfg.Nofile < need {
		return nil, fmt.Errorf("%s %dc needs an open-files limit of at least %d for the server and the load tool; this host allows %d: raise the runner's and the Docker daemon's limit (LimitNOFILE= in their systemd units, or ulimit -n) or run fewer connections", p.Name, conns, need, b.cfg.Nofile)
	}
	return b.stages.of(p).open(ctx, image, e, p, conns)
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
		Tool:        tc.tool.Name,
		ToolVersion: tc.version,
		Sidecars:    sidecars,
		Limits:      b.cfg.limits(p),
		Commit:      b.cfg.Commit,
		Host:        b.cfg.Host,
		HostFacts:   b.cfg.HostFacts,
		Time:        time.Now().UTC().Truncate(time.Second),
	}
}

// DefaultDuration is the length of one run unless the profile or the configuration says
// otherwise.
const DefaultDuration = profile.DefaultDuration

// A reporter sends a Bencher's progress to its log and its Progress.
type reporter struct {
	log      *slog.Logger
	progress Progress // nil means none
}

func (r *reporter) step(desc string, done, total int) {
	if r.progress != nil {
		r.progress.Step(desc, done, total)
	}
}

func (r *reporter) note(line string) {
	r.log.Info(line)
	if r.progress != nil {
		r.progress.Note(line)
	}
}

// Prebuild builds the images a plan will measure, before the host lock is taken: each
// target's image and its base's, the services of the compose stacks its stack profiles
// run, and in --lite mode the load-generator images of the tools
// the plan uses (those only: a run of wrk profiles waits for no other tool), two at a time
// (prebuildParallel). A build uses no fixed port, so a run that then waits for the host has
// built meanwhile, and the host is held only while servers run. Failures are not returned:
// Measure meets them and reports them on the entry's rows as it would have without
// Prebuild, and a Dockerfile that failed is not built a second time. An image that built is
// asked for again by Measure and comes from Docker's layer cache.
//
// It reports whether any row may still start a server: false when every target's image
// failed to build (and none runs a compose stack), so that a caller need not wait for the
// host to report only build failures.
func (b *Bencher) Prebuild(ctx context.Context, plan Plan) (runnable bool) {
	var jobs []func(*build.Builder)
	var built atomic.Bool
	if need, err := planTools(plan); b.cfg.Lite && err == nil {
		for _, tool := range need {
			jobs = append(jobs, func(images *build.Builder) {
				if err := images.Loadgen(ctx, tool); err != nil {
					b.cfg.Log.Info("load-generator image not built ahead", "tool", tool.Name, "err", err) // Prepare reports it
				}
			})
		}
	}
	for _, t := range plan.Targets {
		ps := t.Profiles
		if len(ps) == 0 {
			ps = entryProfiles(t.Entry)
		}
		for _, p := range ps {
			if job := b.stages.of(p).prebuild(ctx, t.Entry, p); job != nil {
				jobs = append(jobs, job)
			}
		}
		if slices.ContainsFunc(ps, func(p profile.Profile) bool { return !b.stages.of(p).ownImage() }) {
			runnable = true // a stack needs no image of the entry's
		}
		if !b.stages.ownImage(ps) {
			continue // no image of its own
		}
		jobs = append(jobs, func(images *build.Builder) {
			if _, err := images.Entry(ctx, t.Entry); err != nil {
				return // the entry's rows fail, and its base is not needed
			}
			built.Store(true)
			if t.Base != nil && t.Base.Err == nil {
				images.Base(ctx, t.Base.Entry, t.Base.Ref, t.Base.Commit)
			}
		})
	}
	next := make(chan func(*build.Builder))
	notes := &lockedNotes{progress: b.cfg.Progress}
	var wg sync.WaitGroup
	for range min(prebuildParallel, len(jobs)) {
		images, err := b.images.Sibling(notes)
		if err != nil {
			b.cfg.Log.Info("images not built ahead", "err", err) // Measure meets it
			close(next)                                          // the siblings already started end
			wg.Wait()
			return true
		}
		wg.Go(func() {
			for job := range next {
				if ctx.Err() == nil {
					job(images)
				}
			}
		})
	}
	for _, job := range jobs {
		next <- job
	}
	close(next)
	wg.Wait()
	return runnable || built.Load()
}

// prebuildParallel is how many images Prebuild builds at once. A build is part compiling
// (the CPUs) and part the engine unpacking and committing layers (the disk), so two overlap
// well even on two cores: a fresh machine's first two entries and their load-generator
// image come ready about a minute sooner than one after another.
const prebuildParallel = 2

// lockedNotes passes the notes of builds running side by side to a Progress one at a time.
type lockedNotes struct {
	mu       sync.Mutex
	progress Progress
}

func (n *lockedNotes) Note(line string) {
	if n.progress == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.progress.Note(line)
}

// BuildLoadgen builds every tool's load-generator image, the ones --lite runs the load tools
// in, unless it is built and current (a run builds only those it needs, on first use). Like
// Build, it needs neither Prepare nor the host lock.
func (b *Bencher) BuildLoadgen(ctx context.Context) error {
	var errs []error
	for _, tool := range loadgen.All() {
		errs = append(errs, b.images.Loadgen(ctx, tool))
	}
	return errors.Join(errs...)
}
