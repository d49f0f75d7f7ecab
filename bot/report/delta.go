package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/arenabot/arenabot/md"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/stats"
)

// What a measured row's Δ cells compare with.
type against int

const (
	againstNothing    against = iota // NEW: no base and no committed result
	againstNA                        // n/a: the --compare entry does not run the profile
	againstBase                      // the base measured with the row, interleaved, in the same job
	againstBaseFailed                // the base could not be built or run
	againstSameRun                   // the --compare entry's row of this run, measured one after the other
	againstCommitted                 // committed results, measured at another time
)

// against says what r's Δ compares with. r must have a Result.
func (r Row) against() against {
	switch base := r.Result.Base; {
	case r.NotApplicable:
		return againstNA
	case base != nil && strings.TrimSpace(base.Err) != "":
		return againstBaseFailed
	case base != nil:
		return againstBase
	case r.Baseline != nil && r.SameRun:
		return againstSameRun
	case r.Baseline != nil:
		return againstCommitted
	}
	return againstNothing
}

// The cells of a row without a Δ.
const (
	CellNew        = "NEW"         // no base
	CellNA         = "n/a"         // the --compare entry does not run the profile
	CellBaseFailed = "base failed" // the base could not be built or run: why is under the table
)

// Deltas renders a measured row's Δ RPS and Δ Mem cells under rule.
//
// A row measured against its base in the same job compares every run of both sides
// (stats.Compare): "-6.1% ±1.8%" for a change, "~0% (±2.4%)" for none (rule.Cell), or
// "base failed". A row compared with another result (committed, or the --compare entry's row
// of this run) does the same over both results' runs when each has at least two, else shows
// the difference of the means as "+5.0% (no interval)". When there is nothing to divide by
// (no runs, a base of 0) the cell says so. "NEW": nothing to compare with; "n/a": the
// --compare entry does not run the profile.
func Deltas(r Row, rule stats.Rule) (dRPS, dMem string) {
	res := r.Result
	switch r.against() {
	case againstNA:
		return CellNA, CellNA
	case againstBaseFailed:
		return CellBaseFailed, CellBaseFailed
	case againstBase:
		b := res.Base
		return deltaCell(rule, rpsSample(b.Runs, r.Bandwidth), rpsSample(res.Runs, r.Bandwidth)),
			deltaCell(rule, memSample(b.Runs), memSample(res.Runs))
	case againstSameRun, againstCommitted:
		b := r.Baseline
		return deltaCell(rule, resultRPS(b, r.Bandwidth), resultRPS(res, r.Bandwidth)),
			deltaCell(rule, resultMem(b), resultMem(res))
	}
	return CellNew, CellNew
}

// deltaCell renders head against base: the interval when both sides have two runs or more,
// else the difference of the means, marked as having no interval.
func deltaCell(rule stats.Rule, base, head stats.Sample) string {
	if d, err := stats.Compare(base, head); err == nil {
		return rule.Cell(d)
	}
	mb, mh := base.Mean(), head.Mean()
	switch {
	case len(base) == 0 || len(head) == 0 || math.IsNaN(mb) || math.IsNaN(mh):
		return "no Δ (no runs)"
	case mb == 0 && mh == 0:
		return "—" // not measured on either side (a memory peak the host could not read)
	case !(mb > 0):
		return "no Δ (base 0)"
	}
	return fmt.Sprintf("%+.1f%% (no interval)", (mh/mb-1)*100)
}

// rpsSample is each run's figure: requests per second, or bytes per second on a bandwidth
// row.
func rpsSample(runs []result.Run, bandwidth bool) stats.Sample {
	return result.Sample(runs, result.Figure(bandwidth))
}

// memSample is each run's peak memory in bytes.
func memSample(runs []result.Run) stats.Sample {
	return result.Sample(runs, func(run result.Run) float64 { return float64(run.MemoryPeak) })
}

// resultRPS is a result's runs' figures, or its summary figure alone when it kept no runs
// (a result file of the old arena's format).
func resultRPS(r *result.Result, bandwidth bool) stats.Sample {
	if len(r.Runs) > 0 {
		return rpsSample(r.Runs, bandwidth)
	}
	if bandwidth {
		return stats.Sample{bytesPerSec(r)}
	}
	return stats.Sample{float64(r.RPS)}
}

