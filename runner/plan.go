package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/runner/profile"
)

// A Target is one entry and the profiles selected for it, in profile order.
type Target struct {
	Entry    frameworks.Entry
	Profiles []profile.Profile
	// Skipped are subscribed profiles that were not selected because the harness cannot run
	// them yet, each with the reason.
	Skipped []string
}

// A Plan is what one bench or job measures.
type Plan struct {
	Targets []Target
	Lite    bool
}

// Rows is the number of measurements (entry × profile × connection count) in the plan.
func (p Plan) Rows() int {
	n := 0
	for _, t := range p.Targets {
		for _, pr := range t.Profiles {
			n += len(pr.ConnCounts(p.Lite))
		}
	}
	return n
}

// ErrInput is wrapped by every error that is the user's to fix (an unknown framework or
// test, a test the entry does not subscribe to, a bad meta.json).
var ErrInput = errors.New("bad input")

// NewPlan resolves framework names and test names against the entries under root (the
// frameworks directory). With no tests, every runnable profile an entry subscribes to is
// selected. Errors name the problem and the fix.
func NewPlan(root string, names, tests []string, lite bool) (Plan, error) {
	if len(names) == 0 {
		return Plan{}, fmt.Errorf("%w: no framework given; name one or more entries of %s/ (for example: arenabot bench nethttp)", ErrInput, root)
	}
	var selected []profile.Profile
	for _, t := range tests {
		p, ok := profile.Lookup(t)
		if !ok {
			return Plan{}, fmt.Errorf("%w: unknown test %q%s; the tests are: %s", ErrInput, t, didYouMean(frameworks.Closest(t, profile.Names(), 3)), strings.Join(profile.Names(), ", "))
		}
		if !p.Runnable() {
			return Plan{}, fmt.Errorf("%w: test %q cannot be run by this harness yet (%s); pick one of: %s", ErrInput, t, p.Unsupported, strings.Join(runnableNames(), ", "))
		}
		if lite && len(p.LiteConns) == 0 {
			return Plan{}, fmt.Errorf("%w: test %q has no --lite variant (the arena runs it only on the benchmark host); drop --lite or pick another test", ErrInput, t)
		}
		if !slices.ContainsFunc(selected, func(q profile.Profile) bool { return q.Name == p.Name }) {
			selected = append(selected, p)
		}
	}
	slices.SortFunc(selected, func(a, b profile.Profile) int { return profile.Index(a.Name) - profile.Index(b.Name) })

	plan := Plan{Lite: lite}
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		e, err := frameworks.Load(root, name, profile.Names())
		if err != nil {
			return Plan{}, fmt.Errorf("%w: %w", ErrInput, err)
		}
		t := Target{Entry: e}
		if len(selected) > 0 {
			for _, p := range selected {
				if !e.Subscribes(p.Name) {
					return Plan{}, fmt.Errorf("%w: %s does not subscribe to %q (its meta.json tests are %s); add it to the tests of %s/%s/meta.json or pick one of those", ErrInput, name, p.Name, strings.Join(e.Meta.Tests, ", "), root, name)
				}
			}
			t.Profiles = selected
		} else {
			for _, p := range profile.All {
				switch {
				case !e.Subscribes(p.Name):
				case !p.Runnable():
					t.Skipped = append(t.Skipped, fmt.Sprintf("%s: %s", p.Name, p.Unsupported))
				case lite && len(p.LiteConns) == 0:
					t.Skipped = append(t.Skipped, fmt.Sprintf("%s: no --lite variant", p.Name))
				default:
					t.Profiles = append(t.Profiles, p)
				}
			}
			if len(t.Profiles) == 0 {
				return Plan{}, fmt.Errorf("%w: %s subscribes to no test this harness can run (%s); add one of %s to its meta.json tests", ErrInput, name, strings.Join(e.Meta.Tests, ", "), strings.Join(runnableNames(), ", "))
			}
		}
		plan.Targets = append(plan.Targets, t)
	}
	return plan, nil
}

func runnableNames() []string {
	var out []string
	for _, p := range profile.All {
		if p.Runnable() {
			out = append(out, p.Name)
		}
	}
	return out
}

func didYouMean(c []string) string {
	if len(c) == 0 {
		return ""
	}
	return " (did you mean " + strings.Join(c, " or ") + "?)"
}

// ValidationTests resolves what `arenabot validate` checks for one entry: the named tests
// (each must be known and subscribed), or every test the entry subscribes to. Unlike
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
		return e, out, nil
	}
	var out []string
	for _, t := range tests {
		if _, ok := profile.Lookup(t); !ok {
			return e, nil, fmt.Errorf("%w: unknown test %q%s; the tests are: %s", ErrInput, t, didYouMean(frameworks.Closest(t, profile.Names(), 3)), strings.Join(profile.Names(), ", "))
		}
		if !e.Subscribes(t) {
			return e, nil, fmt.Errorf("%w: %s does not subscribe to %q (its meta.json tests are %s); add it to the tests of %s/%s/meta.json or pick one of those", ErrInput, name, t, strings.Join(e.Meta.Tests, ", "), root, name)
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return profile.Index(a) - profile.Index(b) })
	return e, out, nil
}
