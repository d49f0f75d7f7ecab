// Package build makes the images the runner measures: it reads an entry's Dockerfile, finds
// each base image (on the host, pulled, or a local stand-in from the image map), builds the
// entry's image, a base's image at a commit, and the load-generator image --lite runs the
// load tools in, and remembers what it built so a failing Dockerfile is built once.
package build

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/text"
)

// Engine is the part of the Docker Engine API a build uses; *docker.Engine implements it.
type Engine interface {
	Build(ctx context.Context, o docker.BuildOptions) (string, error)
	ImageExists(ctx context.Context, ref string) (bool, error)
	PullImage(ctx context.Context, ref string) error
	Run(ctx context.Context, o docker.RunOptions, out io.Writer) (int, error)
	RemoveImagesLabeled(ctx context.Context, key, value string) (int, error)
}

var _ Engine = (*docker.Engine)(nil)

// Labels put on the images (and, through the runner, the containers) the runner creates, so
// leftovers can be found and removed.
const (
	LabelManaged = "arenabot.managed"
	LabelEntry   = "arenabot.entry"
	// LabelBase marks the base images kept between jobs (CommitImageTag); its value is the
	// entry.
	LabelBase = "arenabot.base"
)

// Config says how to build. The zero value of each optional field is documented.
type Config struct {
	Root string // the repository root, for the paths messages show; "" shows them as given

	// BuildArgs are passed to every entry build (GO_IMAGE=...). They set the global ARGs
	// a FROM reads, as --build-arg does.
	BuildArgs map[string]string
	// ImageMap names local stand-ins for base images (ARENA_IMAGE_MAP). A base image of any
	// FROM that is not on the host and cannot be pulled is built FROM its stand-in instead,
	// in a rewritten copy of the Dockerfile (the entry's file is not changed). Without one,
	// a FROM ${ARG} whose ARG BuildArgs does not set gets arenabot/<name>:local when that
	// exists (deploy/base-images.sh makes them); any other missing base image fails the
	// entry with a *BaseImageError.
	ImageMap ImageMap
	// MakeStandIn, when set, makes a stand-in the host lacks, on first use: an image the
	// map names, arenabot/<name>:local for a FROM ${ARG}, a sidecar's (deploy.MakeStandIn
	// makes those deploy/base-images.sh makes). It says whether it knew the image, and sends
	// its progress to note. nil means a missing stand-in is an error naming the fix.
	MakeStandIn func(ctx context.Context, image string, note func(string)) (made bool, err error)
	// BuildNetwork is the network of RUN steps; "" means "host".
	BuildNetwork string
	// Timeout is the wall-clock limit of one image build (an entry's, a base's, a stack
	// service's), counted from the moment it has its turn; 0 means DefaultTimeout. A build
	// past it is stopped (the daemon kills its RUN step) and fails as a *BuildFailure that
	// names the limit.
	Timeout time.Duration
	// Memory is the memory limit of each RUN step of a build, swap included; 0 means
	// DefaultMemory, a negative value none.
	Memory int64
	// CgroupParent is the cgroup the builds' RUN steps run in: one whose pids.max bounds
	// the processes of every build under it together (cgroup.PidsParent); "" means the
	// daemon's default, without a pids limit (the engine offers none for builds).
	CgroupParent string
	// ScratchDir holds the build logs and the load-generator image's context; "" means a
	// temporary directory, made on first use (Scratch).
	ScratchDir string

	// Commit tags the entries' images (CommitImageTag) instead of ":local" when TagByCommit
	// is set: a job's checkout is exactly that commit, a working tree may not be.
	Commit      string
	TagByCommit bool
	// Labels are added to the entries' images (arenabot.job=<id>). The load-generator image
	// and the base images kept between jobs do not get them.
	Labels map[string]string

	Log      *slog.Logger // nil means discard
	Progress Progress     // nil means none
}

