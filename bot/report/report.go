// Package report renders benchmark results as the Markdown the bot posts and `arenabot bench`
// prints: one table per framework, a row per profile and connection count.
package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/arenabot/arenabot/md"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/stats"
	"github.com/arenabot/arenabot/text"
)

// A Row is one profile × connection count of one framework.
type Row struct {
	Profile string
	Conns   int
	// Result is the measurement; nil when the row failed.
	Result *result.Result
	// Err says in one line why the row has no result.
	Err string
	// Short is the failed row's table cell ("validation: GET sum 13+42", "build failed");
	// "" shows Err, cut to about 80 characters. Err goes under the table when it is longer.
	Short string
	// Baseline is what the deltas compare against when the row has no base measured with it
	// in the same job (Result.Base): committed results, or (SameRun) the --compare entry's
	// row of this run; nil when there is none.
	Baseline *result.Result
	// SameRun marks a Baseline measured in this run, one row after the other (not
	// interleaved with this row).
	SameRun bool
	// NotApplicable marks a row whose compare target does not run this profile.
	NotApplicable bool
	// WebSocket marks an echo row: its RPS is echoes per second and its latency is per frame.
	WebSocket bool
	// Bandwidth rows show MB/s in the RPS column and server CPU per GB in CPU/req.
	Bandwidth bool
	// Scored are the committed results of the row's profile, every entry and connection
	// count the report has: a fixed-rate row's score is measured against their lowest CPU
	// per request, p99 and mean latency (and the row's own sides').
	Scored []*result.Result
	// Host is the host that measured the row, for a job split over several hosts; "" the
	// report's one host.
	Host string
}

// A Table is one framework's rows, in profile order then connection count.
type Table struct {
	Entry   string // directory name
	Display string // meta.json display_name
	Rows    []Row
	// Advisories are the WARN lines of the advisory checks the entry missed: reported, not
	// gating.
	Advisories []string
	// Rule is what the Δ cells apply; the zero Rule means stats.DefaultRule.
	Rule stats.Rule
	// Note is the line under the table that says which of its Δ are not against a base
	// measured in the same job (Markdown, written by Tables); "" when every Δ is.
	Note string
}

// cellMax is about how long a failed row's cell may be.
const cellMax = 80

// cell is the failed row's reason as its table cell shows it: Short as it is (the caller
// bounds it), else Err cut to about cellMax characters.
func (r Row) cell() string {
	if s := strings.TrimSpace(r.Short); s != "" {
		return s
	}
	return md.Clip(text.FirstLine(r.Err, 200), cellMax)
}

// explained reports whether the cell says all of Err, so nothing goes under the table.
func (r Row) explained() bool {
	full := strings.TrimSpace(r.Err)
	return full == "" || full == r.cell()
}

// Failures returns, for the failed rows whose whole reason does not fit their cell, one
// line per distinct reason: "json 512, json 4096: validation failed, not measured: …".
func (t Table) Failures() []string {
	var order []string
	where := map[string][]string{}
	for _, r := range t.Rows {
		if r.Result != nil {
			continue
		}
		if r.explained() {
			continue
		}
		full := strings.TrimSpace(r.Err)
		if _, ok := where[full]; !ok {
			order = append(order, full)
		}
		at := r.Profile
		if at == "" || at == "—" {
			at = "the entry"
		}
		if r.Conns > 0 {
			at += " " + strconv.Itoa(r.Conns)
		}
		where[full] = append(where[full], at)
	}
	lines := make([]string, len(order))
	for i, full := range order {
		lines[i] = strings.Join(where[full], ", ") + ": " + full
	}
	return lines
}

// Failed reports whether any row of the table failed.
func (t Table) Failed() bool {
	for _, r := range t.Rows {
		if r.Result == nil {
			return true
		}
	}
	return false
}

// Columns of every table, in the order docs/contributing-an-entry.md ("The results tables") documents.
// Δ is the Δ of the row's primary figure (profile.Figures): RPS, MB/s, echoes/s, or CPU per
// request on a fixed-rate row.
var Columns = []string{"Test", "Conn", "RPS", "Rate", "CPU/req", "p99", "p99.9", "CPU", "Mem", "Δ", "Δ Mem"}

// DeltaColumns are the columns of the second table, the Δ of the figures other than the
// primary one (a table of its own so that the first stays readable at phone width); the
// score columns only when a row of the table is scored.
var DeltaColumns = []string{"Test", "Conn", "Δ CPU/req", "Δ p99", "Score", "Δ Score"}

