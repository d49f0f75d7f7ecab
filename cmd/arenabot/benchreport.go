package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/measure"
)

func unsavedNote(save bool) string {
	if save {
		return " (their results were not saved)"
	}
	return ""
}

// header is the two lines above bench's tables: what was measured, where and how.
func header(plan measure.Plan, cfg measure.Config) []string {
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
	mode := cfg.Mode()
	commit := cfg.Commit
	if len(commit) > 12 {
		commit = commit[:12]
	}
	runs := fmt.Sprintf("%d, best reported", cfg.Runs)
	if slices.ContainsFunc(plan.Targets, func(t measure.Target) bool { return t.Base != nil }) {
		r := cfg.Rule
		span := fmt.Sprintf("%d–%d", r.MinRuns, r.MaxRuns)
		if r.MinRuns == r.MaxRuns {
			span = fmt.Sprint(r.MinRuns)
		}
		runs = fmt.Sprintf("%s a side against the base, interleaved, until the Δ interval is under ±%g%%; %d for rows without one; the best reported", span, r.Target*100, cfg.Runs)
	}
	return []string{
		fmt.Sprintf("**Frameworks:** %s | **Tests:** %s", strings.Join(names, ", "), strings.Join(tests, ", ")),
		fmt.Sprintf("**Commit:** `%s` | **Host:** %s | **Mode:** %s | **Runs:** %s", orNone(commit), orNone(cfg.Host), mode, runs),
	}
}

// committed reads an entry's committed result files; an entry that does not subscribe to a
// profile does not run it.
func committed(root string) func(entry, profile string, conns int) (*result.Result, bool) {
	loaded := map[string]*frameworks.Entry{} // each entry's meta.json is read once, not per row
	return func(entry, test string, conns int) (*result.Result, bool) {
		e, ok := loaded[entry]
		if !ok {
			if got, err := frameworks.Load(root, entry, profile.Names()); err == nil {
				e = &got
			}
			loaded[entry] = e
		}
		if e == nil {
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

// scored reads every entry's committed results of a profile in the working tree (every
// connection count): what a fixed-rate row's score is measured against.
func scored(root string) func(profile string) []*result.Result {
	return func(test string) []*result.Result {
		names, _ := filepath.Glob(filepath.Join(root, "*", result.Dir, test+"-*.json"))
		var out []*result.Result
		for _, name := range names {
			b, err := os.ReadFile(name)
			if err != nil {
				continue
			}
			if r, err := result.Unmarshal(b); err == nil && r.Profile == test {
				out = append(out, &r)
			}
		}
		return out
	}
}

// orNone is s, or a dash for a value a header has not got.
func orNone(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
