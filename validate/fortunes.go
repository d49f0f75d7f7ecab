package validate

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The fortunes endpoint: GET /fortunes reads the fortune table (the seed's 200 rows), adds
// fortuneRuntime at request time, sorts the rows by message in byte order and answers an HTML
// page with one escaped table row per fortune.
const (
	fortunesPath = "/fortunes"
	// fortuneRuntime is the message of the row added at request time, id 0.
	fortuneRuntime = "Additional fortune added at request time."
	// fortuneSeedCopy begins the fortune table's COPY block in the seed: one "id<TAB>message"
	// line per row, up to a line "\.".
	fortuneSeedCopy = "COPY fortune (id, message) FROM stdin;"
)

// The arena's bounds on the page (its validation's row count and body length).
const (
	fortunesMinRows  = 201
	fortunesMaxRows  = 210
	fortunesMinChars = 18432
	fortunesMaxChars = 65536
)

// fortunesChecks are the fortunes profile's: the arena's six as required checks (each the
// arena's own rule: they are what its validation asserts), then ours beyond them, advisory:
// the header row, the ordinal sort, the runtime row in its sorted place, every message escaped
// and a template file in standard mode.
func fortunesChecks(p string) []check {
	ref := func(text string) string { return contract(p, text, "") }
	body := func(judge func(r *response) (exp, problem, got string)) func(ctx context.Context, e *env) result {
		return func(ctx context.Context, e *env) result { return fortunesBodyCheck(ctx, e, judge) }
	}
	return []check{
		probeCheck(p, "/baseline11?a=1&b=1"),
		{
			name: "GET /fortunes Content-Type",
			contract: ref(`GET /fortunes → 200 with Content-Type exactly "text/html" or starting "text/html;" ` +
				`("text/html; charset=utf-8" recommended), as the arena's validation compares it`),
			run: body(func(r *response) (string, string, string) {
				const exp = `200 with Content-Type "text/html" or "text/html;…"`
				ct := r.get("Content-Type")
				if ct != "text/html" && !strings.HasPrefix(ct, "text/html;") {
					return exp, "Content-Type " + strconv.Quote(ct), ""
				}
				return exp, "", "Content-Type " + strconv.Quote(ct)
			}),
		},
		{
			name:     "<!DOCTYPE html>",
			contract: ref(`GET /fortunes → a complete HTML document: the body contains <!DOCTYPE html> (in any case)`),
			run: body(func(r *response) (string, string, string) {
				const exp = "a body containing <!DOCTYPE html> (any case)"
				if !strings.Contains(asciiLower(string(r.Body)), "<!doctype html>") {
					return exp, "no <!DOCTYPE html> in " + describe(r), ""
				}
				return exp, "", "<!DOCTYPE html> present"
			}),
		},
		{
			name: "201 to 210 rows",
			contract: ref(fmt.Sprintf(`GET /fortunes → one <tr> per fortune: the body holds %d to %d "<tr" (any case; the arena counts them so): `+
				`the 200 rows of the fortune table, the row added at request time, and a header row`, fortunesMinRows, fortunesMaxRows)),
			run: body(func(r *response) (string, string, string) {
				exp := fmt.Sprintf(`%d to %d "<tr" in the body`, fortunesMinRows, fortunesMaxRows)
				n := strings.Count(asciiLower(string(r.Body)), "<tr")
				if n < fortunesMinRows || n > fortunesMaxRows {
					return exp, fmt.Sprintf(`%d "<tr" in a body of %d bytes`, n, len(r.Body)), ""
				}
				return exp, "", fmt.Sprintf(`%d "<tr"`, n)
			}),
		},
		{
			name:     "row added at request time",
			contract: ref(`GET /fortunes → the body contains the row added at request time, id 0, message exactly "` + fortuneRuntime + `"`),
			run: body(func(r *response) (string, string, string) {
				exp := strconv.Quote(fortuneRuntime) + " in the body"
				if !strings.Contains(string(r.Body), fortuneRuntime) {
					return exp, "it is not there", ""
				}
				return exp, "", "present"
			}),
		},
		{
			name: "<script> row escaped",
			contract: ref(`GET /fortunes → every message HTML-escaped; the <script> row (id 11) must read "&lt;script&gt;…": ` +
				`the body contains "&lt;script&gt;" and not "<script>alert", as the arena's validation checks`),
			run: body(func(r *response) (string, string, string) {
				const exp = `"&lt;script&gt;" in the body and no "<script>alert"`
				b := string(r.Body)
				switch {
				case strings.Contains(b, "<script>alert"):
					return exp, `"<script>alert" in the body: ` + around(b, strings.Index(b, "<script>alert")), ""
				case !strings.Contains(b, "&lt;script&gt;"):
					got := `no "&lt;script&gt;" in the body`
					if i := strings.Index(b, "script"); i >= 0 {
						got += ": " + around(b, i)
					}
					return exp, got, ""
				}
				return exp, "", `"&lt;script&gt;" present, no "<script>alert"`
			}),
		},
		{
			name: "body size",
			contract: ref(`GET /fortunes → a body of 18,432 to 65,536 characters once trailing newlines are dropped ` +
				`(UTF-8 characters, as the arena's validation counts the body in a UTF-8 locale)`),
			run: body(func(r *response) (string, string, string) {
				const exp = "18,432 to 65,536 characters"
				n := utf8.RuneCountInString(strings.TrimRight(string(r.Body), "\n"))
				if n < fortunesMinChars || n > fortunesMaxChars {
					return exp, fmt.Sprintf("%d characters (%d bytes)", n, len(r.Body)), ""
				}
				return exp, "", fmt.Sprintf("%d characters", n)
			}),
		},
		check{
			name:     "header row",
			contract: ref(`the table's first row is the header row <tr><th>id</th><th>message</th></tr>`),
			run: body(func(r *response) (string, string, string) {
				const exp = "a first row of two <th> cells, id and message"
				pg := parseFortunePage(r.Body)
				if len(pg.rows) == 0 {
					return exp, "no <tr> row in " + describe(r), ""
				}
				first := pg.rows[0]
				if len(first.cells) != 2 || !first.cells[0].header || !first.cells[1].header ||
					!strings.EqualFold(first.cells[0].text(), "id") || !strings.EqualFold(first.cells[1].text(), "message") {
					return exp, "first row " + printable([]byte(first.raw), 160), ""
				}
				return exp, "", "first row " + printable([]byte(first.raw), 160)
			}),
		}.advisory(),
		check{
			name: "sorted by message, byte order",
			contract: ref(`the rows from the table are sorted by message in ordinal (byte) order, as strcmp compares ` +
				`the UTF-8 bytes, not by a locale's collation: the <script> row first, the multi-byte rows last`),
			run: fortunesRowsCheck(func(rows []fortuneRow) (string, string, string) {
				const exp = "the rows in byte order of their messages"
				var prev *fortuneRow
				for i := range rows {
					row := &rows[i]
					if row.id == 0 {
						continue // the runtime row's place is its own check
					}
					if prev != nil && prev.message > row.message {
						return exp, fmt.Sprintf("<tr> %d (id %d) %s comes after <tr> %d (id %d) %s, which sorts after it in byte order",
							row.n, row.id, cellText(row.message), prev.n, prev.id, cellText(prev.message)), ""
					}
					prev = row
				}
				return exp, "", fmt.Sprintf("%d rows in byte order", len(rows))
			}),
		}.advisory(),
		check{
			name: "runtime row in place",
			contract: ref(`the row added at request time (id 0) is sorted with the others: it sits where its message ` +
				`sorts in byte order, not appended after the sort`),
			run: fortunesRowsCheck(func(rows []fortuneRow) (string, string, string) {
				const exp = "the row of id 0 where its message sorts among the others"
				at := slices.IndexFunc(rows, func(r fortuneRow) bool { return r.id == 0 })
				if at < 0 {
					return exp, "no row of id 0", ""
				}
				before := 0
				for i, r := range rows {
					if i != at && r.message < rows[at].message {
						before++
					}
				}
				if at != before {
					return exp, fmt.Sprintf("id 0 is fortune %d of %d (<tr> %d); %d messages sort before it, so it belongs at fortune %d",
						at+1, len(rows), rows[at].n, before, before+1), ""
				}
				return exp, "", fmt.Sprintf("id 0 is fortune %d of %d, after the %d messages that sort before it", at+1, len(rows), before)
			}),
		}.advisory(),
		check{
			name: "every message HTML-escaped",
			contract: ref(`every message cell is HTML-escaped: no raw <, >, " or ', & only where a character reference ` +
				`begins; unescaped, it is the fortune table's message of its id (so nothing is escaped twice)`),
			run: func(ctx context.Context, e *env) result {
				table, err := e.data.fortunes()
				if err != nil {
					return failed("GET "+fortunesPath, "every message escaped", "cannot check: "+err.Error())
				}
				return fortunesRowsCheck(func(rows []fortuneRow) (string, string, string) {
					return judgeEscaping(rows, table)
				})(ctx, e)
			},
		}.advisory(),
		check{
			name: "template engine in standard mode",
			contract: ref(`standard mode (meta.json's mode is not "tuned"): the page is rendered per request from a separate ` +
				`template file of the entry's source (` + strings.Join(templateExts, ", ") + `) holding the table's markup, ` +
				`with auto-escaping on, not HTML built in code; a tuned entry may hand-roll it`),
			run: templateCheck,
		}.advisory(),
	}
}

// fortunesBodyCheck judges the answer to GET /fortunes: judge returns what was expected, and
// either a problem or what was found. The profile's checks share one answer, fetched by the
// first of them (the arena's validation judges one body too).
func fortunesBodyCheck(ctx context.Context, e *env, judge func(r *response) (exp, problem, got string)) result {
	raw := request("GET", fortunesPath, nil, nil)
	r, err := e.shared.get(func() (*response, error) { return exchange(ctx, e, "GET", raw) })
	if err != nil {
		return failed(show(raw), "200 with the fortunes page", err.Error())
	}
	if r.Status != 200 {
		return failed(show(raw), "200 with the fortunes page", describe(r))
	}
	exp, problem, got := judge(r)
	if problem != "" {
		return failed(show(raw), exp, problem)
	}
	return passed(show(raw), exp, got)
}

// fortunesRowsCheck gets /fortunes and judges its table's rows of fortunes (the rows with two
// <td> cells), in order.
func fortunesRowsCheck(judge func(rows []fortuneRow) (exp, problem, got string)) func(ctx context.Context, e *env) result {
	return func(ctx context.Context, e *env) result {
		return fortunesBodyCheck(ctx, e, func(r *response) (string, string, string) {
			pg := parseFortunePage(r.Body)
			rows, problem := pg.fortunes()
			if problem != "" {
				exp, _, _ := judge(nil)
				return exp, problem, ""
			}
			return judge(rows)
		})
	}
}

// judgeEscaping checks every fortune row's message cell: escaped, and unescaped the table's
// message of its id (id 0's text is the required check's to judge).
func judgeEscaping(rows []fortuneRow, table map[int]string) (exp, problem, got string) {
	exp = `every message cell escaped (no raw <, >, ", '; & only in a character reference) and, unescaped, the table's message of its id`
	seen := map[int]int{}
	for _, row := range rows {
		if prev, ok := seen[row.id]; ok {
			return exp, fmt.Sprintf("id %d in <tr> %d and again in <tr> %d", row.id, prev, row.n), ""
		}
		seen[row.id] = row.n
		if p := escapeProblem(row.raw); p != "" {
			return exp, fmt.Sprintf("<tr> %d (id %d): %s in %s", row.n, row.id, p, cellText(row.raw)), ""
		}
		if row.id == 0 {
			continue
		}
		want, ok := table[row.id]
		switch {
		case !ok:
			return exp, fmt.Sprintf("<tr> %d has id %d, which the fortune table does not hold", row.n, row.id), ""
		case row.message != want:
			return exp, fmt.Sprintf("<tr> %d (id %d) reads %s unescaped; the table's message is %s", row.n, row.id,
				cellText(row.message), cellText(want)), ""
		}
	}
	return exp, "", fmt.Sprintf("%d message cells, each escaped and its row's", len(rows))
}

// charRef is a character reference at the start of a string: named, decimal or hexadecimal.
var charRef = regexp.MustCompile(`^&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});`)

// escapeProblem returns what is not escaped in a cell's raw text, or "".
func escapeProblem(raw string) string {
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '<', '>', '"', '\'':
			return fmt.Sprintf("a raw %c at byte %d", c, i)
		case '&':
			if !charRef.MatchString(raw[i:]) {
				return fmt.Sprintf("a raw & at byte %d (not a character reference)", i)
			}
		}
	}
	return ""
}

