package report

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/arenabot/arenabot/md"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/stats"
	"github.com/arenabot/arenabot/text"
)

// MaxComment is the largest results comment the bot posts, in bytes (GitHub refuses bodies
// over 65,536 characters; the margin leaves room for markers and multi-byte characters).
const MaxComment = 60000

// Results is everything the final reply of a job shows.
type Results struct {
	RequestID string // "r123"; goes into each part's hidden marker, never into visible text
	Command   string // the command line as written
	Requester string // login, mentioned once at the top
	// State is how the job ended: "done", "failed", "cancelled" (a run that was stopped, with
	// the rows measured before it stopped) or "lost" (the runner stopped responding).
	State  string
	Reason string // why it failed or was cancelled; "" when done; not shown when superseded
	SHA    string // the approved commit (Report.Commit may be empty when the job failed early)

	Report  result.Report
	Compare string // --compare target; "" compares each entry with its committed results

	CommitSHA string // --save: the results commit
	CommitURL string // --save: link to it
	// SaveNote explains, in Markdown, why --save did not commit (for example the branch
	// refused the push); "" when it did or was not asked.
	SaveNote string
	// Patch holds, when the results could not be committed, one self-contained `git apply`
	// diff per result file, in path order.
	Patch []string

	StatusURL string // link to the status comment
}

// ResultsMarker is the hidden marker of part (1-based) of a request's final reply, by which
// a retried post finds the part it already posted.
func ResultsMarker(requestID string, part int) string {
	return fmt.Sprintf("<!-- arenabot:results %s part=%d -->", markerID(requestID), part)
}

// The values of Results.State.
const (
	stateDone      = string(PhaseDone)
	stateFailed    = string(PhaseFailed)
	stateCancelled = string(PhaseCancelled)
	stateLost      = "lost"
)

const (
	resultsTitle = "Benchmark Results"
	// maxChartBars bounds the bars of one chart; a framework with more measured rows gets
	// several charts.
	maxChartBars = 16
	// maxCharts bounds the charts of one framework; rows beyond them are in its table only.
	maxCharts = 4
	// maxLogLine bounds one line of a log, in bytes.
	maxLogLine = 1000
	// maxErrorBytes bounds the job error shown in the reply.
	maxErrorBytes = 8000
)

// RenderResults renders the final reply of a job as one or more comments, each under
// MaxComment bytes and ending with its ResultsMarker.
//
// The first comment starts with a title, "## Benchmark Results" when the report has rows
// (measured or failed), else how the job ended ("## Benchmark failed", "## Benchmark
// cancelled", "## Benchmark lost"; RenderEnding is for requests that never ran), and a
// summary of the job: how it ended, the requester, the command, what was measured, the
// baseline and where the results were saved. Then come, per framework, its table, the line
// that says which of its Δ are not against a base measured in the job, why its rows' base
// failed, the tail of its build log when the build failed and a chart of RPS against the
// baseline; then the patch of the result files when they could not be committed; then the
// tail of the runner's log. Untrusted text (names, errors, logs) is escaped or fenced (package md) so
// that it can neither break the layout nor mention anyone; only the requester is
// mentioned. No request ID is visible: it is only in the markers.
//
// A reply longer than one comment is split between blocks, never inside a table row, a code
// block, a <details> block or a chart, and each comment is headed "## <title> (part i of
// n)". A table too long for one comment continues in the next under its repeated
// heading and column header; a log too long for one comment keeps its newest lines; a patch
// file too long for one comment is left out with a note. The output depends only on r.
func RenderResults(r Results) []string {
	title := resultsTitleOf(r)
	budget := MaxComment - 1 - resultsReserve(title, r.RequestID)
	bodies := pack(resultsPieces(r, budget), budget)
	parts := make([]string, len(bodies))
	for i, body := range bodies {
		head := "## " + title
		if len(bodies) > 1 {
			head += fmt.Sprintf(" (part %d of %d)", i+1, len(bodies))
		}
		parts[i] = head + "\n\n" + body + "\n" + ResultsMarker(r.RequestID, i+1)
	}
	return parts
}

