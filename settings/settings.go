// Package settings reads the arena's own settings file, .arenabot.yml at the root of its
// default branch: the change-or-noise rule, the profiles a request's verdict is gated on,
// the job budget, the queue depth, the pools and who may request without approval. The
// operator's environment gives the defaults; the file overrides them for its repository.
// The bot reads it from the base branch of the pull request, never from its head, so that
// a pull request cannot loosen its own gate.
package settings

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/arenabot/arenabot/md"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/text"
)

// FileName is the settings file's path in the arena repository.
const FileName = ".arenabot.yml"

// MaxSize bounds the file: a larger one is refused unread.
const MaxSize = 64 << 10

// Bounds of the values the file may set.
const (
	MaxEffect  = 50 // percent: min_effect and target_width
	MaxRuns    = 50 // runs a side
	MaxBudget  = 24 * time.Hour
	MaxDepth   = 10 // waiting requests per pull request
	MaxTrusted = 200
)

// A File is a parsed, valid settings file. A zero field keeps the operator's default.
type File struct {
	// Rule overrides the runner's change-or-noise rule, field by field (nil: the runner's).
	MinEffect, Target *float64 // fractions: 0.02 is 2%
	MinRuns, MaxRuns  *int
	// Gate: the profiles a request's check fails on, each with its figure; nil is
	// profile.DefaultGate (every profile the arena's board scores, on its primary figure).
	Gate profile.Gate
	// Budget is the job budget: after it, rows measured against a base stop at the
	// minimum runs (nil: the runner's; 0: no limit).
	Budget *time.Duration
	// Depth is the number of requests each pull request may have waiting (0: the queue's).
	Depth int
	// Pools are the runner pools the repository's requests may go to, in preference order
	// (nil: the operator's).
	Pools []string
	// Trusted are the logins whose requests are approved at once, as a collaborator's are.
	Trusted []string
}

// Tuning is what the file sets for the runner: nil when it sets none of it.
func (f File) Tuning() *queue.Tuning {
	t := queue.Tuning{MinEffect: f.MinEffect, Target: f.Target, MinRuns: f.MinRuns, MaxRuns: f.MaxRuns, Budget: f.Budget}
	if t == (queue.Tuning{}) {
		return nil
	}
	return &t
}

// IsTrusted reports whether login's requests need no approval.
func (f File) IsTrusted(login string) bool {
	return slices.ContainsFunc(f.Trusted, func(t string) bool { return strings.EqualFold(t, login) })
}

// A Problem is one thing wrong in the file: where, which field, what and the fix.
type Problem struct {
	Line  int    // 1-based; 0 when the file as a whole is wrong
	Field string // "rule.min_effect"; "" for the file as a whole
	What  string // the problem and its fix, one sentence
}

func (p Problem) String() string {
	var b strings.Builder
	if p.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Field != "" {
		b.WriteString(p.Field + ": ")
	}
	b.WriteString(p.What)
	return b.String()
}

// An Error lists every problem of a file that is not valid.
type Error struct{ Problems []Problem }

func (e *Error) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return FileName + ": " + strings.Join(parts, "; ")
}

// Limits are what the file is checked against beyond its own shape: the pools the operator
// runs (a file may only order them).
type Limits struct {
	Pools []string
}

// parser collects a file's problems while it reads it.
type parser struct {
	lim      Limits
	problems []Problem
}

func (p *parser) fail(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.problems = append(p.problems, Problem{Line: line, Field: field, What: fmt.Sprintf(format, args...)})
}

