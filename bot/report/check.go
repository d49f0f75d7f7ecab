package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/arenabot/arenabot/md"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/stats"
	"github.com/arenabot/arenabot/text"
)

// A Verdict is a request's gate over its measured rows, each row of a gated profile judged
// on the figure it is gated on (by default its primary figure: RPS, MB/s, echoes/s, or a
// fixed-rate row's CPU per request) under the row's change-or-noise rule: a row got worse
// when the change is at least the rule's minimum and its interval excludes zero, in the bad
// direction.
type Verdict struct {
	Compared int      // gated rows with an interval on their figure
	Worse    []Judged // the rows that got worse, the largest change first
	Better   int      // rows that got better
	Ungated  int      // measured rows of profiles the gate leaves out
}

// A Judged row is one the verdict names.
type Judged struct {
	Entry, Profile string
	Conns          int
	Figure         string  // the gated figure's name: "rps", "p99"
	Cell           string  // its Δ as the reply shows it: "-9.1% ±1.8% worse"
	Rel            float64 // the relative change of the means
}

// Judge is the verdict of the reply's tables on gate (nil: profile.DefaultGate): the rows of
// gated profiles with a base (measured in the job, or committed, or the --compare entry's)
// and two runs a side, so that their change has an interval, each on the figure its profile
// is gated on; the others are not judged.
func Judge(tables []Table, gate profile.Gate) Verdict {
	var v Verdict
	for _, t := range tables {
		rule := t.rule()
		for _, row := range t.Rows {
			res := row.Result
			if res == nil {
				continue
			}
			f, gated := gate.Figure(row.Profile)
			if !gated {
				v.Ungated++
				continue
			}
			var baseRuns []result.Run
			var baseSummary *result.Result
			switch row.against() {
			case againstBase:
				baseRuns = res.Base.Runs
			case againstSameRun, againstCommitted:
				baseRuns, baseSummary = row.Baseline.Runs, row.Baseline
			default:
				continue
			}
			figs := row.figures()
			d, err := stats.CompareAt(figureSample(baseRuns, baseSummary, f, row.Bandwidth), figureSample(res.Runs, res, f, row.Bandwidth), stats.FamilyLevel(figs.Cells()))
			if err != nil {
				continue
			}
			v.Compared++
			if !rule.Changed(d) {
				continue
			}
			if direction(d.Rel, f.LowerIsBetter()) == "better" {
				v.Better++
				continue
			}
			v.Worse = append(v.Worse, Judged{Entry: t.Entry, Profile: row.Profile, Conns: row.Conns, Figure: string(f),
				Cell: rule.Cell(d) + " worse", Rel: d.Rel})
		}
	}
	slices.SortStableFunc(v.Worse, func(a, b Judged) int { return cmp.Compare(math.Abs(b.Rel), math.Abs(a.Rel)) })
	return v
}

// A Check is the bot's check run on a request's commit as the request's phase asks for it.
type Check struct {
	Status     string // "queued", "in_progress" or "completed"
	Conclusion string // when completed: "success", "failure", "neutral", "cancelled", "timed_out", "action_required"
	Title      string // one line
	Summary    string // Markdown
}