// resultsTitleOf is the title of a job's reply: "Benchmark Results" when there are rows to
// show, else how the job ended.
func resultsTitleOf(r Results) string {
	if len(r.Report.Rows) > 0 {
		return resultsTitle
	}
	switch r.State {
	case stateDone:
		return "Benchmark done"
	case stateFailed:
		return "Benchmark failed"
	case stateCancelled:
		return "Benchmark cancelled"
	case stateLost:
		return "Benchmark lost"
	case string(PhaseSuperseded):
		return "Benchmark request superseded"
	case string(PhaseExpired):
		return "Benchmark request expired"
	case string(PhaseRejected):
		return "Benchmark request declined"
	}
	return "Benchmark ended"
}

// resultsReserve is the room a part needs around its body: the heading with the widest part
// numbers the reply could need, the separators and the marker.
func resultsReserve(title, requestID string) int {
	const most = 999_999
	return len(fmt.Sprintf("## %s (part %d of %d)\n\n", title, most, most)) +
		len("\n") + len(ResultsMarker(requestID, most))
}

// A piece is a block of Markdown, ending in a newline, that is never split across comments;
// only a table (rows != nil) may be split between its rows.
type piece struct {
	text string
	// For a table: its heading line, its column header (two lines) and its rows, each
	// ending in a newline.
	heading, columns string
	rows             []string
}

// pack lays the pieces out into comment bodies of at most budget bytes, separated by blank
// lines. Every piece but a table must fit in budget.
func pack(pieces []piece, budget int) []string {
	var parts []string
	var cur strings.Builder
	room := func() int {
		if cur.Len() == 0 {
			return budget
		}
		return budget - cur.Len() - 1
	}
	add := func(s string) bool {
		if len(s) > room() {
			return false
		}
		if cur.Len() > 0 {
			cur.WriteByte('\n')
		}
		cur.WriteString(s)
		return true
	}
	flush := func() {
		if cur.Len() > 0 {
			parts = append(parts, cur.String())
			cur.Reset()
		}
	}
	for _, p := range pieces {
		if add(p.text) {
			continue
		}
		if p.rows == nil || len(p.text) <= budget {
			// It fits in a comment of its own: start the next one rather than split it.
			flush()
			if !add(p.text) {
				// Cannot happen: every block is bounded below the budget.
				add(fmt.Sprintf("⚠️ A block of %d bytes was too large for a comment and was left out.\n", len(p.text)))
			}
			continue
		}
		// A table longer than a comment: fill this comment and the next ones with its rows.
		for i := 0; i < len(p.rows); {
			head := p.heading
			if i > 0 {
				head += " (continued)"
			}
			head += "\n\n" + p.columns
			if len(head)+len(p.rows[i]) > room() {
				flush()
			}
			avail := room()
			var b strings.Builder
			b.WriteString(head)
			for i < len(p.rows) && b.Len()+len(p.rows[i]) <= avail {
				b.WriteString(p.rows[i])
				i++
			}
			if b.Len() == len(head) {
				// Cannot happen: rows are bounded far below the budget.
				b.WriteString("| … | row too long to show |\n")
				i++
			}
			add(b.String())
			if i < len(p.rows) {
				flush()
			}
		}
	}
	flush()
	return parts
}

// resultsPieces renders the reply as blocks, each but a table at most budget bytes.
// resultsTables are the reply's tables of r's rows, as shown (names clipped), with the
// baseline their Δ compare with and the entries' names as shown → as in the report.
func resultsTables(r Results) (Baseline, []Table, map[string]string) {
	rep := r.Report
	// Names as shown → as in the report, for the baseline lookup.
	entries, profiles := map[string]string{}, map[string]string{}
	rows := shownRows(rep.Rows, entries, profiles)
	compare := ""
	if r.Compare != "" {
		compare = md.Clip(r.Compare, 100)
		entries[compare] = r.Compare
	}
	committed := func(entry, profile string, conns int) (*result.Result, bool) {
		if e, ok := entries[entry]; ok {
			entry = e
		}
		if p, ok := profiles[profile]; ok {
			profile = p
		}
		return rep.Committed(entry, profile, conns)
	}
	scored := func(shown string) []*result.Result {
		if p, ok := profiles[shown]; ok {
			shown = p
		}
		return committedOf(rep, shown)
	}
	base := Baseline{Compare: compare, Source: baselineSource(rep), Committed: committed, Scored: scored,
		Ref: rep.BaseRef, MergeBase: rep.MergeBase, OnlyCommitted: rep.AgainstCommitted}
	if rep.Rule != nil {
		rule := stats.Rule(*rep.Rule)
		base.Rule = &rule
	}
	return base, Tables(rows, base), entries
}

