// Package plan resolves a parsed benchmark command against a pull request's head: which
// frameworks run which tests at which connection counts, and about how long that takes.
// The bot needs this before it acks a request (its status comment shows
// the plan), so every problem a person can fix by typing another command is found here and
// reported as a [*ResolveError] naming the problem and the closest valid choices, in
// Markdown a reply can show as it is.
//
// The rows (and the reasons a named test is not measured) are profile/selection's,
// the computation the runner measures with, in the runner's mode ([Options].Lite); the
// queued job carries them, so the ack shows what the runner will measure.
//
// The frameworks a reply offers are entries only: directories under frameworks/ that hold a
// meta.json at the head (a Source may list files as directories: each name offered is
// checked), with a name a command can hold, the closest to what was typed first. The tests
// it offers for a framework are those the framework subscribes to and this harness can run.
//
// The head is read through a [Source] (the GitHub API in the bot, a map in tests). Each
// entry's meta.json is parsed and checked by [frameworks.LoadFS], the same code the CLI
// and the runner use. LoadFS also rejects Go source that is not below a go.mod; over a
// Source that check is shallow: it sees the files listed directly in frameworks/<name>/
// (one Dir call per entry that will run), not those in subdirectories. The runner repeats
// the full check on its checkout, so a deeper stray .go file fails that framework's build
// there instead of the request here.
package plan

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing/fstest"
	"time"

	"github.com/arenabot/arenabot/bot/command"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/md"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/profile/selection"
	"github.com/arenabot/arenabot/text"
)

// Root is the directory of the entries in the repository.
const Root = "frameworks"

// Source reads the PR head through the GitHub API (the bot's ghapi client satisfies it
// via a small adapter; tests use a map). Every method reads the head SHA the request
// binds to.
type Source interface {
	// ChangedFiles returns the PR's changed paths ("frameworks/gin/main.go"), including
	// deleted and renamed-away ones.
	ChangedFiles(ctx context.Context) ([]string, error)
	// Dir returns the names directly under path: Root, for the entry names, or
	// "frameworks/<name>", for an entry's files. The name of a directory ends in "/"
	// ("gin/"; the contents API's type "dir"), that of a file does not. A missing path is
	// an error wrapping fs.ErrNotExist.
	Dir(ctx context.Context, path string) ([]string, error)
	// File returns the content of one file ("frameworks/gin/meta.json"); a missing file
	// is an error wrapping fs.ErrNotExist.
	File(ctx context.Context, path string) ([]byte, error)
}

// A Target is one framework of a plan and what it runs.
type Target struct {
	Entry   string        // directory name, as in -f
	Display string        // meta.json display_name
	Tests   []string      // the selected tests, in profile order
	Rows    []profile.Row // in profile order, then connection count
}

// A Plan is a resolved benchmark command.
type Plan struct {
	Kind command.Kind
	// Targets are the frameworks to run, in the order named with -f, or sorted by name when
	// they were found from the changed files or by /benchmark-test.
	Targets []Target
	Save    bool
	Compare string // the framework to compare with; it is not run
	// Skipped lists, for /benchmark-test, the entries left out because their meta.json (or
	// their layout) is bad, one line each: "frameworks/x/meta.json: field ...". The ack
	// shows them so their owners learn of it. They are plain text from the repository:
	// render them with md.Text (or in a fence).
	Skipped []string
	// Paired are the targets the runner will measure against a base in the job, interleaved
	// (the --compare entry, or the entry at the PR's merge base when the PR changes it):
	// twice the builds and the runs. Sorted.
	Paired []string `json:",omitempty"`
	// CPUProfile is which rows get a profiling run after their measured runs
	// (profile.CPUProfileFirst, profile.CPUProfileAll; "" none), resolved from --profile by
	// profile.CPUProfileMode: a /benchmark of one framework is profiled by default.
	CPUProfile string `json:",omitempty"`
	// Estimate is the expected wall time of the job (see BuildAllowance).
	Estimate time.Duration
	// Lite is whether the rows are the --lite connection counts (Options.Lite): the
	// runner's mode.
	Lite bool `json:",omitempty"`
}

