package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/deploy"
	"github.com/arenabot/arenabot/runner"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/runner/measure"
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

	buildArgs []string
	imageMap  []string
}

func (h *hostConfig) flags(fs *pflag.FlagSet, getenv func(string) string) {
	fs.StringVar(&h.Root, "root", envOr(getenv, "ARENA_REPO_DIR", "."), "the arena repository (env ARENA_REPO_DIR)")
	fs.StringVar(&h.CacheDir, "cache-dir", defaultCacheDir(getenv), "where the generated arena data is kept (env ARENA_CACHE_DIR)")
	fs.StringVar(&h.ServerCPUs, "server-cpus", getenv("ARENA_SERVER_CPUS"), "cpuset of the servers (env ARENA_SERVER_CPUS; default: lower half of the CPUs)")
	fs.StringArrayVar(&h.buildArgs, "build-arg", splitList(getenv("ARENA_BUILD_ARGS")), "KEY=VALUE passed to every entry build (env ARENA_BUILD_ARGS, comma separated)")
	fs.StringArrayVar(&h.imageMap, "image-map", splitList(getenv("ARENA_IMAGE_MAP")), "IMAGE=LOCAL: build FROM the local image LOCAL where a base image IMAGE (may end in *: golang:*) is not on this host and cannot be pulled (env ARENA_IMAGE_MAP, comma separated; the flag replaces it)")
	fs.BoolVar(&h.MakeStandIns, "make-stand-ins", getenv("ARENA_MAKE_STAND_INS") != "false", "make a missing local stand-in for a base image on first use, as deploy/base-images.sh NAME does (needs root; env ARENA_MAKE_STAND_INS=false turns it off)")
	fs.DurationVar(&h.ReadyTimeout, "ready-timeout", 30*time.Second, "how long a server may take to answer its readiness probe")
	fs.BoolVarP(&h.Verbose, "verbose", "v", false, "log every step")
}

func (h *hostConfig) finish(cmd string) error {
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
	return eng, dataDir, nil
}

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
		Commit:       runner.GitCommit(ctx, h.Root),
		Host:         host,
	}
}

// claimHost waits for any other arenabot run that starts servers on this host (they share
// the servers' fixed ports and the CPUs), saying so once. Callers connect and build first:
// a build needs no lock, so a run that waits has its images ready when its turn comes.
func claimHost(ctx context.Context, stderr io.Writer) (unlock func(), err error) {
	return host.LockHost(ctx, func(holder string) {
		fmt.Fprintf(stderr, "waiting for another arenabot run on this host to finish (%s holds %s)\n", orNone(holder), host.LockPath)
	})
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
