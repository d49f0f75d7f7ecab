package report

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/md"
	"github.com/arenabot/arenabot/md/mdtest"
	"github.com/arenabot/arenabot/profile"
)

const hostile = "@everyone <script> [x](http://e) | `"

// baseStatus is a /benchmark-multiple request of two frameworks × two tests × two
// connection counts.
func baseStatus(p Phase) Status {
	s := Status{
		RequestID:  "pr-42-c1001",
		Phase:      p,
		Command:    "/benchmark-multiple -f gin,nethttp -t baseline,json --save",
		Requester:  "alice",
		SHA:        "0123456789abcdef0123456789abcdef01234567",
		Frameworks: []string{"gin", "nethttp"},
		Tests:      []string{"baseline", "json"},
		Estimate:   23 * time.Minute,
		Expires:    time.Date(2024, 5, 3, 14, 0, 0, 0, time.UTC),
	}
	for _, fw := range s.Frameworks {
		for _, t := range s.Tests {
			for _, c := range []int{512, 4096} {
				s.Rows = append(s.Rows, profile.Row{Entry: fw, Test: t, Conns: c})
			}
		}
	}
	if p != PhaseAwaitingApproval && p != PhaseExpired {
		s.Approver = "bob"
	}
	switch p {
	case PhaseQueued:
		s.Position, s.ETA = 2, 75*time.Minute
		s.Ahead = &Ahead{Repo: "o/r", PR: 12, Running: true}
	case PhaseRunning:
		s.Progress, s.Done, s.Total = "json 4096c — 7 of 8", 6, 8
	case PhaseDone:
		s.ResultsURL = "https://github.com/o/r/pull/42#issuecomment-1002"
		s.CommitURL = "https://github.com/o/r/pull/42/commits/fedcba9876543210"
	case PhaseFailed:
		s.Reason, s.Done, s.Total = "validation of nethttp failed: GET /json returned 500", 4, 8
	case PhaseCancelled:
		s.CancelledBy = "alice"
	case PhaseSuperseded:
		s.SupersededBy = "https://github.com/o/r/pull/42#issuecomment-2001"
		s.SupersededHow = SupersededDisplaced
		s.Reason = "superseded by newer request r2001 (o/r#43 by bob)" // the queue's: not shown
	case PhaseExpired:
		s.Reason = "no approval within 72h"
	case PhaseRejected:
		s.Approver, s.DeclinedBy = "", "carol"
		s.Reason = "declined with 👎"
	}
	return s
}

func statusCases() map[string]Status {
	cases := map[string]Status{}
	for _, p := range Phases {
		cases[string(p)] = baseStatus(p)
	}
	moved := baseStatus(PhaseAwaitingApproval)
	moved.HeadMoved = "89abcdef0123456789abcdef0123456789abcdef"
	cases["head-moved"] = moved
	fork := baseStatus(PhaseAwaitingApproval)
	fork.ForkNote = "This PR is from a fork that does not allow edits by maintainers: `--save` results will be posted as a patch instead of committed."
	cases["fork-note"] = fork
	cases["huge-plan"] = hugeStatus(PhaseQueued, 1000)
	replaced := baseStatus(PhaseSuperseded)
	replaced.Approver, replaced.SupersededHow = "", SupersededReplaced
	replaced.SupersededBy = "https://github.com/o/r/pull/42#issuecomment-1005"
	cases["superseded-replaced"] = replaced
	note := baseStatus(PhaseQueued)
	note.RunnerNote = "No runner of pool `default` has been seen since 10:04 UTC; the job runs when one starts."
	cases["queued-runner-note"] = note
	third := baseStatus(PhaseQueued)
	third.Position, third.Ahead = 3, &Ahead{Repo: "o/r", PR: 7}
	cases["queued-third"] = third
	one := baseStatus(PhaseRunning)
	one.Frameworks, one.Tests, one.Rows, one.Done, one.Total = []string{"gin"}, []string{"json"}, []profile.Row{{Entry: "gin", Test: "json", Conns: 4096}}, 0, 1
	one.Progress = "json 4096c — 1 of 1"
	cases["running-one"] = one
	hosts := baseStatus(PhaseRunning)
	hosts.Progress = "on 3 hosts — host-a: gin · json 4096c — 2 of 3; host-b: nethttp · baseline 512c — 2 of 3; host-c: nethttp · json 512c — 1 of 2"
	hosts.Done, hosts.Hosts = 3, 3
	cases["running-hosts"] = hosts
	set := baseStatus(PhaseQueued)
	set.Settings = "`.arenabot.yml` on `main`: a change is at least `3%`, gated on `baseline`, `json-tls`, job budget `45m0s`"
	set.SettingsWarning = "`.arenabot.yml` on `main` is not valid: line 3: rule.min\\_effect: \"lots\" is not a percentage from 0 to 50; give one such as 2%. The last valid file's settings apply until it is fixed."
	cases["queued-settings"] = set
	return cases
}

