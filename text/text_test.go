package text

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestOneLineAndJoinLines(t *testing.T) {
	in := "build failed:\r\n  step 3\tof 4\n\nno space  left\r"
	if got, want := OneLine(in), "build failed: step 3 of 4 no space left"; got != want {
		t.Errorf("OneLine = %q, want %q", got, want)
	}
	if got, want := JoinLines(in, "; "), "build failed:;   step 3\tof 4; ; no space  left; "; got != want {
		t.Errorf("JoinLines = %q, want %q", got, want)
	}
	if got := JoinLines("one line", "; "); got != "one line" {
		t.Errorf("JoinLines of one line = %q", got)
	}
}

func TestCuts(t *testing.T) {
	for _, tt := range []struct {
		got, want string
	}{
		{Cut("short", 10), "short"},
		{Cut("abcdef", 3), "abc…"},
		{Cut("aé", 2), "a…"}, // é is two bytes: never cut inside a rune
		{Cut("abc", -1), "…"},
		{CutNoting("abcdef", 4), "abcd…(+2 bytes)"},
		{CutNoting("abc", 4), "abc"},
		{FirstLine("  first line  \nsecond", 200), "first line"},
		{FirstLine("abcdef\nx", 3), "abc…"},
		{Clip("a b c", 10), "a b c"},
		{Clip("the quick brown fox jumps", 16), "the quick…"}, // cut back to a whole word
		{Clip("averyveryverylongword and more", 10), "averyvery…"},
		{Clip("x", 0), "…"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	// Whatever the input, a cut is valid UTF-8 and within its bound.
	s := strings.Repeat("é€𝄞a ", 50)
	for n := range 60 {
		if c := Cut(s, n); !utf8.ValidString(c) || len(c) > n+len("…") {
			t.Errorf("Cut(…, %d) = %q", n, c)
		}
		if c := Clip(s, n+1); !utf8.ValidString(c) || utf8.RuneCountInString(c) > n+1 {
			t.Errorf("Clip(…, %d) = %q: %d runes", n+1, c, utf8.RuneCountInString(c))
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"gin", "gin", 0}, {"gin", "gni", 2},
		{"kitten", "sitting", 3}, {"baselin", "baseline", 1}, {"é", "e", 1},
		{"/benchmark-tset", "/benchmark-test", 2},
	} {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestLastLineAndOr(t *testing.T) {
	for in, want := range map[string]string{"": "(no output)", "  \n ": "(no output)", "one": "one", "a\nb\n": "b", "x\n  last  \n": "last"} {
		if got := LastLine(in); got != want {
			t.Errorf("LastLine(%q) = %q, want %q", in, got, want)
		}
	}
	if Or("", "—") != "—" || Or("2-3", "—") != "2-3" {
		t.Error("Or")
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		20 * time.Minute:                 "20m",
		6 * time.Hour:                    "6h",
		time.Hour + 4*time.Minute:        "1h4m",
		90 * time.Second:                 "1m30s",
		1500 * time.Millisecond:          "1.5s",
		2 * time.Second:                  "2s",
		time.Hour + 30*time.Second:       "1h0m30s",
		3*time.Hour + 10*time.Minute + 5: "3h10m0.000000005s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}
