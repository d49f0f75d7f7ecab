// Package text holds the few string helpers every stage shares: one line made of many, a
// string cut to a length, and the edit distance behind "did you mean". It imports the
// standard library only.
package text

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// OneLine collapses every run of white space in s, line breaks included, into one space,
// and trims the ends: an error or a log line fit for one line of a reply or a log.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// JoinLines replaces each line break of s (\r\n, \r or \n) with sep and keeps all other
// spacing: errors.Join's lines as "a; b".
func JoinLines(s, sep string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r\n", sep, "\n", sep, "\r", sep).Replace(s)
}

// LastLine is the last line of s, trimmed: a command's output, for an error; "(no output)"
// when s is blank.
func LastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	return Or(s, "(no output)")
}

// Or is s, or alt when s is empty: "—" for a setting that is not set.
func Or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// FirstLine is the first line of s, trimmed, cut to at most n bytes (Cut).
func FirstLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return Cut(strings.TrimSpace(s), n)
}

// Cut returns s when it has at most n bytes, else its first n bytes or fewer, ending on a
// rune boundary, and "…".
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:runeStart(s, max(n, 0))] + "…"
}

// CutNoting is Cut that says how much it left out: "abc…(+120 bytes)", for a check's
// outcome that shows part of a body.
func CutNoting(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := runeStart(s, max(n, 0))
	return fmt.Sprintf("%s…(+%d bytes)", s[:i], len(s)-i)
}

// runeStart is the largest i ≤ n at which a rune of s starts (or len(s)).
func runeStart(s string, n int) int {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// Clip makes s one line (OneLine) of at most n characters, cut at a word where the word is
// not most of the line, marked "…": a table cell or a one-line reason.
func Clip(s string, n int) string {
	s = OneLine(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 1 {
		return "…"
	}
	cut := string([]rune(s)[:n-1])
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}

// Distance is the Levenshtein distance of a and b, counted in runes: the fewest single
// rune insertions, deletions and substitutions that turn a into b.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Duration writes d as time.Duration does without its zero units: "20m", "6h", "1h4m",
// "1m30s", "1.5s".
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