// hugeStatus is a /benchmark-test across n entries with three connection counts each.
func hugeStatus(p Phase, n int) Status {
	s := baseStatus(p)
	s.Command = "/benchmark-test -t baseline"
	s.Frameworks, s.Tests, s.Rows = nil, []string{"baseline"}, nil
	for i := range n {
		fw := fmt.Sprintf("framework-%04d", i)
		s.Frameworks = append(s.Frameworks, fw)
		for _, c := range []int{64, 512, 4096} {
			s.Rows = append(s.Rows, profile.Row{Entry: fw, Test: "baseline", Conns: c})
		}
	}
	s.Estimate = time.Duration(n) * 6 * time.Minute
	return s
}

func TestRenderStatusGolden(t *testing.T) {
	for name, s := range statusCases() {
		t.Run(name, func(t *testing.T) {
			got := RenderStatus(s)
			checkGolden(t, filepath.Join("testdata", "status-"+name+".golden"), got)
		})
	}
}

func TestStatusHeadlineEmoji(t *testing.T) {
	want := map[Phase]string{
		PhaseAwaitingApproval: "👀", PhaseQueued: "📋", PhaseRunning: "⏳", PhaseDone: "✅", PhaseFailed: "❌",
		PhaseCancelled: "🚫", PhaseSuperseded: "⏭️", PhaseExpired: "⌛", PhaseRejected: "⛔",
	}
	for _, p := range Phases {
		first, _, _ := strings.Cut(RenderStatus(baseStatus(p)), "\n")
		if !strings.HasPrefix(first, want[p]+" ") {
			t.Errorf("%s: first line %q does not start with %s", p, first, want[p])
		}
	}
	if got := RenderStatus(Status{RequestID: "x", Phase: "weird"}); !strings.HasPrefix(got, "ℹ️ ") {
		t.Errorf("unknown phase renders %q", got)
	}
}

func TestStatusMarkerOnceAndLast(t *testing.T) {
	cases := statusCases()
	cases["empty"] = Status{RequestID: "r1"}
	evil := baseStatus(PhaseFailed)
	evil.Reason = Marker(evil.RequestID) + "\n" + Marker(evil.RequestID)
	evil.Command = "/benchmark " + Marker(evil.RequestID)
	evil.Requester = Marker(evil.RequestID)
	evil.ForkNote = Marker(evil.RequestID) + " <!-- open"
	evil.Rows = append(evil.Rows, profile.Row{Entry: Marker(evil.RequestID), Test: Marker(evil.RequestID)})
	cases["evil"] = evil
	for name, s := range cases {
		for _, p := range append(Phases, s.Phase) {
			s.Phase = p
			out := RenderStatus(s)
			m := Marker(s.RequestID)
			if n := strings.Count(out, m); n != 1 {
				t.Errorf("%s/%s: marker appears %d times", name, p, n)
			}
			if n := strings.Count(out, "<!--"); n != 1 {
				t.Errorf("%s/%s: %d HTML comment openings, want only the marker's", name, p, n)
			}
			lines := strings.Split(out, "\n")
			if last := lines[len(lines)-1]; last != m {
				t.Errorf("%s/%s: last line %q, want the marker %q", name, p, last, m)
			}
		}
	}
}

func TestMarker(t *testing.T) {
	if got, want := Marker("pr-42-c1001"), "<!-- arenabot:status request=pr-42-c1001 -->"; got != want {
		t.Errorf("Marker = %q, want %q", got, want)
	}
	seen := map[string]string{}
	long := strings.Repeat("x", 200)
	for _, id := range []string{"a b", "a%20b", "a-->b", "a\nb", "", long, long + "y", "~sha256-0", "ä"} {
		m := Marker(id)
		if other, dup := seen[m]; dup {
			t.Errorf("ids %q and %q share marker %q", id, other, m)
		}
		seen[m] = id
		id := strings.TrimSuffix(strings.TrimPrefix(m, "<!-- arenabot:status request="), " -->")
		if strings.ContainsAny(id, " \n<>") || !strings.HasSuffix(m, " -->") {
			t.Errorf("Marker(%q) = %q is unsafe", id, m)
		}
		if len(m) > 200 {
			t.Errorf("Marker(%q) is %d bytes", id, len(m))
		}
	}
}

