package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/arenabot/arenabot/md"
	"github.com/arenabot/arenabot/profile"
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

// A Delta is a measured row's Δ cells, each under the row's change-or-noise rule with an
// interval at stats.FamilyLevel(K), so that a row with no change flags one of its K cells by
// luck in at most 5% of rows.
type Delta struct {
	// Figures are what the row is judged by (its profile's Figures).
	Figures profile.Figures
	// K is how many of the row's cells may flag a change: its figures, Δ Mem and, on a
	// fixed-rate row, Δ score.
	K int
	// Primary is the Δ of Figures.Primary; CPU and P99 the Δ of CPU per request and p99
	// ("—" on a row with no such figure: p99 on WebSocket rows); Mem the Δ of peak memory.
	Primary, CPU, P99, Mem string
	// Score is a fixed-rate row's arena score, base → head ("71.3 → 65.0"), or, without a
	// base, the head's alone against committed results ("—" when there are none); DScore its
	// Δ in points. Both "—" on other rows.
	Score, DScore string
	// Bests are what a fixed-rate row's score was measured against.
	Bests ScoreBests
}

// figures is what the row is judged by: its profile's Figures, or, for a profile the table
// does not know, those of its kind.
func (r Row) figures() profile.Figures {
	if p, ok := profile.Lookup(r.Profile); ok {
		return p.Figures()
	}
	p := profile.Profile{WebSocket: r.WebSocket, Bandwidth: r.Bandwidth}
	if r.Result != nil {
		p.TargetRate = r.Result.TargetRate
	}
	return p.Figures()
}

// Deltas renders a measured row's Δ cells under rule.
//
// A row measured against its base in the same job compares every run of both sides
// (stats.CompareAt at FamilyLevel(K)): "-6.1% ±1.8% worse" for a change, with whether it is
// better or worse for that figure (an increase of CPU/req, p99 or Mem is worse), and "~0%
// (±2.4%)" for none (rule.Cell), or "base failed". A row compared with another result
// (committed, or the --compare entry's row of this run) does the same over both results'
// runs when each has at least two, else shows the difference of the means as "+5.0% (no
// interval)". When there is nothing to divide by (no runs, a base of 0) the cell says so;
// "—" when neither side has the figure. "NEW": nothing to compare with; "n/a": the --compare
// entry does not run the profile.
func Deltas(r Row, rule stats.Rule) Delta {
	figs := r.figures()
	d := Delta{Figures: figs, K: figs.Cells(), Score: "—", DScore: "—", P99: "—"}
	set := func(cell string) {
		d.Primary, d.CPU, d.Mem = cell, cell, cell
		if slices.Contains(figs.All(), profile.FigureP99) {
			d.P99 = cell
		}
		if figs.Scored {
			d.DScore = cell
		}
	}
	res := r.Result
	var baseRuns []result.Run
	var baseSummary *result.Result
	switch r.against() {
	case againstNA:
		set(CellNA)
	case againstBaseFailed:
		set(CellBaseFailed)
	case againstBase:
		baseRuns = res.Base.Runs
	case againstSameRun, againstCommitted:
		baseRuns, baseSummary = r.Baseline.Runs, r.Baseline
	default:
		set(CellNew)
	}
	compared := d.Primary == ""
	level := stats.FamilyLevel(d.K)
	if compared {
		cell := func(f profile.Figure) string {
			return deltaCell(rule, level, f.LowerIsBetter(), figureSample(baseRuns, baseSummary, f, r.Bandwidth), figureSample(res.Runs, res, f, r.Bandwidth))
		}
		d.Primary, d.CPU = cell(figs.Primary), cell(profile.FigureCPUPerReq)
		if slices.Contains(figs.All(), profile.FigureP99) {
			d.P99 = cell(profile.FigureP99)
		}
		d.Mem = deltaCell(rule, level, true, memSample(baseRuns, baseSummary), memSample(res.Runs, res))
	}
	if figs.Scored {
		d.scores(r, rule, level, compared, baseRuns, baseSummary)
	}
	return d
}

