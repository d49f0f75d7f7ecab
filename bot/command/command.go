// Package command parses the benchmark commands people write in pull-request comments
// ("/benchmark -f gin -t baseline --save"). It is a pure parser: no I/O and no GitHub;
// resolving frameworks and tests against the repository happens elsewhere.
//
// # Where a command is
//
// A command is a line whose first word is a command word, outside what GitHub renders as
// code, quotes or hidden text. The first such line in a comment counts; any text before
// and after it, and any later command line, is ignored. Precisely:
//
//   - Lines end at "\n", "\r\n" or a lone "\r".
//   - Up to three leading spaces are allowed. A line indented four or more columns (a tab
//     counts to the next multiple of four) is never a command: Markdown renders it as an
//     indented code block, or as the continuation of a paragraph, where the command would
//     not start a line.
//   - Fenced code blocks are skipped: a fence is three or more "`" or "~" (indented at
//     most three spaces; a "`" fence's info string may not hold "`"), and it closes only
//     with a line holding a run of the same character at least as long, and nothing else.
//     A fence that is never closed runs to the end of the comment.
//   - Block-quote lines (first non-space character ">") are skipped, so quoting someone's
//     command in a reply does not run it again.
//   - HTML comments that start a line ("<!--" up to the line holding "-->") are skipped:
//     GitHub does not render them.
//   - The command word must be followed by whitespace or the end of the line:
//     "/benchmarking" is not a command. A word that starts with "/benchmark-" but is not
//     a command word ("/benchmark-foo") is a command line with an unknown command: Parse
//     reports it with the closest command words.
//
// # Arguments
//
// The rest of the line is split into words like a shell does: whitespace separates words,
// single quotes group literally, double quotes group and a backslash inside them escapes
// the next character, and a backslash outside quotes escapes the next character. An
// unterminated quote, or a backslash ending the line, is an error.
//
// Flags combine in any order; "-f x", "-f=x", "--framework x" and "--framework=x" are the
// same. Lists are comma separated; each element is trimmed, empty elements are rejected,
// and duplicates are dropped keeping the first. Every name must match
// ^[a-z0-9][a-z0-9._-]*$ and be at most 64 bytes long.
//
// The grammar is strict: an unknown flag, a flag given twice, a flag without its value,
// "--save=value" (--save is a switch and takes no value) and any positional argument are
// errors. In particular the legacy form "/benchmark baseline" is rejected with a hint
// (-t baseline for a test, -f baseline for a framework), because a bare word could mean
// either and guessing would run the wrong benchmark.
package command

import (
	"errors"
	"fmt"
	"strings"
)

// MaxBody is the most of a comment Parse reads: GitHub's comment limit, in bytes. Parse
// truncates longer input, so its cost is bounded whatever it is given.
const MaxBody = 65536

// MaxName is the longest framework or test name Parse accepts, in bytes.
const MaxName = 64

// ErrUsage is wrapped by every error Parse returns: the comment holds a command that does
// not follow the grammar. The error text names the problem and the fix.
var ErrUsage = errors.New("usage")

// A UsageError is a command that does not follow the grammar. It wraps ErrUsage.
//
// Problem and Fix are Markdown, one line each, that a reply shows as they are: every
// command, flag and placeholder in them is a code span, and so is every echo of what the
// user wrote (md.Code: it cannot mention anyone or reference an issue, whatever it holds).
type UsageError struct {
	Problem string // what is wrong: "unknown flag `--frameworks`"
	Fix     string // what to write instead: "`/benchmark` takes `-f`/`--framework`, ..."
}

func (e *UsageError) Error() string {
	if e.Fix == "" {
		return e.Problem
	}
	return e.Problem + "; " + e.Fix
}

// Unwrap returns ErrUsage.
func (e *UsageError) Unwrap() error { return ErrUsage }

func usage(problem, fix string, args ...any) error {
	return &UsageError{Problem: problem, Fix: fmt.Sprintf(fix, args...)}
}

// A Kind is which command a comment holds: the command word without its slash.
type Kind string

// The commands.
const (
	KindBenchmark Kind = "benchmark"          // one framework
	KindMultiple  Kind = "benchmark-multiple" // several frameworks in one job
	KindTest      Kind = "benchmark-test"     // one test across every subscribed framework
	KindSweep     Kind = "benchmark-sweep"    // every enabled framework on every test it subscribes to
	KindCancel    Kind = "benchmark-cancel"   // cancel this PR's waiting or running job
	KindApprove   Kind = "benchmark-approve"  // approve this PR's pending request
	KindHelp      Kind = "benchmark-help"     // reply with the grammar
)

// BaselineCommitted is the one value of --baseline: compare with the results committed on
// the base branch (measured at another time) instead of measuring the base in the job.
const BaselineCommitted = "committed"