func resultsPieces(r Results, budget int) []piece {
	rep := r.Report
	base, tables, entries := resultsTables(r)

	pieces := []piece{{text: resultsHeader(r, base, tables)}}
	if strings.TrimSpace(rep.Error) != "" {
		pieces = append(pieces, piece{text: errorBlock(rep.Error)})
	}
	if lines := ProfileErrors(tables); len(lines) > 0 {
		pieces = append(pieces, piece{text: strings.Join(lines, "\n") + "\n"})
	}
	for _, t := range tables {
		pieces = append(pieces, tablePiece(t))
		if t.Note != "" {
			pieces = append(pieces, piece{text: t.Note + "\n"})
		}
		if second := RenderDeltaTable(t); second != "" {
			pieces = append(pieces, gridPiece(second))
		}
		if n := t.ScoreNote(base.Source); n != "" {
			pieces = append(pieces, piece{text: n + "\n"})
		}
		if lines := t.BaseFailures(); len(lines) > 0 {
			pieces = append(pieces, piece{text: baseFailuresBlock(t, lines, budget)})
		}
		if lines := t.Limits(); len(lines) > 0 {
			pieces = append(pieces, piece{text: strings.Join(lines, "\n")})
		}
		for _, block := range ProfileBlocks(t, savedFileURL(r, entries)) {
			pieces = append(pieces, piece{text: block})
		}
		if lines := t.Failures(); len(lines) > 0 {
			title := "Why rows of <code>" + md.HTML(t.Entry) + "</code> failed"
			pieces = append(pieces, piece{text: detailsBlock(title, lines, budget)})
		}
		if len(t.Advisories) > 0 {
			title := "Advisories of <code>" + md.HTML(t.Entry) + "</code>"
			pieces = append(pieces, piece{text: AdvisoryHeadline(t) + "\n\n" + detailsBlock(title, logLines(t.Advisories), budget)})
		}
		if lines := buildLog(rep.Rows, t.Entry); lines != nil {
			title := "Build log of <code>" + md.HTML(t.Entry) + "</code>"
			pieces = append(pieces, piece{text: logBlock(title, logLines(lines), budget)})
		}
		for _, c := range charts(t, base) {
			pieces = append(pieces, piece{text: c})
		}
	}
	pieces = append(pieces, patchPieces(r.Patch, budget)...)
	if len(rep.Log) > 0 {
		pieces = append(pieces, piece{text: logBlock("Full log", logLines(rep.Log), budget)})
	}
	return pieces
}

// savedFileURL links a file saved beside an entry's results in the results commit
// (https://github.com/o/r/blob/<sha>/frameworks/<entry>/results/<file>); nil without one.
// entries maps the names the tables show back to the runner's.
func savedFileURL(r Results, entries map[string]string) func(entry, file string) string {
	base, sha, ok := strings.Cut(r.CommitURL, "/commit/")
	if !ok || r.CommitSHA == "" || sha != r.CommitSHA {
		return nil
	}
	return func(entry, file string) string {
		if e, ok := entries[entry]; ok {
			entry = e
		}
		return base + "/blob/" + sha + "/" + FrameworksDir + "/" + url.PathEscape(entry) + "/" + result.Dir + "/" + url.PathEscape(file)
	}
}

// FrameworksDir is the directory of the entries in an arena repository, where a results
// commit writes (bot/plan.Root).
const FrameworksDir = "frameworks"