// resultMem is resultRPS for peak memory.
func resultMem(r *result.Result) stats.Sample {
	if len(r.Runs) > 0 {
		return memSample(r.Runs)
	}
	return stats.Sample{float64(r.MemoryPeak)}
}

// rule is the table's Δ rule.
func (t Table) rule() stats.Rule {
	if t.Rule == (stats.Rule{}) {
		return stats.DefaultRule
	}
	return t.Rule
}

// BaseFailures returns, for the rows whose base could not be built or run, one line per
// distinct reason: "baseline 512, json 512: build of nethttp at 0123456789ab failed: …".
func (t Table) BaseFailures() []string {
	var order []string
	where := map[string][]string{}
	for _, r := range t.Rows {
		if r.Result == nil || r.against() != againstBaseFailed {
			continue
		}
		why := md.Clip(r.Result.Base.Err, 1000)
		if _, ok := where[why]; !ok {
			order = append(order, why)
		}
		where[why] = append(where[why], r.Profile+" "+strconv.Itoa(r.Conns))
	}
	lines := make([]string, len(order))
	for i, why := range order {
		lines[i] = strings.Join(where[why], ", ") + ": " + why
	}
	return lines
}

// baseFailuresHead is the line above a table's BaseFailures.
func baseFailuresHead(t Table) string {
	return "Why the base of " + md.Code(t.Entry) + " failed (its rows' own runs stand; their Δ cells say `" + CellBaseFailed + "`):"
}

// pairedAny reports whether any row of the tables was measured against a base in the job.
func pairedAny(tables []Table) bool {
	for _, t := range tables {
		for _, r := range t.Rows {
			if r.Result != nil && r.Result.Base != nil {
				return true
			}
		}
	}
	return false
}

// ruleText says what a Δ cell reads under rule: "a change is at least 2% with an interval
// that excludes zero, else `~0% (±w)`: the smallest change the row could have shown".
func ruleText(rule stats.Rule) string {
	return "a change is at least " + percent(rule.MinEffect) + " with an interval that excludes zero, else `~0% (±w)`: the smallest change the row could have shown"
}

// percent renders a fraction as a percentage with no needless digits: 0.02 is "2%".
func percent(f float64) string {
	return strconv.FormatFloat(math.Round(f*1e4)/1e2, 'f', -1, 64) + "%"
}

// Note says in one line how the tables' Δ were obtained: against what base (its ref and
// commit, or the --compare entry), measured how (in this job, interleaved, the run counts
// the rows settled on), with which interval and rule; or, when no row was measured against
// a base in the job, that Δ is against committed results measured at another time.
func (b Baseline) Note(tables []Table) string {
	rule := b.rule()
	var bases []*result.Side
	var sides []int
	committed := false
	compare := b.Compare
	for _, t := range tables {
		for _, r := range t.Rows {
			if r.Result == nil {
				continue
			}
			switch r.against() {
			case againstBase:
				sides = append(sides, len(r.Result.Base.Runs), len(r.Result.Runs))
			case againstBaseFailed:
			case againstCommitted:
				committed = true
				continue
			default:
				continue
			}
			base := r.Result.Base
			bases = append(bases, base)
			if e := md.Clip(base.Entry, 100); compare == "" && e != "" && e != t.Entry {
				compare = e // another entry as the base: --compare
			}
		}
	}
	if len(bases) == 0 || b.OnlyCommitted {
		return b.committedNote(rule)
	}
	var s strings.Builder
	if compare != "" {
		s.WriteString("Δ against " + md.Code(compare) + ", measured in this job")
	} else {
		ref, commit := b.Ref, b.MergeBase
		for _, base := range bases {
			if ref == "" {
				ref = base.Ref
			}
			if commit == "" {
				commit = base.Commit
			}
		}
		s.WriteString("Δ of each changed entry against itself at ")
		switch {
		case b.AtRef && strings.TrimSpace(commit) != "":
			s.WriteString(refName(ref) + " (" + shortSHA(commit) + ")")
		case strings.TrimSpace(commit) != "":
			s.WriteString(shortSHA(commit) + " (merge base with " + refName(ref) + ")")
		default:
			s.WriteString("its merge base with " + refName(ref))
		}
		s.WriteString(", measured in this job")
	}
	s.WriteString(", interleaved run by run (base, head, head, base, …)")
	if len(sides) == 0 {
		s.WriteString("; the base failed on every row (why: under the tables).")
	} else {
		s.WriteString(", " + runCounts(sides) + "; " + stats.Method + "; " + ruleText(rule) + ".")
	}
	if committed {
		s.WriteString(" An entry unchanged from its base was measured once: its Δ is against its committed results on " +
			b.Source + ", measured at another time (said under its table).")
	}
	return s.String()
}

