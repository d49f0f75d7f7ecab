package command

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/arenabot/arenabot/md/mdtest"
)

// parseTests covers every form and every error of the grammar. A case with errText set
// expects an error wrapping ErrUsage whose text contains errText; one with found false
// expects no command at all; the rest expect want (Line included).
var parseTests = []struct {
	name    string
	body    string
	found   bool
	want    Command
	errText string
}{
	// Each command.
	{name: "benchmark", body: "/benchmark -f gin", found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Line: "/benchmark -f gin"}},
	{name: "benchmark bare", body: "/benchmark", found: true,
		want: Command{Kind: KindBenchmark, Line: "/benchmark"}},
	{name: "multiple", body: "/benchmark-multiple -f gin,fiber,echo", found: true,
		want: Command{Kind: KindMultiple, Frameworks: []string{"gin", "fiber", "echo"}, Line: "/benchmark-multiple -f gin,fiber,echo"}},
	{name: "multiple bare save", body: "/benchmark-multiple --save", found: true,
		want: Command{Kind: KindMultiple, Save: true, Line: "/benchmark-multiple --save"}},
	{name: "multiple one framework", body: "/benchmark-multiple -f gin", found: true,
		want: Command{Kind: KindMultiple, Frameworks: []string{"gin"}, Line: "/benchmark-multiple -f gin"}},
	{name: "test", body: "/benchmark-test -t baseline", found: true,
		want: Command{Kind: KindTest, Tests: []string{"baseline"}, Line: "/benchmark-test -t baseline"}},
	{name: "test save", body: "/benchmark-test --save --test=json", found: true,
		want: Command{Kind: KindTest, Tests: []string{"json"}, Save: true, Line: "/benchmark-test --save --test=json"}},
	{name: "cancel", body: "/benchmark-cancel", found: true, want: Command{Kind: KindCancel, Line: "/benchmark-cancel"}},
	{name: "approve", body: "/benchmark-approve", found: true, want: Command{Kind: KindApprove, Line: "/benchmark-approve"}},
	{name: "approve a short sha", body: "/benchmark-approve 1a2b3c4", found: true, want: Command{Kind: KindApprove, SHA: "1a2b3c4", Line: "/benchmark-approve 1a2b3c4"}},
	{name: "approve a full sha in capitals", body: "/benchmark-approve 0123456789ABCDEF0123456789abcdef01234567", found: true,
		want: Command{Kind: KindApprove, SHA: "0123456789abcdef0123456789abcdef01234567", Line: "/benchmark-approve 0123456789ABCDEF0123456789abcdef01234567"}},
	{name: "help", body: "/benchmark-help", found: true, want: Command{Kind: KindHelp, Line: "/benchmark-help"}},

	// Every flag spelling.
	{name: "-f x", body: "/benchmark -f gin", found: true, want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Line: "/benchmark -f gin"}},
	{name: "-f=x", body: "/benchmark -f=gin", found: true, want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Line: "/benchmark -f=gin"}},
	{name: "--framework x", body: "/benchmark --framework gin", found: true, want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Line: "/benchmark --framework gin"}},
	{name: "--framework=x", body: "/benchmark --framework=gin", found: true, want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Line: "/benchmark --framework=gin"}},
	{name: "-t x", body: "/benchmark -t baseline", found: true, want: Command{Kind: KindBenchmark, Tests: []string{"baseline"}, Line: "/benchmark -t baseline"}},
	{name: "-t=x", body: "/benchmark -t=baseline", found: true, want: Command{Kind: KindBenchmark, Tests: []string{"baseline"}, Line: "/benchmark -t=baseline"}},
	{name: "--test x", body: "/benchmark --test baseline", found: true, want: Command{Kind: KindBenchmark, Tests: []string{"baseline"}, Line: "/benchmark --test baseline"}},
	{name: "--test=x", body: "/benchmark --test=baseline", found: true, want: Command{Kind: KindBenchmark, Tests: []string{"baseline"}, Line: "/benchmark --test=baseline"}},
	{name: "--save", body: "/benchmark --save", found: true, want: Command{Kind: KindBenchmark, Save: true, Line: "/benchmark --save"}},
	{name: "--compare x", body: "/benchmark -f gin --compare fiber", found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Compare: "fiber", Line: "/benchmark -f gin --compare fiber"}},
	{name: "--compare=x", body: "/benchmark --compare=fiber", found: true, want: Command{Kind: KindBenchmark, Compare: "fiber", Line: "/benchmark --compare=fiber"}},

	// --profile, bare or with all or none, on every benchmark command.
	{name: "--profile", body: "/benchmark -f gin --profile", found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Profile: ProfileOn, Line: "/benchmark -f gin --profile"}},
	{name: "--profile=all", body: "/benchmark --profile=all -f gin", found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Profile: ProfileAll, Line: "/benchmark --profile=all -f gin"}},
	{name: "--profile none", body: "/benchmark-multiple -f a,b --profile none --save", found: true,
		want: Command{Kind: KindMultiple, Frameworks: []string{"a", "b"}, Save: true, Profile: ProfileNone, Line: "/benchmark-multiple -f a,b --profile none --save"}},
	{name: "test --profile", body: "/benchmark-test -t json --profile", found: true,
		want: Command{Kind: KindTest, Tests: []string{"json"}, Profile: ProfileOn, Line: "/benchmark-test -t json --profile"}},
	{name: "profile bad value", body: "/benchmark --profile=some", errText: "`--profile` takes `all` or `none`, not `some`; write `--profile` to profile each test at its first connection count"},
	{name: "profile twice", body: "/benchmark --profile --profile=all", errText: "`--profile` is given twice"},
	{name: "profile on cancel", body: "/benchmark-cancel --profile", errText: "`/benchmark-cancel` takes no arguments"},

	// --baseline committed, on every benchmark command and in any flag order.
	{name: "--baseline committed", body: "/benchmark -f gin --baseline committed", found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Baseline: "committed", Line: "/benchmark -f gin --baseline committed"}},
	{name: "--baseline=committed first", body: "/benchmark --baseline=committed -t json --save", found: true,
		want: Command{Kind: KindBenchmark, Tests: []string{"json"}, Save: true, Baseline: "committed", Line: "/benchmark --baseline=committed -t json --save"}},
	{name: "--baseline between compare and framework", body: "/benchmark --compare fiber --baseline committed -f gin", found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Compare: "fiber", Baseline: "committed", Line: "/benchmark --compare fiber --baseline committed -f gin"}},
	{name: "multiple --baseline", body: "/benchmark-multiple --baseline committed -f a,b --save", found: true,
		want: Command{Kind: KindMultiple, Frameworks: []string{"a", "b"}, Save: true, Baseline: "committed", Line: "/benchmark-multiple --baseline committed -f a,b --save"}},
	{name: "test --baseline", body: "/benchmark-test --baseline 'committed' -t baseline", found: true,
		want: Command{Kind: KindTest, Tests: []string{"baseline"}, Baseline: "committed", Line: "/benchmark-test --baseline 'committed' -t baseline"}},
	{name: "baseline other value", body: "/benchmark -f gin --baseline main",
		errText: "`--baseline` takes `committed`, not `main`; write `--baseline committed` to compare with the results committed on the base branch"},
	{name: "baseline uppercase", body: "/benchmark-multiple --baseline=Committed", errText: "`--baseline` takes `committed`, not `Committed`"},
	{name: "baseline hostile value", body: "/benchmark --baseline '@org/team #1'", errText: "`--baseline` takes `committed`, not `@\u200borg/team #1`"},
	{name: "baseline missing value", body: "/benchmark --baseline --save", errText: "`--baseline` needs a value; write `--baseline committed`"},
	{name: "baseline missing value at end", body: "/benchmark-test -t json --baseline", errText: "`--baseline` needs a value"},
	{name: "baseline twice", body: "/benchmark --baseline committed --baseline=committed", errText: "`--baseline` is given twice"},
	{name: "baseline on cancel", body: "/benchmark-cancel --baseline committed", errText: "`/benchmark-cancel` takes no arguments"},

	// Order permutations.
	{name: "all flags", body: "/benchmark -f gin -t baseline --save --compare fiber", found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Tests: []string{"baseline"}, Save: true, Compare: "fiber", Line: "/benchmark -f gin -t baseline --save --compare fiber"}},
	{name: "all flags reversed", body: "/benchmark --compare=fiber --save --test baseline --framework=gin", found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Tests: []string{"baseline"}, Save: true, Compare: "fiber", Line: "/benchmark --compare=fiber --save --test baseline --framework=gin"}},
	{name: "save first", body: "/benchmark-multiple --save -t json -f a,b", found: true,
		want: Command{Kind: KindMultiple, Frameworks: []string{"a", "b"}, Tests: []string{"json"}, Save: true, Line: "/benchmark-multiple --save -t json -f a,b"}},

	// Lists.
	{name: "test list", body: "/benchmark -f gin -t baseline,json,upload", found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Tests: []string{"baseline", "json", "upload"}, Line: "/benchmark -f gin -t baseline,json,upload"}},
	{name: "list trimmed in quotes", body: `/benchmark-multiple -f "gin, fiber , echo"`, found: true,
		want: Command{Kind: KindMultiple, Frameworks: []string{"gin", "fiber", "echo"}, Line: `/benchmark-multiple -f "gin, fiber , echo"`}},
	{name: "list duplicates dropped", body: "/benchmark-multiple -f gin,fiber,gin,fiber", found: true,
		want: Command{Kind: KindMultiple, Frameworks: []string{"gin", "fiber"}, Line: "/benchmark-multiple -f gin,fiber,gin,fiber"}},
	{name: "same framework twice on benchmark", body: "/benchmark -f gin,gin", found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Line: "/benchmark -f gin,gin"}},
	{name: "names with dot underscore dash", body: "/benchmark -f actix-web.v4_1 -t h2.tls", found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"actix-web.v4_1"}, Tests: []string{"h2.tls"}, Line: "/benchmark -f actix-web.v4_1 -t h2.tls"}},
	{name: "64 character name", body: "/benchmark -f " + strings.Repeat("a", 64), found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{strings.Repeat("a", 64)}, Line: "/benchmark -f " + strings.Repeat("a", 64)}},

	// Quotes and escapes.
	{name: "double quotes", body: `/benchmark -f "gin" -t "baseline"`, found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Tests: []string{"baseline"}, Line: `/benchmark -f "gin" -t "baseline"`}},
	{name: "single quotes", body: `/benchmark-multiple -f 'a,b'`, found: true,
		want: Command{Kind: KindMultiple, Frameworks: []string{"a", "b"}, Line: `/benchmark-multiple -f 'a,b'`}},
	{name: "quotes inside a word", body: `/benchmark -f g"i"n`, found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Line: `/benchmark -f g"i"n`}},
	{name: "quoted flag value", body: `/benchmark "-f=gin"`, found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Line: `/benchmark "-f=gin"`}},
	{name: "backslash outside quotes", body: `/benchmark -f g\in`, found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Line: `/benchmark -f g\in`}},
	{name: "backslash in double quotes", body: `/benchmark -f "g\"in"`, errText: "framework name `g\"in` is not valid"},
	{name: "escaped space splits nothing", body: `/benchmark-multiple -f a,\ b`, found: true,
		want: Command{Kind: KindMultiple, Frameworks: []string{"a", "b"}, Line: `/benchmark-multiple -f a,\ b`}},
	{name: "unterminated double quote", body: `/benchmark -f "gin`, errText: "close it with `\"`"},
	{name: "unterminated single quote", body: `/benchmark -f 'gin`, errText: "close it with `'`"},
	{name: "trailing backslash", body: `/benchmark -f gin \`, errText: "remove it, or quote it: `'\\'`"},

	// Where the command is.
	{name: "CRLF", body: "Please run this.\r\n/benchmark -f gin --save\r\nThanks!\r\n", found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Save: true, Line: "/benchmark -f gin --save"}},
	{name: "lone CR", body: "hi\r/benchmark-cancel\rbye", found: true, want: Command{Kind: KindCancel, Line: "/benchmark-cancel"}},
	{name: "leading spaces", body: "   /benchmark -f gin  ", found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Line: "/benchmark -f gin"}},
	{name: "tab between words", body: "/benchmark\t-f\tgin", found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Line: "/benchmark\t-f\tgin"}},
	{name: "text before and after", body: "I changed the router.\n\n/benchmark -f gin\n\nShould be faster.", found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Line: "/benchmark -f gin"}},
	{name: "second command ignored", body: "/benchmark-cancel\n/benchmark -f gin", found: true,
		want: Command{Kind: KindCancel, Line: "/benchmark-cancel"}},
	{name: "second bad command ignored", body: "/benchmark -f gin\n/benchmark --bogus", found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Line: "/benchmark -f gin"}},
	{name: "first command is bad", body: "/benchmark --bogus\n/benchmark -f gin", found: true, errText: "unknown flag `--bogus`"},
	{name: "not at line start", body: "please /benchmark -f gin", found: false},
	{name: "empty", body: "", found: false},
	{name: "prose only", body: "LGTM, thanks!\n", found: false},
	{name: "benchmarking", body: "/benchmarking is fun", found: false},
	{name: "benchmarks", body: "/benchmarks", found: false},
	{name: "uppercase", body: "/Benchmark -f gin", found: false},
	{name: "benchmarking then command", body: "/benchmarking\n/benchmark-help", found: true, want: Command{Kind: KindHelp, Line: "/benchmark-help"}},
	{name: "backtick fence", body: "```\n/benchmark -f gin\n```", found: false},
	{name: "backtick fence with info", body: "```sh\n/benchmark -f gin\n```\n/benchmark-help", found: true, want: Command{Kind: KindHelp, Line: "/benchmark-help"}},
	{name: "tilde fence", body: "~~~\n/benchmark -f gin\n~~~", found: false},
	{name: "unclosed fence", body: "```\n/benchmark -f gin\n", found: false},
	{name: "longer fence not closed by shorter", body: "````\n```\n/benchmark -f gin\n````\n/benchmark-cancel", found: true,
		want: Command{Kind: KindCancel, Line: "/benchmark-cancel"}},
	{name: "fence closed by longer", body: "```\nx\n`````\n/benchmark-cancel", found: true, want: Command{Kind: KindCancel, Line: "/benchmark-cancel"}},
	{name: "tilde not closed by backticks", body: "~~~\n```\n/benchmark -f gin\n~~~\n/benchmark-approve", found: true,
		want: Command{Kind: KindApprove, Line: "/benchmark-approve"}},
	{name: "closing fence with text is content", body: "```\n``` no\n/benchmark -f gin\n```\n", found: false},
	{name: "indented fence", body: "  ```\n/benchmark -f gin\n   ```\n/benchmark-help", found: true, want: Command{Kind: KindHelp, Line: "/benchmark-help"}},
	{name: "inline code is not a fence", body: "```a``` text\n/benchmark-help", found: true, want: Command{Kind: KindHelp, Line: "/benchmark-help"}},
	{name: "two backticks are not a fence", body: "``\n/benchmark-help", found: true, want: Command{Kind: KindHelp, Line: "/benchmark-help"}},
	{name: "CRLF fence", body: "```\r\n/benchmark -f gin\r\n```\r\n/benchmark-help\r\n", found: true, want: Command{Kind: KindHelp, Line: "/benchmark-help"}},
	{name: "block quote", body: "> /benchmark -f gin\n\nok", found: false},
	{name: "block quote then command", body: "> /benchmark -f gin\n\n/benchmark -f fiber", found: true,
		want: Command{Kind: KindBenchmark, Frameworks: []string{"fiber"}, Line: "/benchmark -f fiber"}},
	{name: "nested block quote", body: "> > /benchmark -f gin", found: false},
	{name: "indented block quote", body: "  >/benchmark -f gin", found: false},
	{name: "fence in block quote does not hide", body: "> ```\n/benchmark-help", found: true, want: Command{Kind: KindHelp, Line: "/benchmark-help"}},
	{name: "indented code", body: "text\n\n    /benchmark -f gin\n", found: false},
	{name: "tab indented code", body: "\t/benchmark -f gin", found: false},
	{name: "html comment", body: "<!--\n/benchmark -f gin\n-->\n", found: false},
	{name: "html comment one line", body: "<!-- /benchmark -f gin -->\n/benchmark-help", found: true, want: Command{Kind: KindHelp, Line: "/benchmark-help"}},

	// Unknown commands.
	{name: "unknown command", body: "/benchmark-foo", errText: "did you mean `/benchmark`, `/benchmark-test` or `/benchmark-help`?"},
	{name: "typo multiple", body: "/benchmark-multi -f a,b", errText: "did you mean `/benchmark-multiple`?"},
	{name: "typo approve", body: "/benchmark-approved", errText: "did you mean `/benchmark-approve`?"},
	{name: "uppercase after dash", body: "/benchmark-Cancel", errText: "did you mean `/benchmark-cancel`?"},
	{name: "trailing punctuation", body: "/benchmark-cancel.", errText: "did you mean `/benchmark-cancel`?"},
	{name: "dash alone", body: "/benchmark- -f gin", errText: "unknown command `/benchmark-`"},

	// Strict errors.
	{name: "unknown flag", body: "/benchmark --frameworks gin", errText: "unknown flag `--frameworks`; `/benchmark` takes `-f`/`--framework`, `-t`/`--test`, `--save`, `--compare`, `--baseline`"},
	{name: "unknown flag on multiple", body: "/benchmark-multiple -x", errText: "`/benchmark-multiple` takes `-f`/`--framework`, `-t`/`--test`, `--save`, `--baseline`"},
	{name: "unknown flag on test", body: "/benchmark-test -t json -x", errText: "`/benchmark-test` takes `-t`/`--test`, `--save`, `--baseline`"},
	{name: "unknown short flag glued", body: "/benchmark -fgin", errText: "unknown flag `-fgin`"},
	{name: "dash dash", body: "/benchmark -- gin", errText: "unknown flag `--`"},
	{name: "flag twice", body: "/benchmark -f gin -f fiber", errText: "`-f`/`--framework` is given twice; give it once, with a comma-separated list: `-f a,b`"},
	{name: "flag twice spelled differently", body: "/benchmark-multiple -t a --test b", errText: "`-t`/`--test` is given twice"},
	{name: "save twice", body: "/benchmark --save --save", errText: "`--save` is given twice"},
	{name: "missing value at end", body: "/benchmark -f", errText: "`-f` needs a value; write `-f <framework>`"},
	{name: "missing value before flag", body: "/benchmark -t --save", errText: "`-t` needs a value; write `-t <test>`"},
	{name: "empty value", body: "/benchmark --framework=", errText: "`--framework` needs a value"},
	{name: "empty quoted value", body: `/benchmark -f ""`, errText: "empty framework name"},
	{name: "compare missing value", body: "/benchmark --compare", errText: "write `--compare <framework>`"},
	{name: "save with value", body: "/benchmark --save=true", errText: "`--save` takes no value; write `--save` alone"},
	{name: "save with false", body: "/benchmark --save=false", errText: "`--save` takes no value"},
	{name: "legacy positional", body: "/benchmark baseline", errText: "name a test with `-t` (`/benchmark -t baseline`) and a framework with `-f` (`/benchmark -f baseline`)"},
	{name: "positional after flags", body: "/benchmark -f gin please", errText: "unexpected argument `please`"},
	{name: "positional on test", body: "/benchmark-test baseline", errText: "`/benchmark-test -t baseline`"},
	{name: "positional on multiple", body: "/benchmark-multiple gin", errText: "`/benchmark-multiple -f gin`"},
	{name: "several frameworks on benchmark", body: "/benchmark -f gin,fiber", errText: "`/benchmark` takes one framework; to run several, use `/benchmark-multiple -f gin,fiber`"},
	{name: "compare on multiple", body: "/benchmark-multiple -f a,b --compare c", errText: "`--compare` works only with `/benchmark`"},
	{name: "compare on test", body: "/benchmark-test -t baseline --compare gin", errText: "`--compare` works only with `/benchmark`"},
	{name: "compare list", body: "/benchmark --compare a,b", errText: "`--compare` takes one framework"},
	{name: "compare itself", body: "/benchmark -f gin --compare gin", errText: "compare with another framework"},
	{name: "test without -t", body: "/benchmark-test --save", errText: "write `/benchmark-test -t <test>`"},
	{name: "test bare", body: "/benchmark-test", errText: "`/benchmark-test` needs a test"},
	{name: "test with several tests", body: "/benchmark-test -t a,b", errText: "`/benchmark-test` takes one test"},
	{name: "-f on test", body: "/benchmark-test -t baseline -f gin", errText: "to pick frameworks, use `/benchmark-multiple -f a,b -t <test>`"},
	{name: "flag on cancel", body: "/benchmark-cancel -f gin", errText: "`/benchmark-cancel` takes no arguments; write `/benchmark-cancel` alone"},
	{name: "word on approve", body: "/benchmark-approve please", errText: "`please` is not a commit SHA; write the acked commit's SHA as the status comment shows it, 7 to 40 hex digits: `/benchmark-approve 1a2b3c4`"},
	{name: "sha too short", body: "/benchmark-approve 1a2b3c", errText: "`1a2b3c` is not a commit SHA"},
	{name: "sha too long", body: "/benchmark-approve " + strings.Repeat("a", 41), errText: "is not a commit SHA"},
	{name: "two shas on approve", body: "/benchmark-approve 1a2b3c4 5d6e7f8", errText: "`/benchmark-approve` takes one commit SHA, not `1a2b3c4` and `5d6e7f8`"},
	{name: "flag on approve", body: "/benchmark-approve -f gin", errText: "`/benchmark-approve` takes no flags; write `/benchmark-approve` alone, or `/benchmark-approve [<sha>]`"},
	{name: "flag on help", body: "/benchmark-help --save", errText: "`/benchmark-help` takes no arguments"},
	{name: "empty list element", body: "/benchmark-multiple -f a,,b", errText: "separate names with single commas"},
	{name: "trailing comma", body: "/benchmark-multiple -f a,b,", errText: "empty framework name"},
	{name: "uppercase name", body: "/benchmark -f Gin", errText: "framework name `Gin` is not valid; names are lowercase: did you mean `gin`?"},
	{name: "bad test name", body: "/benchmark -t json/1", errText: "test name `json/1` is not valid; names use lowercase letters"},
	{name: "name starting with dot", body: "/benchmark -f .gin", errText: "framework name `.gin` is not valid"},
	{name: "non-ASCII name", body: "/benchmark -f gín", errText: "is not valid"},
	{name: "name too long", body: "/benchmark -f " + strings.Repeat("a", 65), errText: "longer than 64 characters"},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		t.Run(tt.name, func(t *testing.T) {
			got, found, err := Parse(tt.body)
			wantFound := tt.found || tt.errText != ""
			if found != wantFound || (err != nil) != (tt.errText != "") {
				t.Fatalf("Parse(%q) = %+v, found=%v, err=%v; want found=%v, error %q", tt.body, got, found, err, wantFound, tt.errText)
			}
			if err != nil {
				if !errors.Is(err, ErrUsage) {
					t.Errorf("Parse(%q) error %v does not wrap ErrUsage", tt.body, err)
				}
				if !strings.Contains(err.Error(), tt.errText) {
					t.Errorf("Parse(%q) error\n%s\ndoes not contain\n%s", tt.body, err, tt.errText)
				}
				if got.Line == "" {
					t.Errorf("Parse(%q) returned an error without the Line", tt.body)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.body, diff)
			}
		})
	}
}