// baselineSource names where committed results come from: "`main` at `0123456789ab`".
func baselineSource(rep result.Report) string {
	ref := rep.BaseRef
	if strings.TrimSpace(ref) == "" {
		ref = "main"
	}
	s := md.Code(md.Clip(ref, 100))
	if strings.TrimSpace(rep.BaseCommit) != "" {
		s += " at " + shortSHA(rep.BaseCommit)
	}
	return s
}

// shownRows bounds the untrusted text of the runner's rows for Tables (the table escapes
// it), recording in entries and profiles the original of each changed name. A row of an
// entry that failed before its profiles were known gets "—" as its test.
func shownRows(rows []result.Row, entries, profiles map[string]string) []result.Row {
	out := make([]result.Row, 0, len(rows))
	shown := func(names map[string]string, s, as string) string {
		if as != s {
			names[as] = s
		}
		return as
	}
	for _, row := range rows {
		m := result.Row{
			Entry:      shown(entries, row.Entry, md.Clip(row.Entry, 100)),
			Display:    md.Clip(row.Display, 100),
			Profile:    shown(profiles, row.Profile, md.Clip(row.Profile, 64)),
			Conns:      row.Conns,
			Result:     row.Result,
			Err:        md.Clip(row.Err, 2000), // whole, for the list under the table
			WebSocket:  row.WebSocket,
			Bandwidth:  row.Bandwidth,
			Advisories: row.Advisories,
			Host:       md.Clip(row.Host, 100),
		}
		if row.Result == nil {
			short := row.Short
			if strings.TrimSpace(short) == "" {
				short = text.FirstLine(row.Err, 200)
			}
			m.Short = md.Clip(short, cellMax)
		}
		if m.Entry == "" {
			m.Entry = "—"
		}
		if m.Profile == "" {
			m.Profile = "—"
		}
		if m.Result == nil && strings.TrimSpace(m.Err) == "" {
			m.Err, m.Short = "no result", "no result"
		}
		out = append(out, m)
	}
	return out
}

// maxBaseFailures bounds the list of a table's base failures shown as it is; a longer one is
// folded into a <details> block.
const maxBaseFailures = 4000

// baseFailuresBlock renders why the base of a table's rows failed, under the table: a list
// headed by baseFailuresHead, folded into a <details> block when long.
func baseFailuresBlock(t Table, lines []string, budget int) string {
	var b strings.Builder
	b.WriteString(baseFailuresHead(t) + "\n\n")
	for _, l := range lines {
		b.WriteString("- " + md.Text(l) + "\n")
	}
	if b.Len() <= maxBaseFailures {
		return b.String()
	}
	title := "Why the base of <code>" + md.HTML(t.Entry) + "</code> failed"
	return detailsBlock(title, logLines(lines), budget)
}

