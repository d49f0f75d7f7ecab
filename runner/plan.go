package runner

import (
	"errors"
	"fmt"
	"slices"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/profile/selection"
	"github.com/arenabot/arenabot/runner/measure"
	"github.com/arenabot/arenabot/validate"
)

// ErrInput is wrapped by every error that is the user's to fix (an unknown framework or
// test, a test the entry does not subscribe to, a bad meta.json).
var ErrInput = errors.New("bad input")

// NewPlan resolves framework names and test names against the entries under root (the
// frameworks directory), with selection.Select: with no tests, every runnable profile an
// entry subscribes to is selected. Errors name the problem and the fix.
func NewPlan(root string, names, tests []string, lite bool) (measure.Plan, error) {
	if len(names) == 0 {
		return measure.Plan{}, fmt.Errorf("%w: no framework given; name one or more entries of %s/ (for example: arenabot bench nethttp)", ErrInput, root)
	}
	var entries []frameworks.Entry
	for _, name := range names {
		if slices.ContainsFunc(entries, func(e frameworks.Entry) bool { return e.Name == name }) {
			continue
		}
		e, err := frameworks.Load(root, name, profile.Names())
		if err != nil {
			return measure.Plan{}, fmt.Errorf("%w: %w", ErrInput, err)
		}
		entries = append(entries, e)
	}
	sel := selection.Select(selection.Request{Entries: entries, Tests: tests, Lite: lite})
	if r, bad := sel.Named(); bad {
		return measure.Plan{}, reasonErr(r)
	}
	return planRows(entries, sel.Rows, sel.Reasons, lite), nil
}

// reasonErr is the error of a pair the selection leaves out.
func reasonErr(r selection.Reason) error {
	return fmt.Errorf("%w: %s", ErrInput, r)
}

// planRows lays out rows as a plan over entries (rows of other entries are left out):
// entries in the order of their first row, profiles in the order of theirs, each profile's
// ConnCounts(lite) set to its rows' counts. The reasons that are only notes (selection's
// Named false) become the targets' Skipped.
func planRows(entries []frameworks.Entry, rows []profile.Row, reasons []selection.Reason, lite bool) measure.Plan {
	plan := measure.Plan{Lite: lite}
	at := map[string]int{} // entry → index in plan.Targets
	for _, r := range rows {
		i, ok := at[r.Entry]
		if !ok {
			k := slices.IndexFunc(entries, func(e frameworks.Entry) bool { return e.Name == r.Entry })
			if k < 0 {
				continue
			}
			i = len(plan.Targets)
			at[r.Entry] = i
			plan.Targets = append(plan.Targets, measure.Target{Entry: entries[k]})
		}
		t := &plan.Targets[i]
		k := slices.IndexFunc(t.Profiles, func(p profile.Profile) bool { return p.Name == r.Test })
		if k < 0 {
			p, ok := profile.Lookup(r.Test)
			if !ok {
				continue
			}
			p.Conns, p.LiteConns = setCounts(p, lite, nil)
			t.Profiles = append(t.Profiles, p)
			k = len(t.Profiles) - 1
		}
		p := &t.Profiles[k]
		if c := p.ConnCounts(lite); !slices.Contains(c, r.Conns) {
			p.Conns, p.LiteConns = setCounts(*p, lite, append(c, r.Conns))
		}
	}
	for _, r := range reasons {
		if i, ok := at[r.Entry]; ok && !r.Named && r.Test != "" {
			plan.Targets[i].Skipped = append(plan.Targets[i].Skipped, fmt.Sprintf("%s (%s)", r.Test, r.Problem(selection.Plain)))
		}
	}
	return plan
}

// setCounts returns p's Conns and LiteConns with the mode's replaced by counts.
func setCounts(p profile.Profile, lite bool, counts []int) (conns, liteConns []int) {
	if lite {
		return p.Conns, counts
	}
	return counts, p.LiteConns
}

// ValidationTests resolves what `arenabot validate` checks for one entry: the named tests
// (each must be known and subscribed; validate.TLSCheck names the section meta.json's
// tls_check opts into), or every test the entry subscribes to, and that section when it opts
// into it. Unlike
// NewPlan it keeps tests the harness cannot run yet, which validate reports as skipped.
func ValidationTests(root, name string, tests []string) (frameworks.Entry, []string, error) {
	e, err := frameworks.Load(root, name, profile.Names())
	if err != nil {
		return e, nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	if len(tests) == 0 {
		var out []string
		for _, p := range profile.All {
			if e.Subscribes(p.Name) {
				out = append(out, p.Name)
			}
		}
		if e.Meta.TLSCheck {
			out = append(out, validate.TLSCheck)
		}
		return e, out, nil
	}
	var out []string
	for _, t := range tests {
		if t == validate.TLSCheck { // not a profile: the section meta.json's tls_check opts into
			if !e.Meta.TLSCheck {
				return e, nil, fmt.Errorf("%w: %s does not opt into the %s checks; set \"tls_check\": true in its meta.json (%s) or leave %s out of -t",
					ErrInput, e.Name, validate.TLSCheck, validate.MetaDoc, validate.TLSCheck)
			}
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
			continue
		}
		// A test the harness cannot run yet is validated all the same: validate reports it
		// as skipped.
		if r, bad := selection.Check(e, t); bad && r.Cause != selection.Unsupported {
			return e, nil, reasonErr(r)
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return profile.Index(a) - profile.Index(b) })
	return e, out, nil
}