// cellText quotes a cell's text for a report, cut short.
func cellText(s string) string { return `"` + printable([]byte(s), 120) + `"` }

// around renders the body near byte i for a report.
func around(b string, i int) string {
	lo := max(0, i-40)
	return `"…` + printable([]byte(b[lo:min(len(b), i+80)]), 160) + `…"`
}

// asciiLower lower-cases the ASCII letters of s and nothing else, so byte offsets stay
// those of s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// A fortunePage is the table rows of a fortunes page, as a lenient reader of HTML finds
// them: a row begins at each <tr> of a table and ends at the next one, at </table> or at the
// end; a cell begins at each <td> or <th> in it and ends at its end tag, the next cell or the
// row's end (HTML lets the end tags out).
type fortunePage struct {
	rows []pageRow
}

type pageRow struct {
	n     int    // 1 for the page's first <tr>
	raw   string // the row's markup, for reports
	cells []pageCell
}

type pageCell struct {
	header bool   // <th>
	raw    string // the markup inside, trimmed of white space
}

// text is the cell's text: the markup unescaped.
func (c pageCell) text() string { return strings.TrimSpace(html.UnescapeString(c.raw)) }

// A fortuneRow is a row of the page with two <td> cells: an id and a message.
type fortuneRow struct {
	n       int    // the row's place among the page's <tr> (the header row counts)
	id      int    // the first cell, a decimal integer
	raw     string // the second cell as sent
	message string // the second cell unescaped
}