// Limits a build gets unless the Config says otherwise.
const (
	// DefaultTimeout is a build's wall-clock limit: a cold build of the slowest shipped
	// entry takes a few minutes on a CI VM.
	DefaultTimeout = 20 * time.Minute
	// DefaultMemory is the memory limit of a build's RUN step: as much as a server gets
	// (measure.DefaultServerMemory), far above what a compiler needs for an entry.
	DefaultMemory = 8 << 30
)

// Progress receives the builder's notes (a build starting, a stand-in used).
type Progress interface {
	Note(line string)
}

// A Builder builds images and remembers what it built. One Builder is for one goroutine;
// its siblings (Sibling) share what it remembers and may build beside it.
type Builder struct {
	eng  Engine
	cfg  Config
	memo *memo
}

// memo is what a Builder and its siblings remember.
type memo struct {
	mu         sync.Mutex
	builds     map[string]error       // images built, by tag: nil, or the failure a rebuild would repeat
	unpullable map[string]string      // base images whose pull failed: why
	standIns   map[string]bool        // stand-ins MakeStandIn was asked to make
	making     map[string]*sync.Mutex // held while that stand-in is made
}

// makingLock returns the lock held while the stand-in image is made: siblings that need
// the same one wait for it, those that need another go on.
func (m *memo) makingLock(image string) *sync.Mutex {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.making[image] == nil {
		m.making[image] = &sync.Mutex{}
	}
	return m.making[image]
}

// built returns what is remembered of the image tag: whether it was built or tried
// before, and the failure a rebuild would repeat.
func (m *memo) built(tag string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	err, ok := m.builds[tag]
	return ok, err
}

func (m *memo) setBuilt(tag string, err error) {
	m.mu.Lock()
	m.builds[tag] = err
	m.mu.Unlock()
}

// Sibling returns a Builder with b's engine, configuration (its progress notes sent to
// progress instead) and memory of what was built, for building beside b in another
// goroutine: what either learns (an image built, a pull or a Dockerfile that failed, a
// stand-in made) the other knows.
func (b *Builder) Sibling(progress Progress) (*Builder, error) {
	if _, err := b.Scratch(); err != nil {
		return nil, err
	}
	cfg := b.cfg
	cfg.Progress = progress
	return &Builder{eng: b.eng, cfg: cfg, memo: b.memo}, nil
}

