package selection

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
)

// table is the profile table of the tests, so that they do not change as profiles become
// runnable: baseline-h2c can run and has no --lite counts; json-tls and echo-ws cannot run.
var table = []profile.Profile{
	{Name: "baseline", Conns: []int{4096, 512}, LiteConns: []int{512}},
	{Name: "pipelined", Conns: []int{512, 4096}, LiteConns: []int{512}},
	{Name: "json", Conns: []int{4096}, LiteConns: []int{512}},
	{Name: "json-tls", Conns: []int{4096}, LiteConns: []int{256}, Unsupported: "needs a TLS load tool"},
	{Name: "upload", Conns: []int{32, 256}, LiteConns: []int{128}},
	{Name: "baseline-h2c", Conns: []int{256, 1024, 4096}},
	{Name: "echo-ws", Conns: []int{512}, LiteConns: []int{512}, Unsupported: "needs a WebSocket load tool"},
}

// useTable makes table the profile table until the test ends.
func useTable(t *testing.T) {
	saved := profile.All
	profile.All = table
	t.Cleanup(func() { profile.All = saved })
}

func entry(name string, enabled bool, tests ...string) frameworks.Entry {
	return frameworks.Entry{Name: name, Meta: frameworks.Meta{DisplayName: name, Enabled: enabled, Tests: tests}}
}

// The entries of the table tests. gin subscribes to json-tls, which cannot run yet, and to
// a retired name; old subscribes only to what cannot run.
var (
	gin   = entry("gin", true, "baseline", "json", "json-tls", "upload", "noisy")
	fiber = entry("fiber", true, "json", "baseline")
	off   = entry("off", false, "baseline")
	old   = entry("old", true, "json-tls", "noisy")
	h2c   = entry("h2c", true, "baseline-h2c", "baseline") // baseline-h2c has no --lite counts
)