// resultsHeader renders the summary at the top of the first comment.
func resultsHeader(r Results, base Baseline, tables []Table) string {
	hasRows := len(tables) > 0
	var b strings.Builder
	b.WriteString(outcome(r) + "\n\n")

	rep := r.Report
	item := func(label, value string) {
		if value != "" {
			fmt.Fprintf(&b, "- **%s:** %s\n", label, value)
		}
	}
	if strings.TrimSpace(r.Command) != "" {
		item("Command", md.Code(r.Command))
	}
	frameworks := rep.Frameworks
	if len(frameworks) == 0 {
		seen := map[string]bool{}
		for _, row := range rep.Rows {
			if !seen[row.Entry] {
				seen[row.Entry] = true
				frameworks = append(frameworks, row.Entry)
			}
		}
	}
	if len(frameworks) > 0 {
		item("Frameworks", nameList(frameworks))
	}
	if len(rep.Tests) > 0 {
		item("Tests", nameList(rep.Tests))
	}
	commit := rep.Commit
	if strings.TrimSpace(commit) == "" {
		commit = r.SHA
	}
	if strings.TrimSpace(commit) != "" {
		item("Commit", shortSHA(commit))
	}
	if hasRows {
		item("Baseline", base.Note(tables))
	}
	var host []string
	if strings.TrimSpace(rep.Host) != "" {
		host = append(host, md.Code(md.Clip(rep.Host, 100)))
	}
	if strings.TrimSpace(rep.Mode) != "" {
		host = append(host, md.Text(md.Clip(rep.Mode, 200)))
	}
	switch {
	case pairedAny(tables):
		host = append(host, "RPS: the best of each row's runs") // the run counts adapt per row
	case rep.Runs > 0:
		host = append(host, "best of "+md.Plural(rep.Runs, "run", "runs")+" by RPS")
	}
	item("Host", strings.Join(host, " · "))
	if len(rep.Rows) > 0 {
		failed := rep.Failed()
		item("Rows", fmt.Sprintf("%d measured, %d failed", len(rep.Rows)-failed, failed))
	}
	saved := ""
	if strings.TrimSpace(r.CommitSHA) != "" {
		saved = shortSHA(r.CommitSHA)
		if u := md.URL(r.CommitURL); u != "" {
			saved = "[" + saved + "](" + u + ")" // a code span is a valid link text
		}
		saved = "results commit " + saved
	} else if l := md.Link("results commit", r.CommitURL); l != "" {
		saved = l
	}
	item("Saved", saved)
	item("Status", md.Link("status comment", r.StatusURL))
	if strings.TrimSpace(r.SaveNote) != "" {
		b.WriteString("\n> [!NOTE]\n> " + md.Trusted(r.SaveNote) + "\n")
	}
	return b.String()
}

// outcome renders the first line: how the job ended, for whom, and why.
func outcome(r Results) string {
	who := ""
	if m := md.Mention(md.Clip(r.Requester, 60)); m != "" {
		who = " for " + m
	}
	reason := strings.TrimSpace(r.Reason)
	if reason == "" && r.State != stateDone {
		reason = strings.TrimSpace(r.Report.Error)
	}
	if r.State == string(PhaseSuperseded) {
		reason = "" // the queue's reason names the newer request by its internal ID
	}
	because := ""
	if reason != "" {
		because = ": " + strings.TrimRight(md.Text(md.Clip(reason, 300)), ".") + "."
	}
	measured := len(r.Report.Rows) - r.Report.Failed()
	before := func(what string) string {
		if measured == 0 {
			return " Nothing was measured before it " + what + "."
		}
		return " The tables show the rows measured before it " + what + "."
	}
	switch r.State {
	case stateDone:
		return "✅ **Benchmark done**" + who + "."
	case stateFailed:
		s := "❌ **Benchmark failed**" + who + because + ifNone(because, ".")
		if len(r.Report.Rows) > 0 {
			s += before("failed")
		}
		return s
	case stateCancelled:
		s := "⏹️ **Benchmark cancelled**" + who + because + ifNone(because, ".")
		return s + before("stopped")
	case stateLost:
		s := "⚠️ **Runner lost**" + who + ": the runner stopped responding"
		if reason != "" {
			s = "⚠️ **Runner lost**" + who + ": " + strings.TrimRight(md.Text(md.Clip(reason, 300)), ".")
		}
		return s + "." + before("was lost")
	case string(PhaseSuperseded):
		return "⏭️ **Benchmark superseded**" + who + because + ifNone(because, ".")
	case string(PhaseExpired):
		return "⌛ **Benchmark request expired**" + who + because + ifNone(because, ".")
	case string(PhaseRejected):
		return "⛔ **Benchmark request declined**" + who + because + ifNone(because, ".")
	default:
		return "ℹ️ **Benchmark ended** (" + md.Code(md.Clip(r.State, 40)) + ")" + who + because + ifNone(because, ".")
	}
}

// ifNone returns s when text is empty, else "".
func ifNone(text, s string) string {
	if text == "" {
		return s
	}
	return ""
}

// errorBlock renders why the job as a whole failed.
func errorBlock(msg string) string {
	lines := logLines([]string{strings.TrimSpace(msg)})
	size, cut := 0, false
	for i, l := range lines {
		size += len(l) + 1
		if size > maxErrorBytes {
			lines, cut = lines[:i], true
			break
		}
	}
	if cut {
		lines = append(lines, "…")
	}
	return "**Error:**\n\n" + md.Fence("text", lines)
}