// Keep returns the plan with only the rows runs keeps (a test keeps its name while one of
// its rows is kept), without the frameworks left with none, and its estimate for those.
func (p Plan) Keep(runs func(profile.Row) bool) Plan {
	targets := make([]Target, 0, len(p.Targets))
	var entries []string
	for _, t := range p.Targets {
		rows := slices.DeleteFunc(slices.Clone(t.Rows), func(r profile.Row) bool { return !runs(r) })
		if len(rows) == 0 {
			continue
		}
		tests := slices.DeleteFunc(slices.Clone(t.Tests), func(name string) bool {
			return !slices.ContainsFunc(rows, func(r profile.Row) bool { return r.Test == name })
		})
		t.Rows, t.Tests = rows, tests
		targets = append(targets, t)
		entries = append(entries, t.Entry)
	}
	p.Targets = targets
	p.Paired = slices.DeleteFunc(slices.Clone(p.Paired), func(e string) bool { return !slices.Contains(entries, e) })
	if len(p.Paired) == 0 {
		p.Paired = nil
	}
	p.Estimate = estimate(p.Targets, p.Paired, p.CPUProfile)
	return p
}

// Rows returns the number of measurements in the plan.
func (p Plan) Rows() int {
	n := 0
	for _, t := range p.Targets {
		n += len(t.Rows)
	}
	return n
}

// The estimate: per framework BuildAllowance + ValidationAllowance; per row Runs × the
// profile's duration (DefaultDuration when the profile has none) + StartStopAllowance. A
// framework measured against a base doubles its builds and validations, and each of its
// rows runs PairedRuns on both sides, each on a fresh server: StartStopAllowance and
// PairWarmup more per run.
const (
	BuildAllowance      = 60 * time.Second
	ValidationAllowance = 10 * time.Second
	Runs                = 3
	DefaultDuration     = 5 * time.Second
	StartStopAllowance  = 2 * time.Second
	PairedRuns          = 4 // a side: the runner's minimum of 3, and about one more pair as rows settle
	PairWarmup          = time.Second
	// ProfileAllowance is what a profiling run adds beyond its load's duration: perf's
	// start, perf script and symbolizing (about 4-6 s on the 2-core development VM).
	ProfileAllowance = 6 * time.Second
)

// profileTime is the estimated time of a row's profiling run (two, on fresh servers, when
// the row is measured against a base).
func profileTime(p profile.Profile, paired bool) time.Duration {
	d := p.Duration
	if d <= 0 {
		d = DefaultDuration
	}
	if paired {
		return 2 * (d + PairWarmup + StartStopAllowance + ProfileAllowance)
	}
	return d + ProfileAllowance
}

// rowTime is the estimated time of one row of profile p.
func rowTime(p profile.Profile) time.Duration {
	d := p.Duration
	if d <= 0 {
		d = DefaultDuration
	}
	return Runs*d + StartStopAllowance
}

// pairedRowTime is the estimated time of one row of profile p measured against a base.
func pairedRowTime(p profile.Profile) time.Duration {
	d := p.Duration
	if d <= 0 {
		d = DefaultDuration
	}
	return 2 * PairedRuns * (d + PairWarmup + StartStopAllowance)
}

func estimate(targets []Target, paired []string, cpuProfile string) time.Duration {
	var total time.Duration
	for _, t := range targets {
		pair := slices.Contains(paired, t.Entry)
		total += BuildAllowance + ValidationAllowance
		if pair {
			total += BuildAllowance + ValidationAllowance
		}
		counts := map[string][]int{} // each test's connection counts, in order
		for _, r := range t.Rows {
			counts[r.Test] = append(counts[r.Test], r.Conns)
		}
		for _, r := range t.Rows {
			p, _ := profile.Lookup(r.Test)
			if pair {
				total += pairedRowTime(p)
			} else {
				total += rowTime(p)
			}
			if profile.CPUProfiled(cpuProfile, r.Conns, counts[r.Test]) {
				total += profileTime(p, pair)
			}
		}
	}
	return total
}

