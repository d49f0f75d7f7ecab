// Command arenabot benchmarks HTTP framework entries: locally (bench, validate), as a GitHub
// webhook service (serve) and as the runner on the benchmark host (work).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errReported) {
			fmt.Fprintln(os.Stderr, "arenabot:", err)
		}
		os.Exit(exitCode(err))
	}
}

// errReported is returned by a subcommand that has already told the user what went wrong.
var errReported = errors.New("reported")

const usage = `usage: arenabot <command> [flags]

commands:
  bench <framework>... [-t test,...] [--lite] [--runs N] [--duration D] [--save] [--compare X | --against REF]
        build, measure and print the results tables
  build <framework>...
        build the entries' images as bench does, without measuring
  validate <framework> [-t test,...]
        build and start the entry, check every contract it subscribes to
  serve [--runner]
        the webhook service (needs ARENA_WEBHOOK_SECRET and GitHub credentials);
        --runner also runs the runner in the same process (single machine)
  work
        the runner on the benchmark host (needs ARENA_REDIS_URL, Docker, ARENA_REPO_DIR)
  doctor [--runner] [--bot]
        check this host for what work and serve need: ok, warn or FAIL per check, with the fix
  queue status | list | cancel <job-id> | drain <pool>
        inspect and manage the job queue (needs ARENA_REDIS_URL)
  sweep --pr N [-f framework,...] [-t test,...]
        queue a sweep of every enabled entry at the PR's head, spread over the pool's hosts
        (needs ARENA_REDIS_URL); the bot commits the results to the PR's branch
  site [--root DIR] [--out DIR]
        rebuild the leaderboard files (site/data) from every entry's results

  version
        the module's version, the revision it was built from, the pinned load tools

run 'arenabot <command> --help' for a command's flags.
`

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return &usageError{err: fmt.Errorf("no command given; see the usage above")}
	}
	switch args[0] {
	case "bench":
		cfg, err := parseBench(args[1:], getenv, stderr)
		if err != nil {
			return reportParse(err, stdout, stderr)
		}
		return bench(ctx, cfg, stdout, stderr)
	case "build":
		cfg, err := parseBuild(args[1:], getenv, stderr)
		if err != nil {
			return reportParse(err, stdout, stderr)
		}
		return buildEntries(ctx, cfg, stdout, stderr)
	case "validate":
		cfg, err := parseValidate(args[1:], getenv, stderr)
		if err != nil {
			return reportParse(err, stdout, stderr)
		}
		return validateEntry(ctx, cfg, stdout, stderr)
	case "serve":
		cfg, err := parseServe(args[1:], getenv, stderr)
		if err != nil {
			return reportParse(err, stdout, stderr)
		}
		return serve(ctx, cfg, stderr)
	case "work":
		cfg, err := parseWork(args[1:], getenv, stderr)
		if err != nil {
			return reportParse(err, stdout, stderr)
		}
		return work(ctx, cfg, stderr)
	case "doctor":
		cfg, err := parseDoctor(args[1:], getenv, stderr)
		if err != nil {
			return reportParse(err, stdout, stderr)
		}
		return doctorCommand(ctx, cfg, getenv, stdout)
	case "queue":
		cfg, err := parseQueue(args[1:], getenv, stderr)
		if err != nil {
			return reportParse(err, stdout, stderr)
		}
		return queueCommand(ctx, cfg, stdout)
	case "sweep":
		cfg, err := parseSweep(args[1:], getenv, stderr)
		if err != nil {
			return reportParse(err, stdout, stderr)
		}
		return sweepCommand(ctx, cfg, stdout)
	case "site":
		cfg, err := parseSite(args[1:], getenv, stderr)
		if err != nil {
			return reportParse(err, stdout, stderr)
		}
		return siteCommand(cfg, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	case "version", "--version":
		version(stdout)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return &usageError{err: fmt.Errorf("unknown command %q; see the usage above", args[0])}
	}
}
