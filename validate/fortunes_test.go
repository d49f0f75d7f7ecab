package validate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseFortunePage reads pages written in the ways HTML allows: upper-case tags,
// attributes, end tags left out, white space around cells, and tags that only start like a
// row (<track>, <thead>); the rows and cells come back as written, messages unescaped.
func TestParseFortunePage(t *testing.T) {
	page := "<!doctype html><TABLE class=f>\n<thead><TR><TH>id<TH>message</thead>\n" +
		"<tr class=\"r\">\n  <td> 11 </td>\n  <td>&lt;script&gt;x&#39;s</td>\n</tr>\n" +
		"<tr><td>2<td>A &amp; B &#x2014; &quot;c&quot;</td><track src=x>\n" +
		"<Tr><TD>0</TD><TD>Additional</TD></TR></table>\n<tr><td>not in the table</td></tr>"
	pg := parseFortunePage([]byte(page))
	if len(pg.rows) != 4 {
		t.Fatalf("%d rows, want 4 (the header, three fortunes; <track> is no row, nor is a <tr> outside a table): %+v", len(pg.rows), pg.rows)
	}
	if h := pg.rows[0]; len(h.cells) != 2 || !h.cells[0].header || h.cells[0].text() != "id" || h.cells[1].text() != "message" {
		t.Errorf("header row %+v", h)
	}
	rows, problem := pg.fortunes()
	if problem != "" {
		t.Fatal(problem)
	}
	want := []fortuneRow{
		{n: 2, id: 11, raw: "&lt;script&gt;x&#39;s", message: "<script>x's"},
		{n: 3, id: 2, raw: "A &amp; B &#x2014; &quot;c&quot;", message: "A & B \u2014 \"c\""},
		{n: 4, id: 0, raw: "Additional", message: "Additional"},
	}
	if diff := cmp.Diff(want, rows, cmp.AllowUnexported(fortuneRow{})); diff != "" {
		t.Errorf("fortune rows (-want +got):\n%s", diff)
	}

	for _, tt := range []struct{ page, want string }{
		{"<p>no table</p><tr><td>1</td><td>m</td></tr>", "no table row with <td> cells among the page's 0 <tr>"},
		{"<table><tr><td>1</td></tr></table>", "<tr> 1 is not two <td> cells"},
		{"<table><tr><td>x</td><td>m</td></tr></table>", "<tr> 1's first cell is not an id"},
	} {
		if _, problem := parseFortunePage([]byte(tt.page)).fortunes(); !strings.Contains(problem, tt.want) {
			t.Errorf("page %q: problem %q, want %q", tt.page, problem, tt.want)
		}
	}
}

// TestEscapeProblem: a message cell may hold character references and nothing an HTML
// parser would take for markup or an attribute's end.
func TestEscapeProblem(t *testing.T) {
	for raw, want := range map[string]string{
		"plain text \u2014 with an em dash":            "",
		"&lt;script&gt; &amp; &#34;q&#34; &#39;s&#39;": "",
		"&#x27; &#X2014; &quot;":                       "",
		"<script>":                                     "a raw < at byte 0",
		"a > b":                                        "a raw > at byte 2",
		`say "hi"`:                                     `a raw " at byte 4`,
		"it's":                                         "a raw ' at byte 2",
		"Q & A":                                        "a raw & at byte 2 (not a character reference)",
		"&amp":                                         "a raw & at byte 0 (not a character reference)",
		"&#;":                                          "a raw & at byte 0 (not a character reference)",
	} {
		if got := escapeProblem(raw); got != want {
			t.Errorf("escapeProblem(%q) = %q, want %q", raw, got, want)
		}
	}
}