var ignoreLine = cmpopts.IgnoreFields(Command{}, "Line")

func TestRoundTrip(t *testing.T) {
	for _, tt := range parseTests {
		if !tt.found || tt.errText != "" {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			s := tt.want.String()
			got, found, err := Parse(s)
			if !found || err != nil {
				t.Fatalf("Parse(%q) found=%v err=%v; want the canonical form to parse", s, found, err)
			}
			if diff := cmp.Diff(tt.want, got, ignoreLine, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("round trip of %q changed the command (-want +got):\n%s", s, diff)
			}
			if got.Line != s {
				t.Errorf("Parse(%q).Line = %q, want the canonical form", s, got.Line)
			}
		})
	}
}

func TestString(t *testing.T) {
	c := Command{Kind: KindBenchmark, Frameworks: []string{"gin"}, Tests: []string{"baseline"}, Save: true, Compare: "fiber"}
	if got, want := c.String(), "/benchmark -f gin -t baseline --save --compare fiber"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	c.Baseline = BaselineCommitted
	if got, want := c.String(), "/benchmark -f gin -t baseline --save --compare fiber --baseline committed"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestTruncate(t *testing.T) {
	body := strings.Repeat("x", MaxBody) + "\n/benchmark-help"
	if c, found, err := Parse(body); found || err != nil {
		t.Errorf("Parse(command after %d bytes) = %+v, %v, %v; want nothing found", MaxBody, c, found, err)
	}
}

func TestUsageError(t *testing.T) {
	_, _, err := Parse("/benchmark --frameworks gin")
	ue, ok := errors.AsType[*UsageError](err)
	if !ok {
		t.Fatalf("Parse error %v is not a *UsageError", err)
	}
	if ue.Problem != "unknown flag `--frameworks`" || !strings.HasPrefix(ue.Fix, "`/benchmark` takes") {
		t.Errorf("UsageError = %+v", ue)
	}
}

func TestHelp(t *testing.T) {
	h := Help()
	if _, found, err := Parse(h); found || err != nil {
		t.Errorf("Parse(Help()) found=%v err=%v; the help reply must hold no command", found, err)
	}
	for _, k := range Kinds {
		if !strings.Contains(h, "`"+k.Word()) {
			t.Errorf("Help() does not describe %s", k.Word())
		}
	}
	// --baseline committed on each command that takes it, and what the default is.
	for _, w := range []string{
		"`/benchmark [-f <framework>] [-t <test>,...] [--save] [--compare <framework>] [--baseline committed] [--profile[=all\\|none]]`",
		"`/benchmark-multiple [-f <framework>,...] [-t <test>,...] [--save] [--baseline committed] [--profile[=all\\|none]]`",
		"`/benchmark-test -t <test> [--save] [--baseline committed] [--profile[=all\\|none]]`",
		"`--profile=all` profiles every row",
		"By default each framework this PR changes is measured against itself built at the PR's merge base, in the same job",
		"interleaved run by run (base, head, head, base, …)",
		"`--baseline committed` skips the base and compares every framework with the results committed on the base branch",
		"`NEW`", "`~0% (±2.4%)`",
		// The queue: one deep per pull request, as the arena's.
		"### Queue\n\nApproved requests run in the order they were approved, one at a time on each benchmark host, and one at a time for each pull request.",
		"Each pull request has at most one request waiting in line (the arena's settings file may allow more): a newer approved request on the same pull request takes the place of its waiting one",
		"Requests of different pull requests never displace each other",
	} {
		if !strings.Contains(h, w) {
			t.Errorf("Help() lacks %q", w)
		}
	}
	// Every example line in the help parses.
	_, examples, _ := strings.Cut(h, "```\n")
	examples, _, _ = strings.Cut(examples, "```")
	n := 0
	for line := range strings.Lines(examples) {
		n++
		if _, found, err := Parse(line); !found || err != nil {
			t.Errorf("help example %q: found=%v err=%v", line, found, err)
		}
	}
	if n == 0 {
		t.Error("Help() has no examples")
	}
}

// TestHelpRendersAfterMention: the help reply starts with prose, not a heading, so a
// mention in front of it leaves its layout intact, and every heading stands on its own line
// between blank lines.
func TestHelpRendersAfterMention(t *testing.T) {
	h := Help()
	first, _, _ := strings.Cut(h, "\n")
	if strings.HasPrefix(first, "#") || first == "" {
		t.Errorf("Help() starts with %q, want a line of prose", first)
	}
	lines := strings.Split(h, "\n")
	headings := 0
	for i, l := range lines {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		headings++
		if i == 0 || lines[i-1] != "" || i+1 == len(lines) || lines[i+1] != "" {
			t.Errorf("heading %q is not on its own line between blank lines", l)
		}
	}
	if headings == 0 {
		t.Error("Help() has no headings")
	}
	if live := mdtest.Live(h); strings.ContainsAny(live, "<") {
		t.Errorf("Help() has placeholders outside code spans:\n%s", live)
	}
}

var rawCommandRE = regexp.MustCompile(`(?:^|[\s(,:])(?:/benchmark|--?[a-z]|<[a-z])`)

// checkUsageMarkdown checks that a usage error renders as it reads: commands, flags,
// placeholders and echoes of the input in code spans, nothing live from the input.
func checkUsageMarkdown(t *testing.T, body string, err error) {
	t.Helper()
	ue, ok := errors.AsType[*UsageError](err)
	if !ok {
		t.Fatalf("Parse(%q) error %v is not a *UsageError", body, err)
	}
	for name, text := range map[string]string{"Problem": ue.Problem, "Fix": ue.Fix} {
		if strings.ContainsAny(text, "\r\n") {
			t.Errorf("Parse(%q): %s %q spans lines", body, name, text)
		}
		live := mdtest.Live(text)
		if m := rawCommandRE.FindString(live); m != "" || strings.Contains(live, "`") {
			t.Errorf("Parse(%q): %s %q has a command, flag or placeholder outside code (live %q)", body, name, text, live)
		}
		if abuse := mdtest.Abuse(text); len(abuse) > 0 {
			t.Errorf("Parse(%q): %s %q: %v", body, name, text, abuse)
		}
		if len(text) > 1000 {
			t.Errorf("Parse(%q): %s is %d bytes", body, name, len(text))
		}
	}
}

// hostileBodies are commands whose arguments try to mention, reference or inject.
var hostileBodies = []string{
	"/benchmark -f gin @org/team",
	"/benchmark #1",
	"/benchmark -f gin o/r#1 GH-2",
	"/benchmark --x@org/team",
	"/benchmark -f '<script>'",
	"/benchmark -f 'a`b``c'",
	"/benchmark -f '`'",
	"/benchmark-@org/team",
	"/benchmark -f 'gin\u202e #1'",
	"/benchmark --compare '@org/team,#1'",
	"/benchmark --compare '@everyone'",
	"/benchmark-multiple -f 'a,,@b'",
	"/benchmark -t '<!-- arenabot:status request=r1 -->'",
	"/benchmark -f " + strings.Repeat("@a", 500),
	"/benchmark --baseline '@everyone <script> `x` #1'",
	"/benchmark-test -t json --baseline " + strings.Repeat("@a#", 300),
	"/benchmark -f 'x|y' -t 'a\\|b'",
}

// TestUsageErrorsAreMarkdown: every usage error, whatever was typed, is Markdown with its
// commands, flags and placeholders in code spans and every echo of the input in one.
func TestUsageErrorsAreMarkdown(t *testing.T) {
	bodies := slices.Clone(hostileBodies)
	for _, tt := range parseTests {
		if tt.errText != "" {
			bodies = append(bodies, tt.body)
		}
	}
	for _, body := range bodies {
		_, found, err := Parse(body)
		if !found || err == nil {
			t.Errorf("Parse(%q) found=%v err=%v, want a usage error", body, found, err)
			continue
		}
		checkUsageMarkdown(t, body, err)
	}
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

func FuzzParse(f *testing.F) {
	for _, tt := range parseTests {
		f.Add(tt.body)
	}
	for _, body := range hostileBodies {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		c, found, err := Parse(body) // must not panic
		if err != nil && (!found || !errors.Is(err, ErrUsage)) {
			t.Fatalf("Parse(%q) found=%v err=%v; errors come with found and wrap ErrUsage", body, found, err)
		}
		if err != nil {
			checkUsageMarkdown(t, body, err)
		}
		if !found || err != nil {
			return
		}
		var names []string
		names = append(names, c.Frameworks...)
		names = append(names, c.Tests...)
		if c.Compare != "" {
			names = append(names, c.Compare)
		}
		for _, n := range names {
			if !nameRE.MatchString(n) || len(n) > MaxName {
				t.Errorf("Parse(%q) accepted the invalid name %q", body, n)
			}
		}
		switch {
		case c.Baseline != "" && c.Baseline != BaselineCommitted,
			c.Baseline != "" && c.Kind != KindBenchmark && c.Kind != KindMultiple && c.Kind != KindTest,
			c.Kind == KindBenchmark && len(c.Frameworks) > 1,
			c.Kind == KindTest && (len(c.Tests) != 1 || len(c.Frameworks) > 0),
			c.Kind != KindBenchmark && c.Compare != "",
			c.SHA != "" && (c.Kind != KindApprove || !isSHA(c.SHA) || c.SHA != strings.ToLower(c.SHA)),
			(c.Kind == KindCancel || c.Kind == KindHelp) && c.String() != c.Kind.Word(),
			c.Kind == KindApprove && c.String() != strings.TrimSpace(c.Kind.Word()+" "+c.SHA):
			t.Errorf("Parse(%q) accepted %+v, which the grammar does not allow", body, c)
		}
		again, found, err := Parse(c.String())
		if !found || err != nil {
			t.Fatalf("Parse(%q) = %+v; canonical form %q does not re-parse: found=%v err=%v", body, c, c.String(), found, err)
		}
		if diff := cmp.Diff(c, again, ignoreLine, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("round trip of %q changed the command (-first +second):\n%s", body, diff)
		}
	})
}

// comment is a typical 2 KB pull-request comment with the command near its end.
var comment = strings.Repeat("This change moves the router to a radix tree and drops an allocation per request. ", 12) +
	"\n\n> Could you run the benchmark?\n> /benchmark -f gin\n\n```go\nfunc handler(w http.ResponseWriter, r *http.Request) {\n\tw.Write(hello)\n}\n```\n\n" +
	strings.Repeat("Results from my laptop look good, but the arena is the judge. ", 8) +
	"\n\n/benchmark -f gin -t baseline,json --save --compare fiber\n\nThanks!\n"

func BenchmarkParse(b *testing.B) {
	b.SetBytes(int64(len(comment)))
	for b.Loop() {
		if _, found, err := Parse(comment); !found || err != nil {
			b.Fatal(found, err)
		}
	}
}