// Parse reads and checks a settings file; the error, an *Error, names every problem with
// its line and fix. An empty file is valid and sets nothing.
func Parse(data []byte, lim Limits) (File, error) {
	var f File
	if len(data) > MaxSize {
		return f, &Error{[]Problem{{What: fmt.Sprintf("the file is %d bytes, over the %d the bot reads; keep it to the settings this file documents", len(data), MaxSize)}}}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		what := strings.TrimPrefix(err.Error(), "yaml: ")
		line := 0
		if m := yamlLine.FindStringSubmatch(what); m != nil {
			line, _ = strconv.Atoi(m[1])
			what = strings.TrimPrefix(what, m[0])
		}
		return f, &Error{[]Problem{{Line: line, What: "not YAML (" + what + "); check the indentation and quoting there"}}}
	}
	if len(doc.Content) == 0 {
		return f, nil // empty, or comments only
	}
	p := &parser{lim: lim}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		p.fail(root, "", "the file must be a mapping of settings (rule:, gate:, budget:, queue_depth:, pools:, trusted:)")
		return f, &Error{p.problems}
	}
	p.fields(root, "", map[string]func(*yaml.Node, string){
		"rule":        func(n *yaml.Node, field string) { p.rule(n, field, &f) },
		"gate":        func(n *yaml.Node, field string) { f.Gate = p.gate(n, field) },
		"budget":      func(n *yaml.Node, field string) { f.Budget = p.budget(n, field) },
		"queue_depth": func(n *yaml.Node, field string) { f.Depth = p.intIn(n, field, 1, MaxDepth, 0) },
		"pools":       func(n *yaml.Node, field string) { f.Pools = p.pools(n, field) },
		"trusted":     func(n *yaml.Node, field string) { f.Trusted = p.trusted(n, field) },
	})
	if f.MinRuns != nil && f.MaxRuns != nil && *f.MaxRuns < *f.MinRuns {
		p.fail(nil, "rule.max_runs", "%d is below rule.min_runs %d; give max_runs at least min_runs", *f.MaxRuns, *f.MinRuns)
	}
	if len(p.problems) > 0 {
		return File{}, &Error{p.problems}
	}
	return f, nil
}

var yamlLine = regexp.MustCompile(`^line (\d+): `)

// fields reads mapping n, whose keys must be among known; prefix names n in problems.
func (p *parser) fields(n *yaml.Node, prefix string, known map[string]func(*yaml.Node, string)) {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := prefix + k.Value
		read, ok := known[k.Value]
		switch {
		case !ok:
			names := make([]string, 0, len(known))
			for name := range known {
				names = append(names, prefix+name)
			}
			slices.Sort(names)
			p.fail(k, field, "not a setting; the settings here are %s", strings.Join(names, ", "))
		case seen[k.Value]:
			p.fail(k, field, "set twice; keep one")
		default:
			seen[k.Value] = true
			read(v, field)
		}
	}
}

func (p *parser) rule(n *yaml.Node, field string, f *File) {
	if n.Kind != yaml.MappingNode {
		p.fail(n, field, "give a mapping: min_effect, target_width, min_runs, max_runs")
		return
	}
	p.fields(n, field+".", map[string]func(*yaml.Node, string){
		"min_effect": func(v *yaml.Node, fd string) {
			f.MinEffect = p.percent(v, fd, 0)
		},
		"target_width": func(v *yaml.Node, fd string) {
			f.Target = p.percent(v, fd, 0.1)
		},
		"min_runs": func(v *yaml.Node, fd string) {
			if r := p.intIn(v, fd, 2, MaxRuns, -1); r >= 0 {
				f.MinRuns = &r
			}
		},
		"max_runs": func(v *yaml.Node, fd string) {
			if r := p.intIn(v, fd, 2, MaxRuns, -1); r >= 0 {
				f.MaxRuns = &r
			}
		},
	})
}

// percent reads a percentage ("2%" or 2) of at least least and at most MaxEffect, as a
// fraction.
func (p *parser) percent(n *yaml.Node, field string, least float64) *float64 {
	s := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(n.Value), "%"))
	v, err := strconv.ParseFloat(s, 64)
	if n.Kind != yaml.ScalarNode || err != nil || math.IsNaN(v) || v < least || v > MaxEffect {
		p.fail(n, field, "%q is not a percentage from %g to %d; give one such as 2%%", n.Value, least, MaxEffect)
		return nil
	}
	v /= 100
	return &v
}

// intIn reads an integer from lo to hi; bad gives back bad.
func (p *parser) intIn(n *yaml.Node, field string, lo, hi, bad int) int {
	v, err := strconv.Atoi(strings.TrimSpace(n.Value))
	if n.Kind != yaml.ScalarNode || err != nil || v < lo || v > hi {
		p.fail(n, field, "%q is not a whole number from %d to %d; give one", n.Value, lo, hi)
		return bad
	}
	return v
}

func (p *parser) budget(n *yaml.Node, field string) *time.Duration {
	v := strings.TrimSpace(n.Value)
	d, err := time.ParseDuration(v)
	if v == "0" {
		d, err = 0, nil
	}
	if n.Kind != yaml.ScalarNode || err != nil || d < 0 || d > MaxBudget {
		p.fail(n, field, "%q is not a duration up to %s; give one such as 45m, or 0 for no limit", n.Value, "24h")
		return nil
	}
	return &d
}

