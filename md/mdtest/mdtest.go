// Package mdtest checks, in tests, that Markdown the bot renders keeps untrusted input
// inert: Live strips what GitHub shows as code, and Abuse lists what would still mention,
// reference, inject HTML or link somewhere else.
package mdtest

import (
	"html"
	"regexp"
	"strings"
)

// Live returns the parts of Markdown s that GitHub treats as live syntax: s without fenced
// code blocks (their lines become empty) and inline code spans (each becomes a space), and
// with each backslash escape replaced by "·". Code spans are matched per line, as
// CommonMark matches them: a run of n backticks opens a span that the next run of exactly
// n backticks closes; with no such run, the opening run is literal text.
func Live(s string) string {
	var out []string
	var fenceChar byte
	fenceLen := 0
	for line := range strings.SplitSeq(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if fenceChar != 0 {
			if indent < 4 && closes(trimmed, fenceChar, fenceLen) {
				fenceChar = 0
			}
			out = append(out, "")
			continue
		}
		if indent < 4 {
			if ch, n, ok := opens(trimmed); ok {
				fenceChar, fenceLen = ch, n
				out = append(out, "")
				continue
			}
		}
		out = append(out, liveLine(line))
	}
	return strings.Join(out, "\n")
}

func opens(s string) (byte, int, bool) {
	if s == "" || (s[0] != '`' && s[0] != '~') {
		return 0, 0, false
	}
	n := run(s, 0)
	if n < 3 || (s[0] == '`' && strings.IndexByte(s[n:], '`') >= 0) {
		return 0, 0, false
	}
	return s[0], n, true
}

func closes(s string, ch byte, n int) bool {
	if s == "" || s[0] != ch {
		return false
	}
	m := run(s, 0)
	return m >= n && strings.TrimSpace(s[m:]) == ""
}

// run is the length of the run of s[i] starting at i.
func run(s string, i int) int {
	j := i
	for j < len(s) && s[j] == s[i] {
		j++
	}
	return j - i
}

func liveLine(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		switch c := line[i]; {
		case c == '\\' && i+1 < len(line) && isPunct(line[i+1]):
			b.WriteString("·")
			i += 2
		case c == '`':
			n := run(line, i)
			end := closingRun(line, i+n, n)
			if end < 0 {
				b.WriteString(line[i : i+n]) // literal backticks
				i += n
				continue
			}
			b.WriteByte(' ')
			i = end + n
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// closingRun returns where the first run of exactly n backticks at or after i starts, or -1.
func closingRun(s string, i, n int) int {
	for i < len(s) {
		if s[i] != '`' {
			i++
			continue
		}
		m := run(s, i)
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

func isPunct(c byte) bool {
	return c < 0x80 && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) >= 0
}

var (
	mentionRE = regexp.MustCompile(`(?:^|[^A-Za-z0-9_\x60/.+-])@([A-Za-z0-9][A-Za-z0-9-]*(?:\[bot\])?)(/[A-Za-z0-9_.-]+)?`)
	refRE     = regexp.MustCompile(`(?i)#[0-9]|\bgh-[0-9]`)
	tagRE     = regexp.MustCompile(`<[A-Za-z/!?]`)
	// ownTags are the HTML the bot writes itself.
	ownTags    = regexp.MustCompile(`</?(?:details|summary|code)>|<!-- arenabot:[a-z]+ [^<>]*? -->`)
	linkRE     = regexp.MustCompile(`\]\(([^)]*)\)`)
	autolinkRE = regexp.MustCompile(`(?i)(?:https?|ftp)://|www\.`)
)

// Abuse lists what in Markdown s GitHub would render live although it should not have come
// from untrusted input: a mention of anyone but the logins in allowed (a team is never
// allowed), an issue reference (#1, GH-1, owner/repo#1), HTML other than the bot's own
// <details>, <summary>, <code> and its arenabot markers, a link whose destination is not
// https, and a bare URL (an autolink). Link destinations are not searched for references.
func Abuse(s string, allowed ...string) []string {
	live := Live(s)
	var found []string
	for _, m := range linkRE.FindAllStringSubmatch(live, -1) {
		if !strings.HasPrefix(m[1], "https://") {
			found = append(found, "link to "+m[1])
		}
	}
	live = linkRE.ReplaceAllString(live, "](…)")
	for _, m := range tagRE.FindAllString(ownTags.ReplaceAllString(live, ""), -1) {
		found = append(found, "HTML "+m)
	}
	// GitHub finds mentions and references in the rendered text, entities decoded.
	live = html.UnescapeString(live)
	for _, m := range mentionRE.FindAllStringSubmatch(live, -1) {
		ok := m[2] == ""
		if ok {
			ok = false
			for _, a := range allowed {
				ok = ok || strings.EqualFold(a, m[1])
			}
		}
		if !ok {
			found = append(found, "mention @"+m[1]+m[2])
		}
	}
	for _, m := range refRE.FindAllString(live, -1) {
		found = append(found, "reference "+m)
	}
	for _, m := range autolinkRE.FindAllString(live, -1) {
		found = append(found, "autolink "+m)
	}
	return found
}
