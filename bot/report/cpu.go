package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/arenabot/arenabot/md"
	"github.com/arenabot/arenabot/result"
)

// profileTop is how many functions a profile block lists by self and by cumulative CPU.
const profileTop = 10

// profileDiffTop is how many changes the difference from the base lists each way.
const profileDiffTop = 5

// profiled returns the table's rows with a recorded CPU profile.
func (t Table) profiled() []Row {
	var rows []Row
	for _, r := range t.Rows {
		if r.Result != nil && r.Result.CPUProfile != nil && r.Result.CPUProfile.Err == "" && r.Result.CPUProfile.Samples > 0 {
			rows = append(rows, r)
		}
	}
	return rows
}

// ProfileErrors returns, once per distinct reason across the tables, the rows that were to
// be profiled and were not, and why: "No CPU profile (nethttp baseline 512): perf is not
// installed …". The reasons are the runner's text (untrusted) and escaped.
func ProfileErrors(tables []Table) []string {
	var order []string
	where := map[string][]string{}
	for _, t := range tables {
		for _, r := range t.Rows {
			if r.Result == nil || r.Result.CPUProfile == nil || r.Result.CPUProfile.Err == "" {
				continue
			}
			why := strings.TrimSpace(r.Result.CPUProfile.Err)
			if _, ok := where[why]; !ok {
				order = append(order, why)
			}
			where[why] = append(where[why], fmt.Sprintf("%s %s %d", t.Entry, r.Profile, r.Conns))
		}
	}
	lines := make([]string, len(order))
	for i, why := range order {
		lines[i] = fmt.Sprintf("⚠️ No CPU profile (%s): %s", md.Text(strings.Join(where[why], ", ")), md.Text(md.Clip(why, 500)))
	}
	return lines
}

// ProfileBlocks renders each profiled row of a table as a <details> block: the samples, the
// shares of the kernel, the garbage collector and the entry's own code, the top functions
// by self and by cumulative CPU, and, when the base was profiled in the same job, the
// functions whose share grew or shrank most. fileURL links a saved file of the entry
// ("baseline-512.cpu.svg") and returns "" when there is nothing to link (not saved): the
// file name is shown instead.
func ProfileBlocks(t Table, fileURL func(entry, file string) string) []string {
	var out []string
	for _, r := range t.profiled() {
		out = append(out, profileBlock(t, r, fileURL))
	}
	return out
}

func profileBlock(t Table, r Row, fileURL func(entry, file string) string) string {
	p := r.Result.CPUProfile
	var b strings.Builder
	fmt.Fprintf(&b, "<details><summary>CPU profile of <code>%s</code> %s %d: kernel %s, GC %s, own code %s</summary>\n\n",
		md.HTML(t.Entry), md.HTML(r.Profile), r.Conns, pct(p.Kernel), pct(p.GC), pct(p.Own))
	facts := []string{fmt.Sprintf("%s samples over %.1f s", FormatCount(float64(p.Samples)), p.DurationS)}
	if p.Frequency > 0 {
		facts[0] += fmt.Sprintf(" at %d Hz", p.Frequency)
	}
	facts = append(facts, "one more run after the measured ones, not in the numbers")
	if p.RPSRatio > 0 {
		cost := fmt.Sprintf("its RPS %.2f×", p.RPSRatio)
		if p.CPURatio > 0 {
			cost += fmt.Sprintf(" and CPU per request %.2f×", p.CPURatio)
		}
		facts = append(facts, cost+" the measured runs' mean")
	}
	b.WriteString(strings.Join(facts, "; ") + ".")
	if files := profileFiles(t.Entry, p, fileURL); files != "" {
		b.WriteString(" " + files)
	}
	b.WriteString("\n\n")
	writeShares(&b, "Top functions by self CPU", "Self", "Cum", topN(p.TopSelf), func(f result.FuncShare) (float64, float64) { return f.Self, f.Cum })
	writeShares(&b, "Top functions by cumulative CPU", "Cum", "Self", topN(p.TopCum), func(f result.FuncShare) (float64, float64) { return f.Cum, f.Self })
	if d := p.Diff; d != nil {
		against := "the base"
		if side := r.Result.Base; side != nil {
			against = md.Code(md.Clip(side.Entry, 100))
			if side.Commit != "" {
				against += " at " + md.Code(shortCommit(side.Commit))
			}
		}
		how := against + "** (profiled in the same job)"
		if d.Committed {
			how = "the profile committed on the base branch** (recorded at another time, not in this job)"
		}
		fmt.Fprintf(&b, "**Difference from %s: kernel %s, GC %s, own code %s. Each ± is the sampling error of the two profiles' shares (95%%, the intervals of a list holding together); only functions that moved by more are listed.\n\n",
			how, ptsWithin(d.Kernel, d.KernelMargin), ptsWithin(d.GC, d.GCMargin), ptsWithin(d.Own, d.OwnMargin))
		writeChanges(&b, "Self CPU", d.Self)
		writeChanges(&b, "Cumulative CPU", d.Cum)
	}
	b.WriteString("</details>\n")
	return b.String()
}