// paired returns the targets measured against a base in the job: all but the --compare
// entry with --compare; else, unless --baseline committed, those the PR's changed files
// touch (an entry the PR does not change is measured once).
func (r *resolver) paired(c command.Command, targets []Target) ([]string, error) {
	if c.Baseline == command.BaselineCommitted {
		return nil, nil
	}
	var touched []string
	if c.Compare == "" {
		changed, err := r.src.ChangedFiles(r.ctx)
		if err != nil {
			return nil, fmt.Errorf("list the PR's changed files: %w", err)
		}
		touched = frameworks.Touched(changed)
	}
	var out []string
	for _, t := range targets {
		if (c.Compare != "" && t.Entry != c.Compare) || slices.Contains(touched, t.Entry) {
			out = append(out, t.Entry)
		}
	}
	slices.Sort(out)
	return out, nil
}

// ErrResolve is wrapped by every error that a person fixes by typing another command (or
// by fixing the PR): the bot replies with its text. Errors that do not wrap it are the
// Source's (network, API) and are the bot's to retry or report.
var ErrResolve = errors.New("cannot resolve command")

// A ResolveError says why a command cannot run and what to type instead. Problem and Fix
// are Markdown, one line each: every name, test, path and command in them is a code span
// (md.Code) and any other text from the repository is escaped (md.Text), so a reply shows
// them as they are.
type ResolveError struct {
	Problem string // "unknown framework `gni`: …"
	Fix     string // "did you mean `gin`? type `/benchmark -f gin`"
	err     error  // the underlying error (a *frameworks.MetaError), if any
}

// Error returns one line of Markdown: the problem, then the fix.
func (e *ResolveError) Error() string {
	s := e.Problem
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return text.JoinLines(s, "; ")
}

// Unwrap returns ErrResolve and the underlying error, if any, so errors.As finds a
// *frameworks.MetaError behind a bad meta.json.
func (e *ResolveError) Unwrap() []error {
	if e.err == nil {
		return []error{ErrResolve}
	}
	return []error{ErrResolve, e.err}
}

func resolveErr(problem, fix string) error {
	return &ResolveError{Problem: problem, Fix: fix}
}

// Options say how to plan.
type Options struct {
	// Lite plans the --lite connection counts and leaves out the tests without them: set it
	// when the runners measure with --lite (serve --runner --lite, or ARENA_LITE), so the
	// ack shows what they will measure.
	Lite bool
}

// Resolve turns a benchmark command (/benchmark, /benchmark-multiple, /benchmark-test) into
// a plan for the full benchmark host; it is Options{}.Resolve.
func Resolve(ctx context.Context, src Source, c command.Command) (Plan, error) {
	return Options{}.Resolve(ctx, src, c)
}

// Resolve turns a benchmark command into a plan: the rows are those selection.Select lays
// out in the runner's mode. An error wrapping ErrResolve (a *ResolveError) names the
// problem and the closest valid choices; any other error is the Source's, wrapped, or a
// command of another kind.
func (o Options) Resolve(ctx context.Context, src Source, c command.Command) (Plan, error) {
	r := &resolver{ctx: ctx, src: src, lite: o.Lite}
	p := Plan{Kind: c.Kind, Save: c.Save, Compare: c.Compare, Lite: o.Lite}
	var err error
	switch c.Kind {
	case command.KindBenchmark, command.KindMultiple:
		p.Targets, err = r.frameworkTargets(c)
	case command.KindTest:
		p.Targets, p.Skipped, err = r.testTargets(c)
	case command.KindSweep:
		p.Targets, p.Skipped, err = r.sweepTargets(c)
	default:
		return Plan{}, fmt.Errorf("plan: %s is not a benchmark command", c.Kind.Word())
	}
	if err != nil {
		return Plan{}, err
	}
	if c.Compare != "" {
		if err := r.checkCompare(c.Compare, p.Targets); err != nil {
			return Plan{}, err
		}
	}
	if p.Paired, err = r.paired(c, p.Targets); err != nil {
		return Plan{}, err
	}
	p.CPUProfile = profile.CPUProfileMode(c.Profile, c.Kind == command.KindBenchmark && len(p.Targets) == 1)
	p.Estimate = estimate(p.Targets, p.Paired, p.CPUProfile)
	return p, nil
}

