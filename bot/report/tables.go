package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/arenabot/arenabot/md"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/stats"
)

// A Baseline says what deltas compare against. A row measured against a base in the same
// job carries it (Result.Base) and is compared with it; the fields here say what that base
// was, and what the other rows compare with.
type Baseline struct {
	// Compare is the entry named by --compare; "" compares each entry with its own base.
	Compare string
	// Source names where committed results come from, for the reply ("`main` at
	// `abcdef012345`", "the working tree"): trusted Markdown.
	Source string
	// Committed returns an entry's committed result for a profile and connection count (nil
	// when there is none) and whether the entry runs that profile at all.
	Committed func(entry, profile string, conns int) (*result.Result, bool)
	// Ref is the base branch ("main") and MergeBase the commit the changed entries were
	// built at as their base (Report.BaseRef, Report.MergeBase); "" when the report says
	// none (a row's Base may still name them).
	Ref, MergeBase string
	// AtRef says that the base is Ref itself (MergeBase its commit), not the merge base with
	// it: arenabot bench --against REF.
	AtRef bool
	// OnlyCommitted is set when the job asked for --baseline committed: no base was
	// measured, every Δ is against committed results.
	OnlyCommitted bool
	// Rule is the rule the Δ cells apply (Report.Rule); nil means stats.DefaultRule.
	Rule *stats.Rule
	// Scored returns the committed results of a profile, every entry and connection count
	// there are: what a fixed-rate row's score is measured against. nil: none.
	Scored func(profile string) []*result.Result
}

// rule is the Δ rule in force.
func (b Baseline) rule() stats.Rule {
	if b.Rule != nil {
		return *b.Rule
	}
	return stats.DefaultRule
}

// Tables groups measured rows into one table per entry, in the order entries first appear,
// and attaches each row's baseline, the Δ rule and the note under each table that names
// the rows whose Δ is not against a base measured in the same job. A failed row's Short
// is its cell ("" means Err, cut short); the advisories of any row go under its entry's
// table.
func Tables(rows []result.Row, b Baseline) []Table {
	var tables []Table
	index := map[string]int{}
	sameRun := map[profile.Row]*result.Result{}
	for _, r := range rows {
		if r.Result != nil {
			sameRun[profile.Row{Entry: r.Entry, Test: r.Profile, Conns: r.Conns}] = r.Result
		}
	}
	for _, m := range rows {
		i, ok := index[m.Entry]
		if !ok {
			i = len(tables)
			index[m.Entry] = i
			tables = append(tables, Table{Entry: m.Entry, Display: m.Display, Rule: b.rule()})
		}
		tables[i].Advisories = append(tables[i].Advisories, m.Advisories...)
		row := Row{Profile: m.Profile, Conns: m.Conns, Result: m.Result, Err: m.Err, Short: m.Short, WebSocket: m.WebSocket, Bandwidth: m.Bandwidth, Host: m.Host}
		if m.Result != nil {
			row.Baseline, row.SameRun, row.NotApplicable = b.lookup(m, sameRun)
			if b.Scored != nil && row.figures().Scored {
				row.Scored = b.Scored(m.Profile)
			}
		}
		tables[i].Rows = append(tables[i].Rows, row)
	}
	paired := pairedAny(tables)
	for i := range tables {
		tables[i].Note = b.tableNote(tables[i], paired)
		if h := hostsNote(tables[i]); h != "" {
			tables[i].Note = strings.TrimSpace(tables[i].Note + "\n\n" + h)
		}
	}
	return tables
}