// committedOf returns the committed results of a profile the report read, every entry and
// connection count, and, as one more, the bests the runner read of every entry's
// (Report.ScoreBests).
func committedOf(rep result.Report, profile string) []*result.Result {
	var out []*result.Result
	if b, ok := rep.ScoreBests[profile]; ok && b.CPUPerRequest > 0 {
		out = append(out, &result.Result{Profile: profile, CPUPerRequest: b.CPUPerRequest, LatencyUS: result.Latency{P99: b.P99, Mean: b.Mean}})
	}
	for _, b := range rep.Baselines {
		for i := range b.Results {
			if b.Results[i].Profile == profile {
				out = append(out, &b.Results[i])
			}
		}
	}
	return out
}

// gridPiece is a table rendered as a heading, a blank line, the column header (two lines)
// and a line per row, as a piece that may be split between its rows.
func gridPiece(text string) piece {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) < 4 {
		return piece{text: text}
	}
	p := piece{heading: strings.TrimSuffix(lines[0], "\n"), columns: lines[2] + lines[3], rows: lines[4:]}
	p.text = text
	return p
}

// tablePiece renders a framework's table as a piece that may be split between its rows.
func tablePiece(t Table) piece {
	text := RenderTable(t)
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	// RenderTable writes the heading, a blank line, the column header (two lines) and a line
	// per row, in order.
	if len(lines) != 4+len(t.Rows) {
		return piece{text: text}
	}
	p := piece{heading: strings.TrimSuffix(lines[0], "\n"), columns: lines[2] + lines[3]}
	for i, row := range t.Rows {
		line := lines[4+i]
		if row.Conns <= 0 {
			// No connection count (the entry failed before its profiles were known): a dash
			// rather than "0".
			prefix := "| " + md.Cell(row.Profile) + " | " + strconv.Itoa(row.Conns) + " | "
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				line = "| " + md.Cell(row.Profile) + " | — | " + rest
			}
		}
		p.rows = append(p.rows, line)
	}
	p.text = p.heading + "\n\n" + p.columns + strings.Join(p.rows, "")
	return p
}

// buildLog returns the build log attached to an entry's rows, or nil.
func buildLog(rows []result.Row, entry string) []string {
	for _, row := range rows {
		if md.Clip(row.Entry, 100) == entry && len(row.BuildLog) > 0 {
			return row.BuildLog
		}
		if row.Entry == "" && entry == "—" && len(row.BuildLog) > 0 {
			return row.BuildLog
		}
	}
	return nil
}