// scores fills a fixed-rate row's Score and, when it is compared with a base, DScore: each
// side's score from the means of its runs, the Δ from the score of each run against the
// same bests (Welch over the runs, in points).
func (d *Delta) scores(r Row, rule stats.Rule, level float64, compared bool, baseRuns []result.Run, baseSummary *result.Result) {
	res := r.Result
	target := float64(res.TargetRate)
	if target <= 0 {
		if p, ok := profile.Lookup(r.Profile); ok {
			target = float64(p.TargetRate)
		}
	}
	head := sidePoint(res.Runs, res)
	if !compared {
		// Without a base, the score means something only against others' results: against
		// itself alone every row would score 100.
		if d.Bests = bestsOf(r.Scored, head); d.Bests.Committed {
			d.Score = formatScore(ArenaScore(head, target, d.Bests))
		}
		return
	}
	base := sidePoint(baseRuns, baseSummary)
	d.Bests = bestsOf(r.Scored, base, head)
	sb, sh := ArenaScore(base, target, d.Bests), ArenaScore(head, target, d.Bests)
	d.Score = formatScore(sb) + " → " + formatScore(sh)
	bs, hs := runScores(baseRuns, target, d.Bests), runScores(res.Runs, target, d.Bests)
	diff, err := stats.CompareAt(bs, hs, level)
	if err != nil {
		if sb <= 0 && sh <= 0 {
			d.DScore = "—"
		} else {
			d.DScore = fmt.Sprintf("%+.1f pts (no interval)", sh-sb)
		}
		return
	}
	mb := bs.Mean()
	pts, half := diff.Rel*mb, diff.Half*mb
	if !rule.Changed(diff) {
		d.DScore = fmt.Sprintf("~0 (±%.1f pts)", half)
		return
	}
	d.DScore = fmt.Sprintf("%+.1f ±%.1f pts %s", pts, half, direction(diff.Rel, false))
}

// formatScore renders a 0–100 score with one decimal.
func formatScore(s float64) string { return strconv.FormatFloat(s, 'f', 1, 64) }

// direction says whether a change of rel is an improvement of a figure: "better" or
// "worse".
func direction(rel float64, lowerIsBetter bool) string {
	if (rel < 0) == lowerIsBetter {
		return "better"
	}
	return "worse"
}

// deltaCell renders head against base: the interval at level when both sides have two runs
// or more, with whether a change is better or worse, else the difference of the means,
// marked as having no interval.
func deltaCell(rule stats.Rule, level float64, lowerIsBetter bool, base, head stats.Sample) string {
	if d, err := stats.CompareAt(base, head, level); err == nil {
		if rule.Changed(d) {
			return rule.Cell(d) + " " + direction(d.Rel, lowerIsBetter)
		}
		return rule.Cell(d)
	}
	mb, mh := base.Mean(), head.Mean()
	switch {
	case len(base) == 0 && len(head) == 0:
		return "—" // neither side has the figure
	case len(base) == 0 || len(head) == 0 || math.IsNaN(mb) || math.IsNaN(mh):
		return "no Δ (no runs)"
	case mb == 0 && mh == 0:
		return "—" // not measured on either side (a memory peak the host could not read)
	case !(mb > 0):
		return "no Δ (base 0)"
	}
	return fmt.Sprintf("%+.1f%% (no interval)", (mh/mb-1)*100)
}

// figureSample is each run's figure f (runs without it left out), or, for a result that
// kept no runs (a result file of the old arena's format), its summary figure alone.
func figureSample(runs []result.Run, summary *result.Result, f profile.Figure, bandwidth bool) stats.Sample {
	if len(runs) > 0 || summary == nil {
		if f == profile.FigureRPS && bandwidth {
			f = profile.FigureBandwidth
		}
		return stats.Sample(result.Values(runs, string(f)))
	}
	var v float64
	switch f {
	case profile.FigureRPS, profile.FigureEchoes:
		v = float64(summary.RPS)
		if bandwidth {
			v = bytesPerSec(summary)
		}
	case profile.FigureBandwidth:
		v = bytesPerSec(summary)
	case profile.FigureCPUPerReq:
		v = summary.CPUPerRequest
	case profile.FigureP99:
		v = summary.LatencyUS.P99
	}
	if v <= 0 && f != profile.FigureRPS && f != profile.FigureEchoes && f != profile.FigureBandwidth {
		return nil // not recorded: no figure rather than a base of 0
	}
	return stats.Sample{v}
}

