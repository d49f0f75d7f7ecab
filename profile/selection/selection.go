// Package selection decides what a benchmark request measures: from the entries (their
// meta.json: the tests they subscribe to, whether they are enabled), the tests the request
// names and the runner's mode (--lite or the full benchmark host), it lays out the rows —
// entry × test × connection count, in the report's order — and says, for every requested
// pair that is not measured, why and what fixes it.
//
// The bot plans its ack with it and the runner measures with it (and the queued job
// carries the rows between them), so what the ack promises and what the runner measures
// are one computation. The reasons are worded here once, as values: the bot renders them
// into Markdown (a Style of md's Code and Text), the runner into its row failures and
// its log (Plain).
//
// It does no I/O; it imports only frameworks and profile.
package selection

import (
	"slices"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
)

// A Request is what to select from.
type Request struct {
	// Entries are the frameworks of the request, in its order (as named with -f, or sorted
	// by name); an entry given twice counts once, where it first appears.
	Entries []frameworks.Entry
	// Tests are the tests the request names (-t), in any order, duplicates allowed. Empty
	// means every test each entry subscribes to that can run (in this mode).
	Tests []string
	// Lite selects the --lite connection counts (profile.Profile.LiteConns), and leaves out
	// the tests that have none; false selects the full benchmark host's.
	Lite bool
	// Subscribers is /benchmark-test: of Entries only those that are enabled and subscribe
	// to a named test run it, and the others are left out without a reason; a named test
	// that none of them runs gets one (NoEntry). Without it every entry given runs, enabled
	// or not (a framework named with -f runs even when disabled).
	Subscribers bool
}

// A Selection is what a request measures.
type Selection struct {
	// Rows are the measurements: entry by entry in the request's order; within an entry in
	// profile order (profile.All), then by connection count, ascending.
	Rows []profile.Row
	// Reasons are the requested pairs that are not measured, in the request's order: per
	// entry, then per test in profile order; with Subscribers, per test (Entry "").
	Reasons []Reason
}

// Entries returns the entries that have rows, in row order.
func (s Selection) Entries() []string {
	var out []string
	for _, r := range s.Rows {
		if len(out) == 0 || out[len(out)-1] != r.Entry {
			out = append(out, r.Entry)
		}
	}
	return out
}

// Tests returns the tests entry has rows of, in profile order.
func (s Selection) Tests(entry string) []string {
	var out []string
	for _, r := range s.Rows {
		if r.Entry == entry && (len(out) == 0 || out[len(out)-1] != r.Test) {
			out = append(out, r.Test)
		}
	}
	return out
}

// Named returns the first reason that makes the request wrong rather than narrower: one
// about a test it named, an entry with nothing to measure (NoTest), or a named test no
// entry runs (NoEntry). ok is false when there is none.
func (s Selection) Named() (r Reason, ok bool) {
	for _, r := range s.Reasons {
		if r.Named || r.Cause == NoTest || r.Cause == NoEntry {
			return r, true
		}
	}
	return Reason{}, false
}

// Select lays out the rows of a request and the reasons for the requested pairs it leaves
// out. Every requested pair gets either rows or exactly one reason:
//
//   - with Tests named, each entry × each named test (with Subscribers, each named test,
//     and each enabled subscriber of it);
//   - with no Tests, each entry × each test it subscribes to: one that cannot run (in this
//     mode) gets a reason with Named false, and an entry left with no row gets NoTest.
func Select(r Request) Selection {
	var s Selection
	tests := order(r.Tests)
	if r.Subscribers {
		var runnable []string
		for _, t := range tests {
			if why, bad := CheckTest(t, r.Lite); bad {
				s.Reasons = append(s.Reasons, why)
				continue
			}
			runnable = append(runnable, t)
		}
		covered := map[string]bool{}
		for _, e := range unique(r.Entries) {
			if !e.Meta.Enabled {
				continue
			}
			for _, t := range runnable {
				if e.Subscribes(t) {
					s.Rows = append(s.Rows, rows(e.Name, t, r.Lite)...)
					covered[t] = true
				}
			}
		}
		for _, t := range runnable {
			if !covered[t] {
				s.Reasons = append(s.Reasons, Reason{Cause: NoEntry, Test: t, Named: true, Offer: Runnable(r.Lite)})
			}
		}
		return s
	}
	for _, e := range unique(r.Entries) {
		named := len(tests) > 0
		want := tests
		if !named {
			want = subscribed(e)
		}
		n := len(s.Rows)
		for _, t := range want {
			if why, bad := check(e, t, r.Lite); bad {
				why.Named = named
				s.Reasons = append(s.Reasons, why)
				continue
			}
			s.Rows = append(s.Rows, rows(e.Name, t, r.Lite)...)
		}
		if !named && len(s.Rows) == n {
			s.Reasons = append(s.Reasons, Reason{Cause: NoTest, Entry: e.Name, Subscribed: subscribed(e), Offer: Runnable(r.Lite), Lite: r.Lite})
		}
	}
	return s
}

