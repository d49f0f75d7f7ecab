package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/runner"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/measure"
	"github.com/arenabot/arenabot/validate"
)

type validateConfig struct {
	hostConfig
	Framework string
	Tests     []string
	Strict    bool
}

func parseValidate(args []string, getenv func(string) string, stderr io.Writer) (validateConfig, error) {
	fs := pflag.NewFlagSet("validate", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: arenabot validate <framework> [-t test,...] [--strict] [flags]\n\nBuilds and starts the entry as the runner does and checks that it implements the\ncontract of every test it subscribes to (or the ones named): PASS, FAIL (a required\ncheck: the test is not measured), WARN (an advisory check: reported, not gating) or\nSKIP. Every check and its tier is listed in docs/profiles.md. An entry whose meta.json\nsets tls_check is also checked on :9000 (docs/meta-json.md); -t tls_check checks that alone.\n\nflags:")
		fs.PrintDefaults()
	}
	var c validateConfig
	fs.StringSliceVarP(&c.Tests, "test", "t", nil, "tests to check, comma separated, tls_check among them (default: every test the entry subscribes to, and tls_check when its meta.json sets it)")
	fs.BoolVar(&c.Strict, "strict", false, "treat advisory checks (RFC conformance and good practice beyond the arena's contract) as required: a WARN becomes a FAIL")
	c.hostConfig.flags(fs, getenv)
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	switch fs.NArg() {
	case 1:
		c.Framework = fs.Arg(0)
	case 0:
		return c, fmt.Errorf("validate: no framework given; name one entry of frameworks/ (for example: arenabot validate nethttp)")
	default:
		return c, fmt.Errorf("validate: one framework at a time, got %d (%v); run it once per entry", fs.NArg(), fs.Args())
	}
	return c, c.hostConfig.finish("validate")
}

// validateEntry prints one line per check, the advisory line when advisory checks missed,
// and the summary line; any failure is an error (with --strict, an advisory miss too).
func validateEntry(ctx context.Context, c validateConfig, stdout, stderr io.Writer) error {
	entry, tests, err := runner.ValidationTests(c.frameworksDir(), c.Framework, c.Tests)
	if err != nil {
		return err
	}
	eng, dataDir, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	cfg := c.runnerConfig(ctx, dataDir)
	cfg.Log = c.logger(stderr)
	cfg.Progress = newProgress(stderr)
	b := measure.New(eng, cfg)
	b.Prebuild(ctx, measure.Plan{Targets: []measure.Target{{Entry: entry}}})
	unlock, err := claimHost(ctx, stderr)
	if err != nil {
		return err
	}
	defer unlock()
	outcomes, err := b.Validate(ctx, entry, tests)
	if err != nil {
		if bf, ok := errors.AsType[*build.BuildFailure](err); ok {
			fmt.Fprintln(stderr, "build log tail:")
			for _, l := range bf.Tail() {
				fmt.Fprintln(stderr, "  "+l)
			}
		}
		return err
	}
	if c.Strict {
		outcomes = validate.Strict(outcomes)
	}
	for _, o := range outcomes {
		fmt.Fprintln(stdout, o.String())
	}
	if line := validate.AdvisoryLine(outcomes); line != "" {
		fmt.Fprintln(stdout, line)
	}
	_, failed, _, line := validate.Summary(outcomes)
	fmt.Fprintln(stdout, line)
	if failed > 0 {
		return fmt.Errorf("%s fails %d check(s); %w", c.Framework, failed, errReported)
	}
	return nil
}
