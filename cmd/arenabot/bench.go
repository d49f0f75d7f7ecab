package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/runner"
	"github.com/arenabot/arenabot/runner/arenadata"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/profile"
	"github.com/arenabot/arenabot/runner/result"
)

type benchConfig struct {
	Frameworks   []string
	Tests        []string
	Lite         bool
	Runs         int
	Duration     time.Duration
	Save         bool
	Compare      string
	Root         string
	CacheDir     string
	ServerCPUs   string
	LoadgenCPUs  string
	Threads      int
	BuildArgs    map[string]string
	ReadyTimeout time.Duration
	Verbose      bool
}

func parseBench(args []string, getenv func(string) string, stderr io.Writer) (benchConfig, error) {
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: arenabot bench <framework>... [flags]\n\nBuilds each entry, measures the selected tests and prints one table per framework.\n\nflags:")
		fs.PrintDefaults()
	}
	var c benchConfig
	var buildArgs []string
	fs.StringSliceVarP(&c.Tests, "test", "t", nil, "tests to run, comma separated (default: every test the entry subscribes to)")
	fs.BoolVar(&c.Lite, "lite", false, "contributors' mode: no CPU pinning, one connection count per test, load tools in Docker")
	fs.IntVar(&c.Runs, "runs", 3, "runs per measurement; the best is reported")
	fs.DurationVar(&c.Duration, "duration", 0, "length of one run (default: the test's own, else 5s)")
	fs.BoolVar(&c.Save, "save", false, "write frameworks/<name>/results/<test>-<conns>.json")
	fs.StringVar(&c.Compare, "compare", "", "show deltas against this entry instead of each entry's committed results")
	fs.StringVar(&c.Root, "root", envOr(getenv, "ARENA_REPO_DIR", "."), "the arena repository (env ARENA_REPO_DIR)")
	fs.StringVar(&c.CacheDir, "cache-dir", defaultCacheDir(getenv), "where the generated arena data is kept (env ARENA_CACHE_DIR)")
	fs.StringVar(&c.ServerCPUs, "server-cpus", getenv("ARENA_SERVER_CPUS"), "cpuset of the servers (env ARENA_SERVER_CPUS; default: lower half of the CPUs)")
	fs.StringVar(&c.LoadgenCPUs, "loadgen-cpus", getenv("ARENA_LOADGEN_CPUS"), "cpuset of the load tools (env ARENA_LOADGEN_CPUS; default: upper half)")
	fs.IntVar(&c.Threads, "threads", 0, "load-tool threads (default: one per load-generator CPU)")
	fs.StringArrayVar(&buildArgs, "build-arg", splitList(getenv("ARENA_BUILD_ARGS")), "KEY=VALUE passed to every entry build (env ARENA_BUILD_ARGS, comma separated)")
	fs.DurationVar(&c.ReadyTimeout, "ready-timeout", 30*time.Second, "how long a server may take to answer its readiness probe")
	fs.BoolVarP(&c.Verbose, "verbose", "v", false, "log every step")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return c, errReported
		}
		return c, fmt.Errorf("bench: %w; run 'arenabot bench --help' for the flags", err)
	}
	c.Frameworks = fs.Args()
	if len(c.Frameworks) == 0 {
		return c, fmt.Errorf("bench: no framework given; name one or more entries of frameworks/ (for example: arenabot bench nethttp -t baseline)")
	}
	if c.Runs < 1 {
		return c, fmt.Errorf("bench: --runs %d: need at least one run", c.Runs)
	}
	if c.Duration < 0 || (c.Duration > 0 && c.Duration < time.Second) {
		return c, fmt.Errorf("bench: --duration %s: give at least 1s (wrk measures in whole seconds)", c.Duration)
	}
	c.BuildArgs = map[string]string{}
	for _, kv := range buildArgs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return c, fmt.Errorf("bench: --build-arg %q: want KEY=VALUE", kv)
		}
		c.BuildArgs[k] = v
	}
	return c, nil
}