// profileFiles names the saved profile and flame graph, linked when fileURL has a link.
func profileFiles(entry string, p *result.CPUProfile, fileURL func(entry, file string) string) string {
	var parts []string
	for _, f := range []struct{ label, name string }{{"flame graph", p.Flame}, {"pprof profile", p.Pprof}} {
		if f.name == "" {
			continue
		}
		u := ""
		if fileURL != nil {
			u = fileURL(entry, f.name)
		}
		if l := md.Link(f.label, u); u != "" && l != "" {
			parts = append(parts, l)
		} else {
			parts = append(parts, f.label+" "+md.Code(f.name))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Saved: " + strings.Join(parts, ", ") + " (`go tool pprof` opens the profile)."
}

func topN(fs []result.FuncShare) []result.FuncShare { return fs[:min(len(fs), profileTop)] }

func writeShares(b *strings.Builder, title, first, second string, fs []result.FuncShare, get func(result.FuncShare) (float64, float64)) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(b, "%s:\n\n| %s | %s | Function |\n|---:|---:|---|\n", title, first, second)
	for _, f := range fs {
		a, c := get(f)
		fmt.Fprintf(b, "| %s | %s | %s |\n", pct(a), pct(c), md.CodeCell(f.Name))
	}
	b.WriteString("\n")
}

func writeChanges(b *strings.Builder, title string, cs []result.CPUChange) {
	var grew, shrank []result.CPUChange
	for _, c := range cs {
		if c.Delta > 0 {
			grew = append(grew, c)
		} else if c.Delta < 0 {
			shrank = append(shrank, c)
		}
	}
	grew, shrank = grew[:min(len(grew), profileDiffTop)], shrank[:min(len(shrank), profileDiffTop)]
	if len(grew)+len(shrank) == 0 {
		return
	}
	fmt.Fprintf(b, "%s, largest changes:\n\n| Δ | base → head | Function |\n|---:|---|---|\n", title)
	for _, c := range append(grew, shrank...) {
		fmt.Fprintf(b, "| %s | %s → %s | %s |\n", ptsWithin(c.Delta, c.Margin), pct(c.Before), pct(c.After), md.CodeCell(c.Name))
	}
	b.WriteString("\n")
}

func pct(v float64) string { return fmt.Sprintf("%.1f%%", v) }

// pts renders a change in percentage points: "+8.2 pts", "−0.4 pts", "±0.0 pts".
func pts(v float64) string {
	s := fmt.Sprintf("%+.1f pts", v)
	switch {
	case s == "+0.0 pts" || s == "-0.0 pts":
		return "±0.0 pts"
	case strings.HasPrefix(s, "-"):
		return "−" + s[1:]
	}
	return s
}

// ptsWithin renders a change with its interval: "+8.2 pts (±1.3)"; a change inside its
// interval reads "~0 pts (±1.3)", as an RPS change inside its interval reads ~0%. A result
// recorded before intervals (no margin) shows the change alone.
func ptsWithin(v, margin float64) string {
	if margin <= 0 {
		return pts(v)
	}
	if math.Abs(v) <= margin {
		return fmt.Sprintf("~0 pts (±%.1f)", margin)
	}
	return fmt.Sprintf("%s (±%.1f)", pts(v), margin)
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
