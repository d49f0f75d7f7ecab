package md_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arenabot/arenabot/md"
	"github.com/arenabot/arenabot/md/mdtest"
)

// hostile are inputs that try every way out of their context.
var hostile = []string{
	"",
	"gin",
	"@org/team please look",
	"@alice",
	"see #1 and o/r#2 and GH-3 and gh-4",
	"<script>alert(1)</script>",
	"<!-- arenabot:status request=r1 -->",
	"`",
	"``",
	"a ` b `` c",
	"`leading and trailing`",
	"line one\nline two\r\n# heading\n> quote",
	"| a | b |",
	`a\|b`,
	`trailing backslash \`,
	"**bold** _em_ ~~strike~~ [x](https://evil) ![i](https://e/i.png) $x$",
	"https://evil.example/x www.evil.example javascript:alert(1)",
	"- list",
	"1. ordered",
	"# heading",
	"&amp; &lt; &#35;1",
	"bidi \u202e override \u200b zero-width \x00 nul \x1b[31m ansi",
	strings.Repeat("x", 5000),
	strings.Repeat("`", 400),
	strings.Repeat("é", 400),
}

func TestCode(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"gin", "`gin`"},
		{"/benchmark -f gin --save", "`/benchmark -f gin --save`"},
		{"a ` b", "``a ` b``"},
		{"a `` b", "```a `` b```"},
		{"`x`", "`` `x` ``"},
		{"two\nlines", "`two lines`"},
		{"  padded  ", "`padded`"},
		{"", "—"},
		{"@org/team", "`@\u200borg/team`"},
		{"<!-- x -->", "`<\u200b!-- x -->`"},
		{"a|b", "`a|b`"},
	} {
		if got := md.Code(tt.in); got != tt.want {
			t.Errorf("Code(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got, want := md.CodeCell("a|b"), "`a\\|b`"; got != want {
		t.Errorf("CodeCell(a|b) = %q, want %q", got, want)
	}
	long := md.Code(strings.Repeat("x", 1000))
	if len(long) > md.MaxCode+len("``…") || !strings.HasSuffix(long, "…`") {
		t.Errorf("Code(1000 x) = %d bytes %q…, want cut to MaxCode with an ellipsis", len(long), long[:20])
	}
}

func TestText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain words", "plain words"},
		{"@alice", "@\u200balice"},
		{"#12", "#\u200b12"},
		{"GH-1", "GH-\u200b1"},
		{"<b>", "&lt;b&gt;"},
		{"a|b", `a\|b`},
		{"*x* _y_", `\*x\* \_y\_`},
		{"- item", `\- item`},
		{"12. item", `12\. item`},
		{"https://e", "https:\u200b//e"},
		{"www.e.com", "www\u200b.e.com"},
		{"a\nb", "a b"},
		{`\`, `\\`},
		{"", ""},
	} {
		if got := md.Text(tt.in); got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := md.Cell(""); got != "—" {
		t.Errorf("Cell(\"\") = %q, want —", got)
	}
}

func TestMention(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"alice", "@alice"},
		{"a-1", "@a-1"},
		{"dependabot[bot]", "@dependabot[bot]"},
		{"org/team", "`org/team`"},
		{"@alice", "`@\u200balice`"},
		{"-bad", "`-bad`"},
		{strings.Repeat("a", 40), "`" + strings.Repeat("a", 40) + "`"},
		{"alice\n", "`alice`"},
		{"", ""},
	} {
		if got := md.Mention(tt.in); got != tt.want {
			t.Errorf("Mention(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLink(t *testing.T) {
	for _, tt := range []struct{ text, url, want string }{
		{"status comment", "https://github.com/o/r/pull/1#issuecomment-2", "[status comment](https://github.com/o/r/pull/1#issuecomment-2)"},
		{"x", "http://github.com", ""},
		{"x", "javascript:alert(1)", ""},
		{"x", "https://e/x) [y](https://evil", ""},
		{"x", "https://user@e/", ""},
		{"x", "https:///path", ""},
		{"x", "https://e/\u00e9", ""},
		{"[evil](https://e) @bob", "https://e/", "[\\[evil\\](https:\u200b//e) @\u200bbob](https://e/)"},
		{"", "https://e/", "[link](https://e/)"},
	} {
		if got := md.Link(tt.text, tt.url); got != tt.want {
			t.Errorf("Link(%q, %q) = %q, want %q", tt.text, tt.url, got, tt.want)
		}
	}
}

func TestPlural(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want string
	}{{0, "0 measurements"}, {1, "1 measurement"}, {2, "2 measurements"}} {
		if got := md.Plural(tt.n, "measurement", "measurements"); got != tt.want {
			t.Errorf("Plural(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestFence(t *testing.T) {
	got := md.Fence("te`xt", []string{"a", "``` not a close", "b\nc", "<!-- arenabot:x -->"})
	want := "````text\na\n``` not a close\nb\nc\n<\u200b!-- arenabot:x -->\n````\n"
	if got != want {
		t.Errorf("Fence = %q, want %q", got, want)
	}
}

func TestHTML(t *testing.T) {
	got := md.HTML("<b>`x`</b> @a #1 \"q\" 'q' & https://e")
	want := "&lt;b&gt;&#96;x&#96;&lt;/b&gt; @\u200ba #\u200b1 &quot;q&quot; &#39;q&#39; &amp; https:\u200b//e"
	if got != want {
		t.Errorf("HTML = %q, want %q", got, want)
	}
}

func TestTrusted(t *testing.T) {
	if got, want := md.Trusted("run `x`\n<!-- hide"), "run `x` &lt;!-- hide"; got != want {
		t.Errorf("Trusted = %q, want %q", got, want)
	}
}

func TestClip(t *testing.T) {
	if got := md.Clip("ééé", 3); got != "é…" {
		t.Errorf("Clip(ééé, 3) = %q, want é…", got)
	}
	if got := md.Clip(strings.Repeat("a", 1<<20), 10); got != "aaaaaaaaaa…" {
		t.Errorf("Clip(1 MiB, 10) = %q", got)
	}
}

// checkInert checks the properties every function promises, for one input.
func checkInert(t *testing.T, s string) {
	t.Helper()
	code, cell, text, tcell, html := md.Code(s), md.CodeCell(s), md.Text(s), md.Cell(s), md.HTML(s)
	for name, out := range map[string]string{"Code": code, "CodeCell": cell, "Text": text, "Cell": tcell, "HTML": html, "Mention": md.Mention(s)} {
		if strings.ContainsAny(out, "\r\n") {
			t.Errorf("%s(%q) = %q spans lines", name, s, out)
		}
		if !utf8.ValidString(out) {
			t.Errorf("%s(%q) = %q is not UTF-8", name, s, out)
		}
		if strings.Contains(out, "<!--") {
			t.Errorf("%s(%q) = %q opens an HTML comment", name, s, out)
		}
		if len(out) > 3*md.MaxText+16 {
			t.Errorf("%s(%q) is %d bytes", name, s, len(out))
		}
		if abuse := mdtest.Abuse(out); len(abuse) > 0 && !(name == "Mention" && md.ValidLogin(s)) {
			t.Errorf("%s(%q) = %q: %v", name, s, out, abuse)
		}
	}
	// Code and CodeCell are exactly one code span.
	for name, out := range map[string]string{"Code": code, "CodeCell": cell} {
		if out == "—" {
			continue
		}
		if live := mdtest.Live(out); live != " " {
			t.Errorf("%s(%q) = %q leaves %q outside the span", name, s, out, live)
		}
	}
	// Inside a table row, CodeCell and Cell stay one cell.
	for name, out := range map[string]string{"CodeCell": cell, "Cell": tcell} {
		if n := cellCount("| " + out + " |"); n != 1 {
			t.Errorf("%s(%q) = %q makes %d cells", name, s, out, n)
		}
	}
	// Text shows the cleaned input, no more, no less.
	if got, want := unescape(text), md.Clip(s, md.MaxText); got != want {
		t.Errorf("Text(%q) = %q reads as %q, want %q", s, text, got, want)
	}
	// Text starts no block.
	if text != "" && strings.IndexByte("#>-+=*_|` ", text[0]) >= 0 && !strings.HasPrefix(text, "#\u200b") {
		t.Errorf("Text(%q) = %q could start a block", s, text)
	}
	live := mdtest.Live(text)
	for _, c := range []string{"<", "[", "]", "*", "_", "`", "|", "~", "!", "$"} {
		if strings.Contains(live, c) {
			t.Errorf("Text(%q) = %q has a live %q", s, text, c)
		}
	}
}

// cellCount counts the cells of a GFM table row: a pipe preceded by a backslash is not a
// delimiter, whatever precedes the backslash (cmark-gfm's longest match).
func cellCount(row string) int {
	n := -1
	for i := 0; i < len(row); i++ {
		if row[i] == '|' && (i == 0 || row[i-1] != '\\') {
			n++
		}
	}
	return n
}

// unescape reads Text's output as GitHub shows it: escapes resolved, entities decoded and
// zero-width spaces gone.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "\u200b", "").Replace(b.String())
}