// parseFortunePage reads the rows of every table in body (a table ends at </table> or at
// the end of the body).
func parseFortunePage(body []byte) fortunePage {
	s := string(body)
	low := asciiLower(s)
	var pg fortunePage
	for _, table := range tagStarts(low, "table", 0, len(low)) {
		tableEnd := len(low)
		if t := strings.Index(low[table:], "</table"); t >= 0 {
			tableEnd = table + t
		}
		starts := tagStarts(low, "tr", table, tableEnd)
		for i, start := range starts {
			end := tableEnd
			if i+1 < len(starts) {
				end = starts[i+1]
			}
			pg.rows = append(pg.rows, parseRow(s, low, len(pg.rows)+1, start, end))
		}
	}
	return pg
}

// parseRow reads the row s[start:end] (low is s with its ASCII letters lower-cased).
func parseRow(s, low string, n, start, end int) pageRow {
	row := pageRow{n: n, raw: s[start:end]}
	cells := append(tagStarts(low, "td", start, end), tagStarts(low, "th", start, end)...)
	slices.Sort(cells)
	for j, c := range cells {
		open := strings.IndexByte(low[c:end], '>')
		if open < 0 {
			break
		}
		from := c + open + 1
		to := end
		if j+1 < len(cells) {
			to = cells[j+1]
		}
		for _, closer := range []string{"</td", "</th", "</tr"} {
			if k := strings.Index(low[from:to], closer); k >= 0 {
				to = from + k
			}
		}
		row.cells = append(row.cells, pageCell{header: low[c+2] == 'h', raw: strings.TrimSpace(s[from:to])})
	}
	return row
}

