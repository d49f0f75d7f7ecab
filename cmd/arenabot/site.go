package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/runner/site"
)

type siteConfig struct {
	Root string
	Out  string
}

const siteUsage = "usage: arenabot site [--root DIR] [--out DIR]"

func parseSite(args []string, getenv func(string) string, stderr io.Writer) (siteConfig, error) {
	fs := pflag.NewFlagSet("site", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), siteUsage+"\n\nRebuilds the aggregated leaderboard files (<profile>-<conns>.json, frameworks.json)\nfrom every entry's committed results. Files it no longer produces are left alone.\n\nflags:")
		fs.PrintDefaults()
	}
	var c siteConfig
	fs.StringVar(&c.Root, "root", envOr(getenv, "ARENA_REPO_DIR", "."), "the arena repository (env ARENA_REPO_DIR)")
	fs.StringVar(&c.Out, "out", "", "where the files are written (default <root>/site/data)")
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("site: unexpected argument %q; %s", fs.Arg(0), siteUsage)
	}
	if c.Out == "" {
		c.Out = filepath.Join(c.Root, "site", "data")
	}
	return c, nil
}

func siteCommand(c siteConfig, stdout io.Writer) error {
	files, err := site.Build(c.Root)
	if err != nil {
		return fmt.Errorf("site: %w", err)
	}
	if err := site.Write(c.Out, files); err != nil {
		return fmt.Errorf("site: %w", err)
	}
	for _, name := range site.Names(files) {
		fmt.Fprintln(stdout, filepath.Join(c.Out, name))
	}
	return nil
}