// charts renders mermaid bar charts of a table's measured rows: a bar series of the
// baseline's RPS (0 where there is none) when any row has one, then a series of this run's,
// at most maxChartBars bars a chart and maxCharts charts; none when no row was measured. A
// fixed-rate row is left out: its RPS is the rate offered, whatever the server did.
func charts(t Table, base Baseline) []string {
	type bar struct {
		label     string
		rps, base int64
	}
	var bars []bar
	inJob, other := false, false // bases measured in this job; other results
	fixed := 0
	for _, row := range t.Rows {
		if row.Result == nil {
			continue
		}
		if row.figures().Scored {
			fixed++
			continue
		}
		b := bar{label: chartText(fmt.Sprintf("%s %d", row.Profile, row.Conns), 40), rps: max(row.Result.RPS, 0)}
		switch row.against() {
		case againstBase:
			b.base, inJob = bestRPS(row.Result.Base.Runs), true
		case againstSameRun, againstCommitted:
			b.base, other = max(row.Baseline.RPS, 0), true
		}
		bars = append(bars, b)
	}
	withBase := inJob || other
	if len(bars) == 0 {
		return nil
	}
	note := ""
	if len(bars) > maxChartBars*maxCharts {
		note = fmt.Sprintf(" (the first %d of %d measured rows)", maxChartBars*maxCharts, len(bars))
		bars = bars[:maxChartBars*maxCharts]
	}
	if fixed > 0 {
		note += "; fixed-rate rows are not drawn, their RPS being the rate offered (their CPU/req and score are in the tables)"
	}
	what := "its committed results"
	switch {
	case base.Compare != "" && inJob:
		what = md.Code(base.Compare) + ", measured in this job"
	case base.Compare != "":
		what = md.Code(base.Compare)
	case inJob && other:
		what = "its base measured in this job, else its committed results"
	case inJob:
		what = "its base, measured in this job"
	}
	name := chartText(t.Entry, 60)
	var out []string
	chunks := (len(bars) + maxChartBars - 1) / maxChartBars
	for c := range chunks {
		part := bars[c*maxChartBars : min(len(bars), (c+1)*maxChartBars)]
		var b strings.Builder
		// Mermaid draws bar series over one another, not side by side: the baseline goes
		// first so that this run's bars are always seen.
		caption := "RPS of " + md.Code(t.Entry)
		title := name + " RPS"
		if withBase {
			caption += " against the baseline (" + what + "): this run's bars are drawn over the baseline's, " +
				"so a baseline bar showing above one of them marks a drop"
			title += " against the baseline"
		}
		if chunks > 1 {
			caption += fmt.Sprintf(", chart %d of %d", c+1, chunks)
			title += fmt.Sprintf(" (%d of %d)", c+1, chunks)
		}
		caption += note
		b.WriteString(caption + ".\n\n")
		b.WriteString("```mermaid\nxychart-beta\n")
		fmt.Fprintf(&b, "    title \"%s\"\n", title)
		labels := make([]string, len(part))
		runs := make([]string, len(part))
		bases := make([]string, len(part))
		for i, p := range part {
			labels[i] = `"` + p.label + `"`
			runs[i] = strconv.FormatInt(p.rps, 10)
			bases[i] = strconv.FormatInt(p.base, 10)
		}
		fmt.Fprintf(&b, "    x-axis [%s]\n", strings.Join(labels, ", "))
		b.WriteString("    y-axis \"RPS\"\n")
		if withBase {
			fmt.Fprintf(&b, "    bar [%s]\n", strings.Join(bases, ", "))
		}
		fmt.Fprintf(&b, "    bar [%s]\n", strings.Join(runs, ", "))
		b.WriteString("```\n")
		out = append(out, b.String())
	}
	return out
}

// bestRPS is the RPS of the best of runs (the arena's rule, as the RPS column shows), 0
// for none.
func bestRPS(runs []result.Run) int64 {
	best := 0.0
	for _, r := range runs {
		best = max(best, r.RPS)
	}
	return int64(best)
}

// chartText makes text safe inside a quoted mermaid string: letters, digits, spaces and a
// few punctuation marks only (no quotes, backticks, comments, semicolons or newlines),
// capped at limit bytes.
func chartText(s string, limit int) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			return r
		case strings.ContainsRune(" .,_/+()-", r):
			return r
		}
		return ' '
	}, md.Clip(s, 4*limit))
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "-"
	}
	return md.Clip(s, limit)
}

// patchPieces renders the section that gives the result files as diffs to apply.
func patchPieces(patch []string, budget int) []piece {
	if len(patch) == 0 {
		return nil
	}
	pieces := []piece{{text: "### 📎 Results patch\n\n" +
		"The results could not be committed to this pull request's branch, so here they are as a patch: " +
		"one diff per result file. To add them, save each diff below to a file at the root of a checkout " +
		"of the measured commit, run `git apply <file>`, then commit and push.\n"}}
	for i, diff := range patch {
		path := patchPath(diff)
		summary := fmt.Sprintf("file %d", i+1)
		if path != "" {
			summary = "<code>" + md.HTML(path) + "</code>"
		}
		block := "<details><summary>" + summary + "</summary>\n\n" +
			md.Fence("diff", strings.Split(strings.TrimSuffix(diff, "\n"), "\n")) + "\n</details>\n"
		if len(block) > budget {
			name := fmt.Sprintf("file %d", i+1)
			if path != "" {
				name = md.Code(path)
			}
			entry := "<framework>"
			if e, ok := patchEntry(path); ok {
				entry = e
			}
			block = fmt.Sprintf("⚠️ The diff of %s is too large for a comment and was left out: "+
				"run %s locally to produce it.\n", name, md.Code("arenabot bench "+entry+" --save"))
		}
		pieces = append(pieces, piece{text: block})
	}
	return pieces
}

