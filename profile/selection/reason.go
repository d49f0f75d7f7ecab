package selection

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/text"
)

// A Cause is why a requested pair is not measured.
type Cause string

const (
	// UnknownTest: no profile has the name.
	UnknownTest Cause = "unknown test"
	// RetiredTest: a legacy name real entries still list (frameworks.Retired); nothing runs it.
	RetiredTest Cause = "retired test"
	// NotSubscribed: the entry's meta.json does not list the test.
	NotSubscribed Cause = "not subscribed"
	// Unsupported: the harness cannot run the profile yet (profile.Profile.Unsupported).
	Unsupported Cause = "cannot run yet"
	// NoLite: the profile has no --lite connection counts, and the mode is --lite.
	NoLite Cause = "no lite variant"
	// NoTest: the entry subscribes to no test that can run (in the mode), so a request
	// naming no test has nothing to measure for it.
	NoTest Cause = "no runnable test"
	// NoEntry: with Subscribers, no enabled entry subscribes to the test.
	NoEntry Cause = "no subscriber"
)

// A Reason says why one requested pair (Entry, Test) is not measured, with what a person
// can do about it. It holds names, not prose: Problem and Fix word it, in a Style.
type Reason struct {
	Cause Cause
	Entry string // "gin"; "" when the reason is the test's alone (CheckTest, NoEntry)
	Test  string // "json-tls"; "" for NoTest
	// Named is whether the request named the test (-t): then the request is wrong (the bot
	// refuses the command, the runner fails the pair). Otherwise the test was left out of a
	// selection of every subscribed test, which is worth a note only.
	Named bool
	// Detail is the profile's own reason for Unsupported ("needs an h2 load tool").
	Detail string
	// Subscribed are the tests the entry subscribes to (NotSubscribed, NoTest), in profile
	// order.
	Subscribed []string
	// Offer are the tests to choose instead: the entry's runnable subscribed ones in the
	// mode (Offer), or, for a reason of the test alone, every runnable one (Runnable).
	Offer []string
	// Lite is whether the reason is the --lite mode's (NoLite, and NoTest in --lite).
	Lite bool
}

// A Style renders the parts of a message: Code a name, a test, a path, a flag or a
// command; Text free text from the profile table (Detail). The words around them are
// plain, valid Markdown as they are.
type Style struct {
	Code func(string) string
	Text func(string) string
}

// Plain quotes names (strconv.Quote) and leaves text as it is: for logs, errors and the
// runner's row failures.
var Plain = Style{Code: strconv.Quote, Text: func(s string) string { return s }}

// String returns the problem and the fix, in Plain, on one line.
func (r Reason) String() string {
	return r.Problem(Plain) + "; " + r.Fix(Plain)
}

// Problem says what is wrong, in one line.
func (r Reason) Problem(s Style) string {
	s = s.orPlain()
	t := s.Code(r.Test)
	switch r.Cause {
	case UnknownTest:
		return "unknown test " + t
	case RetiredTest:
		return fmt.Sprintf("test %s is retired: no framework runs it", t)
	case NotSubscribed:
		return fmt.Sprintf("%s does not subscribe to test %s (its tests: %s)", s.Code(r.Entry), t, list(s, r.Subscribed))
	case Unsupported:
		return fmt.Sprintf("test %s cannot run here yet: %s", t, s.Text(text.OneLine(r.Detail)))
	case NoLite:
		return fmt.Sprintf("test %s has no %s variant: it runs only on a benchmark host without %s", t, s.Code("--lite"), s.Code("--lite"))
	case NoTest:
		what := "this harness can run yet"
		if r.Lite {
			what = "this harness can run in " + s.Code("--lite")
		}
		return fmt.Sprintf("%s subscribes to no test %s (its tests: %s)", s.Code(r.Entry), what, list(s, r.Subscribed))
	case NoEntry:
		return fmt.Sprintf("no enabled framework subscribes to test %s", t)
	}
	return fmt.Sprintf("test %s is not measured (%s)", t, s.Text(string(r.Cause)))
}

// Fix says what to do instead, in one line: the closest tests that can run, every one of
// them, and for a test an entry does not subscribe to, subscribing it.
func (r Reason) Fix(s Style) string {
	s = s.orPlain()
	meta := s.Code("meta.json")
	switch r.Cause {
	case NoTest:
		return fmt.Sprintf("add a runnable test to its %s; the runnable tests are: %s", meta, list(s, r.Offer))
	case NoEntry:
		return fmt.Sprintf("subscribe an entry to it (add it to %s in its %s and set %s to %s)",
			s.Code("tests"), meta, s.Code("enabled"), s.Code("true"))
	}
	fix := r.choose(s)
	if r.Cause == UnknownTest || r.Cause == RetiredTest || r.Cause == NotSubscribed {
		if near := frameworks.Closest(r.Test, r.Offer, 3); len(near) > 0 {
			fix = "did you mean " + orList(s, near) + "? " + fix
		}
	}
	if r.Cause == NotSubscribed {
		fix += fmt.Sprintf(", or subscribe %s to it in its %s", s.Code(r.Entry), meta)
	}
	return fix
}

// choose offers the tests to pick instead.
func (r Reason) choose(s Style) string {
	switch {
	case r.Entry == "":
		return "choose a runnable test: " + list(s, r.Offer)
	case len(r.Offer) == 0:
		return fmt.Sprintf("%s subscribes to no test this harness can run yet: add one to its %s", s.Code(r.Entry), s.Code("meta.json"))
	}
	return fmt.Sprintf("choose a runnable test of %s: %s", s.Code(r.Entry), list(s, r.Offer))
}

func (s Style) orPlain() Style {
	if s.Code == nil {
		s.Code = Plain.Code
	}
	if s.Text == nil {
		s.Text = Plain.Text
	}
	return s
}

// list renders names as "a, b, c" in s, or "none".
func list(s Style, names []string) string {
	if len(names) == 0 {
		return "none"
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = s.Code(n)
	}
	return strings.Join(parts, ", ")
}

// orList renders names as "a, b or c" in s.
func orList(s Style, names []string) string {
	if len(names) <= 1 {
		return list(s, names)
	}
	return list(s, names[:len(names)-1]) + " or " + s.Code(names[len(names)-1])
}
