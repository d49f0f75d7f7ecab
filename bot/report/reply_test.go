package report

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/md/mdtest"
)

// TestReply: the mention stands alone on the first line, so a body that starts with a
// heading still renders it.
func TestReply(t *testing.T) {
	for _, tt := range []struct{ requester, body, want string }{
		{"alice", "## Benchmark failed\n\nbody", "@alice\n\n## Benchmark failed\n\nbody"},
		{"alice", "\n\n### Commands\n", "@alice\n\n### Commands\n"},
		{"org/team", "## T", "`org/team`\n\n## T"},
		{"", "## T", "## T"},
	} {
		if got := Reply(tt.requester, tt.body); got != tt.want {
			t.Errorf("Reply(%q, %q) = %q, want %q", tt.requester, tt.body, got, tt.want)
		}
	}
}

func TestRenderProblem(t *testing.T) {
	got := RenderProblem("/benchmark -f gin @org/team\n#1", "unexpected argument `@\u200borg/team`", "name a test with `-t`\n<!-- x")
	want := "`/benchmark -f gin @\u200borg/team #1`\n\n**Problem:** unexpected argument `@\u200borg/team`\n\n**Fix:** name a test with `-t` &lt;!-- x"
	if got != want {
		t.Errorf("RenderProblem =\n%q, want\n%q", got, want)
	}
}

func endingCases() map[string]Ending {
	base := Ending{
		RequestID: "pr-42-c1001", Requester: "alice", Command: "/benchmark -f gin -t baseline --save",
		StatusURL: "https://github.com/o/r/pull/42#issuecomment-1002",
	}
	cases := map[string]Ending{}
	add := func(name string, f func(e *Ending)) {
		e := base
		f(&e)
		cases[name] = e
	}
	add("declined", func(e *Ending) { e.Outcome, e.By = OutcomeDeclined, "carol" })
	add("expired", func(e *Ending) { e.Outcome = OutcomeExpired })
	add("cancelled", func(e *Ending) { e.Outcome, e.By = OutcomeCancelled, "alice" })
	add("superseded-replaced", func(e *Ending) {
		e.Outcome, e.SupersededHow = OutcomeSuperseded, SupersededReplaced
		e.SupersededBy = "https://github.com/o/r/pull/42#issuecomment-1005"
	})
	add("superseded-displaced", func(e *Ending) {
		e.Outcome, e.SupersededHow = OutcomeSuperseded, SupersededDisplaced
		e.SupersededBy = "https://github.com/o/r/pull/42#issuecomment-2001"
	})
	add("failed", func(e *Ending) {
		e.Outcome, e.Reason = OutcomeFailed, "checkout of 0123456789ab failed: fatal: reference is not a tree"
	})
	add("lost", func(e *Ending) { e.Outcome, e.Reason = OutcomeLost, "no heartbeat for 2m0s, retried once" })
	return cases
}

func TestRenderEndingGolden(t *testing.T) {
	for name, e := range endingCases() {
		t.Run(name, func(t *testing.T) {
			checkGolden(t, filepath.Join("testdata", "ending-"+name+".golden"), RenderEnding(e))
		})
	}
}

// TestRenderEnding: the requester is mentioned on the first line, alone; the title says how
// it ended; the command, the status link and the marker are there; the ID is not visible.
func TestRenderEnding(t *testing.T) {
	titles := map[Outcome]string{
		OutcomeDeclined: "## Benchmark request declined", OutcomeExpired: "## Benchmark request expired",
		OutcomeCancelled: "## Benchmark cancelled", OutcomeSuperseded: "## Benchmark request superseded",
		OutcomeFailed: "## Benchmark failed", OutcomeLost: "## Benchmark lost", "weird": "## Benchmark request ended",
	}
	cases := endingCases()
	cases["weird"] = Ending{RequestID: "pr-42-c1001", Requester: "alice", Command: "/benchmark", Outcome: "weird"}
	for name, e := range cases {
		out := RenderEnding(e)
		lines := strings.Split(out, "\n")
		if lines[0] != "@alice" || lines[1] != "" || lines[2] != titles[e.Outcome] {
			t.Errorf("%s: starts %q, want @alice, a blank line and %q", name, lines[:3], titles[e.Outcome])
		}
		if last := lines[len(lines)-1]; last != EndingMarker(e.RequestID) {
			t.Errorf("%s: last line %q, want the marker", name, last)
		}
		if !strings.Contains(out, "`"+e.Command+"`") {
			t.Errorf("%s: lacks the command in code:\n%s", name, out)
		}
		if e.StatusURL != "" && !strings.Contains(out, "[status comment]("+e.StatusURL+")") {
			t.Errorf("%s: lacks the status link:\n%s", name, out)
		}
		if strings.Contains(strings.TrimSuffix(out, EndingMarker(e.RequestID)), e.RequestID) {
			t.Errorf("%s: shows the request ID:\n%s", name, out)
		}
		if strings.Contains(out, "Benchmark Results") {
			t.Errorf("%s: an ending without results is titled Benchmark Results", name)
		}
		if again := RenderEnding(e); again != out {
			t.Errorf("%s: not deterministic", name)
		}
	}
}

func TestEndingMarker(t *testing.T) {
	if got, want := EndingMarker("pr-42-c1001"), "<!-- arenabot:ending request=pr-42-c1001 -->"; got != want {
		t.Errorf("EndingMarker = %q, want %q", got, want)
	}
	id := "r1"
	m := EndingMarker(id)
	for _, other := range []string{Marker(id), ResultsMarker(id, 1)} {
		if strings.Contains(m, other) || strings.Contains(other, m) {
			t.Errorf("EndingMarker %q and %q overlap", m, other)
		}
	}
	if got := EndingMarker("a -->b\n"); strings.Count(got, "-->") != 1 || strings.Contains(got, "\n") {
		t.Errorf("EndingMarker of a hostile id = %q", got)
	}
}

func TestRenderEndingHostile(t *testing.T) {
	const evil = "@org/team #1 GH-2 o/r#3 <script>x</script> `` | [x](https://evil) <!-- arenabot:ending request=r1 -->\n# heading"
	for _, e := range endingCases() {
		e.Requester, e.Command, e.By, e.Reason, e.SupersededBy = evil, evil, evil, evil, "javascript:alert(1)"
		out := RenderEnding(e)
		if abuse := mdtest.Abuse(out); len(abuse) > 0 {
			t.Errorf("%s: %v:\n%s", e.Outcome, abuse, out)
		}
		if n := strings.Count(out, "<!--"); n != 1 {
			t.Errorf("%s: %d HTML comments, want the marker only:\n%s", e.Outcome, n, out)
		}
		if strings.Contains(out, "javascript:") || strings.Contains(mdtest.Live(out), "\n# heading") {
			t.Errorf("%s: live hostile text:\n%s", e.Outcome, out)
		}
	}
}