// patchPath returns the path a diff writes to, or "".
func patchPath(diff string) string {
	for _, line := range strings.Split(diff, "\n") {
		if p, ok := strings.CutPrefix(line, "+++ b/"); ok {
			return md.Clip(p, 300)
		}
	}
	for _, line := range strings.Split(diff, "\n") {
		if rest, ok := strings.CutPrefix(line, "diff --git "); ok {
			if _, p, ok := strings.Cut(rest, " b/"); ok {
				return md.Clip(p, 300)
			}
		}
	}
	return ""
}

// patchEntry returns the entry of a result file's path, frameworks/<entry>/results/<file>.
func patchEntry(path string) (string, bool) {
	parts := strings.Split(path, "/")
	if len(parts) < 4 || parts[len(parts)-2] != result.Dir || parts[len(parts)-3] == "" {
		return "", false
	}
	return parts[len(parts)-3], true
}

// logBlock renders a log in a <details> block titled "<title> (last N lines)", keeping the
// newest lines that fit in budget bytes and saying how many earlier ones were left out.
// title is HTML.
func logBlock(title string, lines []string, budget int) string {
	return foldBlock(func(keep int) string { return fmt.Sprintf("%s (last %s)", title, md.Plural(keep, "line", "lines")) }, lines, budget)
}

// detailsBlock is logBlock for a list whose count the title gives: its summary is the
// title and the count of lines shown.
func detailsBlock(title string, lines []string, budget int) string {
	return foldBlock(func(keep int) string { return fmt.Sprintf("%s (%d)", title, keep) }, lines, budget)
}

// foldBlock renders lines in a fenced block inside <details>, keeping the newest that fit
// in budget bytes; summary titles it for the number of lines kept.
func foldBlock(summary func(keep int) string, lines []string, budget int) string {
	render := func(keep int) string {
		shown := lines[len(lines)-keep:]
		var b strings.Builder
		fmt.Fprintf(&b, "<details><summary>%s</summary>\n\n", summary(keep))
		if omitted := len(lines) - keep; omitted > 0 {
			fmt.Fprintf(&b, "… %s omitted\n\n", md.Plural(omitted, "earlier line", "earlier lines"))
		}
		b.WriteString(md.Fence("text", shown))
		b.WriteString("\n</details>\n")
		return b.String()
	}
	if s := render(len(lines)); len(s) <= budget {
		return s
	}
	// The largest tail that fits: the size grows with the lines kept.
	keep := sort.Search(len(lines)+1, func(k int) bool { return len(render(k)) > budget }) - 1
	return render(max(keep, 0))
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]`)

// logLines prepares untrusted log lines for md.Fence (which keeps them from closing the
// block and defuses markers): one element per line, terminal escapes removed, a
// carriage-return redraw reduced to its final text, control and invisible formatting
// characters dropped, and each line capped at maxLogLine bytes.
func logLines(in []string) []string {
	var out []string
	for _, s := range in {
		s = ansiRE.ReplaceAllString(strings.ToValidUTF8(s, "\uFFFD"), "")
		for _, line := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
			out = append(out, logLine(line))
		}
	}
	return out
}

func logLine(s string) string {
	if i := strings.LastIndexByte(strings.TrimRight(s, "\r"), '\r'); i >= 0 {
		s = s[i+1:] // what a terminal shows after the redraws
	}
	if len(s) > 4*maxLogLine {
		s = strings.ToValidUTF8(s[:4*maxLogLine], "")
	}
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return r
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
	return cutLine(strings.TrimRight(s, " "), maxLogLine)
}

// cutLine cuts a log line to at most n bytes on a rune boundary, marking the cut with "…";
// unlike md.Clip it keeps tabs and leading space.
func cutLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