// committedNote is Note when no row was measured against a base in the job.
func (b Baseline) committedNote(rule stats.Rule) string {
	why := ""
	if b.OnlyCommitted {
		why = " (`--baseline committed`)"
	}
	how := "; with two runs a side or more, " + stats.Method + " (" + ruleText(rule) + "), else the difference of the means, `(no interval)`."
	if b.Compare == "" {
		return "Δ against each framework's committed results on " + b.Source + ", measured at another time, not in this job" + why + how
	}
	return "Δ against " + md.Code(b.Compare) + ": its rows from this run where it was run too, else its committed results on " +
		b.Source + ", measured at another time" + why + how
}

// tableNote is the line under a table whose rows are not all compared with a base measured
// with them in the job: which rows are compared with what, and that it was measured at
// another time (or, for the --compare entry's row of this run, not interleaved). paired
// says whether the job measured bases at all: then an entry compared with its committed
// results is one that did not change, measured once.
func (b Baseline) tableNote(t Table, paired bool) string {
	var committed, same []string
	for _, r := range t.Rows {
		if r.Result == nil {
			continue
		}
		switch r.against() {
		case againstCommitted:
			committed = append(committed, r.Profile+" "+strconv.Itoa(r.Conns))
		case againstSameRun:
			same = append(same, r.Profile+" "+strconv.Itoa(r.Conns))
		}
	}
	measured := 0
	for _, r := range t.Rows {
		if r.Result != nil {
			measured++
		}
	}
	which := func(rows []string) string {
		if len(rows) == measured {
			return "Δ of " + md.Code(t.Entry)
		}
		return "Δ of " + md.Code(t.Entry) + " " + md.Text(strings.Join(rows, ", "))
	}
	var notes []string
	if len(committed) > 0 {
		whose := "its"
		if b.Compare != "" {
			whose = md.Code(b.Compare) + "'s"
		}
		n := which(committed) + " is against " + whose + " committed results on " + b.Source + ", measured at another time, not in this job"
		switch {
		case b.OnlyCommitted:
			n += " (`--baseline committed`)."
		case paired && b.Compare == "":
			n += ": it is unchanged from its base, so it was measured once."
		default:
			n += "."
		}
		notes = append(notes, n)
	}
	if len(same) > 0 {
		notes = append(notes, which(same)+" is against "+md.Code(b.Compare)+"'s rows of this run, measured one after the other, not interleaved.")
	}
	return strings.Join(notes, " ")
}

// refName renders the base branch: "`main`", or "the base branch" when unnamed.
func refName(ref string) string {
	if strings.TrimSpace(ref) == "" {
		return "the base branch"
	}
	return md.Code(md.Clip(ref, 100))
}

// runCounts says how many runs the sides of the interleaved rows got: "3–10 runs each
// (median 4)", or "5 runs each" when they all got the same.
func runCounts(sides []int) string {
	s := slices.Clone(sides)
	slices.Sort(s)
	lo, hi := s[0], s[len(s)-1]
	if lo == hi {
		return md.Plural(lo, "run", "runs") + " each"
	}
	med := float64(s[len(s)/2])
	if len(s)%2 == 0 {
		med = float64(s[len(s)/2-1]+s[len(s)/2]) / 2
	}
	return fmt.Sprintf("%d–%d runs each (median %s)", lo, hi, strconv.FormatFloat(med, 'f', -1, 64))
}