// tagStarts returns where the start tags <name> (or <name followed by attributes) begin in
// low[from:to], as offsets into low.
func tagStarts(low, name string, from, to int) []int {
	var out []int
	open := "<" + name
	for i := from; i < to; {
		k := strings.Index(low[i:to], open)
		if k < 0 {
			break
		}
		at := i + k
		next := at + len(open)
		if next < to && strings.IndexByte(" \t\r\n/>", low[next]) >= 0 {
			out = append(out, at)
		}
		i = next
	}
	return out
}

// fortunes returns the page's rows that hold a fortune (two <td> cells, the first an id), in
// order; or what is wrong when there are none, or when one is not id and message.
func (pg fortunePage) fortunes() ([]fortuneRow, string) {
	var rows []fortuneRow
	for _, r := range pg.rows {
		if len(r.cells) == 0 || r.cells[0].header {
			continue // the header row, or an empty one
		}
		if len(r.cells) != 2 || r.cells[1].header {
			return nil, fmt.Sprintf("<tr> %d is not two <td> cells, id and message: %s", r.n, printable([]byte(r.raw), 160))
		}
		id, err := strconv.Atoi(r.cells[0].text())
		if err != nil {
			return nil, fmt.Sprintf("<tr> %d's first cell is not an id: %s", r.n, printable([]byte(r.raw), 160))
		}
		rows = append(rows, fortuneRow{n: r.n, id: id, raw: r.cells[1].raw, message: html.UnescapeString(r.cells[1].raw)})
	}
	if len(rows) == 0 {
		return nil, fmt.Sprintf("no table row with <td> cells among the page's %d <tr>", len(pg.rows))
	}
	return rows, ""
}