// CheckOf is the check run of a request in the phase s shows; res, for a request that ran to
// results (done, failed or cancelled with rows), holds them: the verdict of a done request
// is taken from them, and the summary holds their tables. The summary links recordURL (the
// request's status comment) for the full record.
func CheckOf(s Status, res *Results, recordURL string) Check {
	var c Check
	switch s.Phase {
	case PhaseAwaitingApproval:
		c = Check{Status: "completed", Conclusion: "action_required", Title: "Awaiting approval",
			Summary: "A collaborator with write access approves this request with 👍 on its status comment, or with `/benchmark-approve`."}
	case PhaseQueued:
		c = Check{Status: "queued", Title: "Queued"}
		if s.Position > 0 {
			c.Title = "Queued: " + Ordinal(s.Position) + " in line"
		}
	case PhaseRunning:
		c = Check{Status: "in_progress", Title: "Running"}
		if s.Total > 0 {
			c.Title = fmt.Sprintf("Running: %d of %d measurements done", s.Done, s.Total)
		}
	case PhaseDone:
		c = doneCheck(res, s.Gate)
	case PhaseFailed:
		c = Check{Status: "completed", Conclusion: "failure", Title: "Failed"}
		switch {
		case res != nil && res.State == "lost":
			c.Conclusion, c.Title = "timed_out", "The runner stopped responding twice"
		case strings.HasPrefix(s.Reason, "the job ran past its"):
			c.Conclusion = "timed_out"
		}
		if s.Reason != "" && c.Title == "Failed" {
			c.Title = "Failed: " + s.Reason
		}
	case PhaseCancelled:
		c = Check{Status: "completed", Conclusion: "cancelled", Title: "Cancelled"}
		if s.CancelledBy != "" {
			c.Title = "Cancelled by " + s.CancelledBy
		}
	case PhaseSuperseded:
		c = Check{Status: "completed", Conclusion: "cancelled", Title: "Superseded by a newer request"}
	case PhaseRejected:
		c = Check{Status: "completed", Conclusion: "cancelled", Title: "Declined"}
		if s.DeclinedBy != "" {
			c.Title = "Declined by " + s.DeclinedBy
		}
	case PhaseExpired:
		c = Check{Status: "completed", Conclusion: "timed_out", Title: "Not approved in time"}
	default:
		c = Check{Status: "completed", Conclusion: "neutral", Title: string(s.Phase)}
	}
	c.Title = text.Clip(c.Title, 120)
	var b strings.Builder
	b.WriteString("**Command:** " + md.Code(s.Command) + "\n")
	if c.Summary != "" {
		b.WriteString("\n" + c.Summary + "\n")
	}
	if res != nil && len(res.Report.Rows) > 0 {
		_, tables, _ := resultsTables(*res)
		for _, t := range tables {
			b.WriteString("\n" + RenderTable(t))
		}
	} else if len(s.Rows) > 0 {
		fmt.Fprintf(&b, "\n%s planned.\n", md.Plural(len(s.Rows), "measurement", "measurements"))
	}
	if u := md.Link("the request's status comment", recordURL); u != "" {
		b.WriteString("\nThe full record: " + u + ".\n")
	}
	c.Summary = b.String()
	return c
}

// doneCheck is the conclusion of a done request from its results' verdict.
func doneCheck(res *Results, gate profile.Gate) Check {
	if res == nil {
		return Check{Status: "completed", Conclusion: "neutral", Title: "Done: no results to judge"}
	}
	_, tables, _ := resultsTables(*res)
	v := Judge(tables, gate)
	ungated := " " + gateText(gate)
	if v.Ungated > 0 {
		ungated += " " + md.Plural(v.Ungated, "row of a profile the gate leaves out was", "rows of profiles the gate leaves out were") + " not judged."
	}
	switch {
	case len(v.Worse) > 0:
		w := v.Worse[0]
		more := ""
		if n := len(v.Worse) - 1; n > 0 {
			more = fmt.Sprintf(" (and %d more)", n)
		}
		return Check{Status: "completed", Conclusion: "failure",
			Title:   fmt.Sprintf("%s %s %d got worse: %s %s%s", w.Entry, w.Profile, w.Conns, w.Figure, w.Cell, more),
			Summary: fmt.Sprintf("%d of %d gated rows compared got worse on the figure each is gated on, beyond the change-or-noise rule.%s", len(v.Worse), v.Compared, ungated)}
	case v.Compared == 0:
		return Check{Status: "completed", Conclusion: "neutral", Title: "Nothing measured against a base",
			Summary: "No row of a gated profile had a base with an interval to compare with (new rows, or committed results without runs): nothing to judge." + ungated}
	}
	return Check{Status: "completed", Conclusion: "success", Title: fmt.Sprintf("No row got worse: %d compared", v.Compared),
		Summary: fmt.Sprintf("None of the %d gated rows compared got worse on the figure each is gated on (%d got better).%s", v.Compared, v.Better, ungated)}
}

// gateText says what a request is gated on: "The gate: the profiles the arena's board
// scores, each on its primary figure." or the settings file's profiles and figures.
func gateText(g profile.Gate) string {
	if g == nil {
		return "The gate: the profiles the arena's board scores, each on its primary figure."
	}
	names := g.Profiles()
	if len(names) == 0 {
		return "The gate (the arena's settings file): no profile."
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = md.Code(n) + " on " + md.Code(string(g[n]))
	}
	return "The gate (the arena's settings file): " + strings.Join(parts, ", ") + "."
}