// list reads a sequence of scalars (a single scalar is a list of one).
func (p *parser) list(n *yaml.Node, field string) ([]*yaml.Node, bool) {
	switch n.Kind {
	case yaml.ScalarNode:
		return []*yaml.Node{n}, true
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				p.fail(c, field, "give a list of names, one a line after `- `")
				return nil, false
			}
		}
		return n.Content, true
	}
	p.fail(n, field, "give a list of names, one a line after `- `")
	return nil, false
}

// gate reads either a list of profiles (each gated on its primary figure) or a mapping of
// profile to figure.
func (p *parser) gate(n *yaml.Node, field string) profile.Gate {
	g := profile.Gate{}
	add := func(k *yaml.Node, fig string) {
		pr, ok := profile.Lookup(k.Value)
		if !ok {
			p.fail(k, field, "%q is not a profile; the profiles are listed by `/benchmark-help`", k.Value)
			return
		}
		figs := pr.Figures()
		if fig == "" {
			fig = string(figs.Primary)
		}
		if !slices.Contains(figs.All(), profile.Figure(fig)) {
			names := make([]string, 0, 3)
			for _, f := range figs.All() {
				names = append(names, string(f))
			}
			p.fail(k, field+"."+k.Value, "%q is not a figure of %s; give one of %s", fig, k.Value, strings.Join(names, ", "))
			return
		}
		if _, dup := g[k.Value]; dup {
			p.fail(k, field, "%s is gated twice; keep one", k.Value)
			return
		}
		g[k.Value] = profile.Figure(fig)
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind != yaml.ScalarNode {
				p.fail(v, field+"."+k.Value, "give the figure as a word: %s: rps", k.Value)
				continue
			}
			add(k, v.Value)
		}
		return g
	}
	items, ok := p.list(n, field)
	if !ok {
		return nil
	}
	for _, k := range items {
		add(k, "")
	}
	return g
}

func (p *parser) pools(n *yaml.Node, field string) []string {
	items, ok := p.list(n, field)
	if !ok {
		return nil
	}
	var out []string
	for _, k := range items {
		switch {
		case !slices.Contains(p.lim.Pools, k.Value):
			p.fail(k, field, "%q is not a pool of this bot; its pools are %s", k.Value, strings.Join(p.lim.Pools, ", "))
		case slices.Contains(out, k.Value):
			p.fail(k, field, "%q is listed twice; keep one", k.Value)
		default:
			out = append(out, k.Value)
		}
	}
	if len(items) == 0 {
		p.fail(n, field, "an empty list routes nowhere; name a pool, or leave pools out for the operator's")
	}
	return out
}

func (p *parser) trusted(n *yaml.Node, field string) []string {
	items, ok := p.list(n, field)
	if !ok {
		return nil
	}
	if len(items) > MaxTrusted {
		p.fail(n, field, "%d logins, over %d; give write access to a team instead", len(items), MaxTrusted)
		return nil
	}
	var out []string
	for _, k := range items {
		login := strings.TrimPrefix(k.Value, "@")
		if !md.ValidLogin(login) {
			p.fail(k, field, "%q is not a GitHub login; give the login alone, such as octocat", k.Value)
			continue
		}
		out = append(out, login)
	}
	return out
}

// Operator is what the bot's own configuration gives where the file is silent.
type Operator struct {
	Depth int      // waiting requests per pull request (ARENA_QUEUE_DEPTH)
	Pools []string // ARENA_POOLS
}

// Items lists the settings in force, one Markdown line each, naming where the file is
// silent what applies instead.
func (f File) Items(op Operator) []string {
	var rule []string
	pct := func(v *float64, prefix string) string {
		if v == nil {
			return "the runner's"
		}
		return md.Code(prefix + strconv.FormatFloat(*v*100, 'f', -1, 64) + "%")
	}
	runs := func(v *int) string {
		if v == nil {
			return "the runner's"
		}
		return md.Code(strconv.Itoa(*v))
	}
	rule = append(rule, "a change is at least "+pct(f.MinEffect, ""), "a row stops at "+pct(f.Target, "±"),
		"runs a side from "+runs(f.MinRuns)+" to "+runs(f.MaxRuns))
	items := []string{"**Change-or-noise rule:** " + strings.Join(rule, ", ")}

	gate := "the " + strconv.Itoa(len(profile.DefaultGate())) + " profiles the arena's board scores, each on the figure it is judged by"
	if f.Gate != nil {
		var gs []string
		for _, name := range f.Gate.Profiles() {
			gs = append(gs, md.Code(name)+" on "+md.Code(string(f.Gate[name])))
		}
		gate = strings.Join(gs, ", ")
		if len(gs) == 0 {
			gate = "none: the check never fails"
		}
	}
	items = append(items, "**Gated:** "+gate)

	budget := "the runner's"
	if f.Budget != nil {
		budget = md.Code(text.Duration(*f.Budget))
		if *f.Budget == 0 {
			budget = "no limit"
		}
	}
	items = append(items, "**Job budget:** "+budget)
	depth := max(op.Depth, 1)
	if f.Depth > 0 {
		depth = f.Depth
	}
	items = append(items, "**Queue depth:** "+md.Plural(depth, "request", "requests")+" waiting per pull request")
	pools := op.Pools
	if f.Pools != nil {
		pools = f.Pools
	}
	if len(pools) > 0 {
		items = append(items, "**Pools:** "+md.CodeList(pools))
	}
	who := "collaborators with write access"
	if len(f.Trusted) > 0 {
		who += " and " + md.CodeList(f.Trusted)
	}
	return append(items, "**Approved at once:** requests of "+who)
}