// The values of --profile: a bare --profile is ProfileOn (each test at its first
// connection count); --profile=all profiles every row, --profile=none none.
const (
	ProfileOn   = "on"
	ProfileAll  = "all"
	ProfileNone = "none"
)

// Word returns the command word as written in a comment: "/benchmark-test".
func (k Kind) Word() string { return "/" + string(k) }

// A Command is one parsed command.
type Command struct {
	Kind Kind
	// Frameworks are the names given with -f; empty means "the frameworks the PR's changed
	// files touch" (resolution happens elsewhere). /benchmark has at most one.
	Frameworks []string
	// Tests are the names given with -t; empty means every test the framework subscribes
	// to. /benchmark-test has exactly one.
	Tests []string
	// Save asks for the results to be committed to the PR branch.
	Save bool
	// Compare is the framework to compare with (/benchmark only); empty for none.
	Compare string
	// Baseline is what the Δ columns compare with: "" (the default) measures each entry the
	// PR changes against itself built at the PR's merge base, interleaved in the same job;
	// BaselineCommitted compares with the results committed on the base branch.
	Baseline string
	// Profile is the --profile flag: "" when not given (a /benchmark of one framework is
	// profiled, others not: profile.CPUProfileMode decides), ProfileOn for a bare --profile,
	// ProfileAll or ProfileNone.
	Profile string
	// SHA is the commit /benchmark-approve names: 7 to 40 lowercase hex digits, a prefix of
	// the acked commit's SHA; "" when none is given.
	SHA string
	// Line is the command line as written, without surrounding whitespace, for echoing in
	// replies. It is set on errors too.
	Line string
}

// String renders the canonical form of c, which parses back to the same Command (but for
// Line): "/benchmark -f gin -t baseline --save --compare fiber --baseline committed".
func (c Command) String() string {
	var b strings.Builder
	b.WriteString(c.Kind.Word())
	if len(c.Frameworks) > 0 {
		b.WriteString(" -f ")
		b.WriteString(strings.Join(c.Frameworks, ","))
	}
	if len(c.Tests) > 0 {
		b.WriteString(" -t ")
		b.WriteString(strings.Join(c.Tests, ","))
	}
	if c.Save {
		b.WriteString(" --save")
	}
	if c.Compare != "" {
		b.WriteString(" --compare ")
		b.WriteString(c.Compare)
	}
	if c.Baseline != "" {
		b.WriteString(" --baseline ")
		b.WriteString(c.Baseline)
	}
	switch c.Profile {
	case ProfileOn:
		b.WriteString(" --profile")
	case ProfileAll, ProfileNone:
		b.WriteString(" --profile=" + c.Profile)
	}
	if c.SHA != "" {
		b.WriteString(" " + c.SHA)
	}
	return b.String()
}

// Parse finds the first command in a comment body (see the package documentation for
// where a command may be). found is false when the body holds no command line; then err is
// nil. Otherwise err, when not nil, wraps ErrUsage and c holds the Kind (when the word is
// known) and the Line, so a reply can quote what was written.
func Parse(body string) (c Command, found bool, err error) {
	if len(body) > MaxBody {
		body = body[:MaxBody]
	}
	line, ok := commandLine(body)
	if !ok {
		return Command{}, false, nil
	}
	c, err = parseLine(line)
	return c, true, err
}

// commandLine returns the first command line of body, trimmed.
func commandLine(body string) (string, bool) {
	var (
		fenceChar byte // '`' or '~' while inside a fenced code block
		fenceLen  int
		inHTML    bool // inside an HTML comment
	)
	for len(body) > 0 {
		var line string
		if i := strings.IndexAny(body, "\r\n"); i < 0 {
			line, body = body, ""
		} else {
			crlf := body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n'
			line, body = body[:i], body[i+1:]
			if crlf {
				body = body[1:]
			}
		}
		indent, rest := leading(line)
		switch {
		case fenceChar != 0:
			if indent < 4 && closesFence(rest, fenceChar, fenceLen) {
				fenceChar, fenceLen = 0, 0
			}
			continue
		case inHTML:
			if strings.Contains(line, "-->") {
				inHTML = false
			}
			continue
		case indent >= 4:
			continue
		}
		if ch, n, ok := opensFence(rest); ok {
			fenceChar, fenceLen = ch, n
			continue
		}
		if strings.HasPrefix(rest, "<!--") {
			inHTML = !strings.Contains(rest[2:], "-->")
			continue
		}
		if strings.HasPrefix(rest, ">") {
			continue
		}
		if isCommandLine(rest) {
			return strings.TrimRight(rest, " \t\v\f"), true
		}
	}
	return "", false
}