// hostsNote names the host of each row of a table whose rows were measured on hosts named
// per row (a job split over several hosts): "Measured on `host-a`: baseline 512, 4096;
// json 512. On `host-b`: …". "" when no row names its host.
func hostsNote(t Table) string {
	var hosts []string
	rows := map[string][]string{}
	for _, r := range t.Rows {
		if r.Host == "" {
			continue
		}
		if _, ok := rows[r.Host]; !ok {
			hosts = append(hosts, r.Host)
		}
		rows[r.Host] = append(rows[r.Host], md.Text(r.Profile)+" "+strconv.Itoa(r.Conns))
	}
	var parts []string
	for _, h := range hosts {
		parts = append(parts, md.Code(md.Clip(h, 100))+": "+strings.Join(rows[h], ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Measured on " + strings.Join(parts, "; on ") + "."
}

// lookup finds what a row without a base of its own compares with: the --compare entry's
// row of this run, else committed results. runs is false (n/a) when the --compare entry
// does not run the row's profile.
func (b Baseline) lookup(m result.Row, sameRun map[profile.Row]*result.Result) (base *result.Result, same, na bool) {
	against := m.Entry
	if b.Compare != "" {
		against = b.Compare
		if r, ok := sameRun[profile.Row{Entry: against, Test: m.Profile, Conns: m.Conns}]; ok {
			return r, true, false
		}
	}
	if b.Committed == nil {
		return nil, false, false
	}
	r, runs := b.Committed(against, m.Profile, m.Conns)
	if !runs && b.Compare != "" {
		return nil, false, true
	}
	return r, false, false
}

// A Summary is a whole results message as `arenabot bench` prints it: a title, header
// lines and the tables.
type Summary struct {
	Title    string   // "Benchmark Results"
	Header   []string // lines under the title: what ran, the commit, the host
	Tables   []Table
	Baseline Baseline
}

// Render renders a summary as Markdown. Title and Header are trusted Markdown (written by
// the caller); everything in the tables is escaped.
func Render(r Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", r.Title)
	for _, h := range r.Header {
		b.WriteString(h + "\n")
	}
	if len(r.Header) > 0 {
		b.WriteString("\n")
	}
	b.WriteString(r.Baseline.Note(r.Tables) + "\n")
	for _, t := range r.Tables {
		b.WriteString("\n" + RenderTable(t))
		if t.Note != "" {
			b.WriteString("\n" + t.Note + "\n")
		}
		if second := RenderDeltaTable(t); second != "" {
			b.WriteString("\n" + second)
		}
		if n := t.ScoreNote(r.Baseline.Source); n != "" {
			b.WriteString("\n" + n + "\n")
		}
		for _, block := range ProfileBlocks(t, nil) {
			b.WriteString("\n" + block)
		}
	}
	if lines := ProfileErrors(r.Tables); len(lines) > 0 {
		b.WriteString("\n" + strings.Join(lines, "\n") + "\n")
	}
	for _, t := range r.Tables {
		if f := t.BaseFailures(); len(f) > 0 {
			b.WriteString("\n" + baseFailuresHead(t) + "\n\n")
			for _, line := range f {
				b.WriteString("- " + md.Text(line) + "\n")
			}
		}
	}
	for _, t := range r.Tables {
		if f := t.Failures(); len(f) > 0 {
			fmt.Fprintf(&b, "\nWhy rows of %s failed:\n\n", md.Code(t.Entry))
			for _, line := range f {
				b.WriteString("- " + md.Text(line) + "\n")
			}
		}
	}
	for _, t := range r.Tables {
		if len(t.Advisories) > 0 {
			fmt.Fprintf(&b, "\n%s\n\n", AdvisoryHeadline(t))
			for _, line := range t.Advisories {
				b.WriteString("- " + md.Text(line) + "\n")
			}
		}
	}
	return b.String()
}

// AdvisoryHeadline is the one line above an entry's advisories: "⚠️ 3 advisories for
// `nethttp`: …".
func AdvisoryHeadline(t Table) string {
	return fmt.Sprintf("⚠️ %s for %s: checks beyond the arena's contract (RFC conformance, good practice) that it missed; they do not stop a measurement, and `arenabot validate --strict` makes them failures.",
		md.Plural(len(t.Advisories), "advisory", "advisories"), md.Code(t.Entry))
}
