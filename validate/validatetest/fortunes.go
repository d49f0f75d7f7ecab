package validatetest

import (
	"bufio"
	"errors"
	"html"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// fortunesModes are the modes of the fortunes profile: one for each of its checks.
func fortunesModes(m map[string]string) {
	m["fortunes.probe-status"] = baselineBehaviours["probe-status"]
	for name, d := range map[string]string{
		"fortunes.fortunes-content-type": "/fortunes answers text/plain; charset=utf-8",
		"fortunes.fortunes-no-doctype":   "the page has no <!DOCTYPE html>",
		"fortunes.fortunes-extra-rows":   "ten empty <tr></tr> follow the table's rows",
		"fortunes.fortunes-runtime-text": `the row added at request time reads "Additional fortune added at request time!"`,
		"fortunes.fortunes-numeric-refs": "< and > are escaped as &#60; and &#62;, not &lt; and &gt;",
		"fortunes.fortunes-oversize":     "a 50,000-character HTML comment follows the table",
		"fortunes.fortunes-no-header":    "the table has no header row",
		"fortunes.fortunes-case-sort":    "the rows are sorted ignoring case (the runtime row still at its byte-order place)",
		"fortunes.fortunes-runtime-last": "the row added at request time is appended after the sort",
		"fortunes.fortunes-quotes-raw":   `only <, > and & are escaped: " and ' are sent raw`,
		"fortunes.fortunes-no-template":  "the entry's source builds the page in code: no template file",
	} {
		m[name] = d
	}
}

// fortuneRuntime is the row /fortunes adds at request time (id 0).
const fortuneRuntime = "Additional fortune added at request time."

type fortune struct {
	id      int
	message string
}

var fortuneTables sync.Map // data directory → func() ([]fortune, error)

// loadFortunes returns the fortune table of the data directory's db/seed.sql, read once per
// directory.
func loadFortunes(dataDir string) ([]fortune, error) {
	f, _ := fortuneTables.LoadOrStore(dataDir, sync.OnceValues(func() ([]fortune, error) { return readFortunes(dataDir) }))
	return f.(func() ([]fortune, error))()
}

func readFortunes(dataDir string) ([]fortune, error) {
	f, err := os.Open(filepath.Join(dataDir, "db", "seed.sql"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var rows []fortune
	in := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "COPY fortune "):
			in = true
		case !in:
		case line == `\.`:
			return rows, nil
		default:
			id, msg, _ := strings.Cut(line, "\t")
			n, err := strconv.Atoi(id)
			if err != nil {
				return nil, errors.New("seed: a fortune row without an id")
			}
			rows = append(rows, fortune{n, msg})
		}
	}
	return nil, errors.New("seed: no fortune COPY block")
}

// fortunes answers GET /fortunes: the table's rows and the runtime row, sorted by message in
// byte order, as an HTML page with every message escaped.
func (s *Server) fortunes(r *req) reply {
	if r.method != "GET" {
		return reply{status: 405, headers: []string{"Allow: GET"}}
	}
	table, err := loadFortunes(s.dataDir)
	if err != nil {
		return reply{status: 503, body: []byte(err.Error())}
	}
	runtime := fortune{0, fortuneRuntime}
	if s.mode == "fortunes-runtime-text" {
		runtime.message = "Additional fortune added at request time!"
	}
	rows := slices.Clone(table)
	byBytes := func(a, b fortune) int { return strings.Compare(a.message, b.message) }
	switch s.mode {
	case "fortunes-runtime-last":
		slices.SortFunc(rows, byBytes)
		rows = append(rows, runtime)
	case "fortunes-case-sort":
		slices.SortFunc(rows, func(a, b fortune) int {
			return strings.Compare(strings.ToLower(a.message), strings.ToLower(b.message))
		})
		before := 0 // the runtime row's place in byte order
		for _, f := range rows {
			if f.message < runtime.message {
				before++
			}
		}
		rows = slices.Insert(rows, before, runtime)
	default:
		rows = append(rows, runtime)
		slices.SortFunc(rows, byBytes)
	}
	escape := html.EscapeString // & < > " ' as &amp; &lt; &gt; &#34; &#39;
	switch s.mode {
	case "fortunes-numeric-refs":
		escape = strings.NewReplacer("&", "&amp;", "<", "&#60;", ">", "&#62;", `"`, "&#34;", "'", "&#39;").Replace
	case "fortunes-quotes-raw":
		escape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace
	}
	var b strings.Builder
	if s.mode != "fortunes-no-doctype" {
		b.WriteString("<!DOCTYPE html>\n")
	}
	b.WriteString("<html>\n<head><title>Fortunes</title></head>\n<body>\n<table>\n")
	if s.mode != "fortunes-no-header" {
		b.WriteString("<tr><th>id</th><th>message</th></tr>\n")
	}
	for _, f := range rows {
		b.WriteString("<tr><td>" + strconv.Itoa(f.id) + "</td><td>" + escape(f.message) + "</td></tr>\n")
	}
	if s.mode == "fortunes-extra-rows" {
		b.WriteString(strings.Repeat("<tr></tr>\n", 10))
	}
	b.WriteString("</table>\n")
	if s.mode == "fortunes-oversize" {
		b.WriteString("<!-- " + strings.Repeat("x", 50000) + " -->\n")
	}
	b.WriteString("</body>\n</html>\n")
	ct := "text/html; charset=utf-8"
	if s.mode == "fortunes-content-type" {
		ct = "text/plain; charset=utf-8"
	}
	return reply{status: 200, headers: []string{"Content-Type: " + ct}, body: []byte(b.String())}
}

// The fixture entry's source (Server.Source): a template file the page is rendered from, or,
// under fortunes-no-template, code that builds it.
const (
	fixtureTemplate = `<!DOCTYPE html>
<html>
<head><title>Fortunes</title></head>
<body>
<table>
<tr><th>id</th><th>message</th></tr>
{{range .}}<tr><td>{{.ID}}</td><td>{{.Message}}</td></tr>
{{end}}</table>
</body>
</html>
`
	fixtureMain = `package main

// The server renders fortunes.html with html/template.
func main() {}
`
	fixtureHandRolled = `package main

import "strings"

// page builds the fortunes page in code.
func page(rows []string) string {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><body><table><tr><th>id</th><th>message</th></tr>")
	for _, r := range rows {
		b.WriteString("<tr><td>" + r + "</td></tr>")
	}
	return b.String() + "</table></body></html>"
}

func main() {}
`
	// fixtureReadme describes the table in a file that is not a template.
	fixtureReadme = "# fixture\n\n<table><tr><td>a table in a README is no template</td></tr></table>\n"
)

// writeSource writes the fixture entry's source into a new temporary directory.
func (s *Server) writeSource() error {
	dir, err := os.MkdirTemp("", "validatetest-source-")
	if err != nil {
		return err
	}
	files := map[string]string{"meta.json": `{"display_name": "fixture", "tests": ["fortunes"]}` + "\n", "README.md": fixtureReadme}
	if s.mode == "fortunes-no-template" {
		files["main.go"] = fixtureHandRolled
	} else {
		files["main.go"] = fixtureMain
		files["templates/fortunes.html"] = fixtureTemplate
	}
	// A result file of an earlier run is no template, though it may hold HTML.
	files["results/fortunes.html"] = "<table><tr><td>old</td></tr></table>\n"
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	s.Source = dir
	return nil
}
