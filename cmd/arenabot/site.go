package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/result/site"
)

type siteConfig struct {
	Root string
	Out  string
}

const siteUsage = "usage: arenabot site [--root DIR] [--out DIR]"

func parseSite(args []string, getenv func(string) string, stderr io.Writer) (siteConfig, error) {
	fs := pflag.NewFlagSet("site", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), siteUsage+"\n\nRebuilds the site data in the arena's layout: results/<slug>.json, one file per display\nname (its rows kept, the rows of frameworks/<name>/results/ added under the keys it lacks),\nand frameworks.json from every meta.json. It deletes nothing.\n\nflags:")
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

func siteCommand(c siteConfig, stdout, stderr io.Writer) error {
	s, err := site.Build(c.Root)
	if err != nil {
		return fmt.Errorf("site: %w", err)
	}
	if err := site.Write(c.Out, s.Files); err != nil {
		return fmt.Errorf("site: %w", err)
	}
	for _, name := range site.Names(s.Files) {
		fmt.Fprintln(stdout, filepath.Join(c.Out, filepath.FromSlash(name)))
	}
	if s.Migrated > 0 {
		fmt.Fprintf(stderr, "%d rows taken from frameworks/<name>/results/ (the April layout); those files can go once the new ones are committed\n", s.Migrated)
	}
	for _, name := range s.Stale {
		fmt.Fprintf(stderr, "kept %s: its framework is no entry's display_name, so the arena's board shows it without a framework page; remove it, or give an entry that display_name again\n",
			filepath.Join(c.Root, "site", "data", filepath.FromSlash(name)))
	}
	return nil
}