// memSample is each run's peak memory in bytes, or the summary's peak for a result that
// kept no runs.
func memSample(runs []result.Run, summary *result.Result) stats.Sample {
	if len(runs) == 0 && summary != nil {
		return stats.Sample{float64(summary.MemoryPeak)}
	}
	return result.Sample(runs, func(run result.Run) float64 { return float64(run.MemoryPeak) })
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

// primaryText says what a row's first Δ is: "Δ is each row's primary figure (RPS, CPU/req
// on fixed-rate rows)", and, when rows were measured interleaved (paired), that it is the
// figure whose interval their runs narrowed.
func primaryText(tables []Table, paired bool) string {
	kinds := map[profile.Figure]bool{}
	for _, t := range tables {
		for _, r := range t.Rows {
			if r.Result != nil {
				kinds[r.figures().Primary] = true
			}
		}
	}
	primary := []string{"RPS"}
	for _, k := range []struct {
		f    profile.Figure
		text string
	}{{profile.FigureBandwidth, "MB/s on bandwidth rows"}, {profile.FigureEchoes, "echoes/s on WebSocket rows"}, {profile.FigureCPUPerReq, "CPU/req on fixed-rate rows"}} {
		if kinds[k.f] {
			primary = append(primary, k.text)
		}
	}
	s := "Δ is each row's primary figure (" + strings.Join(primary, ", ") + ")"
	if paired {
		s += ", the one its runs were measured until its interval was narrow enough"
	}
	return s
}

// familyText says how a row's Δ cells are judged together: "each of a row's 4 Δ cells (3
// on a WebSocket row) has a Welch interval of the relative difference of the means at
// 98.75% (98.33%), not 95% (Bonferroni …): a row with no change flags one of them by luck
// in at most 5% of rows; …".
func familyText(tables []Table) string {
	ks := map[int]bool{}
	for _, t := range tables {
		for _, r := range t.Rows {
			if r.Result != nil {
				ks[r.figures().Cells()] = true
			}
		}
	}
	const welch = " has a Welch interval of the relative difference of the means at "
	cells := "4 Δ cells" + welch + percent(stats.FamilyLevel(4))
	switch k3 := ks[3]; {
	case k3 && ks[4]:
		cells = "4 Δ cells (3 on a WebSocket row)" + welch + percent(stats.FamilyLevel(4)) + " (" + percent(stats.FamilyLevel(3)) + ")"
	case k3:
		cells = "3 Δ cells" + welch + percent(stats.FamilyLevel(3))
	}
	return "each of a row's " + cells + ", not 95% (Bonferroni over the row's cells): a row with no change flags one of them by luck in at most 5% of rows; " +
		"a change says whether it is `better` or `worse` for that figure (more CPU/req, p99 or Mem is worse)"
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
		return b.committedNote(rule, tables)
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
		s.WriteString(", " + runCounts(sides) + "; " + primaryText(tables, true) + "; " + familyText(tables) + "; " + ruleText(rule) + ".")
	}
	if committed {
		s.WriteString(" An entry unchanged from its base was measured once: its Δ is against its committed results on " +
			b.Source + ", measured at another time (said under its table).")
	}
	return s.String()
}

// committedNote is Note when no row was measured against a base in the job.
func (b Baseline) committedNote(rule stats.Rule, tables []Table) string {
	why := ""
	if b.OnlyCommitted {
		why = " (`--baseline committed`)"
	}
	how := "; " + primaryText(tables, false) + "; with two runs a side or more, " + familyText(tables) + "; " + ruleText(rule) + "; with fewer, the difference of the means, `(no interval)`."
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
