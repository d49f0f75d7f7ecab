package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/deploy"
	"github.com/arenabot/arenabot/runner"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/cgroup"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/runner/measure"
	"github.com/arenabot/arenabot/text"
)

// hostConfig is what every subcommand that builds and starts entries on this host needs.
type hostConfig struct {
	Root         string
	CacheDir     string
	ServerCPUs   string
	BuildArgs    map[string]string
	ImageMap     build.ImageMap
	ReadyTimeout time.Duration
	Verbose      bool
	MakeStandIns bool // make a missing base-image stand-in on first use
	// BuildTimeout, BuildMemory and BuildPids limit every image build: its wall clock, its
	// RUN steps' memory (-1: none) and the processes of all builds together (0: none).
	BuildTimeout time.Duration
	BuildMemory  int64
	BuildPids    int64

	buildArgs                            []string
	imageMap                             []string
	buildTimeout, buildMemory, buildPids string
	// buildParent is the cgroup parent of the builds (their pids limit), once connect made
	// it; noBuildPids says why there is none.
	buildParent string
	noBuildPids error
}

// The build limits' defaults (--build-pids's; the others are build.DefaultTimeout and
// build.DefaultMemory).
const (
	defaultBuildPids = 16384
	// buildCgroup is the cgroup the builds' RUN steps run under, shared by every build on
	// the host, whose pids.max is --build-pids.
	buildCgroup = "arenabot-builds"
)

func (h *hostConfig) flags(fs *pflag.FlagSet, getenv func(string) string) {
	fs.StringVar(&h.Root, "root", envOr(getenv, "ARENA_REPO_DIR", "."), "the arena repository (env ARENA_REPO_DIR)")
	fs.StringVar(&h.CacheDir, "cache-dir", defaultCacheDir(getenv), "where the generated arena data is kept (env ARENA_CACHE_DIR)")
	fs.StringVar(&h.ServerCPUs, "server-cpus", getenv("ARENA_SERVER_CPUS"), "cpuset of the servers (env ARENA_SERVER_CPUS; default: lower half of the CPUs)")
	fs.StringArrayVar(&h.buildArgs, "build-arg", splitList(getenv("ARENA_BUILD_ARGS")), "KEY=VALUE passed to every entry build (env ARENA_BUILD_ARGS, comma separated)")
	fs.StringArrayVar(&h.imageMap, "image-map", splitList(getenv("ARENA_IMAGE_MAP")), "IMAGE=LOCAL: build FROM the local image LOCAL where a base image IMAGE (may end in *: golang:*) is not on this host and cannot be pulled (env ARENA_IMAGE_MAP, comma separated; the flag replaces it)")
	fs.BoolVar(&h.MakeStandIns, "make-stand-ins", getenv("ARENA_MAKE_STAND_INS") != "false", "make a missing local stand-in for a base image on first use, as deploy/base-images.sh NAME does (needs root; env ARENA_MAKE_STAND_INS=false turns it off)")
	fs.DurationVar(&h.ReadyTimeout, "ready-timeout", 30*time.Second, "how long a server may take to answer its readiness probe")
	fs.StringVar(&h.buildTimeout, "build-timeout", envOr(getenv, "ARENA_BUILD_TIMEOUT", text.Duration(build.DefaultTimeout)), "wall-clock limit of one image build; a build past it is stopped and fails its rows (env ARENA_BUILD_TIMEOUT)")
	fs.StringVar(&h.buildMemory, "build-memory", envOr(getenv, "ARENA_BUILD_MEMORY", "8g"), "memory limit of each RUN step of a build, swap included: bytes with k, m or g, or none (env ARENA_BUILD_MEMORY)")
	fs.StringVar(&h.buildPids, "build-pids", envOr(getenv, "ARENA_BUILD_PIDS", strconv.Itoa(defaultBuildPids)), "processes and threads of all builds on this host together, through the cgroup "+buildCgroup+" (needs root and the engine's cgroupfs driver); 0 means none (env ARENA_BUILD_PIDS)")
	fs.BoolVarP(&h.Verbose, "verbose", "v", false, "log every step")
}

func (h *hostConfig) finish(cmd string) error {
	var err error
	if h.BuildTimeout, err = time.ParseDuration(h.buildTimeout); err != nil || h.BuildTimeout <= 0 {
		return fmt.Errorf("%s: --build-timeout (ARENA_BUILD_TIMEOUT) %q: want a positive duration such as 20m", cmd, h.buildTimeout)
	}
	if h.BuildMemory, err = parseSize(h.buildMemory); err != nil {
		return fmt.Errorf("%s: --build-memory (ARENA_BUILD_MEMORY) %q: %v", cmd, h.buildMemory, err)
	}
	if h.BuildPids, err = strconv.ParseInt(h.buildPids, 10, 64); err != nil || h.BuildPids < 0 {
		return fmt.Errorf("%s: --build-pids (ARENA_BUILD_PIDS) %q: want a whole number of processes, 0 for none", cmd, h.buildPids)
	}
	h.BuildArgs = map[string]string{}
	for _, kv := range h.buildArgs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("%s: --build-arg %q: want KEY=VALUE", cmd, kv)
		}
		h.BuildArgs[k] = v
	}
	m, err := build.ParseImageMap(strings.Join(h.imageMap, ","))
	if err != nil {
		return fmt.Errorf("%s: --image-map (ARENA_IMAGE_MAP): %w", cmd, err)
	}
	h.ImageMap = m
	return nil
}

