package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/measure"
)

type buildConfig struct {
	hostConfig
	Frameworks []string
	Loadgen    bool // also every tool's load-generator image, which --lite runs it in
}

func parseBuild(args []string, getenv func(string) string, stderr io.Writer) (buildConfig, error) {
	fs := pflag.NewFlagSet("build", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: arenabot build <framework>... [flags]\n\nBuilds each entry's image as bench and the runner do (the same Dockerfile rewriting,\nbuild arguments and local base-image stand-ins), without measuring: to check that an\nentry builds, or to fill Docker's build cache before measuring. It does not wait for the\nhost lock: a build uses no fixed port and no CPU set.\n\nflags:")
		fs.PrintDefaults()
	}
	var c buildConfig
	c.hostConfig.flags(fs, getenv)
	fs.BoolVar(&c.Loadgen, "load-generator", false, "also build every load tool's load-generator image, which --lite runs the tool in (a run builds the ones it needs on first use)")
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	c.Frameworks = fs.Args()
	if len(c.Frameworks) == 0 && !c.Loadgen {
		return c, fmt.Errorf("build: no framework given; name one or more entries of frameworks/ (for example: arenabot build nethttp)")
	}
	return c, c.hostConfig.finish("build")
}

// buildEntries builds each named entry in turn, one line each; every entry is tried, and
// the error names those that failed.
func buildEntries(ctx context.Context, c buildConfig, stdout, stderr io.Writer) error {
	root := c.frameworksDir()
	var entries []frameworks.Entry
	for _, name := range c.Frameworks {
		e, err := frameworks.Load(root, name, profile.Names())
		if err != nil {
			return fmt.Errorf("build: %w", err)
		}
		entries = append(entries, e)
	}
	eng, err := docker.New(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	c.limitBuildPids(ctx, eng)
	cfg := c.runnerConfig(ctx, "")
	cfg.Log = c.logger(stderr)
	b := measure.New(eng, cfg)
	var failed []string
	total := len(entries) // images asked for
	if c.Loadgen {
		total++
		start := time.Now()
		if err := b.BuildLoadgen(ctx); err != nil {
			failed = append(failed, "the load-generator images")
			fmt.Fprintf(stderr, "arenabot: the load-generator images: %v\n", err)
		} else {
			fmt.Fprintf(stdout, "built the load-generator images in %s\n", time.Since(start).Round(100*time.Millisecond))
		}
	}
	for _, e := range entries {
		start := time.Now()
		tag, err := b.Build(ctx, e)
		if err != nil {
			failed = append(failed, e.Name)
			fmt.Fprintf(stderr, "arenabot: %s: %v\n", e.Name, err)
			if bf, ok := errors.AsType[*build.BuildFailure](err); ok {
				for _, l := range bf.Tail() {
					fmt.Fprintln(stderr, "  "+l)
				}
			}
			continue
		}
		fmt.Fprintf(stdout, "built %s (%s) in %s\n", tag, e.Name, time.Since(start).Round(100*time.Millisecond))
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d images did not build (%v); %w", len(failed), total, failed, errReported)
	}
	return nil
}