type resolver struct {
	ctx    context.Context
	src    Source
	lite   bool     // plan the --lite rows
	names  []string // entry directory names at the head, once listed
	listed bool
	entry  map[string]bool // isEntry's answers
}

// frameworkTargets resolves /benchmark and /benchmark-multiple.
func (r *resolver) frameworkTargets(c command.Command) ([]Target, error) {
	var entries []frameworks.Entry
	if len(c.Frameworks) > 0 {
		for _, name := range c.Frameworks {
			e, err := r.loadNamed(name, c)
			if err != nil {
				return nil, err
			}
			entries = append(entries, e)
		}
	} else {
		touched, err := r.touched()
		if err != nil {
			return nil, err
		}
		switch {
		case len(touched) == 0:
			return nil, r.noneTouched(c.Kind)
		case len(touched) > 1 && c.Kind == command.KindBenchmark:
			return nil, resolveErr(
				"this PR changes several frameworks: "+md.CodeList(touched),
				fmt.Sprintf("type %s to run one, or %s to run them all (%s)",
					md.Code("/benchmark -f "+touched[0]), md.Code("/benchmark-multiple"),
					md.Code("/benchmark-multiple -f "+strings.Join(touched, ","))))
		}
		for _, name := range touched {
			e, err := r.loadNamed(name, c)
			if err != nil {
				return nil, err
			}
			entries = append(entries, e)
		}
	}
	targets := make([]Target, 0, len(entries))
	for _, e := range entries {
		t, err := target(e, c.Tests, r.lite)
		if err != nil {
			return nil, err
		}
		targets = append(targets, t)
	}
	return targets, nil
}

// sweepTargets resolves /benchmark-sweep: every enabled entry (of those -f names) on every
// test it subscribes to that can run (of those -t names). A framework -f names that does not
// load is an error; an entry found by listing that does not load is skipped, and named.
func (r *resolver) sweepTargets(c command.Command) ([]Target, []string, error) {
	for _, t := range c.Tests {
		if why, bad := selection.CheckTest(t, r.lite); bad {
			return nil, nil, reasonErr(why)
		}
	}
	var entries []frameworks.Entry
	var skipped []string
	if len(c.Frameworks) > 0 {
		for _, name := range c.Frameworks {
			e, err := r.loadNamed(name, c)
			if err != nil {
				return nil, nil, err
			}
			entries = append(entries, e)
		}
	} else {
		var err error
		entries, skipped, _, err = r.headEntries(func(e frameworks.Entry) bool { return e.Meta.Enabled })
		if err != nil {
			return nil, nil, err
		}
	}
	var targets []Target
	for _, e := range entries {
		if !e.Meta.Enabled {
			continue
		}
		if sel := selection.Select(selection.Request{Entries: []frameworks.Entry{e}, Tests: c.Tests, Lite: r.lite}); len(sel.Rows) > 0 {
			targets = append(targets, targetOf(e, sel))
		}
	}
	if len(targets) == 0 {
		among := ""
		if len(c.Frameworks) > 0 {
			among = " among " + md.CodeList(c.Frameworks)
		}
		return nil, skipped, resolveErr("no enabled framework of this PR's head runs "+text.Or(md.CodeList(c.Tests), "any test")+among,
			"name enabled frameworks with "+md.Code("-f")+" and tests they subscribe to with "+md.Code("-t")+", or leave both out to sweep every enabled framework")
	}
	return targets, skipped, nil
}

// headEntries loads the entries of the head that keep accepts (judged on their meta.json alone),
// their layout checked. An entry whose meta.json or layout is not valid is left out: its
// error (one line) is in skipped and its name in skippedNames.
func (r *resolver) headEntries(keep func(frameworks.Entry) bool) (entries []frameworks.Entry, skipped, skippedNames []string, err error) {
	names, err := r.entryNames()
	if err != nil {
		return nil, nil, nil, err
	}
	for _, name := range names {
		if err := r.ctx.Err(); err != nil {
			return nil, nil, nil, err
		}
		data, err := r.meta(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a directory without meta.json is not an entry
		}
		if err != nil {
			return nil, nil, nil, err
		}
		e, err := parse(name, data, nil)
		if err == nil {
			if !keep(e) {
				continue
			}
			e, err = r.loadChecked(name, data)
		}
		if err != nil {
			if !isMetaError(err) {
				return nil, nil, nil, err
			}
			skipped = append(skipped, text.JoinLines(err.Error(), "; "))
			skippedNames = append(skippedNames, name)
			continue
		}
		entries = append(entries, e)
	}
	return entries, skipped, skippedNames, nil
}