// templateExts are the extensions of the template files a standard-mode entry's source may
// render /fortunes from.
var templateExts = []string{".html", ".htm", ".tmpl", ".tpl", ".gohtml", ".gotmpl", ".templ", ".jinja", ".jinja2", ".j2",
	".twig", ".erb", ".ejs", ".hbs", ".handlebars", ".mustache", ".cshtml", ".razor", ".jte", ".kte", ".peb",
	".pug", ".liquid", ".njk", ".ftl", ".ftlh", ".vm", ".eex", ".heex", ".latte", ".mako", ".ecr", ".hamlet", ".tera", ".askama"}

// templateCheck looks for the template file of a standard-mode entry: a file of its source
// (results/ and hidden directories aside) with a template extension that holds a <table and a
// <td. A tuned entry, or a run that does not know the entry's source, is skipped.
func templateCheck(_ context.Context, e *env) result {
	if e.tuned {
		return result{status: Skip, reason: `a tuned entry (meta.json) may hand-roll its HTML`}
	}
	if e.source == "" {
		return result{status: Skip, reason: "the entry's source is not known to this run (validate an entry, not an address)"}
	}
	req := "read the entry's source " + e.source
	const exp = "a template file (.html, .tmpl, .gohtml, .jinja, … as the contract lists) holding the table's markup (<table, <td)"
	found, files, err := findTemplate(e.source)
	switch {
	case err != nil:
		return failed(req, exp, "cannot read it: "+err.Error())
	case found == "":
		return failed(req, exp, fmt.Sprintf("none among its %d files: the page looks built in code, which only a tuned entry may do (meta.json \"mode\": \"tuned\")", files))
	}
	return passed(req, exp, "template file "+found)
}

// Bounds of the template search: the files looked at and the bytes read of each.
const (
	maxSourceFiles   = 20000
	maxTemplateBytes = 1 << 20
)

// findTemplate walks dir for a template file holding a table; it returns its path relative to
// dir ("" when there is none) and how many files it looked at.
func findTemplate(dir string) (found string, files int, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != dir && (strings.HasPrefix(name, ".") || name == "results" || name == "node_modules" || name == "vendor") {
				return fs.SkipDir
			}
			return nil
		}
		if files++; files > maxSourceFiles {
			return fmt.Errorf("more than %d files; stopped looking", maxSourceFiles)
		}
		if !d.Type().IsRegular() || !slices.Contains(templateExts, strings.ToLower(filepath.Ext(name))) {
			return nil
		}
		if holdsTable(path) {
			found, _ = filepath.Rel(dir, path)
			return fs.SkipAll
		}
		return nil
	})
	return filepath.ToSlash(found), files, err
}

// holdsTable reports whether the first maxTemplateBytes of the file hold "<table" and "<td"
// (in any case).
func holdsTable(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxTemplateBytes))
	low := asciiLower(string(b))
	return strings.Contains(low, "<table") && strings.Contains(low, "<td")
}

// loadFortunes reads the fortune table from dir's database seed: id → message.
func loadFortunes(dir string) (map[int]string, error) {
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(seedFile)))
	if err != nil {
		return nil, fmt.Errorf("read the database seed: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var table map[int]string
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		switch {
		case table == nil && text == fortuneSeedCopy:
			table = map[int]string{}
		case table == nil:
		case text == `\.`:
			if len(table) == 0 {
				return nil, errors.New("database seed: the fortune table has no rows")
			}
			return table, nil
		default:
			id, msg, ok := strings.Cut(text, "\t")
			n, err := strconv.Atoi(id)
			if !ok || err != nil {
				return nil, fmt.Errorf("database seed line %d: a fortune row is id<TAB>message", line)
			}
			table[n] = msg
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("database seed: %w", err)
	}
	return nil, fmt.Errorf("database seed: no fortune table (a %q block ending in a \\. line); regenerate the arena data", fortuneSeedCopy)
}