func (h *hostConfig) logger(stderr interface{ Write([]byte) (int, error) }) *slog.Logger {
	level := slog.LevelWarn
	if h.Verbose {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
}

// connect reaches the Docker Engine and materialises the arena data.
func (h *hostConfig) connect(ctx context.Context) (*docker.Engine, string, error) {
	eng, err := docker.New(ctx)
	if err != nil {
		return nil, "", err
	}
	dataDir, err := arenadata.Ensure(h.CacheDir)
	if err != nil {
		eng.Close()
		return nil, "", fmt.Errorf("arena data: %w", err)
	}
	h.limitBuildPids(ctx, eng)
	return eng, dataDir, nil
}

// limitBuildPids makes the cgroup parent whose pids.max bounds the builds' processes
// (--build-pids), or records in noBuildPids why there is none: the engine's builds take no
// pids limit of their own.
func (h *hostConfig) limitBuildPids(ctx context.Context, eng *docker.Engine) {
	if h.BuildPids <= 0 {
		h.noBuildPids = errors.New("--build-pids is 0")
		return
	}
	info, err := eng.Info(ctx)
	if err != nil {
		h.noBuildPids = err
		return
	}
	h.buildParent, h.noBuildPids = cgroup.PidsParent(cgroup.Root, info.CgroupVersion, info.CgroupDriver, buildCgroup, h.BuildPids)
}

// parseSize reads a size in bytes: "8g", "512MiB", "1048576", or "none" (-1).
func parseSize(s string) (int64, error) {
	if strings.EqualFold(s, "none") {
		return -1, nil
	}
	m := sizeRE.FindStringSubmatch(strings.ToLower(strings.TrimSpace(s)))
	if m == nil {
		return 0, errors.New("want a positive size such as 8g or 512m, or none")
	}
	shift := map[string]int{"": 0, "k": 10, "m": 20, "g": 30, "t": 40}[m[2]]
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || n <= 0 || n > (1<<62)>>shift {
		return 0, errors.New("want a positive size such as 8g or 512m, or none")
	}
	return n << shift, nil
}

var sizeRE = regexp.MustCompile(`^([0-9]+) ?([kmgt]?)(?:i?b)?$`)

// runnerConfig is the part of measure.Config this host's flags decide.
func (h *hostConfig) runnerConfig(ctx context.Context, dataDir string) measure.Config {
	host, _ := os.Hostname()
	var makeStandIn func(context.Context, string, func(string)) (bool, error)
	if h.MakeStandIns {
		makeStandIn = deploy.MakeStandIn
	}
	return measure.Config{
		MakeStandIn:  makeStandIn,
		Root:         h.Root,
		DataDir:      dataDir,
		ServerCPUs:   h.ServerCPUs,
		BuildArgs:    h.BuildArgs,
		ImageMap:     h.ImageMap,
		ReadyTimeout: h.ReadyTimeout,
		BuildTimeout: h.BuildTimeout, BuildMemory: h.BuildMemory, BuildCgroupParent: h.buildParent,
		Commit: runner.GitCommit(ctx, h.Root),
		Host:   host,
	}
}

// claimHost waits for any other arenabot run that starts servers on this host (they share
// the servers' fixed ports and the CPUs), saying so once. Callers connect and build first:
// a build needs no lock, so a run that waits has its images ready when its turn comes.
func claimHost(ctx context.Context, stderr io.Writer) (unlock func(), err error) {
	return host.LockHost(ctx, hostWaiting(stderr))
}

// hostWaiting says once that another run holds the host lock (host.LockHost's waiting).
func hostWaiting(stderr io.Writer) func(holder string) {
	return func(holder string) {
		fmt.Fprintf(stderr, "waiting for another arenabot run on this host to finish (%s holds %s)\n", text.Or(holder, "—"), host.LockPath)
	}
}

func (h *hostConfig) frameworksDir() string { return filepath.Join(h.Root, "frameworks") }

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

func splitList(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func defaultCacheDir(getenv func(string) string) string {
	if v := getenv("ARENA_CACHE_DIR"); v != "" {
		return v
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "arenabot")
	}
	return filepath.Join(os.TempDir(), "arenabot-cache")
}