// Check says why entry e cannot measure test, whatever the mode: the test is unknown or
// retired, e does not subscribe to it, or the harness cannot run it yet. ok is false when
// it can. The runner checks a queued job's rows with it; the mode's own reason (NoLite) is
// Select's, since a job's rows say their connection counts.
func Check(e frameworks.Entry, test string) (r Reason, bad bool) {
	return checkMode(e, test, false, false)
}

// CheckTest says why test cannot be measured in the mode by any entry: it is unknown or
// retired, the harness cannot run it yet, or it has no --lite variant. The reason's Offer
// is every test that can run in the mode.
func CheckTest(test string, lite bool) (r Reason, bad bool) {
	r = Reason{Test: test, Named: true, Offer: Runnable(lite), Lite: lite}
	p, known := profile.Lookup(test)
	switch {
	case !known && slices.Contains(frameworks.Retired, test):
		r.Cause = RetiredTest
	case !known:
		r.Cause = UnknownTest
	case !p.Runnable():
		r.Cause, r.Detail = Unsupported, p.Unsupported
	case lite && len(p.LiteConns) == 0:
		r.Cause = NoLite
	default:
		return Reason{}, false
	}
	return r, true
}

// check is Check in the mode: a test without a --lite variant cannot run in --lite.
func check(e frameworks.Entry, test string, lite bool) (Reason, bool) {
	return checkMode(e, test, lite, true)
}

func checkMode(e frameworks.Entry, test string, lite, mode bool) (Reason, bool) {
	r := Reason{Entry: e.Name, Test: test, Named: true, Offer: Offer(e, lite && mode), Lite: lite && mode}
	p, known := profile.Lookup(test)
	switch {
	case !known && slices.Contains(frameworks.Retired, test):
		r.Cause = RetiredTest
	case !known:
		r.Cause = UnknownTest
	case !e.Subscribes(test):
		r.Cause, r.Subscribed = NotSubscribed, subscribed(e)
	case !p.Runnable():
		r.Cause, r.Detail = Unsupported, p.Unsupported
	case mode && lite && len(p.LiteConns) == 0:
		r.Cause = NoLite
	default:
		return Reason{}, false
	}
	return r, true
}

// Offer returns the tests e can measure in the mode: those it subscribes to that can run
// (and have a --lite variant, in --lite), in profile order. A reply offers these instead
// of a test e cannot run.
func Offer(e frameworks.Entry, lite bool) []string {
	var out []string
	for _, t := range subscribed(e) {
		if _, bad := CheckTest(t, lite); !bad {
			out = append(out, t)
		}
	}
	return out
}

// Runnable returns every test the harness can measure in the mode, in profile order.
func Runnable(lite bool) []string {
	var out []string
	for _, p := range profile.All {
		if p.Runnable() && (!lite || len(p.LiteConns) > 0) {
			out = append(out, p.Name)
		}
	}
	return out
}

// ConnCounts returns the connection counts of test in the mode, ascending: the counts its
// rows measure. It is nil for an unknown test.
func ConnCounts(test string, lite bool) []int {
	p, ok := profile.Lookup(test)
	if !ok {
		return nil
	}
	c := slices.Clone(p.ConnCounts(lite))
	slices.Sort(c)
	return slices.Compact(c)
}

// rows returns the rows of one entry and test.
func rows(entry, test string, lite bool) []profile.Row {
	var out []profile.Row
	for _, n := range ConnCounts(test, lite) {
		out = append(out, profile.Row{Entry: entry, Test: test, Conns: n})
	}
	return out
}

// subscribed returns the profiles e subscribes to, in profile order.
func subscribed(e frameworks.Entry) []string {
	var out []string
	for _, p := range profile.All {
		if e.Subscribes(p.Name) {
			out = append(out, p.Name)
		}
	}
	return out
}

// order returns tests without duplicates, the known ones in profile order first, then the
// unknown ones in the order given.
func order(tests []string) []string {
	var out []string
	for _, t := range tests {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return rank(a) - rank(b) })
	return out
}

// rank is a test's place in profile order; unknown tests come after every known one.
func rank(test string) int {
	if i := profile.Index(test); i >= 0 {
		return i
	}
	return len(profile.All)
}

// unique returns entries without a second occurrence of a name.
func unique(entries []frameworks.Entry) []frameworks.Entry {
	var out []frameworks.Entry
	for _, e := range entries {
		if !slices.ContainsFunc(out, func(o frameworks.Entry) bool { return o.Name == e.Name }) {
			out = append(out, e)
		}
	}
	return out
}
