// Package md renders text into the GitHub Markdown the bot posts, one function per
// context: an inline code span ([Code], [CodeCell]), prose ([Text]), a table cell
// ([Cell]), HTML content ([HTML]), a fenced block ([Fence]), a link ([Link]), a mention
// ([Mention]) and bot-written Markdown ([Trusted]). Every reply, status comment and error
// text of the bot goes through it, so this is the one place where untrusted input (command
// lines, names, errors, logs) is made inert.
//
// Whatever the input, the output of each function stays in its context: it cannot end
// a code span or a table cell early, open HTML, a link, an image or emphasis, start a
// heading, list or quote, mention anyone (@user, @org/team), reference an issue (#1,
// GH-1, owner/repo#1) or fake one of the bot's hidden HTML-comment markers. Newlines
// become spaces; control, bidi and zero-width characters are dropped. Code, Text, Cell
// and HTML bound the length of what they show and mark a cut with "…".
//
// GitHub finds mentions and references in the rendered text, after Markdown escapes are
// resolved, so a backslash does not defuse them: outside code, "@", "#" and "GH-" get a
// zero-width space (U+200B) after them instead, which leaves the text readable.
//
// Package md imports nothing from this module.
package md

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of what one call shows, in bytes of the input after cleaning; longer input is cut
// on a rune boundary and marked with "…". Use [Clip] first for a tighter bound.
const (
	MaxCode = 300  // Code and CodeCell
	MaxText = 2000 // Text
	MaxCell = 300  // Cell
	MaxHTML = 200  // HTML
)

// zwsp is the zero-width space that breaks mentions, references and autolinks.
const zwsp = "\u200b"

// Clip cleans s (newlines and tabs become spaces; control, bidi and zero-width characters
// are dropped; surrounding space is trimmed) and cuts it to at most n bytes on a rune
// boundary, marking the cut with "…". It is for bounding input more tightly than the
// function that renders it does: Code(Clip(login, 60)). Huge input costs O(n) at most.
func Clip(s string, n int) string {
	n = max(n, 0)
	if len(s) > 4*n+16 {
		s = s[:4*n+16] // a rune cut here is dropped by clean
	}
	return cut(clean(s), n)
}

// clean drops control and invisible formatting characters (newlines and tabs become
// spaces) and trims.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return -1 // also zero-width and bidi override characters
		case r == '\u2028' || r == '\u2029':
			return ' '
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// cut cuts s to at most n bytes on a rune boundary, marking the cut with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimSpace(s[:n]) + "…"
}

// defuse breaks what is live even inside code: "<!--", so that no text fakes or hides a
// hidden marker (the bot finds its comments by searching their source for one), and "@",
// so that a copy of the text mentions no one.
var defuse = strings.NewReplacer("<!--", "<"+zwsp+"!--", "@", "@"+zwsp)

// Code renders untrusted s as an inline code span, safe for any input and in any inline
// context but a table cell (use CodeCell there) and raw HTML (use HTML): cleaned, cut to
// MaxCode bytes, fenced with a run of backticks longer than any inside (padded with a space
// when it starts or ends with one), with "@" and "<!--" defused. Empty input gives "—".
func Code(s string) string { return code(s, false) }

// CodeList renders names as code spans joined by commas: "`a`, `b`, `c`".
func CodeList(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = Code(n)
	}
	return strings.Join(parts, ", ")
}

// CodeCell is Code for a table cell: pipes are also escaped, which GitHub undoes inside
// the span, so the cell shows s as it is.
func CodeCell(s string) string { return code(s, true) }

