package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/profile/selection"
	"github.com/arenabot/arenabot/text"
)

// A SweepPlan is a sweep of the arena at a pull request's head: what `arenabot sweep` queues.
type SweepPlan struct {
	SHA        string        // the pull request's head commit, the one measured
	Frameworks []string      // the entries measured, by name
	Rows       []profile.Row // every enabled entry × every test it subscribes to that can run
	Skipped    []string      // entries left out because they do not load, one line each
}

// PlanSweep fetches pull request pr and the base branch into the clone repoDir from remote,
// and lays out a sweep of the pull request's head: every enabled entry (of names, when given)
// on every test it subscribes to that can run in the mode (of tests, when given).
func PlanSweep(ctx context.Context, repoDir, remote, baseRef string, pr int, names, tests []string, lite bool) (SweepPlan, error) {
	r := repo{dir: repoDir, remote: remote}
	if err := r.fetch(ctx, pr, baseRef); err != nil {
		return SweepPlan{}, err
	}
	sha, err := r.resolve(ctx, refPR+strconv.Itoa(pr))
	if err != nil {
		return SweepPlan{}, fmt.Errorf("the head of pull request %d: %w", pr, err)
	}
	dir, err := os.MkdirTemp("", "arenabot-sweep-")
	if err != nil {
		return SweepPlan{}, err
	}
	defer os.RemoveAll(dir)
	co, err := r.checkout(ctx, pr, sha, baseRef, filepath.Join(dir, "src"))
	if err != nil {
		return SweepPlan{}, err
	}
	p, err := SweepRows(filepath.Join(co.Root, "frameworks"), names, tests, lite)
	p.SHA = sha
	return p, err
}

// SweepRows lays out a sweep of the entries under root (the frameworks directory): every
// enabled entry (of names, when given: each must load) on every test it subscribes to that
// can run in the mode (of tests, when given: each must be a profile that can). Errors wrap
// ErrInput and name the fix.
func SweepRows(root string, names, tests []string, lite bool) (SweepPlan, error) {
	var p SweepPlan
	for _, t := range tests {
		if why, bad := selection.CheckTest(t, lite); bad {
			return p, reasonErr(why)
		}
	}
	var entries []frameworks.Entry
	if len(names) > 0 {
		for _, name := range names {
			e, err := frameworks.Load(root, name, profile.Names())
			if err != nil {
				return p, fmt.Errorf("%w: %w", ErrInput, err)
			}
			entries = append(entries, e)
		}
	} else {
		all, err := frameworks.LoadAll(root, profile.Names())
		if err != nil {
			var multi interface{ Unwrap() []error }
			if !errors.As(err, &multi) {
				return p, err
			}
			for _, e := range multi.Unwrap() {
				p.Skipped = append(p.Skipped, text.OneLine(e.Error()))
			}
		}
		entries = all
	}
	for _, e := range entries {
		if !e.Meta.Enabled {
			continue
		}
		rows := selection.Select(selection.Request{Entries: []frameworks.Entry{e}, Tests: tests, Lite: lite}).Rows
		if len(rows) > 0 {
			p.Frameworks = append(p.Frameworks, e.Name)
			p.Rows = append(p.Rows, rows...)
		}
	}
	if len(p.Rows) == 0 {
		what := "any test it subscribes to"
		if len(tests) > 0 {
			what = strings.Join(tests, ", ")
		}
		return p, fmt.Errorf("%w: no enabled entry runs %s; name enabled entries with -f and tests they subscribe to with -t, or leave both out", ErrInput, what)
	}
	return p, nil
}