// TestJudgeEscaping: escaped cells must unescape to the table's message of their id; a
// message escaped twice, an id the table lacks and an id twice are caught; id 0's text is
// the required check's.
func TestJudgeEscaping(t *testing.T) {
	table := map[int]string{1: `a "b" & c's`, 2: "plain"}
	row := func(n, id int, raw string) fortuneRow {
		return fortuneRow{n: n, id: id, raw: raw, message: strings.NewReplacer("&amp;", "&", "&#34;", `"`, "&#39;", "'").Replace(raw)}
	}
	good := []fortuneRow{row(1, 1, "a &#34;b&#34; &amp; c&#39;s"), row(2, 0, "anything at all"), row(3, 2, "plain")}
	if _, problem, _ := judgeEscaping(good, table); problem != "" {
		t.Errorf("correct rows: %s", problem)
	}
	for _, tt := range []struct {
		rows []fortuneRow
		want string
	}{
		{[]fortuneRow{{n: 1, id: 1, raw: "a &amp;#34;b&amp;#34; &amp;amp; c&amp;#39;s", message: "a &#34;b&#34; &amp; c&#39;s"}}, "reads"},
		{[]fortuneRow{row(1, 7, "plain")}, "id 7, which the fortune table does not hold"},
		{[]fortuneRow{row(1, 2, "plain"), row(2, 2, "plain")}, "id 2 in <tr> 1 and again in <tr> 2"},
		{[]fortuneRow{row(1, 0, "it's")}, "a raw ' at byte 2"},
	} {
		if _, problem, _ := judgeEscaping(tt.rows, table); !strings.Contains(problem, tt.want) {
			t.Errorf("rows %+v: problem %q, want %q", tt.rows, problem, tt.want)
		}
	}
}

// TestTemplateCheck: a template file anywhere in the source passes; one only in results/ or
// a hidden directory, or a table in a file that is no template, does not; a tuned entry and
// a run without the source are skipped.
func TestTemplateCheck(t *testing.T) {
	write := func(t *testing.T, files map[string]string) string {
		dir := t.TempDir()
		for name, content := range files {
			path := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	table := "<TABLE>{% for f in fortunes %}<tr><TD>{{ f.id }}</td></tr>{% endfor %}</table>"
	for _, tt := range []struct {
		name   string
		files  map[string]string
		tuned  bool
		status Status
		got    string
	}{
		{"jinja template", map[string]string{"app.py": "print(1)", "app/templates/fortunes.jinja2": table}, false, Pass, "template file app/templates/fortunes.jinja2"},
		{"go template", map[string]string{"main.go": "package main", "fortunes.gohtml": table}, false, Pass, "template file fortunes.gohtml"},
		{"html built in code", map[string]string{"main.go": `const page = "` + table + `"`, "README.md": table}, false, Fail, "none among its 2 files"},
		{"only in results and hidden dirs", map[string]string{"results/fortunes.html": table, ".cache/t.html": table, "x.go": ""}, false, Fail, "none among its 1 files"},
		{"a template without a table", map[string]string{"index.html": "<p>hello</p>"}, false, Fail, "none among its 1 files"},
		{"tuned", map[string]string{"main.go": ""}, true, Skip, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := templateCheck(context.Background(), &env{source: write(t, tt.files), tuned: tt.tuned})
			if r.status != tt.status || !strings.Contains(r.got, tt.got) {
				t.Errorf("status %s, got %q, reason %q; want %s with %q", r.status, r.got, r.reason, tt.status, tt.got)
			}
			if r.status == Fail && (r.request == "" || r.expected == "") {
				t.Errorf("a failure without its request or expectation: %+v", r)
			}
		})
	}
	if r := templateCheck(context.Background(), &env{}); r.status != Skip || !strings.Contains(r.reason, "source is not known") {
		t.Errorf("without a source: %+v, want a SKIP that says why", r)
	}
}

// TestLoadFortunes reads the fortune table from a seed; a seed without one is an error that
// says what to do.
func TestLoadFortunes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, filepath.FromSlash(seedFile))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(seedSQL("1\tx\tc\t1\t1\tt\t[]\t1\t1") + fortuneSeedCopy + "\n1\tfortune: No such file or directory\n11\t<script>a & b</script>\n\\.\nANALYZE;\n")
	got, err := loadFortunes(dir)
	if want := map[int]string{1: "fortune: No such file or directory", 11: "<script>a & b</script>"}; err != nil || !cmp.Equal(got, want) {
		t.Errorf("loadFortunes = %v, %v; want %v", got, err, want)
	}
	write(seedSQL("1\tx\tc\t1\t1\tt\t[]\t1\t1"))
	if _, err := loadFortunes(dir); err == nil || !strings.Contains(err.Error(), "no fortune table") || !strings.Contains(err.Error(), "regenerate") {
		t.Errorf("a seed without fortunes: %v", err)
	}
}
