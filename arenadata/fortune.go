package arenadata

import "strings"

// FortuneCount is the number of rows in the fortune table (the fortunes profile).
const FortuneCount = 200

// A Fortune is one row of the fortune table.
type Fortune struct {
	ID      int
	Message string
}

// tfbFortunes are the TechEmpower Fortunes seed, ids 1 to 12, rows 1 to 12 of the table
// (the arena's documentation promises exactly these; id 11 is the row that must come back
// escaped).
var tfbFortunes = []string{
	"fortune: No such file or directory",
	"A computer scientist is someone who fixes things that aren't broken.",
	"After enough decimal places, nobody gives a damn.",
	"A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1",
	"A computer program does what you tell it to do, not what you want it to do.",
	"Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen",
	"Any program that runs right is obsolete.",
	"A list is only as strong as its weakest link. — Donald Knuth",
	"Feature: A bug with seniority.",
	"Computers make very fast, very accurate mistakes.",
	`<script>alert("This should not be displayed in a browser alert box.");</script>`,
	"フレームワークのベンチマーク",
}

// Parts of the synthetic adages, rows 13 to FortuneCount: "<subject> <verb> <object> —
// "<quip>" & <closing>." Every one holds &, ', " and an em dash, the characters a template
// must escape (the apostrophe is in every closing's "that's"). Some subjects start in lower
// case, so a sort that ignores case puts rows elsewhere than the byte order does; none starts
// with a character below '<', so the <script> row sorts first.
var (
	fortuneSubjects = []string{
		"A cache", "A compiler", "A deadline", "A benchmark", "A hotfix", "A linter", "A mutex",
		"A pager", "A rollback", "A timeout", "An index", "Every deploy", "Every queue", "Good logging",
		"Legacy code", "Premature optimism", "The garbage collector", "The kernel", "The load balancer",
		"The scheduler", "Yesterday's patch", "every flaky test", "one missing semicolon",
		"the last migration", "nobody's cron job",
	}
	fortuneVerbs = []string{
		"never forgets", "always finds", "quietly doubles", "rarely explains", "patiently waits for",
		"cheerfully hides", "slowly rewrites", "proudly measures", "eventually repeats",
		"politely ignores", "secretly depends on", "loudly rejects", "gently corrupts", "happily caches",
		"stubbornly blocks", "bravely retries",
	}
	fortuneObjects = []string{
		"the hot path", "what you meant", "yesterday's assumptions", "a single byte", "your best guess",
		"the slowest query", "the one config nobody reads", "every edge case", "the happy path",
		"last week's outage", "the missing index", "a stale header", "the final byte",
		"the benchmark's warm-up", "two off-by-one errors", "the release notes",
	}
	fortuneQuips = []string{
		"measure twice", "cache it later", "it works on my machine", "ship it", "read the logs",
		"never on a Friday", "trust, but verify", "fail fast", "it's only temporary", "just one more test",
		"keep it simple", "blame the network", "roll forward", "check the units", "write it down",
		"sleep on it",
	}
	fortuneClosings = []string{
		"that's the whole story", "that's why we test", "that's how outages begin",
		"that's what the pager says", "that's engineering", "that's the arena's rule",
		"that's the fine print", "that's a Tuesday", "that's the bug report", "that's the postmortem",
		"that's life in production", "that's the trade-off",
	}
)

// DBFortunes returns the rows of the fortune table, ids 1 to FortuneCount in order: the 12
// TechEmpower rows, then synthetic adages drawn from a source of their own, all distinct.
// No message holds a tab, a newline or a backslash, so COPY's text format needs no escapes.
func DBFortunes() []Fortune {
	rows := make([]Fortune, 0, FortuneCount)
	seen := map[string]bool{}
	for i, m := range tfbFortunes {
		rows = append(rows, Fortune{ID: i + 1, Message: m})
		seen[m] = true
	}
	r := newRNG("db/fortunes")
	for len(rows) < FortuneCount {
		var b strings.Builder
		b.WriteString(pick(r, fortuneSubjects))
		b.WriteString(" ")
		b.WriteString(pick(r, fortuneVerbs))
		b.WriteString(" ")
		b.WriteString(pick(r, fortuneObjects))
		b.WriteString(` — "`)
		b.WriteString(pick(r, fortuneQuips))
		b.WriteString(`" & `)
		b.WriteString(pick(r, fortuneClosings))
		b.WriteString(".")
		m := b.String()
		if seen[m] {
			continue
		}
		seen[m] = true
		rows = append(rows, Fortune{ID: len(rows) + 1, Message: m})
	}
	return rows
}