// liveSyntax returns the Markdown of a line outside code spans, with each backslash escape
// replaced by "·" so that only live syntax remains (mdtest.Live), and whether a backtick is
// left live: a code span that does not close.
func liveSyntax(line string) (string, bool) {
	live := mdtest.Live(line)
	return live, strings.Contains(live, "`")
}

func TestStatusHostileTextEscaped(t *testing.T) {
	for _, p := range append(Phases, "weird") {
		s := baseStatus(p)
		s.Reason, s.Command, s.Requester, s.Approver = hostile, hostile, hostile, hostile
		s.Progress, s.SupersededBy, s.SHA, s.HeadMoved = hostile, hostile, hostile, hostile
		s.Frameworks = append(s.Frameworks, hostile)
		s.Tests = append(s.Tests, hostile)
		s.Rows = append(s.Rows, profile.Row{Entry: hostile, Test: hostile, Conns: 1})
		s.ResultsURL, s.CommitURL = "javascript:alert(1)", "https://e/x) [y](https://evil"
		out := RenderStatus(s)
		if strings.Contains(out, "@everyone") {
			t.Errorf("%s: output pings @everyone:\n%s", p, out)
		}
		for _, bad := range []string{"javascript:", "https://evil"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s: output contains %q:\n%s", p, bad, out)
			}
		}
		lines := strings.Split(out, "\n")
		for _, line := range lines[:len(lines)-1] { // the last line is the marker
			if strings.HasPrefix(line, "<details>") || line == "</details>" || strings.HasPrefix(line, "> [!") {
				continue
			}
			live, open := liveSyntax(line)
			if open {
				t.Errorf("%s: unbalanced code span in %q", p, line)
			}
			for _, bad := range []string{"<", "[", "](", "@e", "*e", "_", "http://"} {
				if strings.Contains(live, bad) {
					t.Errorf("%s: live %q in %q", p, bad, line)
				}
			}
			want := 0
			if strings.HasPrefix(line, "|") {
				want = 4 // a plan row: three cells
			}
			if n := strings.Count(live, "|"); n != want {
				t.Errorf("%s: %d live pipes in %q, want %d", p, n, line, want)
			}
		}
	}
}

func TestStatusSize(t *testing.T) {
	s := hugeStatus(PhaseRunning, 10_000)
	s.Rows = s.Rows[:10_000]
	out := RenderStatus(s)
	if len(out) >= MaxStatusBytes {
		t.Errorf("10,000 rows render to %d bytes, want < %d", len(out), MaxStatusBytes)
	}
	if !strings.Contains(out, "… and ") {
		t.Error("a huge plan is not cut short with “… and N more”")
	}

	// Distinct, long, hostile plan lines: the byte budget, not the line cap, cuts the plan.
	s.Rows = nil
	for i := range 10_000 {
		name := fmt.Sprint(i, strings.Repeat("@&", 200))
		s.Rows = append(s.Rows, profile.Row{Entry: name, Test: name, Conns: i})
	}
	out = RenderStatus(s)
	if len(out) >= MaxStatusBytes || len(out) < MaxStatusBytes-2000 {
		t.Errorf("10,000 long rows render to %d bytes, want just under %d", len(out), MaxStatusBytes)
	}
	if !strings.Contains(out, "more measurements") || !strings.HasSuffix(out, Marker(s.RequestID)) {
		t.Error("a plan cut by the byte budget lacks “… and N more” or the marker")
	}

	// Every field huge and hostile at once.
	big := strings.Repeat(hostile+" <!-- "+"@x ", 20_000)
	s = Status{RequestID: big, Phase: PhaseFailed, Command: big, Requester: big, Approver: big, SHA: big,
		HeadMoved: big, Progress: big, Reason: big, SupersededBy: big, ResultsURL: big, CommitURL: big,
		ForkNote: big, ApproveHow: big, Done: 1, Total: 2}
	for range 3000 {
		s.Frameworks = append(s.Frameworks, big)
		s.Tests = append(s.Tests, big)
		s.Rows = append(s.Rows, profile.Row{Entry: big, Test: big, Conns: 1}, profile.Row{Entry: big, Test: big, Conns: 2})
	}
	for _, p := range append(Phases, "weird") {
		s.Phase = p
		if n := len(RenderStatus(s)); n >= MaxStatusBytes {
			t.Errorf("%s: huge fields render to %d bytes", p, n)
		}
	}
}

