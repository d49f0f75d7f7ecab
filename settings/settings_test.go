package settings

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
)

var lim = Limits{Pools: []string{"default", "bench-a", "bench-b"}}

func TestParseValid(t *testing.T) {
	f, err := Parse([]byte(`# the arena's settings
rule:
  min_effect: 3%
  target_width: 1.5
  min_runs: 4
  max_runs: 12
gate:
  baseline: rps
  latency-10k: p99
budget: 45m
queue_depth: 2
pools: [bench-b, bench-a]
trusted:
  - alice
  - "@Bob"
`), lim)
	if err != nil {
		t.Fatal(err)
	}
	want := File{
		MinEffect: new(0.03), Target: new(0.015), MinRuns: new(4), MaxRuns: new(12),
		Gate:   profile.Gate{"baseline": profile.FigureRPS, "latency-10k": profile.FigureP99},
		Budget: new(45 * time.Minute), Depth: 2, Pools: []string{"bench-b", "bench-a"}, Trusted: []string{"alice", "Bob"},
	}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("parsed (-want +got):\n%s", diff)
	}
	if tu := f.Tuning(); tu == nil || *tu.MinRuns != 4 || *tu.Budget != 45*time.Minute {
		t.Errorf("tuning %+v, want the rule and budget", tu)
	}
	if !f.IsTrusted("bob") || f.IsTrusted("carol") {
		t.Errorf("trusted: bob %v (want true), carol %v (want false)", f.IsTrusted("bob"), f.IsTrusted("carol"))
	}
}

// TestParseGateList: a list gates each profile on its primary figure; an empty file sets
// nothing, and its tuning is nil, so the runner keeps its flags.
func TestParseGateList(t *testing.T) {
	f, err := Parse([]byte("gate:\n  - baseline\n  - latency-1m\n  - echo-ws\n"), lim)
	if err != nil {
		t.Fatal(err)
	}
	want := profile.Gate{"baseline": profile.FigureRPS, "latency-1m": profile.FigureCPUPerReq, "echo-ws": profile.FigureEchoes}
	if diff := cmp.Diff(want, f.Gate); diff != "" {
		t.Errorf("gate (-want +got):\n%s", diff)
	}
	if f.Tuning() != nil {
		t.Errorf("a file without a rule or budget gave tuning %+v", f.Tuning())
	}
	for _, empty := range []string{"", "# nothing yet\n"} {
		f, err := Parse([]byte(empty), lim)
		if err != nil || f.Gate != nil || f.Tuning() != nil || f.Depth != 0 {
			t.Errorf("%q: %+v, %v; want nothing set", empty, f, err)
		}
	}
}

// TestParseProblems: every bad field is named with its line and a fix, all of them at once.
func TestParseProblems(t *testing.T) {
	for _, c := range []struct {
		name, file string
		want       []string // each a problem's text, in order
	}{
		{"every field", `rule:
  min_effect: lots
  target_width: 0
  min_runs: 1
  max_runs: 99
  max_rnus: 3
gate:
  baseline: p50
  nosuch: rps
budget: forever
queue_depth: 0
pools: [elsewhere]
trusted: [not a login]
colour: blue
`, []string{
			`line 2: rule.min_effect: "lots" is not a percentage from 0 to 50; give one such as 2%`,
			`line 3: rule.target_width: "0" is not a percentage from 0.1 to 50; give one such as 2%`,
			`line 4: rule.min_runs: "1" is not a whole number from 2 to 50; give one`,
			`line 5: rule.max_runs: "99" is not a whole number from 2 to 50; give one`,
			`line 6: rule.max_rnus: not a setting; the settings here are rule.max_runs, rule.min_effect, rule.min_runs, rule.target_width`,
			`line 8: gate.baseline: "p50" is not a figure of baseline; give one of rps, cpu/req, p99`,
			`line 9: gate: "nosuch" is not a profile; the profiles are listed by ` + "`/benchmark-help`",
			`line 10: budget: "forever" is not a duration up to 24h; give one such as 45m, or 0 for no limit`,
			`line 11: queue_depth: "0" is not a whole number from 1 to 10; give one`,
			`line 12: pools: "elsewhere" is not a pool of this bot; its pools are default, bench-a, bench-b`,
			`line 13: trusted: "not a login" is not a GitHub login; give the login alone, such as octocat`,
			`line 14: colour: not a setting; the settings here are budget, gate, pools, queue_depth, rule, trusted`,
		}},
		{"runs crossed", "rule:\n  min_runs: 8\n  max_runs: 4\n", []string{"rule.max_runs: 4 is below rule.min_runs 8; give max_runs at least min_runs"}},
		{"not yaml", "budget: 1h\ngate:\n\t- baseline\n", []string{"line 3: not YAML (found character that cannot start any token); check the indentation and quoting there"}},
		{"not a mapping", "- baseline\n", []string{"line 1: the file must be a mapping of settings (rule:, gate:, budget:, queue_depth:, pools:, trusted:)"}},
		{"twice", "budget: 1h\nbudget: 2h\n", []string{"line 2: budget: set twice; keep one"}},
		{"too large", "# " + strings.Repeat("x", MaxSize), []string{"the file is 65538 bytes, over the 65536 the bot reads; keep it to the settings this file documents"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse([]byte(c.file), lim)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse = %+v, %v; want an *Error", f, err)
			}
			var got []string
			for _, p := range e.Problems {
				got = append(got, p.String())
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(err.Error(), FileName+": ") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func TestItems(t *testing.T) {
	op := Operator{Depth: 1, Pools: []string{"default"}}
	got := strings.Join(File{}.Items(op), "\n")
	for _, want := range []string{
		"a change is at least the runner's, a row stops at the runner's, runs a side from the runner's to the runner's",
		"**Gated:** the 22 profiles the arena's board scores",
		"**Job budget:** the runner's", "**Queue depth:** 1 request waiting", "**Pools:** `default`",
		"**Approved at once:** requests of collaborators with write access",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("defaults lack %q:\n%s", want, got)
		}
	}
	f := File{MinEffect: new(0.03), MinRuns: new(4), Gate: profile.Gate{"json-tls": profile.FigureRPS, "baseline": profile.FigureP99},
		Budget: new(time.Duration(0)), Depth: 2, Pools: []string{"bench-a"}, Trusted: []string{"alice"}}
	got = strings.Join(f.Items(op), "\n")
	for _, want := range []string{
		"a change is at least `3%`, a row stops at the runner's, runs a side from `4` to the runner's",
		"**Gated:** `baseline` on `p99`, `json-tls` on `rps`", "**Job budget:** no limit",
		"**Queue depth:** 2 requests waiting", "**Pools:** `bench-a`", "collaborators with write access and `alice`",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the file's items lack %q:\n%s", want, got)
		}
	}
	if got := (File{Gate: profile.Gate{}}).Items(op)[1]; !strings.Contains(got, "none: the check never fails") {
		t.Errorf("an empty gate: %q", got)
	}
	if (File{}).Tuning() != (*queue.Tuning)(nil) {
		t.Error("an empty file has a tuning")
	}
}

// TestREADMEExample: the example file the README shows is valid.
func TestREADMEExample(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## The arena's settings file")
	_, block, ok2 := strings.Cut(section, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("the README has no settings file example")
	}
	f, err := Parse([]byte(block), Limits{Pools: []string{"bench-a", "bench-b"}})
	if err != nil || f.Gate == nil || f.MinEffect == nil || len(f.Trusted) != 1 {
		t.Errorf("the README's example: %+v, %v", f, err)
	}
}
