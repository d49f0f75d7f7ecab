package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/measure"
	"github.com/arenabot/arenabot/text"
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
		fmt.Sprintf("**Commit:** `%s` | **Host:** %s | **Mode:** %s | **Runs:** %s", text.Or(commit, "—"), text.Or(cfg.Host, "—"), mode, runs),
	}
}

// committed reads an entry's committed results in the working tree under repoRoot: its rows
// in its display name's results file (site/data/results/<slug>.json; for a --lite run the
// lite file's first), then the April layout's (frameworks/<name>/results/), the first found
// of a profile and connection count winning. An entry that does not subscribe to a profile
// does not run it.
func committed(repoRoot, fwDir string, lite bool) func(entry, profile string, conns int) (*result.Result, bool) {
	type known struct {
		e    frameworks.Entry
		rows []result.Result
	}
	loaded := map[string]*known{} // each entry is read once, not per row
	return func(entry, test string, conns int) (*result.Result, bool) {
		k, ok := loaded[entry]
		if !ok {
			if e, err := frameworks.Load(fwDir, entry, profile.Names()); err == nil {
				k = &known{e: e, rows: committedRows(repoRoot, e, lite)}
			}
			loaded[entry] = k
		}
		if k == nil || !k.e.Subscribes(test) {
			return nil, false
		}
		for i, r := range k.rows {
			if r.Profile == test && r.Connections == conns {
				return &k.rows[i], true
			}
		}
		return nil, true
	}
}

// committedRows are entry e's committed rows in the working tree, in the order committed
// looks them up.
func committedRows(repoRoot string, e frameworks.Entry, lite bool) []result.Result {
	var rows []result.Result
	for _, l := range []bool{true, false} {
		if l && !lite {
			continue
		}
		f, found, err := result.ReadSite(repoRoot, e.Meta.DisplayName, l)
		var rs []result.Result
		if err == nil && found {
			rs, err = f.EntryRows(e.Name)
		}
		if err != nil {
			slog.Warn("unreadable committed results", "framework", e.Name, "err", err)
		}
		rows = result.Prefer(rows, rs)
	}
	old, err := result.ReadAll(e.Dir)
	if err != nil {
		slog.Warn("unreadable committed results", "framework", e.Name, "err", err)
	}
	return result.Prefer(rows, old)
}

// scored reads every entry's committed results of a profile in the working tree (every
// connection count): today's results files (not the lite ones) and the April layout's
// files, which count only where today's has no row of that entry and connection count. What
// a fixed-rate row's score is measured against.
func scored(repoRoot, fwDir string) func(profile string) []*result.Result {
	return func(test string) []*result.Result {
		var out []*result.Result
		seen := map[string]bool{}
		sites, _ := filepath.Glob(filepath.Join(repoRoot, filepath.FromSlash(result.SiteResultsDir), "*.json"))
		for _, name := range sites {
			b, err := os.ReadFile(name)
			if err != nil {
				continue
			}
			f, err := result.DecodeSite(b)
			if err != nil {
				continue
			}
			rows, _ := f.Rows()
			for i := range rows {
				if r := &rows[i]; r.Profile == test {
					seen[text.Or(r.Entry, r.Framework)+" "+result.Key(r.Profile, r.Connections)] = true
					out = append(out, r)
				}
			}
		}
		names, _ := filepath.Glob(filepath.Join(fwDir, "*", result.Dir, test+"-*.json"))
		for _, name := range names {
			b, err := os.ReadFile(name)
			if err != nil {
				continue
			}
			entry := filepath.Base(filepath.Dir(filepath.Dir(name)))
			if r, err := result.Unmarshal(b); err == nil && r.Profile == test && !seen[entry+" "+result.Key(r.Profile, r.Connections)] {
				out = append(out, &r)
			}
		}
		return out
	}
}
