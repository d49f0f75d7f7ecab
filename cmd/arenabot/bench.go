package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/result/site"
	"github.com/arenabot/arenabot/runner"
	"github.com/arenabot/arenabot/runner/measure"
)

type benchConfig struct {
	hostConfig
	measureFlags
	Frameworks []string
	Tests      []string
	Save       bool
	Profile    string // --profile: "" (not given), "on", "all", "none"
	Compare    string
	Against    string
}

func parseBench(args []string, getenv func(string) string, stderr io.Writer) (benchConfig, error) {
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: arenabot bench <framework>... [flags]\n\nBuilds each entry, measures the selected tests and prints one table per framework.\n\nflags:")
		fs.PrintDefaults()
	}
	var c benchConfig
	fs.StringSliceVarP(&c.Tests, "test", "t", nil, "tests to run, comma separated (default: every test the entry subscribes to)")
	c.measureFlags.flags(fs, getenv, "bench")
	fs.BoolVar(&c.Save, "save", false, "merge the results into site/data/results/<display name>.json (--lite: site/data/results/lite/) and rebuild site/data/frameworks.json")
	fs.StringVar(&c.Profile, "profile", "", "one more run of each test at its first connection count (--profile=all: of every row) while perf samples the server's CPUs: top functions under each table, and with --save the pprof profile and flame graph beside the result file")
	fs.Lookup("profile").NoOptDefVal = "on"
	fs.StringVar(&c.Compare, "compare", "", "measure each row against this entry too, interleaved run by run, for the Δ columns")
	fs.StringVar(&c.Against, "against", "", "measure each row against the same entry at this git branch, tag or commit (a worktree of it), interleaved run by run, for the Δ columns (default: Δ against the working tree's committed results)")
	c.hostConfig.flags(fs, getenv)
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	c.Frameworks = fs.Args()
	if len(c.Frameworks) == 0 {
		return c, fmt.Errorf("bench: no framework given; name one or more entries of frameworks/ (for example: arenabot bench nethttp -t baseline)")
	}
	if err := c.measureFlags.check("bench"); err != nil {
		return c, err
	}
	switch c.Profile {
	case "", "on", "all", "none":
	default:
		return c, fmt.Errorf("bench: --profile=%s: give --profile, --profile=all or --profile=none", c.Profile)
	}
	if c.Compare != "" && c.Against != "" {
		return c, fmt.Errorf("bench: --compare %s and --against %s: give one (a row has one base)", c.Compare, c.Against)
	}
	return c, c.hostConfig.finish("bench")
}

func bench(ctx context.Context, c benchConfig, stdout, stderr io.Writer) error {
	root := c.frameworksDir()
	plan, err := runner.NewPlan(root, c.Frameworks, c.Tests, c.Lite)
	if err != nil {
		return err
	}
	plan.CPUProfile = profile.CPUProfileMode(c.Profile, false)
	source := "the working tree (" + filepath.Join(c.Root, filepath.FromSlash(result.SiteResultsDir)) + ", and " + root + "/<name>/results)"
	baseline := report.Baseline{Compare: c.Compare, Source: source, Committed: committed(c.Root, root, c.Lite), Scored: scored(c.Root, root), Rule: &c.Rule}
	switch {
	case c.Compare != "":
		ce, err := frameworks.Load(root, c.Compare, profile.Names())
		if err != nil && errors.Is(err, frameworks.ErrUnknownEntry) {
			return fmt.Errorf("--compare: %w", err)
		}
		for i := range plan.Targets {
			if t := &plan.Targets[i]; t.Entry.Name != c.Compare {
				t.Base = &measure.Base{Entry: ce, Err: err}
				t.Base.Entry.Name = c.Compare
			}
		}
	case c.Against != "":
		cleanup, err := runner.Against(ctx, &plan, root, c.Against)
		if err != nil {
			return err
		}
		defer cleanup()
		baseline.Ref, baseline.AtRef = c.Against, true
		for _, t := range plan.Targets {
			if t.Base != nil {
				baseline.MergeBase = t.Base.Commit
			}
		}
	}
	if !c.Lite { // the native tools need neither Docker nor the host: check them first
		if err := measure.CheckNativeTools(ctx, plan); err != nil {
			return err
		}
	}
	eng, dataDir, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	bar := newProgress(stderr)
	cfg := c.runnerConfig(ctx, dataDir)
	c.measureFlags.apply(&cfg)
	facts := runner.HostFacts(ctx, eng)
	cfg.HostFacts = &facts
	cfg.Log, cfg.Progress = c.logger(stderr), bar
	b := measure.New(eng, cfg)
	rows, unlock, err := runner.Pipeline{Bencher: b, Hooks: runner.Hooks{Waiting: hostWaiting(stderr)}}.Run(ctx, plan)
	if unlock != nil {
		defer unlock()
	}
	bar.Finish()
	if err != nil {
		return err
	}

	var failures []result.Row
	for _, r := range rows {
		if r.Err != "" {
			failures = append(failures, r)
		}
	}
	fmt.Fprint(stdout, report.Render(report.Summary{
		Title:    "Benchmark Results",
		Header:   header(plan, b.Config()),
		Tables:   report.Tables(rows, baseline),
		Baseline: baseline,
	}))

	if c.Save {
		if err := save(c.Root, root, rows, stderr); err != nil {
			return fmt.Errorf("save: %w", err)
		}
	}
	if len(failures) > 0 {
		for _, f := range failures {
			fmt.Fprintf(stderr, "arenabot: %s %s %dc: %s\n", f.Entry, f.Profile, f.Conns, f.Err)
			if len(f.BuildLog) > 0 {
				fmt.Fprintln(stderr, "build log tail:")
				for _, l := range f.BuildLog {
					fmt.Fprintln(stderr, "  "+l)
				}
				break
			}
		}
		return fmt.Errorf("%d of %d measurements failed%s; %w", len(failures), len(rows), unsavedNote(c.Save), errReported)
	}
	return nil
}

// save writes the measured rows of a bench as the arena keeps them (site.Save), and a
// profiled row's profile and flame graph in the results directory of the entry (under
// fwDir, the frameworks directory).
func save(repoRoot, fwDir string, rows []result.Row, stderr io.Writer) error {
	var results []result.Result
	for _, r := range rows {
		if r.Result == nil {
			continue
		}
		results = append(results, *r.Result)
		if p := r.Result.CPUProfile; p != nil {
			for name, data := range map[string][]byte{p.Pprof: r.Pprof, p.Flame: r.Flame} {
				if name == "" || len(data) == 0 {
					continue
				}
				path, err := result.WriteFile(filepath.Join(fwDir, r.Entry), name, data)
				if err != nil {
					return err
				}
				fmt.Fprintln(stderr, "saved", path)
			}
		}
	}
	paths, skipped, err := site.Save(repoRoot, results)
	for _, err := range skipped {
		fmt.Fprintf(stderr, "arenabot: %s leaves it out: %v\n", result.FrameworksPath, err)
	}
	for _, p := range paths {
		fmt.Fprintln(stderr, "saved", p)
	}
	return err
}
