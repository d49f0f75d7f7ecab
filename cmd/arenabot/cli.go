package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/runner/loadgen"
)

// helpShown is what a command's parser returns for --help or -h: its usage, which run
// prints on stdout, and the command succeeds.
type helpShown struct{ usage string }

func (h *helpShown) Error() string { return "help requested" }

// usageError is a command line a parser refused (an unknown flag, a bad value): the error
// and the command's usage go to stderr and arenabot exits 2.
type usageError struct {
	err   error
	usage string
}

func (u *usageError) Error() string { return u.err.Error() }
func (u *usageError) Unwrap() error { return u.err }

// parseFlags parses args with fs, keeping what pflag prints (the usage) for run to put on
// stdout (--help) or stderr (a refused flag).
func parseFlags(fs *pflag.FlagSet, args []string) error {
	var out bytes.Buffer
	fs.SetOutput(&out)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return &helpShown{usage: out.String()}
	case err != nil:
		out.Reset()
		fs.Usage() // pflag prints nothing itself when it continues on an error
		return &usageError{err: fmt.Errorf("%s: %w; run 'arenabot %s --help' for the flags", fs.Name(), err, fs.Name()), usage: out.String()}
	}
	return nil
}

// exitCode is the process's exit status for what run returned: 0, 2 for a refused command
// line, 1 for anything else.
func exitCode(err error) int {
	var u *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &u):
		return 2
	}
	return 1
}

// reportParse prints what a parser's error asks for and returns run's result: nil after a
// help text, the error otherwise.
func reportParse(err error, stdout, stderr io.Writer) error {
	var h *helpShown
	var u *usageError
	switch {
	case errors.As(err, &h):
		fmt.Fprint(stdout, h.usage)
		return nil
	case errors.As(err, &u):
		fmt.Fprint(stderr, u.usage)
	}
	return err
}

// version prints the module's version, the VCS revision it was built from and the load
// tools it is pinned to.
func version(w io.Writer) {
	v, rev, modified := "(devel)", "unknown", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if modified {
		rev += " (modified)"
	}
	fmt.Fprintf(w, "arenabot %s\nrevision %s\n", v, rev)
	for _, t := range loadgen.All() {
		fmt.Fprintf(w, "%s %s\n", t.Name, t.PinnedVersion)
	}
}