func TestProgressBar(t *testing.T) {
	for _, tt := range []struct {
		done, total int
		want        string
	}{
		{0, 24, "`░░░░░░░░░░░░░░░░░░░░ 0/24`"},
		{3, 24, "`▓▓░░░░░░░░░░░░░░░░░░ 3/24`"},
		{24, 24, "`▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓ 24/24`"},
		{30, 24, "`▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓ 24/24`"},
		{-1, 2, "`░░░░░░░░░░░░░░░░░░░░ 0/2`"},
	} {
		if got := progressBar(tt.done, tt.total); got != tt.want {
			t.Errorf("progressBar(%d, %d) = %s, want %s", tt.done, tt.total, got, tt.want)
		}
	}
}

func TestFormatWait(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Second:                 "under a minute",
		61 * time.Second:                 "about 2 min",
		2 * time.Hour:                    "about 2 h",
		time.Hour + 5*time.Minute:        "about 1 h 5 min",
		59*time.Minute + time.Second:     "about 1 h",
		12*time.Minute + time.Nanosecond: "about 13 min",
	} {
		if got := formatWait(d); got != want {
			t.Errorf("formatWait(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestStatusSuperseded: the superseded status says how, links to the newer request's status
// comment, and never shows the queue's reason or an ID.
func TestStatusSuperseded(t *testing.T) {
	const url = "https://github.com/o/r/pull/42#issuecomment-1005"
	for _, tt := range []struct {
		how       SupersededHow
		by        string
		want, not string
	}{
		{SupersededReplaced, url, "Replaced by your newer request: [newer request](" + url + ").", "approved"},
		{SupersededDisplaced, url, "A newer approved request on this pull request took its place in line: [newer request](" + url + ").", "your newer"},
		{"", url, "A newer request took this one's place: [newer request](" + url + ").", "approved"},
		{SupersededReplaced, "r2001", "Replaced by your newer request.", "r2001"},
		{SupersededDisplaced, "javascript:alert(1)", "A newer approved request on this pull request took its place in line.", "javascript"},
	} {
		s := baseStatus(PhaseSuperseded)
		s.SupersededHow, s.SupersededBy = tt.how, tt.by
		s.Reason = "superseded by newer request r2001 (o/r#43 by bob)"
		out := RenderStatus(s)
		if !strings.Contains(out, "\n"+tt.want+"\n") {
			t.Errorf("%q/%q: status lacks %q:\n%s", tt.how, tt.by, tt.want, out)
		}
		for _, bad := range []string{tt.not, "r2001", "o/r#43"} {
			if strings.Contains(out, bad) {
				t.Errorf("%q/%q: status contains %q:\n%s", tt.how, tt.by, bad, out)
			}
		}
	}
}

// TestStatusNamesWhoEnded: cancelled and declined requests name who did it, through
// md.Mention: a valid login is mentioned, anything else is code.
func TestStatusNamesWhoEnded(t *testing.T) {
	for _, tt := range []struct {
		phase            Phase
		cancelled, by    string
		declined, approv string
		want             string
	}{
		{PhaseCancelled, "alice", "", "", "", "Cancelled by @alice."},
		{PhaseCancelled, "org/team", "", "", "", "Cancelled by `org/team`."},
		{PhaseRejected, "", "", "carol", "", "Declined by @carol."},
		{PhaseRejected, "", "", "", "dave", "Declined by @dave."},
		{PhaseRejected, "", "", "@everyone", "", "Declined by `@\u200beveryone`."},
	} {
		s := baseStatus(tt.phase)
		s.Reason = ""
		s.CancelledBy, s.DeclinedBy, s.Approver = tt.cancelled, tt.declined, tt.approv
		out := RenderStatus(s)
		if !strings.Contains(out, "\n"+tt.want+"\n") {
			t.Errorf("%s: status lacks %q:\n%s", tt.phase, tt.want, out)
		}
		if strings.Contains(out, "**Approved by:**") || strings.Contains(out, "**Declined by:**") {
			t.Errorf("%s: status lists an approver:\n%s", tt.phase, out)
		}
	}
	s := baseStatus(PhaseCancelled)
	s.CancelledBy = ""
	if out := RenderStatus(s); strings.Contains(out, "Cancelled by") {
		t.Errorf("a cancel without a name names someone:\n%s", out)
	}
}

// TestStatusRunnerNote: the runner note shows while the request waits or runs, only then.
func TestStatusRunnerNote(t *testing.T) {
	const note = "No runner of pool `default` has been seen since 10:04 UTC; the job runs when one starts."
	for _, p := range Phases {
		s := baseStatus(p)
		s.RunnerNote = note + "\n<!-- hide"
		out := RenderStatus(s)
		shown := strings.Contains(out, "\n"+note+" &lt;!-- hide\n")
		if want := p == PhaseQueued || p == PhaseRunning; shown != want {
			t.Errorf("%s: runner note shown = %v, want %v:\n%s", p, shown, want, out)
		}
	}
}

// TestStatusDeterministic: the same Status renders to the same bytes, so the bot can skip
// an edit that changes nothing.
func TestStatusDeterministic(t *testing.T) {
	for name, s := range statusCases() {
		if a, b := RenderStatus(s), RenderStatus(s); a != b {
			t.Errorf("%s: two renderings differ", name)
		}
	}
}

var oneManyRE = regexp.MustCompile(`(?:^|[^0-9.,/])1 (?:measurements|frameworks|tests|rows|minutes|runs|lines|earlier lines|advisories)\b`)

// TestPlurals: a count of one takes the singular everywhere.
func TestPlurals(t *testing.T) {
	one := baseStatus(PhaseQueued)
	one.Frameworks, one.Tests, one.Rows = []string{"gin"}, []string{"json"}, []profile.Row{{Entry: "gin", Test: "json", Conns: 4096}}
	running := one
	running.Phase, running.Done, running.Total = PhaseRunning, 0, 1
	failed := running
	failed.Phase = PhaseFailed
	cut := hugeStatus(PhaseQueued, MaxPlanLines+1)
	cut.Rows = cut.Rows[:3*MaxPlanLines+1] // the 101st plan line holds one row
	var outs []string
	for _, s := range []Status{one, running, failed, cut} {
		outs = append(outs, RenderStatus(s))
	}
	if !strings.Contains(outs[0], "Plan: 1 measurement</summary>") {
		t.Errorf("one row: %s", outs[0])
	}
	if !strings.Contains(outs[3], "… and 1 more measurement\n") {
		t.Errorf("one row cut: %s", outs[3])
	}
	r := doneResults()
	r.Report.Runs = 1
	r.Report.Rows = r.Report.Rows[:1]
	r.Report.Rows[0].Advisories = []string{"WARN baseline: x"}
	r.Report.Log = r.Report.Log[:1]
	outs = append(outs, RenderResults(r)...)
	if !strings.Contains(outs[len(outs)-1], "best of 1 run by RPS") {
		t.Errorf("one run: %s", outs[len(outs)-1])
	}
	for _, out := range outs {
		if m := oneManyRE.FindString(out); m != "" {
			t.Errorf("%q in:\n%s", m, out)
		}
	}
}

// TestStatusPlaceInLine: a queued request shows its place as an ordinal, counting the
// running job, and names the request ahead of it by repository and pull request, without
// a raw # or @ and with the repository in a code span.
func TestStatusPlaceInLine(t *testing.T) {
	for _, tt := range []struct {
		pos   int
		ahead *Ahead
		want  string
	}{
		{1, nil, "**Next** in line · expected wait about 5 min."},
		{2, &Ahead{Repo: "octo/arena", PR: 12, Running: true}, "**2nd** in line, behind `octo/arena` PR 12's running job · expected wait about 5 min."},
		{3, &Ahead{Repo: "octo/arena", PR: 7}, "**3rd** in line, behind `octo/arena` PR 7's job · expected wait about 5 min."},
		{2, &Ahead{Repo: "octo/arena", PR: 42, Running: true, ThisPR: true}, "**2nd** in line, behind this pull request's running job · expected wait about 5 min."},
		{4, &Ahead{Repo: "octo/arena", PR: 42, ThisPR: true}, "**4th** in line, behind this pull request's earlier request · expected wait about 5 min."},
		{2, &Ahead{Running: true}, "**2nd** in line, behind an operator's running job · expected wait about 5 min."},
		{11, nil, "**11th** in line · expected wait about 5 min."},
		{2, &Ahead{Repo: "@evil/#1 `x`", PR: 5}, "**2nd** in line, behind " + md.Code("@evil/#1 `x`") + " PR 5's job · expected wait about 5 min."},
	} {
		s := baseStatus(PhaseQueued)
		s.Position, s.Ahead, s.ETA = tt.pos, tt.ahead, 5*time.Minute
		out := RenderStatus(s)
		if !strings.Contains(out, "\n"+tt.want+"\n") {
			t.Errorf("place %d behind %+v: status lacks %q:\n%s", tt.pos, tt.ahead, tt.want, out)
		}
	}
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 10: "10th", 11: "11th", 12: "12th", 13: "13th",
		21: "21st", 22: "22nd", 23: "23rd", 101: "101st", 111: "111th", 112: "112th"} {
		if got := Ordinal(n); got != want {
			t.Errorf("Ordinal(%d) = %q, want %q", n, got, want)
		}
	}
}