// testTargets resolves /benchmark-test: every enabled entry subscribed to the test.
func (r *resolver) testTargets(c command.Command) ([]Target, []string, error) {
	if len(c.Tests) != 1 {
		return nil, nil, resolveErr(md.Code("/benchmark-test")+" needs exactly one test", "write "+md.Code("/benchmark-test -t <test>"))
	}
	test := c.Tests[0]
	if why, bad := selection.CheckTest(test, r.lite); bad {
		return nil, nil, reasonErr(why)
	}
	// The selection says whether the entry runs the test (enabled, subscribed); only then is
	// its layout checked.
	subscriber := func(e frameworks.Entry) selection.Selection {
		return selection.Select(selection.Request{Entries: []frameworks.Entry{e}, Tests: c.Tests, Lite: r.lite, Subscribers: true})
	}
	entries, skipped, skippedNames, err := r.headEntries(func(e frameworks.Entry) bool { return len(subscriber(e).Rows) > 0 })
	if err != nil {
		return nil, nil, err
	}
	var targets []Target
	for _, e := range entries {
		targets = append(targets, targetOf(e, subscriber(e)))
	}
	if len(targets) == 0 {
		why := selection.Reason{Cause: selection.NoEntry, Test: test, Named: true}
		fix := why.Fix(mdStyle)
		if len(skipped) > 0 {
			fix = "fix the " + md.Code("meta.json") + " of " + md.CodeList(skippedNames) + " (it is not valid), or " + fix
		}
		return nil, skipped, resolveErr(why.Problem(mdStyle), fix)
	}
	return targets, skipped, nil
}

// mdStyle renders the selection's reasons in Markdown: names in code spans, the profile
// table's text escaped.
var mdStyle = selection.Style{Code: md.Code, Text: md.Text}

// reasonErr is the error of a pair the selection leaves out, in Markdown.
func reasonErr(r selection.Reason) error {
	return resolveErr(r.Problem(mdStyle), r.Fix(mdStyle))
}

// target selects e's tests (all runnable ones it subscribes to when tests is empty) and
// lays out its rows, with selection.Select in the mode. A named test that e cannot measure,
// or an entry left with nothing to measure, is the selection's reason as an error; its fix
// offers e's runnable subscribed tests only.
func target(e frameworks.Entry, tests []string, lite bool) (Target, error) {
	sel := selection.Select(selection.Request{Entries: []frameworks.Entry{e}, Tests: tests, Lite: lite})
	if why, bad := sel.Named(); bad {
		return Target{}, reasonErr(why)
	}
	return targetOf(e, sel), nil
}

// targetOf is e's target of the selection sel.
func targetOf(e frameworks.Entry, sel selection.Selection) Target {
	t := Target{Entry: e.Name, Display: e.Meta.DisplayName, Tests: sel.Tests(e.Name)}
	for _, r := range sel.Rows {
		if r.Entry == e.Name {
			t.Rows = append(t.Rows, r)
		}
	}
	return t
}

// orList renders [a b c] as "`a`, `b` or `c`".
func orList(names []string) string {
	if len(names) <= 1 {
		return md.CodeList(names)
	}
	return md.CodeList(names[:len(names)-1]) + " or " + md.Code(names[len(names)-1])
}