func bench(ctx context.Context, c benchConfig, stdout, stderr io.Writer) error {
	level := slog.LevelWarn
	if c.Verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	root := filepath.Join(c.Root, "frameworks")

	plan, err := runner.NewPlan(root, c.Frameworks, c.Tests, c.Lite)
	if err != nil {
		return err
	}
	if c.Compare != "" {
		if _, err := frameworks.Load(root, c.Compare, profile.Names()); err != nil && errors.Is(err, frameworks.ErrUnknownEntry) {
			return fmt.Errorf("--compare: %w", err)
		}
	}
	eng, err := docker.New(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	dataDir, err := arenadata.Ensure(c.CacheDir)
	if err != nil {
		return fmt.Errorf("arena data: %w", err)
	}
	host, _ := os.Hostname()
	bar := newProgress(stderr)
	b := runner.New(eng, runner.Config{
		Root:         c.Root,
		DataDir:      dataDir,
		Lite:         c.Lite,
		Runs:         c.Runs,
		Duration:     c.Duration,
		ServerCPUs:   c.ServerCPUs,
		LoadgenCPUs:  c.LoadgenCPUs,
		Threads:      c.Threads,
		BuildArgs:    c.BuildArgs,
		ReadyTimeout: c.ReadyTimeout,
		Commit:       runner.GitCommit(ctx, c.Root),
		Host:         host,
		Log:          log,
		Progress:     bar,
	})
	if err := b.Prepare(ctx, plan); err != nil {
		return err
	}
	rows, err := b.Measure(ctx, plan)
	bar.Finish()
	if err != nil {
		return err
	}

	var measured []report.Measured
	var failures []runner.Row
	for _, r := range rows {
		m := report.Measured{Entry: r.Entry.Name, Display: r.Entry.Meta.DisplayName, Profile: r.Profile.Name, Conns: r.Conns, Result: r.Result, WebSocket: r.Profile.WebSocket}
		if r.Err != nil {
			m.Err = r.Err.Error()
			failures = append(failures, r)
		}
		measured = append(measured, m)
	}
	baseline := report.Baseline{Compare: c.Compare, Source: "the working tree (" + root + "/<name>/results)", Committed: committed(root)}
	fmt.Fprint(stdout, report.Render(report.Reply{
		Title:    "Benchmark Results",
		Header:   header(plan, b.Config()),
		Tables:   report.Tables(measured, baseline),
		Baseline: baseline,
	}))

	if c.Save {
		for _, r := range rows {
			if r.Result == nil {
				continue
			}
			path, err := result.Write(r.Entry.Dir, *r.Result)
			if err != nil {
				return fmt.Errorf("save: %w", err)
			}
			fmt.Fprintln(stderr, "saved", path)
		}
	}
	if len(failures) > 0 {
		for _, f := range failures {
			fmt.Fprintf(stderr, "arenabot: %s %s %dc: %v\n", f.Entry.Name, f.Profile.Name, f.Conns, f.Err)
			if bf, ok := errors.AsType[*runner.BuildFailure](f.Err); ok {
				fmt.Fprintln(stderr, "build log tail:")
				for _, l := range bf.Tail() {
					fmt.Fprintln(stderr, "  "+l)
				}
				break
			}
		}
		return fmt.Errorf("%d of %d measurements failed%s; %w", len(failures), len(rows), unsavedNote(c.Save), errReported)
	}
	return nil
}

func unsavedNote(save bool) string {
	if save {
		return " (their results were not saved)"
	}
	return ""
}

func header(plan runner.Plan, cfg runner.Config) []string {
	var names, tests []string
	seen := map[string]bool{}
	for _, t := range plan.Targets {
		names = append(names, "`"+t.Entry.Name+"`")
		for _, p := range t.Profiles {
			if !seen[p.Name] {
				seen[p.Name] = true
				tests = append(tests, p.Name)
			}
		}
	}
	mode := fmt.Sprintf("server CPUs %s, load CPUs %s", orNone(cfg.ServerCPUs), orNone(cfg.LoadgenCPUs))
	if cfg.Lite {
		mode = "lite (no pinning, load tools in Docker)"
	}
	commit := cfg.Commit
	if len(commit) > 12 {
		commit = commit[:12]
	}
	return []string{
		fmt.Sprintf("**Frameworks:** %s | **Tests:** %s", strings.Join(names, ", "), strings.Join(tests, ", ")),
		fmt.Sprintf("**Commit:** `%s` | **Host:** %s | **Mode:** %s | **Runs:** %d, best reported", orNone(commit), orNone(cfg.Host), mode, cfg.Runs),
	}
}

// committed reads an entry's committed result files; an entry that does not subscribe to a
// profile does not run it.
func committed(root string) func(entry, profile string, conns int) (*result.Result, bool) {
	return func(entry, test string, conns int) (*result.Result, bool) {
		e, err := frameworks.Load(root, entry, profile.Names())
		if err != nil {
			return nil, false
		}
		if !e.Subscribes(test) {
			return nil, false
		}
		r, err := result.Read(e.Dir, test, conns)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				slog.Warn("unreadable committed result", "framework", entry, "test", test, "err", err)
			}
			return nil, true
		}
		return &r, true
	}
}

func orNone(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

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