func code(s string, cell bool) string {
	s = defuse.Replace(Clip(s, MaxCode))
	if s == "" {
		return "—"
	}
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if s[0] == '`' || s[len(s)-1] == '`' {
		s = " " + s + " " // CommonMark strips one space on each side
	}
	if cell {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	return fence + s + fence
}

// textReplacer escapes the Markdown and HTML metacharacters of prose and breaks mentions,
// references and URL autolinks.
var textReplacer = strings.NewReplacer(
	`\`, `\\`, "&", "&amp;", "<", "&lt;", ">", "&gt;", "|", `\|`, "*", `\*`, "_", `\_`,
	"`", "\\`", "[", `\[`, "]", `\]`, "~", `\~`, "!", `\!`, "$", `\$`,
	"@", "@"+zwsp, "#", "#"+zwsp, "://", ":"+zwsp+"//",
)

var (
	// wwwRE finds the start of a www autolink; the zero-width space goes before the dot.
	wwwRE = regexp.MustCompile(`(?i)www\.`)
	// ghRE finds a GH-123 issue reference; the zero-width space goes after the dash.
	ghRE = regexp.MustCompile(`(?i)gh-[0-9]`)
	// listRE finds text that would start an ordered list at the start of a line.
	listRE = regexp.MustCompile(`^[0-9]{1,9}[.)]`)
)

// Text renders untrusted s as inline prose: cleaned, cut to MaxText bytes, Markdown and
// HTML metacharacters backslash-escaped or turned into entities, and mentions,
// issue references and autolinks broken with a zero-width space. It never starts a block
// (heading, list, quote) even at the start of a line, and is safe in a table cell.
func Text(s string) string { return text(Clip(s, MaxText)) }

func text(s string) string {
	if s == "" {
		return ""
	}
	lead := ""
	switch {
	case strings.IndexByte("-+=", s[0]) >= 0:
		lead, s = `\`+s[:1], s[1:]
	case listRE.MatchString(s):
		i := strings.IndexAny(s, ".)")
		lead, s = s[:i]+`\`+s[i:i+1], s[i+1:]
	}
	s = textReplacer.Replace(s)
	s = wwwRE.ReplaceAllStringFunc(s, func(m string) string { return m[:3] + zwsp + "." })
	s = ghRE.ReplaceAllStringFunc(s, func(m string) string { return m[:3] + zwsp + m[3:] })
	return lead + s
}

// Cell renders untrusted s as a table cell: Text cut to MaxCell bytes (Text escapes
// pipes and keeps to one line), and "—" for empty input, so a cell is never blank.
func Cell(s string) string {
	s = text(Clip(s, MaxCell))
	if s == "" {
		return "—"
	}
	return s
}

var htmlReplacer = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;", "`", "&#96;",
	"*", "&#42;", "_", "&#95;", "[", "&#91;", "]", "&#93;", "~", "&#126;", "$", "&#36;",
	"|", "&#124;", `\`, "&#92;", "!", "&#33;",
	"@", "@"+zwsp, "#", "#"+zwsp, "://", ":"+zwsp+"//",
)

// HTML renders untrusted s as the content of an HTML element such as <summary>, where
// Markdown is not parsed: cleaned, cut to MaxHTML bytes, HTML-escaped, with no backticks,
// emphasis, mentions, references or autolinks. Markdown metacharacters become entities
// too, so the text stays inert should it end up in Markdown.
func HTML(s string) string {
	s = htmlReplacer.Replace(Clip(s, MaxHTML))
	s = wwwRE.ReplaceAllStringFunc(s, func(m string) string { return m[:3] + zwsp + "." })
	return ghRE.ReplaceAllStringFunc(s, func(m string) string { return m[:3] + zwsp + m[3:] })
}

// Fence renders lines as a fenced code block whose fence is longer than any run of
// backticks in them, so that no line can close it. A line holding newlines becomes
// several; "<!--" is defused. info is the block's language ("text", "diff"); anything
// but letters, digits and "-" is dropped from it. The block ends with a newline.
func Fence(info string, lines []string) string {
	info = strings.Map(func(r rune) rune {
		if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-') {
			return r
		}
		return -1
	}, info)
	var body []string
	for _, l := range lines {
		l = strings.ReplaceAll(strings.ReplaceAll(l, "\r\n", "\n"), "\r", "\n")
		for part := range strings.SplitSeq(l, "\n") {
			body = append(body, strings.ReplaceAll(part, "<!--", "<"+zwsp+"!--"))
		}
	}
	longest := 0
	for _, l := range body {
		run := 0
		for i := 0; i < len(l); i++ {
			if l[i] == '`' {
				run++
				longest = max(longest, run)
			} else {
				run = 0
			}
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	var b strings.Builder
	b.WriteString(f + info + "\n")
	for _, l := range body {
		b.WriteString(l + "\n")
	}
	b.WriteString(f + "\n")
	return b.String()
}

// URL returns u when it is a plain https URL that is safe as a Markdown link destination
// (an absolute https URL with a host and no user info, at most 2000 bytes of printable
// ASCII without spaces, quotes, brackets, parentheses, backticks, pipes or backslashes),
// else "".
func URL(u string) string {
	if !strings.HasPrefix(u, "https://") || len(u) > 2000 || strings.ContainsAny(u, " <>()[]\"'`|\\") {
		return ""
	}
	for i := 0; i < len(u); i++ {
		if u[i] <= 0x20 || u[i] >= 0x7f {
			return ""
		}
	}
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "https" || p.Host == "" || p.User != nil || p.Opaque != "" {
		return ""
	}
	return u
}

// Link renders a Markdown link with text (untrusted: rendered as Text, "link" when empty)
// to u, or "" when u is not a plain https URL (see URL): the caller then says something
// else.
func Link(text, u string) string {
	if URL(u) == "" {
		return ""
	}
	t := Text(text)
	if t == "" {
		t = "link"
	}
	return "[" + t + "](" + u + ")"
}

// Trusted renders bot-written Markdown s on one line: newlines become spaces, control
// characters are dropped, it is cut to 2000 bytes and "<!--" becomes "&lt;!--", so that it
// can neither hide the rest of the comment nor fake a marker. Everything else is left live,
// including the zero-width spaces of text other functions of this package rendered, so s may
// hold their output.
func Trusted(s string) string {
	if len(s) > 8000 {
		s = s[:8000]
	}
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t' || r == '\u2028' || r == '\u2029':
			return ' '
		case r == utf8.RuneError || unicode.IsControl(r) || unicode.In(r, unicode.Bidi_Control):
			return -1
		}
		return r
	}, s)
	return strings.ReplaceAll(cut(strings.TrimSpace(s), 2000), "<!--", "&lt;!--")
}

// Plural renders a count and the word for it: Plural(1, "measurement", "measurements") is
// "1 measurement", Plural(0, ...) and Plural(2, ...) are "0 measurements" and "2
// measurements".
func Plural(n int, one, many string) string {
	if n == 1 {
		return strconv.Itoa(n) + " " + one
	}
	return strconv.Itoa(n) + " " + many
}

var (
	loginRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)
	appRE   = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\[bot\]$`)
)

// ValidLogin reports whether login is a GitHub user login
// (^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$) or an App's login ("name[bot]").
func ValidLogin(login string) bool {
	return loginRE.MatchString(login) || appRE.MatchString(login)
}

// Mention renders "@login", which notifies login, when login is a valid GitHub login (see
// ValidLogin); anything else (a team "org/team", text, a marker) is rendered as Code and
// mentions no one. Empty input gives "".
func Mention(login string) string {
	switch {
	case login == "":
		return ""
	case ValidLogin(login):
		return "@" + login
	}
	return Code(login)
}