// RenderTable renders one framework's table, headed by its name.
func RenderTable(t Table) string {
	var b strings.Builder
	mark := "✅"
	if t.Failed() {
		mark = "❌"
	}
	name := md.Code(t.Entry)
	if t.Display != "" && t.Display != t.Entry {
		name += " (" + md.Text(t.Display) + ")"
	}
	fmt.Fprintf(&b, "### %s %s\n\n", mark, name)
	b.WriteString("| " + strings.Join(Columns, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat("---|", len(Columns)) + "\n")
	for _, r := range t.Rows {
		b.WriteString("| " + strings.Join(cells(t, r), " | ") + " |\n")
	}
	return b.String()
}

func cells(t Table, r Row) []string {
	c := []string{md.Cell(r.Profile), fmt.Sprint(r.Conns)}
	if r.Result == nil {
		msg := "❌ " + md.Cell(r.cell())
		c = append(c, msg)
		for len(c) < len(Columns) {
			c = append(c, "—")
		}
		return c
	}
	res := r.Result
	rps := FormatCount(float64(res.RPS))
	if r.Bandwidth {
		rps = FormatMBps(bytesPerSec(res))
	}
	if res.ToolLimit != "" {
		rps += " ⚠️" // the generator was the limit: the note under the table says why
	}
	// WebSocket rows keep their latency columns: arenaload ws times each frame from the write
	// that carried it to its echo, which is a per-frame latency, not a guess.
	p99, p999 := FormatMicros(res.LatencyUS.P99), FormatMicros(res.LatencyUS.P999)
	cpuReq := "—"
	switch {
	case r.Bandwidth && res.CPUPerGB > 0:
		cpuReq = fmt.Sprintf("%.2f s/GB", res.CPUPerGB)
	case !r.Bandwidth && res.CPUPerRequest > 0:
		cpuReq = FormatMicros(res.CPUPerRequest)
	}
	d := Deltas(r, t.rule())
	return append(c,
		rps, FormatRate(res), cpuReq, p99, p999,
		fmt.Sprintf("%.0f%%", res.CPUCores*100), FormatBytes(res.MemoryPeak), d.Primary, d.Mem)
}

// scoredAny reports whether a measured row of the table is scored (fixed rate).
func (t Table) scoredAny() bool {
	for _, r := range t.Rows {
		if r.Result != nil && r.figures().Scored {
			return true
		}
	}
	return false
}

// SameAsDelta is the second table's Δ CPU/req cell of a row whose primary figure is CPU per
// request: its first table's Δ is that figure's.
const SameAsDelta = "= Δ"

// RenderDeltaTable renders the second table of a framework: for each measured row, Δ
// CPU/req (SameAsDelta where it is the row's Δ) and Δ p99 and, when a row of the table is fixed-rate, the arena's score of each
// side and its Δ. "" when no row was measured.
func RenderDeltaTable(t Table) string {
	cols := DeltaColumns
	scored := t.scoredAny()
	if !scored {
		cols = cols[:4]
	}
	var b strings.Builder
	rows := 0
	for _, r := range t.Rows {
		if r.Result == nil {
			continue
		}
		if rows == 0 {
			fmt.Fprintf(&b, "#### %s: Δ of the other figures\n\n", md.Code(t.Entry))
			b.WriteString("| " + strings.Join(cols, " | ") + " |\n")
			b.WriteString("|" + strings.Repeat("---|", len(cols)) + "\n")
		}
		rows++
		d := Deltas(r, t.rule())
		cpu := d.CPU
		if d.Figures.Primary == profile.FigureCPUPerReq && d.Primary != CellNew && d.Primary != CellNA && d.Primary != CellBaseFailed {
			cpu = SameAsDelta // the first table's Δ already
		}
		c := []string{md.Cell(r.Profile), fmt.Sprint(r.Conns), cpu, d.P99}
		if scored {
			c = append(c, d.Score, d.DScore)
		}
		b.WriteString("| " + strings.Join(c, " | ") + " |\n")
	}
	return b.String()
}

// ScoreNote is the line under the second table of a framework with a fixed-rate row: what
// the score is and what its CPU, p99 and mean-latency terms were measured against. "" when
// no row is scored.
func (t Table) ScoreNote(source string) string {
	var committed, own []string
	for _, r := range t.Rows {
		if r.Result == nil || !r.figures().Scored {
			continue
		}
		d := Deltas(r, t.rule())
		if d.Score == "—" {
			continue // no score shown
		}
		at := r.Profile + " " + strconv.Itoa(r.Conns)
		if d.Bests.Committed {
			committed = append(committed, at)
		} else {
			own = append(own, at)
		}
	}
	if len(committed)+len(own) == 0 {
		return ""
	}
	s := "Score: the arena's fixed-rate score, 0–100, base → head: 100 × min(1, rate ÷ 95% of the target) × (0.50 × best CPU/req ÷ CPU/req + 0.25 × p99 term + 0.25 × mean-latency term, " +
		"each latency term 1 at the best and 0 three decades (p99) or one decade (mean) above it), from the means of each side's runs."
	if len(committed) > 0 {
		s += " For " + md.Text(strings.Join(committed, ", ")) + " the bests are the lowest CPU/req, p99 and mean latency among the committed results of the profile on " + source +
			" (every entry and connection count the job read) and the row's two sides."
	}
	if len(own) > 0 {
		s += " For " + md.Text(strings.Join(own, ", ")) + " there is no committed result of the profile: the bests are the better of the row's two sides."
	}
	return s + " Δ Score: the score of each run against the same bests, Welch's interval over the runs, in points."
}

// RateFloor is the rate ratio below which a fixed-rate row did not get the load it was
// meant to (the arena's rule): its Rate cell is bold and flagged.
const RateFloor = 0.98

// FormatRate renders a fixed-rate row's achieved ÷ target rate with 4 decimals, bold with
// ⚠️ below RateFloor; "—" for a closed-loop row.
func FormatRate(res *result.Result) string {
	if res.TargetRate <= 0 {
		return "—"
	}
	ratio := res.RateRatio
	if ratio == 0 {
		ratio = res.AchievedRate / float64(res.TargetRate)
	}
	s := fmt.Sprintf("%.4f", ratio)
	if ratio < RateFloor {
		return "**" + s + "** ⚠️"
	}
	return s
}

// bytesPerSec is the result's bandwidth in bytes per second.
func bytesPerSec(res *result.Result) float64 {
	if res.BytesPerSec > 0 {
		return res.BytesPerSec
	}
	if i := res.BestRun; i >= 0 && i < len(res.Runs) && res.Runs[i].DurationS > 0 {
		return float64(res.Runs[i].Bytes) / res.Runs[i].DurationS
	}
	return 0
}

// FormatMBps renders bytes per second as MB/s (10^6 bytes): "512.3 MB/s", "1,234 MB/s".
func FormatMBps(v float64) string {
	mb := v / 1e6
	switch {
	case v <= 0:
		return "—"
	case mb < 100:
		return fmt.Sprintf("%.1f MB/s", mb)
	default:
		return fmt.Sprintf("%.0f MB/s", mb)
	}
}

// Limits returns one line per row where the load generator, not the server, was the limit:
// "latency-1m 1024: the load generator, not the server, was the limit: …".
func (t Table) Limits() []string {
	var lines []string
	for _, r := range t.Rows {
		if r.Result == nil || r.Result.ToolLimit == "" {
			continue
		}
		lines = append(lines, fmt.Sprintf("⚠️ %s %d: the load generator, not the server, was the limit: %s", md.Code(r.Profile), r.Conns, md.Text(md.Clip(text.FirstLine(r.Result.ToolLimit, 200), 300))))
	}
	return lines
}

// FormatCount renders a count compactly: 987, 45.6K, 1.23M.
func FormatCount(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fK", v/1e3)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// FormatMicros renders a duration given in microseconds as a table cell: result's
// FormatLatency, and "—" for a figure that was not measured.
func FormatMicros(us float64) string {
	if us <= 0 {
		return "—"
	}
	return result.FormatLatency(us)
}

// FormatBytes renders a memory size: 512KiB, 76MiB, 2.4GiB.
func FormatBytes(b int64) string {
	switch {
	case b <= 0:
		return "—"
	case b < 1<<20:
		return fmt.Sprintf("%.0fKiB", float64(b)/(1<<10))
	case b < 1<<30:
		return fmt.Sprintf("%.0fMiB", float64(b)/(1<<20))
	default:
		return fmt.Sprintf("%.1fGiB", float64(b)/(1<<30))
	}
}