// fields are the file's settings as the README documents them.
var fields = []struct{ key, value, unset, what string }{
	{"rule.min_effect", "percentage, 0 to 50 (`3%`)", "the runner's `--min-effect` (2%)", "the smallest Δ called a change when its interval excludes zero"},
	{"rule.target_width", "percentage, 0.1 to 50", "the runner's `--target-width` (2%)", "a row measured against a base stops once its Δ interval's half-width is under this"},
	{"rule.min_runs", "whole number, 2 to 50", "the runner's `--min-runs` (3)", "runs a side, at least, of a row measured against a base"},
	{"rule.max_runs", "whole number, 2 to 50, at least `min_runs`", "the runner's `--max-runs` (10)", "runs a side, at most"},
	{"gate", "a list of profiles, or a mapping of profile to figure (`rps`, `mb/s`, `msg/s`, `cpu/req`, `p99`)", "every profile the arena's board scores, on its primary figure", "the rows the `arenabot` check fails on when they got worse; a listed profile is judged on its primary figure"},
	{"budget", "duration up to 24h (`45m`), or 0 for none", "the runner's `--budget`", "after this long, rows measured against a base stop at `min_runs`"},
	{"queue_depth", "whole number, 1 to 10", "`ARENA_QUEUE_DEPTH` (1)", "requests each pull request may have waiting in line"},
	{"pools", "a list of the bot's pools", "`ARENA_POOLS`", "the runner pools requests go to, in preference order"},
	{"trusted", "a list of GitHub logins, at most 200", "none", "users whose requests are approved at once, as a collaborator's are"},
}

// Schema renders the file's settings as a Markdown table.
func Schema() string {
	var b strings.Builder
	b.WriteString("| setting | value | when unset | what it sets |\n|---|---|---|---|\n")
	for _, f := range fields {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.key, f.value, f.unset, f.what)
	}
	return b.String()
}

// Short lists what the file sets, a few words each, for a status comment; nil when it sets
// nothing.
func (f File) Short() []string {
	var out []string
	pct := func(v float64) string { return strconv.FormatFloat(v*100, 'f', -1, 64) + "%" }
	if f.MinEffect != nil {
		out = append(out, "a change is at least "+md.Code(pct(*f.MinEffect)))
	}
	if f.Target != nil {
		out = append(out, "rows stop at "+md.Code("±"+pct(*f.Target)))
	}
	if f.MinRuns != nil {
		out = append(out, "at least "+md.Plural(*f.MinRuns, "run", "runs")+" a side")
	}
	if f.MaxRuns != nil {
		out = append(out, "at most "+md.Plural(*f.MaxRuns, "run", "runs")+" a side")
	}
	if f.Gate != nil {
		names := f.Gate.Profiles()
		g := "gated on " + md.CodeList(names[:min(len(names), 4)])
		switch {
		case len(names) == 0:
			g = "gated on no profile"
		case len(names) > 4:
			g += fmt.Sprintf(" and %d more", len(names)-4)
		}
		out = append(out, g)
	}
	if f.Budget != nil {
		out = append(out, "job budget "+md.Code(text.Duration(*f.Budget)))
	}
	if f.Depth > 0 {
		out = append(out, md.Plural(f.Depth, "request", "requests")+" waiting per pull request")
	}
	if f.Pools != nil {
		out = append(out, "pools "+md.CodeList(f.Pools))
	}
	if len(f.Trusted) > 0 {
		out = append(out, md.Plural(len(f.Trusted), "user", "users")+" approved at once")
	}
	return out
}