// New returns a Builder over an engine.
func New(eng Engine, cfg Config) *Builder {
	if cfg.BuildNetwork == "" {
		cfg.BuildNetwork = "host"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	switch {
	case cfg.Memory == 0:
		cfg.Memory = DefaultMemory
	case cfg.Memory < 0:
		cfg.Memory = 0
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Builder{eng: eng, cfg: cfg, memo: &memo{builds: map[string]error{}, unpullable: map[string]string{}, standIns: map[string]bool{}, making: map[string]*sync.Mutex{}}}
}

// Scratch returns the directory for build logs (and the runner's scripts), making a
// temporary one on first use when the configuration names none.
func (b *Builder) Scratch() (string, error) {
	if b.cfg.ScratchDir == "" {
		dir, err := os.MkdirTemp("", "arenabot-bench-")
		if err != nil {
			return "", err
		}
		b.cfg.ScratchDir = dir
	}
	return b.cfg.ScratchDir, nil
}

// ImageTag is the tag of an entry's image.
func ImageTag(entry string) string { return "arenabot-" + entry + ":local" }

// CommitImageTag is the tag of an entry's image built at a commit: a base, or a job's head.
func CommitImageTag(entry, commit string) string {
	return "arenabot-" + entry + ":" + ShortCommit(commit)
}

// ShortCommit is a commit as tags and notes show it: its first 12 digits.
func ShortCommit(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// Entry builds an entry's image from its own directory and Dockerfile and returns its tag.
// A Dockerfile that failed (a *BuildFailure) or a base image the host lacks (a
// *BaseImageError) is not built again: the same error comes back; nor is one this Builder
// or a sibling built, while its image is there.
func (b *Builder) Entry(ctx context.Context, e frameworks.Entry) (string, error) {
	tag := ImageTag(e.Name)
	if b.cfg.TagByCommit && b.cfg.Commit != "" {
		tag = CommitImageTag(e.Name, b.cfg.Commit)
	}
	again, err := b.memo.built(tag)
	if err != nil {
		return "", err // Prebuild met it; building again would only repeat it
	}
	if b.stillBuilt(ctx, tag, again) {
		return tag, nil
	}
	if !again {
		b.note(fmt.Sprintf("%s: building %s", e.Name, tag))
	}
	in, err := b.baseImages(ctx, filepath.Join(e.Dir, "Dockerfile"))
	if bi, ok := errors.AsType[*BaseImageError](err); ok {
		b.memo.setBuilt(tag, bi)
		return "", bi // the host lacks an image; the entry is as it should be
	}
	if err != nil {
		return "", fmt.Errorf("build %s: %w", e.Name, err)
	}
	if err := b.build(ctx, e.Dir, tag, e.Name, in, b.cfg.Labels); err != nil {
		return "", b.remember(tag, err)
	}
	return tag, b.remember(tag, nil)
}

// Base builds the image of a base: e as it is at commit, the merge base with the branch
// ref. One at a base commit is tagged by the commit and kept without the job's labels, so a
// later job with the same base finds it built; the entry's older base images are removed
// when a new one is made, keeping one per entry. Without ref or commit (the --compare
// entry) it is built as Entry builds it.
func (b *Builder) Base(ctx context.Context, e frameworks.Entry, ref, commit string) (string, error) {
	if ref == "" || commit == "" {
		if e.Name != "" && e.Dir != "" {
			return b.Entry(ctx, e)
		}
		return "", errors.New("the base has no source")
	}
	tag := CommitImageTag(e.Name, commit)
	again, err := b.memo.built(tag)
	if err != nil {
		return "", err // Prebuild met it
	}
	if ok, err := b.eng.ImageExists(ctx, tag); err == nil && ok {
		if !again {
			b.note(fmt.Sprintf("%s: the base image %s is already built (%s)", e.Name, tag, ref))
		}
		return tag, nil
	}
	if _, err := b.eng.RemoveImagesLabeled(ctx, LabelBase, e.Name); err != nil {
		b.cfg.Log.Warn("remove older base images", "framework", e.Name, "err", err)
	}
	b.note(fmt.Sprintf("%s: building the base %s (%s)", e.Name, tag, ref))
	in, err := b.baseImages(ctx, e.Dir+"/Dockerfile")
	if err != nil {
		return "", fmt.Errorf("build %s at %s: %w", e.Name, ShortCommit(commit), err)
	}
	labels := map[string]string{LabelBase: e.Name, "arenabot.commit": commit}
	if err := b.build(ctx, e.Dir, tag, e.Name+"-base", in, labels); err != nil {
		return "", b.remember(tag, err)
	}
	return tag, b.remember(tag, nil)
}

// stillBuilt says whether tag, built before by this Builder or a sibling (built), is still
// on the host, so that asking for it again costs nothing. Building it again is not free
// even when every layer is cached: two siblings that built entries side by side made two
// copies of their shared first layers, and the cache then follows only one of them.
func (b *Builder) stillBuilt(ctx context.Context, tag string, built bool) bool {
	if !built {
		return false
	}
	ok, err := b.eng.ImageExists(ctx, tag)
	return err == nil && ok
}

// remember records a build's outcome: a success, or a failure of the Dockerfile itself,
// which a second build of the same source would repeat. Other errors (the engine away, a
// cancelled context) are not kept.
func (b *Builder) remember(tag string, err error) error {
	if _, ok := errors.AsType[*BuildFailure](err); ok || err == nil {
		b.memo.setBuilt(tag, err)
	}
	return err
}

func (b *Builder) build(ctx context.Context, dir, tag, name string, in buildInput, labels map[string]string) error {
	return b.buildFile(ctx, dir, "", tag, name, in, labels)
}

// buildFile builds dir with the Dockerfile at dockerfile (relative to dir; "" for
// "Dockerfile").
func (b *Builder) buildFile(ctx context.Context, dir, dockerfile, tag, name string, in buildInput, labels map[string]string) error {
	scratch, err := b.Scratch()
	if err != nil {
		return err
	}
	logPath := filepath.Join(scratch, "build-"+name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, n := range in.notes {
		fmt.Fprintln(f, n)
	}
	turn := in.turn
	if turn == "" {
		turn = turnKey(tag)
	}
	release, err := buildTurn(ctx, turn, func() {
		b.note(fmt.Sprintf("%s: waiting for another build of it on this host to finish", name))
	})
	if err != nil {
		return err
	}
	defer release()
	start := time.Now()
	bctx, cancel := context.WithTimeoutCause(ctx, b.cfg.Timeout, errBuildLimit)
	defer cancel()
	_, err = b.eng.Build(bctx, docker.BuildOptions{
		ContextDir:        dir,
		Dockerfile:        dockerfile,
		DockerfileContent: in.dockerfile,
		Tag:               tag,
		BuildArgs:         in.args,
		Labels:            docker.Labels(labels, LabelManaged, "true", LabelEntry, name),
		NetworkMode:       b.cfg.BuildNetwork,
		Memory:            b.cfg.Memory,
		CgroupParent:      b.cfg.CgroupParent,
		Log:               f,
	})
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(bctx), errBuildLimit) {
		// Cancelling the request made the daemon kill the step's container and remove it.
		b.cfg.Log.Warn("build stopped at its limit", "framework", name, "image", tag, "limit", b.cfg.Timeout)
		msg := fmt.Sprintf("the build of %s exceeded its %s limit and was stopped", name, text.Duration(b.cfg.Timeout))
		return &BuildFailure{Entry: name, Err: &docker.BuildError{Tag: tag, Msg: msg, Tail: logTail(logPath)}, LogPath: logPath, Limit: b.cfg.Timeout}
	}
	if be, ok := errors.AsType[*docker.BuildError](err); ok {
		if b.cfg.Memory > 0 && strings.HasSuffix(be.Msg, "returned a non-zero code: 137") {
			be.Msg += fmt.Sprintf(" (killed: a build step may use at most %d MiB of memory)", b.cfg.Memory>>20)
		}
		return &BuildFailure{Entry: name, Err: be, LogPath: logPath}
	}
	if err != nil {
		return fmt.Errorf("build %s: %w", name, err)
	}
	b.cfg.Log.Info("image built", "framework", name, "image", tag, "duration", time.Since(start).Round(time.Millisecond))
	return nil
}

func (b *Builder) note(line string) {
	b.cfg.Log.Info(line)
	if b.cfg.Progress != nil {
		b.cfg.Progress.Note(line)
	}
}

// errBuildLimit is the cause of a build's context that its Timeout ended.
var errBuildLimit = errors.New("the build ran past its time limit")

// logTail is the last lines of a build log file, for a build stopped before the daemon said
// why.
func logTail(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return lines[max(0, len(lines)-20):]
}

// A BuildFailure is a Dockerfile that did not build, or whose build ran past its time
// limit; it carries the log's tail.
type BuildFailure struct {
	Entry   string
	Err     *docker.BuildError
	LogPath string
	// Limit is the time limit the build exceeded (Config.Timeout); 0 for a build that
	// failed.
	Limit time.Duration
}

func (f *BuildFailure) Error() string {
	if f.Limit > 0 {
		return fmt.Sprintf("%s (ARENA_BUILD_TIMEOUT); make it build faster, or raise the limit if it needs more (full log: %s)", f.Err.Msg, f.LogPath)
	}
	return fmt.Sprintf("build of %s failed: %s; fix its Dockerfile or source and run again (full log: %s)", f.Entry, f.Err.Msg, f.LogPath)
}

func (f *BuildFailure) Unwrap() error { return f.Err }

// Tail is the end of the build log.
func (f *BuildFailure) Tail() []string { return f.Err.Tail }

// Short is the table cell of a failed build.
func (f *BuildFailure) Short() string {
	if f.Limit > 0 {
		return "build timed out"
	}
	return "build failed"
}