func TestSelect(t *testing.T) {
	useTable(t)
	tests := []struct {
		name    string
		req     Request
		rows    []profile.Row
		reasons []Reason // compared on Cause, Entry, Test and Named
	}{
		{name: "every runnable subscribed test, profile order, full counts",
			req: Request{Entries: []frameworks.Entry{gin}},
			rows: []profile.Row{{Entry: "gin", Test: "baseline", Conns: 512}, {Entry: "gin", Test: "baseline", Conns: 4096}, {Entry: "gin", Test: "json", Conns: 4096},
				{Entry: "gin", Test: "upload", Conns: 32}, {Entry: "gin", Test: "upload", Conns: 256}},
			reasons: []Reason{{Cause: Unsupported, Entry: "gin", Test: "json-tls"}}},
		{name: "lite counts",
			req:     Request{Entries: []frameworks.Entry{gin}, Lite: true},
			rows:    []profile.Row{{Entry: "gin", Test: "baseline", Conns: 512}, {Entry: "gin", Test: "json", Conns: 512}, {Entry: "gin", Test: "upload", Conns: 128}},
			reasons: []Reason{{Cause: Unsupported, Entry: "gin", Test: "json-tls"}}},
		{name: "named tests in profile order, once, entries in request order, once",
			req:  Request{Entries: []frameworks.Entry{gin, fiber, gin}, Tests: []string{"json", "baseline", "json"}},
			rows: []profile.Row{{Entry: "gin", Test: "baseline", Conns: 512}, {Entry: "gin", Test: "baseline", Conns: 4096}, {Entry: "gin", Test: "json", Conns: 4096}, {Entry: "fiber", Test: "baseline", Conns: 512}, {Entry: "fiber", Test: "baseline", Conns: 4096}, {Entry: "fiber", Test: "json", Conns: 4096}}},
		{name: "a disabled entry named runs",
			req:  Request{Entries: []frameworks.Entry{off}, Tests: []string{"baseline"}, Lite: true},
			rows: []profile.Row{{Entry: "off", Test: "baseline", Conns: 512}}},
		{name: "named, each reason per entry",
			req:  Request{Entries: []frameworks.Entry{gin, fiber}, Tests: []string{"upload", "jsn", "noisy", "json-tls"}},
			rows: []profile.Row{{Entry: "gin", Test: "upload", Conns: 32}, {Entry: "gin", Test: "upload", Conns: 256}},
			reasons: []Reason{
				{Cause: Unsupported, Entry: "gin", Test: "json-tls", Named: true},
				{Cause: UnknownTest, Entry: "gin", Test: "jsn", Named: true},
				{Cause: RetiredTest, Entry: "gin", Test: "noisy", Named: true},
				{Cause: NotSubscribed, Entry: "fiber", Test: "json-tls", Named: true},
				{Cause: NotSubscribed, Entry: "fiber", Test: "upload", Named: true},
				{Cause: UnknownTest, Entry: "fiber", Test: "jsn", Named: true},
				{Cause: RetiredTest, Entry: "fiber", Test: "noisy", Named: true},
			}},
		{name: "nothing runnable",
			req:     Request{Entries: []frameworks.Entry{old}},
			reasons: []Reason{{Cause: Unsupported, Entry: "old", Test: "json-tls"}, {Cause: NoTest, Entry: "old"}}},
		{name: "no lite variant, left out",
			req:     Request{Entries: []frameworks.Entry{h2c}, Lite: true},
			rows:    []profile.Row{{Entry: "h2c", Test: "baseline", Conns: 512}},
			reasons: []Reason{{Cause: NoLite, Entry: "h2c", Test: "baseline-h2c"}}},
		{name: "no lite variant, named",
			req:     Request{Entries: []frameworks.Entry{h2c}, Tests: []string{"baseline-h2c", "baseline"}, Lite: true},
			rows:    []profile.Row{{Entry: "h2c", Test: "baseline", Conns: 512}},
			reasons: []Reason{{Cause: NoLite, Entry: "h2c", Test: "baseline-h2c", Named: true}}},
		{name: "subscribers: no lite variant",
			req:     Request{Entries: []frameworks.Entry{h2c}, Tests: []string{"baseline-h2c"}, Lite: true, Subscribers: true},
			reasons: []Reason{{Cause: NoLite, Test: "baseline-h2c", Named: true}}},
		{name: "subscribers: enabled ones, in the order given",
			req:  Request{Entries: []frameworks.Entry{fiber, gin, off, old}, Tests: []string{"baseline"}, Subscribers: true, Lite: true},
			rows: []profile.Row{{Entry: "fiber", Test: "baseline", Conns: 512}, {Entry: "gin", Test: "baseline", Conns: 512}}},
		{name: "subscribers: a test nobody runs",
			req:     Request{Entries: []frameworks.Entry{fiber, off}, Tests: []string{"pipelined"}, Subscribers: true},
			reasons: []Reason{{Cause: NoEntry, Test: "pipelined", Named: true}}},
		{name: "subscribers: tests that cannot run",
			req: Request{Entries: []frameworks.Entry{gin, old}, Tests: []string{"json-tls", "basline", "noisy"}, Subscribers: true},
			reasons: []Reason{{Cause: Unsupported, Test: "json-tls", Named: true}, {Cause: UnknownTest, Test: "basline", Named: true},
				{Cause: RetiredTest, Test: "noisy", Named: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Select(tt.req)
			if diff := cmp.Diff(tt.rows, got.Rows); diff != "" {
				t.Errorf("Rows (-want +got):\n%s", diff)
			}
			var reasons []Reason
			for _, r := range got.Reasons {
				reasons = append(reasons, Reason{Cause: r.Cause, Entry: r.Entry, Test: r.Test, Named: r.Named})
			}
			if diff := cmp.Diff(tt.reasons, reasons); diff != "" {
				t.Errorf("Reasons (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSelectionAccessors(t *testing.T) {
	useTable(t)
	s := Select(Request{Entries: []frameworks.Entry{gin, fiber}, Tests: []string{"json", "baseline"}})
	if got := s.Entries(); !slices.Equal(got, []string{"gin", "fiber"}) {
		t.Errorf("Entries() = %v, want [gin fiber]", got)
	}
	if got := s.Tests("fiber"); !slices.Equal(got, []string{"baseline", "json"}) {
		t.Errorf("Tests(fiber) = %v, want [baseline json]", got)
	}
	if r, ok := s.Named(); ok {
		t.Errorf("Named() = %v, want none", r)
	}
	s = Select(Request{Entries: []frameworks.Entry{gin}})
	if r, ok := s.Named(); ok {
		t.Errorf("Named() of a default selection = %v, want none (json-tls is a note)", r)
	}
	s = Select(Request{Entries: []frameworks.Entry{gin, old}})
	if r, ok := s.Named(); !ok || r.Cause != NoTest || r.Entry != "old" {
		t.Errorf("Named() = %+v, %v; want old's NoTest", r, ok)
	}
}

func TestCheck(t *testing.T) {
	useTable(t)
	for _, tt := range []struct {
		e    frameworks.Entry
		test string
		want Cause // "" for none
	}{
		{gin, "baseline", ""},
		{gin, "json-tls", Unsupported},
		{gin, "noisy", RetiredTest},
		{gin, "bogus", UnknownTest},
		{fiber, "upload", NotSubscribed},
		{h2c, "baseline-h2c", ""},
		{h2c, "echo-ws", NotSubscribed},
		{off, "baseline", ""}, // a job's rows name it: enabled does not matter
	} {
		r, bad := Check(tt.e, tt.test)
		if r.Cause != tt.want || bad != (tt.want != "") {
			t.Errorf("Check(%s, %s) = %q, %v; want %q", tt.e.Name, tt.test, r.Cause, bad, tt.want)
		}
	}
	for _, tt := range []struct {
		test string
		lite bool
		want Cause
	}{
		{"baseline", true, ""},
		{"json-tls", false, Unsupported},
		{"short-lived", false, RetiredTest},
		{"x", true, UnknownTest},
		{"baseline-h2c", true, NoLite},
		{"baseline-h2c", false, ""},
	} {
		r, bad := CheckTest(tt.test, tt.lite)
		if r.Cause != tt.want || bad != (tt.want != "") {
			t.Errorf("CheckTest(%s, %v) = %q, %v; want %q", tt.test, tt.lite, r.Cause, bad, tt.want)
		}
	}
}

// TestNoLite: in --lite, a test without --lite counts is left out of a default selection
// with a note, and named it is a reason; a queued job's rows may still measure it.
func TestNoLite(t *testing.T) {
	useTable(t)
	gin := entry("gin", true, "baseline", "json", "json-tls", "baseline-h2c")
	s := Select(Request{Entries: []frameworks.Entry{gin}, Lite: true})
	if got := s.Tests("gin"); !slices.Equal(got, []string{"baseline", "json"}) {
		t.Errorf("lite tests of gin = %v, want baseline and json (baseline-h2c has no --lite counts)", got)
	}
	var causes []string
	for _, r := range s.Reasons {
		causes = append(causes, r.Test+":"+string(r.Cause))
	}
	if want := []string{"json-tls:" + string(Unsupported), "baseline-h2c:" + string(NoLite)}; !slices.Equal(causes, want) {
		t.Errorf("reasons %v, want %v", causes, want)
	}
	s = Select(Request{Entries: []frameworks.Entry{gin}, Tests: []string{"baseline-h2c"}, Lite: true})
	r, ok := s.Named()
	if !ok || r.Cause != NoLite || !r.Named {
		t.Fatalf("Named() = %+v, %v; want baseline-h2c's NoLite", r, ok)
	}
	if got, want := r.String(), `test "baseline-h2c" has no "--lite" variant: it runs only on a benchmark host without "--lite"; choose a runnable test of "gin": "baseline", "json"`; got != want {
		t.Errorf("String() =\n%q, want\n%q", got, want)
	}
	if r, bad := Check(gin, "baseline-h2c"); bad {
		t.Errorf("Check(gin, baseline-h2c) = %v; the mode is the rows' to say", r)
	}
	if got := Runnable(true); !slices.Equal(got, []string{"baseline", "pipelined", "json", "upload"}) {
		t.Errorf("Runnable(lite) = %v, want baseline, pipelined, json, upload", got)
	}
	if got := Runnable(false); !slices.Equal(got, []string{"baseline", "pipelined", "json", "upload", "baseline-h2c"}) {
		t.Errorf("Runnable(full) = %v", got)
	}
	if got := ConnCounts("baseline", false); !slices.Equal(got, []int{512, 4096}) {
		t.Errorf("ConnCounts(baseline, full) = %v, want [512 4096] (ascending)", got)
	}
}

// md is a Markdown-like style for the wording tests: names in code spans, text in «».
var md = Style{Code: func(s string) string { return "`" + s + "`" }, Text: func(s string) string { return "«" + s + "»" }}

func TestWording(t *testing.T) {
	useTable(t)
	detail := func(test string) string { p, _ := profile.Lookup(test); return p.Unsupported }
	for _, tt := range []struct {
		name         string
		r            Reason
		problem, fix string
	}{
		{"unknown, of an entry",
			first(Select(Request{Entries: []frameworks.Entry{gin}, Tests: []string{"jsn"}})),
			"unknown test `jsn`",
			"did you mean `json`? choose a runnable test of `gin`: `baseline`, `json`, `upload`"},
		{"unknown, alone",
			must(CheckTest("basline", false)),
			"unknown test `basline`",
			"did you mean `baseline`? choose a runnable test: " + list(md, Runnable(false))},
		{"retired",
			first(Select(Request{Entries: []frameworks.Entry{fiber}, Tests: []string{"noisy"}})),
			"test `noisy` is retired: no framework runs it",
			"choose a runnable test of `fiber`: `baseline`, `json`"},
		{"not subscribed",
			first(Select(Request{Entries: []frameworks.Entry{fiber}, Tests: []string{"upload"}})),
			"`fiber` does not subscribe to test `upload` (its tests: `baseline`, `json`)",
			"choose a runnable test of `fiber`: `baseline`, `json`, or subscribe `fiber` to it in its `meta.json`"},
		{"cannot run yet",
			first(Select(Request{Entries: []frameworks.Entry{gin}, Tests: []string{"json-tls"}})),
			"test `json-tls` cannot run here yet: «" + detail("json-tls") + "»",
			"choose a runnable test of `gin`: `baseline`, `json`, `upload`"},
		{"cannot run yet, of an entry that runs nothing",
			first(Select(Request{Entries: []frameworks.Entry{old}, Tests: []string{"json-tls"}})),
			"test `json-tls` cannot run here yet: «" + detail("json-tls") + "»",
			"`old` subscribes to no test this harness can run yet: add one to its `meta.json`"},
		{"nothing to run",
			last(Select(Request{Entries: []frameworks.Entry{old}})),
			"`old` subscribes to no test this harness can run yet (its tests: `json-tls`)",
			"add a runnable test to its `meta.json`; the runnable tests are: " + list(md, Runnable(false))},
		{"nothing to run in lite",
			last(Select(Request{Entries: []frameworks.Entry{old}, Lite: true})),
			"`old` subscribes to no test this harness can run in `--lite` (its tests: `json-tls`)",
			"add a runnable test to its `meta.json`; the runnable tests are: " + list(md, Runnable(true))},
		{"no subscriber",
			first(Select(Request{Entries: []frameworks.Entry{off}, Tests: []string{"baseline"}, Subscribers: true})),
			"no enabled framework subscribes to test `baseline`",
			"subscribe an entry to it (add it to `tests` in its `meta.json` and set `enabled` to `true`)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Problem(md); got != tt.problem {
				t.Errorf("Problem =\n%q, want\n%q", got, tt.problem)
			}
			if got := tt.r.Fix(md); got != tt.fix {
				t.Errorf("Fix =\n%q, want\n%q", got, tt.fix)
			}
			plain := tt.r.String()
			if strings.ContainsAny(plain, "`«»\n") || !strings.Contains(plain, "; ") || !strings.Contains(plain, `"`) {
				t.Errorf("String() = %q: want the plain problem and fix on one line", plain)
			}
			if got := tt.r.Problem(Style{}); got != tt.r.Problem(Plain) {
				t.Errorf("the zero Style renders %q, want Plain's %q", got, tt.r.Problem(Plain))
			}
		})
	}
}

func first(s Selection) Reason { return s.Reasons[0] }
func last(s Selection) Reason  { return s.Reasons[len(s.Reasons)-1] }
func must(r Reason, bad bool) Reason {
	if !bad {
		panic("no reason")
	}
	return r
}

// A property of Select: the rows are exactly the cross product of the entries and the
// tests, filtered by subscription, runnability and the mode, in request order then profile
// order then connection count, with the counts of ConnCounts(lite); and every requested
// pair that has no row has exactly one reason, which renders on one line.
func checkSelect(t *testing.T, req Request) {
	t.Helper()
	got := Select(req)

	var want []profile.Row
	seen := map[string]bool{}
	for _, e := range req.Entries {
		if seen[e.Name] {
			continue // an entry counts once, where it first appears
		}
		seen[e.Name] = true
		if req.Subscribers && !e.Meta.Enabled {
			continue
		}
		for _, p := range profile.All {
			asked := slices.Contains(req.Tests, p.Name) || len(req.Tests) == 0 && !req.Subscribers
			if !asked || !e.Subscribes(p.Name) || !p.Runnable() || req.Lite && len(p.LiteConns) == 0 {
				continue
			}
			counts := slices.Sorted(slices.Values(p.ConnCounts(req.Lite)))
			for _, n := range slices.Compact(counts) {
				want = append(want, profile.Row{Entry: e.Name, Test: p.Name, Conns: n})
			}
		}
	}
	if diff := cmp.Diff(want, got.Rows); diff != "" {
		t.Fatalf("Select(%+v) rows (-want +got):\n%s", req, diff)
	}

	hasRows := func(e, test string) bool {
		return slices.ContainsFunc(got.Rows, func(r profile.Row) bool { return (e == "" || r.Entry == e) && r.Test == test })
	}
	reasons := func(e, test string) int {
		n := 0
		for _, r := range got.Reasons {
			if r.Entry == e && r.Test == test {
				n++
			}
		}
		return n
	}
	wantReasons := 0
	expect := func(e, test string) {
		t.Helper()
		has, n := hasRows(e, test), reasons(e, test)
		if has == (n == 1) || n > 1 {
			t.Errorf("Select(%+v): pair %s × %s has rows %v and %d reasons; want rows or one reason", req, e, test, has, n)
		}
		if !has {
			wantReasons++
		}
	}
	tests := slices.Compact(slices.Sorted(slices.Values(req.Tests)))
	if req.Subscribers {
		for _, test := range tests {
			if n := reasons("", test); hasRows("", test) == (n == 1) || n > 1 {
				t.Errorf("Select(%+v): test %s has rows %v and %d reasons", req, test, hasRows("", test), n)
			} else if n == 1 {
				wantReasons++
			}
		}
	} else {
		names := map[string]bool{}
		for _, e := range req.Entries {
			if names[e.Name] {
				continue
			}
			names[e.Name] = true
			if len(tests) > 0 {
				for _, test := range tests {
					expect(e.Name, test)
				}
				continue
			}
			for _, test := range subscribed(e) {
				expect(e.Name, test)
			}
			if !slices.ContainsFunc(got.Rows, func(r profile.Row) bool { return r.Entry == e.Name }) {
				if reasons(e.Name, "") != 1 {
					t.Errorf("Select(%+v): %s has no row and no NoTest reason", req, e.Name)
				}
				wantReasons++
			}
		}
	}
	if len(got.Reasons) != wantReasons {
		t.Errorf("Select(%+v): %d reasons, want %d: %v", req, len(got.Reasons), wantReasons, got.Reasons)
	}
	for _, r := range got.Reasons {
		if r.Named != (len(req.Tests) > 0) && r.Cause != NoTest {
			t.Errorf("reason %+v: Named %v, want %v", r, r.Named, len(req.Tests) > 0)
		}
		for _, line := range []string{r.Problem(Plain), r.Fix(Plain), r.Problem(md), r.Fix(md)} {
			if line == "" || strings.ContainsAny(line, "\r\n") {
				t.Errorf("reason %+v renders %q: want one line", r, line)
			}
		}
		if r.Test != "" && !strings.Contains(r.Problem(md), "`"+r.Test+"`") {
			t.Errorf("reason %+v: problem %q does not name the test", r, r.Problem(md))
		}
	}
}

// names are what the generated requests choose from: every profile, the retired names and
// two unknown ones.
var names = append(append(profile.Names(), frameworks.Retired...), "bogus", "json-")

// request builds a request from bytes: the first two choose the mode, each next pair of
// bytes adds an entry (its name, enabled and up to eight tests from the following
// bytes), and the rest are the named tests.
func request(data []byte) Request {
	var r Request
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := int(data[0])
		data = data[1:]
		return b
	}
	flags := next()
	r.Lite, r.Subscribers = flags&1 != 0, flags&2 != 0
	for range next() % 5 {
		e := entry(fmt.Sprintf("e%d", next()%4), next()%3 != 0)
		for range next() % 9 {
			e.Meta.Tests = append(e.Meta.Tests, names[next()%len(names)])
		}
		r.Entries = append(r.Entries, e)
	}
	for len(data) > 0 {
		r.Tests = append(r.Tests, names[next()%len(names)])
	}
	return r
}

func TestSelectProperty(t *testing.T) {
	t.Run("real table", testSelectProperty)
	t.Run("test table", func(t *testing.T) {
		useTable(t)
		testSelectProperty(t)
	})
}

func testSelectProperty(t *testing.T) {
	for _, req := range []Request{
		{Entries: []frameworks.Entry{gin, fiber, off, old, h2c}},
		{Entries: []frameworks.Entry{gin, fiber, off, old, h2c}, Lite: true},
		{Entries: []frameworks.Entry{gin, fiber, gin}, Tests: []string{"json", "bogus", "baseline", "noisy", "json"}},
		{Entries: []frameworks.Entry{gin, fiber, off, old}, Tests: []string{"baseline", "json-tls", "upload"}, Subscribers: true},
		{Entries: []frameworks.Entry{off}, Tests: []string{"baseline"}, Subscribers: true, Lite: true},
		{},
	} {
		checkSelect(t, req)
	}
	every := entry("every", true, profile.Names()...)
	for _, lite := range []bool{false, true} {
		s := Select(Request{Entries: []frameworks.Entry{every}, Lite: lite})
		n := 0
		for _, p := range profile.All {
			if p.Runnable() && (!lite || len(p.LiteConns) > 0) {
				n += len(p.ConnCounts(lite))
			}
		}
		if len(s.Rows) != n {
			t.Errorf("an entry subscribed to every profile has %d rows (lite %v), want %d", len(s.Rows), lite, n)
		}
	}
}

func FuzzSelect(f *testing.F) {
	f.Add([]byte{0, 2, 1, 1, 3, 0, 1, 2, 0, 1})
	f.Add([]byte{1, 3, 0, 2, 8, 0, 1, 2, 3, 4, 5, 6, 7, 2, 1, 0, 3})
	f.Add([]byte{2, 2, 0, 1, 2, 0, 1, 1, 2, 0, 1, 26, 27})
	f.Add([]byte{3, 4, 1, 1, 8, 30, 31, 32, 33, 1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSelect(t, request(data))
		saved := profile.All
		defer func() { profile.All = saved }()
		profile.All = table
		checkSelect(t, request(data))
	})
}