// checkCompare checks that the compare target exists. It is not run, so its tests do not
// matter, and its meta.json is not checked beyond existing.
func (r *resolver) checkCompare(name string, targets []Target) error {
	for _, t := range targets {
		if t.Entry == name {
			return resolveErr(fmt.Sprintf("%s names the framework being benchmarked", md.Code("--compare "+name)),
				"compare with another framework, or drop "+md.Code("--compare")+" to compare with "+md.Code("main"))
		}
	}
	if validName(name) {
		_, err := r.meta(name)
		if err == nil {
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return r.unknown(name, func(s string) string { return "--compare " + s })
}

// touched returns the frameworks the PR's changed files touch that exist at the head
// (have a meta.json there), sorted.
func (r *resolver) touched() ([]string, error) {
	changed, err := r.src.ChangedFiles(r.ctx)
	if err != nil {
		return nil, fmt.Errorf("list the PR's changed files: %w", err)
	}
	var out []string
	for _, name := range frameworks.Touched(changed) {
		if !validName(name) {
			continue
		}
		_, err := r.meta(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted by the PR, or not an entry
		}
		if err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, nil
}

func (r *resolver) noneTouched(kind command.Kind) error {
	what, example := "framework", "/benchmark -f <name>"
	if kind == command.KindMultiple {
		what, example = "frameworks", "/benchmark-multiple -f <a>,<b>"
	}
	shown, more, err := r.offer("", maxOffered)
	if err != nil {
		return err
	}
	fix := "type " + md.Code(example)
	if len(shown) > 0 {
		fix += " (frameworks: " + md.CodeList(shown)
		if more {
			fix += ", …"
		}
		fix += ")"
	}
	return resolveErr(fmt.Sprintf("couldn't tell which %s to benchmark: this PR changes no %s", what, md.Code("frameworks/<name>/")), fix)
}

// unknownIn is the unknown-framework error for name given with -f in c (or found in the
// changed files): the suggestion is c with the closest name in its place.
func (r *resolver) unknownIn(name string, c command.Command) error {
	return r.unknown(name, func(s string) string {
		d := c
		d.Frameworks = slices.Clone(c.Frameworks)
		if i := slices.Index(d.Frameworks, name); i >= 0 {
			d.Frameworks[i] = s
		} else {
			d.Frameworks = []string{s}
		}
		return d.String()
	})
}

// loadNamed loads the entry name, with the layout check, for command c.
func (r *resolver) loadNamed(name string, c command.Command) (frameworks.Entry, error) {
	if !validName(name) {
		return frameworks.Entry{}, r.unknownIn(name, c)
	}
	data, err := r.meta(name)
	if errors.Is(err, fs.ErrNotExist) {
		return frameworks.Entry{}, r.unknownIn(name, c)
	}
	if err != nil {
		return frameworks.Entry{}, err
	}
	e, err := parse(name, data, nil)
	if err == nil {
		e, err = r.loadChecked(name, data)
	}
	if err != nil {
		if !isMetaError(err) {
			return frameworks.Entry{}, err
		}
		return frameworks.Entry{}, &ResolveError{
			Problem: fmt.Sprintf("framework %s cannot run: %s", md.Code(name), md.Text(text.JoinLines(err.Error(), "; "))),
			Fix:     fmt.Sprintf("push the correction and comment %s again", md.Code(c.String())),
			err:     err,
		}
	}
	return e, nil
}

// loadChecked loads the entry with its top-level files listed, so LoadFS's go.mod check
// sees them.
func (r *resolver) loadChecked(name string, meta []byte) (frameworks.Entry, error) {
	dir := Root + "/" + name
	files, err := r.src.Dir(r.ctx, dir)
	if err != nil {
		return frameworks.Entry{}, fmt.Errorf("list %s: %w", dir, err)
	}
	return parse(name, meta, files)
}

// parse runs frameworks.LoadFS over an in-memory copy of the entry: its meta.json and the
// names in files (empty files, or empty directories for names ending in "/"). With files
// nil the go.mod check is skipped (a go.mod is pretended).
func parse(name string, meta []byte, files []string) (frameworks.Entry, error) {
	fsys := fstest.MapFS{}
	if files == nil {
		fsys[name+"/go.mod"] = &fstest.MapFile{}
	}
	for _, f := range files {
		isDir := strings.HasSuffix(f, "/")
		f = strings.TrimSuffix(f, "/")
		if f == "" || strings.Contains(f, "/") || !fs.ValidPath(f) || f == "meta.json" {
			continue
		}
		if isDir {
			fsys[name+"/"+f] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
		} else {
			fsys[name+"/"+f] = &fstest.MapFile{}
		}
	}
	fsys[name+"/meta.json"] = &fstest.MapFile{Data: meta}
	return frameworks.LoadFS(fsys, Root, name, profile.Names())
}

func isMetaError(err error) bool {
	var me *frameworks.MetaError
	return errors.As(err, &me)
}

// meta reads frameworks/<name>/meta.json. A missing file wraps fs.ErrNotExist; other
// Source errors are wrapped with the path.
func (r *resolver) meta(name string) ([]byte, error) {
	p := path.Join(Root, name, "meta.json")
	data, err := r.src.File(r.ctx, p)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	return data, nil
}

// entryNames lists the directories under Root that may be entries, sorted. It does not
// read their meta.json, so a directory without one is listed too (in suggestions only).
func (r *resolver) entryNames() ([]string, error) {
	if r.listed {
		return r.names, nil
	}
	list, err := r.src.Dir(r.ctx, Root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list %s: %w", Root, err)
	}
	var names []string
	for _, n := range list {
		n, isDir := strings.CutSuffix(n, "/")
		if isDir && validName(n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	r.names, r.listed = slices.Compact(names), true
	return r.names, nil
}

// maxOffered is how many frameworks beyond the close ones an error lists.
const maxOffered = 10

// unknown is the error for a framework name that is not an entry at the head.
// suggest renders the command to type with a suggested name in place of the unknown one.
func (r *resolver) unknown(name string, suggest func(string) string) error {
	problem := fmt.Sprintf("unknown framework %s: %s does not exist at the PR head",
		md.Code(name), md.Code(path.Join(Root, name, "meta.json")))
	near, err := r.close(name)
	if err != nil {
		return err
	}
	if len(near) > 0 {
		return resolveErr(problem, fmt.Sprintf("did you mean %s? type %s", orList(near), md.Code(suggest(near[0]))))
	}
	shown, more, err := r.offer(name, maxOffered)
	if err != nil {
		return err
	}
	if len(shown) == 0 {
		return resolveErr(problem, "the PR head has no "+md.Code("frameworks/<name>/meta.json"))
	}
	fix := "the frameworks are: " + md.CodeList(shown)
	if more {
		fix += ", …"
	}
	return resolveErr(problem, fix)
}

// close returns every entry close to name (frameworks.Closest), the closest first; none
// is left out, however many there are.
func (r *resolver) close(name string) ([]string, error) {
	names, err := r.offerable(name)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range frameworks.Closest(name, names, len(names)) {
		ok, err := r.isEntry(n)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, n)
		}
	}
	return out, nil
}

// offer returns up to limit entries, sorted, and whether there are more (or may be: names
// past the limit are not checked).
func (r *resolver) offer(name string, limit int) (shown []string, more bool, err error) {
	names, err := r.offerable(name)
	if err != nil {
		return nil, false, err
	}
	for _, n := range names {
		if len(shown) == limit {
			return shown, true, nil
		}
		ok, err := r.isEntry(n)
		if err != nil {
			return nil, false, err
		}
		if ok {
			shown = append(shown, n)
		}
	}
	return shown, false, nil
}

// offerable lists the names under Root a reply may offer instead of name: those a command
// can hold, but name itself (a directory without meta.json). They are not checked yet.
func (r *resolver) offerable(name string) ([]string, error) {
	names, err := r.entryNames()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if n != name && command.ValidName(n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// isEntry reports whether frameworks/<name> is an entry: it holds a meta.json. A Source may
// list a file under Root as a directory, so a name is an entry only once its meta.json is
// found; answers are kept for the rest of the resolution.
func (r *resolver) isEntry(name string) (bool, error) {
	if ok, seen := r.entry[name]; seen {
		return ok, nil
	}
	_, err := r.meta(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if r.entry == nil {
		r.entry = map[string]bool{}
	}
	r.entry[name] = err == nil
	return err == nil, nil
}

// validName reports whether name can be an entry directory: one path element, not one the
// go tool and frameworks ignore (_*, .*, testdata).
func validName(name string) bool {
	return name != "" && fs.ValidPath(name) && !strings.ContainsAny(name, `/\`) &&
		!strings.HasPrefix(name, "_") && !strings.HasPrefix(name, ".") && name != "testdata"
}