func TestInert(t *testing.T) {
	for _, s := range hostile {
		checkInert(t, s)
	}
}

func FuzzInert(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkInert(t, s)
		if u := md.URL(s); u != "" && (u != s || !strings.HasPrefix(u, "https://")) {
			t.Errorf("URL(%q) = %q", s, u)
		}
		if l := md.Link(s, "https://e/"); len(mdtest.Abuse(l)) > 0 {
			t.Errorf("Link(%q) = %q: %v", s, l, mdtest.Abuse(l))
		}
		if m := md.Mention(s); strings.HasPrefix(m, "@") != md.ValidLogin(s) {
			t.Errorf("Mention(%q) = %q", s, m)
		}
		fence := md.Fence("text", []string{s, s})
		if live := mdtest.Live(fence); strings.Trim(live, "\n") != "" {
			t.Errorf("Fence(%q) leaves %q live", s, live)
		}
	})
}

func TestTrustedKeepsEscapes(t *testing.T) {
	in := "unknown flag " + md.Code("@org/team") + " and " + md.Text("@bob #1")
	got := md.Trusted(in)
	if got != in {
		t.Errorf("Trusted(%q) = %q, want it unchanged", in, got)
	}
	if abuse := mdtest.Abuse(got); len(abuse) > 0 {
		t.Errorf("Trusted(%q): %v", in, abuse)
	}
}
