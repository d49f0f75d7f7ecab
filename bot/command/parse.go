package command

import (
	"fmt"
	"strings"

	"github.com/arenabot/arenabot/md"
	"github.com/arenabot/arenabot/text"
)

// leading returns the indentation of line in columns (a tab advances to the next multiple
// of four) and the line after it.
func leading(line string) (cols int, rest string) {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			cols++
		case '\t':
			cols += 4 - cols%4
		default:
			return cols, line[i:]
		}
	}
	return cols, ""
}

// opensFence reports whether rest (a line without its indentation of at most three
// columns) opens a fenced code block, and with which character and run length.
func opensFence(rest string) (ch byte, n int, ok bool) {
	if rest == "" || (rest[0] != '`' && rest[0] != '~') {
		return 0, 0, false
	}
	ch = rest[0]
	for n < len(rest) && rest[n] == ch {
		n++
	}
	if n < 3 {
		return 0, 0, false
	}
	if ch == '`' && strings.IndexByte(rest[n:], '`') >= 0 {
		return 0, 0, false // inline code, not a fence
	}
	return ch, n, true
}

// closesFence reports whether rest closes a fence of n ch characters: a run of at least n
// of them followed by nothing but whitespace.
func closesFence(rest string, ch byte, n int) bool {
	i := 0
	for i < len(rest) && rest[i] == ch {
		i++
	}
	return i >= n && strings.Trim(rest[i:], " \t\v\f") == ""
}

// isSpace reports whether b separates words.
func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\v' || b == '\f' || b == '\r'
}

// firstWord returns s up to the first whitespace.
func firstWord(s string) string {
	for i := 0; i < len(s); i++ {
		if isSpace(s[i]) {
			return s[:i]
		}
	}
	return s
}

// isCommandLine reports whether rest starts with a command word, known or not:
// "/benchmark" alone or "/benchmark-" followed by anything.
func isCommandLine(rest string) bool {
	w := firstWord(rest)
	return w == "/benchmark" || strings.HasPrefix(w, "/benchmark-")
}

func parseLine(line string) (Command, error) {
	word := firstWord(line)
	c := Command{Line: line}
	kind, ok := lookupKind(word)
	if !ok {
		return c, usage("unknown command "+arg(word), "did you mean %s? %s lists every command", closest(word), md.Code(KindHelp.Word()))
	}
	c.Kind = kind
	words, err := split(line[len(word):])
	if err != nil {
		return c, err
	}
	if err := c.parseArgs(words); err != nil {
		return c, err
	}
	return c, c.check()
}

func lookupKind(word string) (Kind, bool) {
	for _, k := range Kinds {
		if word == k.Word() {
			return k, true
		}
	}
	return "", false
}

// split splits s into words like a shell does (see the package documentation).
func split(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
	)
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case isSpace(ch):
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case ch == '\\':
			if i+1 == len(s) {
				return nil, usage("the line ends with a backslash", "remove it, or quote it: %s", md.Code(`'\'`))
			}
			i++
			cur.WriteByte(s[i])
			in = true
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, usage("unterminated single quote", "close it with %s before the end of the line", md.Code("'"))
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case ch == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, usage("unterminated double quote", "close it with %s before the end of the line", md.Code(`"`))
			}
			in = true
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// A flag is one option of the grammar.
type flag struct {
	short, long string // "-f", "--framework"; short may be empty
	value       bool   // takes a value
	optional    bool   // may take a value (--profile, --profile=all); not with value
}

func (f flag) String() string {
	if f.short == "" {
		return f.long
	}
	return f.short + "/" + f.long
}

// code renders the flag's spellings as code: "`-f`/`--framework`".
func (f flag) code() string {
	if f.short == "" {
		return md.Code(f.long)
	}
	return md.Code(f.short) + "/" + md.Code(f.long)
}

var (
	flagFramework = flag{"-f", "--framework", true, false}
	flagTest      = flag{"-t", "--test", true, false}
	flagSave      = flag{"", "--save", false, false}
	flagCompare   = flag{"", "--compare", true, false}
	flagBaseline  = flag{"", "--baseline", true, false}
	flagProfile   = flag{"", "--profile", false, true}
	allFlags      = []flag{flagFramework, flagTest, flagSave, flagCompare, flagBaseline, flagProfile}
)

// takes says which flags k takes, for error messages: "`/benchmark` takes
// `-f`/`--framework`, `-t`/`--test`, `--save`, `--compare`, `--baseline`".
func takes(k Kind) string {
	fs := flagsOf(k)
	if len(fs) == 0 {
		return md.Code(k.Word()) + " takes no arguments"
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.code()
	}
	return md.Code(k.Word()) + " takes " + strings.Join(names, ", ")
}

func (c *Command) parseArgs(words []string) error {
	seen := map[string]bool{}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "-") {
			if err := c.positional(w); err != nil {
				return err
			}
			continue
		}
		name, val, hasVal := strings.Cut(w, "=")
		var f flag
		for _, g := range allFlags {
			if name == g.short || name == g.long {
				f = g
			}
		}
		if f.long == "" {
			return usage("unknown flag "+arg(name), "%s", takes(c.Kind))
		}
		if err := c.allowed(f); err != nil {
			return err
		}
		if seen[f.long] {
			if !f.value {
				return usage(md.Code(f.long)+" is given twice", "give it once")
			}
			return usage(f.code()+" is given twice", "give it once, with a comma-separated list: %s", md.Code(name+" a,b"))
		}
		seen[f.long] = true
		if f.optional {
			if !hasVal && i+1 < len(words) && (words[i+1] == ProfileAll || words[i+1] == ProfileNone) {
				i++
				val, hasVal = words[i], true
			}
			if err := c.setProfile(val, hasVal); err != nil {
				return err
			}
			continue
		}
		if !f.value {
			if hasVal {
				return usage(md.Code(f.long)+" takes no value", "write %s alone to save the results, or leave it out", md.Code(f.long))
			}
			c.Save = true
			continue
		}
		if !hasVal {
			if i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
				i++
				val = words[i]
			} else {
				return usage(md.Code(name)+" needs a value", "%s", example(c.Kind, f))
			}
		} else if val == "" {
			return usage(md.Code(name)+" needs a value", "%s", example(c.Kind, f))
		}
		if err := c.set(f, name, val); err != nil {
			return err
		}
	}
	return nil
}

// setProfile stores --profile: alone, "on"; with a value, all or none.
func (c *Command) setProfile(val string, hasVal bool) error {
	switch v := strings.TrimSpace(val); {
	case !hasVal:
		c.Profile = ProfileOn
	case v == ProfileAll || v == ProfileNone:
		c.Profile = v
	default:
		return usage(md.Code(flagProfile.long)+" takes "+md.Code(ProfileAll)+" or "+md.Code(ProfileNone)+", not "+arg(val),
			"write %s to profile each test at its first connection count, %s for every row, or %s for none",
			md.Code(flagProfile.long), md.Code(flagProfile.long+"="+ProfileAll), md.Code(flagProfile.long+"="+ProfileNone))
	}
	return nil
}

// example shows how to give f a value on kind.
func example(k Kind, f flag) string {
	switch f {
	case flagFramework:
		if k == KindMultiple {
			return "write " + md.Code(f.short+" <framework>,<framework>") + ", e.g. " + md.Code(k.Word()+" -f gin,fiber")
		}
		return "write " + md.Code(f.short+" <framework>") + ", e.g. " + md.Code(k.Word()+" -f gin")
	case flagTest:
		return "write " + md.Code(f.short+" <test>") + ", e.g. " + md.Code(k.Word()+" -t baseline")
	case flagBaseline:
		return "write " + md.Code(f.long+" "+BaselineCommitted) + " to compare with the committed results, or leave it out"
	default:
		return "write " + md.Code(f.long+" <framework>") + ", e.g. " + md.Code("/benchmark -f gin --compare fiber")
	}
}

// allowed says why kind does not take f, or nil when it does.
func (c *Command) allowed(f flag) error {
	for _, g := range flagsOf(c.Kind) {
		if g == f {
			return nil
		}
	}
	switch {
	case len(flagsOf(c.Kind)) == 0 && specOf(c.Kind).Operand != "":
		return usage(md.Code(c.Kind.Word())+" takes no flags", "write %s alone, or %s", md.Code(c.Kind.Word()), md.Code(specOf(c.Kind).Synopsis()))
	case len(flagsOf(c.Kind)) == 0:
		return usage(md.Code(c.Kind.Word())+" takes no arguments", "write %s alone", md.Code(c.Kind.Word()))
	case f == flagCompare:
		return usage(md.Code("--compare")+" works only with "+md.Code(KindBenchmark.Word()),
			"compare one framework at a time: %s", md.Code("/benchmark -f <framework> --compare <other>"))
	case f == flagFramework && c.Kind == KindTest:
		return usage(md.Code(KindTest.Word())+" takes no "+md.Code("-f")+": it runs one test across every subscribed framework",
			"to pick frameworks, use %s", md.Code("/benchmark-multiple -f a,b -t <test>"))
	}
	return usage("unknown flag "+f.code(), "%s", takes(c.Kind))
}

// positional takes the bare word w as the command's operand (the SHA of
// /benchmark-approve) or rejects it with a hint.
func (c *Command) positional(w string) error {
	if specOf(c.Kind).Operand != "" {
		return c.setSHA(w)
	}
	if len(flagsOf(c.Kind)) == 0 {
		return usage(md.Code(c.Kind.Word())+" takes no arguments", "write %s alone", md.Code(c.Kind.Word()))
	}
	q, a := arg(w), quoteArg(w)
	switch c.Kind {
	case KindTest:
		return usage("unexpected argument "+q, "name the test with %s: %s", md.Code("-t"), md.Code("/benchmark-test -t "+a))
	case KindMultiple, KindSweep:
		return usage("unexpected argument "+q, "name frameworks with %s and tests with %s: %s", md.Code("-f"), md.Code("-t"), md.Code(c.Kind.Word()+" -f "+a))
	}
	return usage("unexpected argument "+q, "name a test with %s (%s) and a framework with %s (%s)",
		md.Code("-t"), md.Code("/benchmark -t "+a), md.Code("-f"), md.Code("/benchmark -f "+a))
}

// Lengths of a commit SHA the grammar accepts: an abbreviation as git shows one, up to
// the full SHA-1.
const (
	MinSHA = 7
	MaxSHA = 40
)

// setSHA stores w as the commit /benchmark-approve names: 7 to 40 hex digits, kept in
// lower case; a second one is an error.
func (c *Command) setSHA(w string) error {
	if c.SHA != "" {
		return usage(md.Code(c.Kind.Word())+" takes one commit SHA, not "+arg(c.SHA)+" and "+arg(w),
			"write %s with the SHA of the acked commit shown in the status comment", md.Code(c.Kind.Word()+" <sha>"))
	}
	if !isSHA(w) {
		return usage(arg(w)+" is not a commit SHA",
			"write the acked commit's SHA as the status comment shows it, %d to %d hex digits: %s", MinSHA, MaxSHA, md.Code(c.Kind.Word()+" 1a2b3c4"))
	}
	c.SHA = strings.ToLower(w)
	return nil
}

// isSHA reports whether s is MinSHA to MaxSHA hex digits.
func isSHA(s string) bool {
	if len(s) < MinSHA || len(s) > MaxSHA {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case '0' <= b && b <= '9', 'a' <= b && b <= 'f', 'A' <= b && b <= 'F':
		default:
			return false
		}
	}
	return true
}

// set stores the value of f, given as name.
func (c *Command) set(f flag, name, val string) error {
	switch f {
	case flagBaseline:
		if v := strings.TrimSpace(val); v != BaselineCommitted {
			return usage(md.Code(f.long)+" takes "+md.Code(BaselineCommitted)+", not "+arg(val),
				"write %s to compare with the results committed on the base branch, or leave it out to measure each changed framework against its merge base in the same job",
				md.Code(f.long+" "+BaselineCommitted))
		}
		c.Baseline = BaselineCommitted
		return nil
	case flagCompare:
		v := strings.TrimSpace(val)
		if strings.Contains(v, ",") {
			return usage(md.Code("--compare")+" takes one framework, not "+arg(val), "write %s", md.Code("--compare <framework>"))
		}
		if err := checkName("framework", v); err != nil {
			return err
		}
		c.Compare = v
		return nil
	}
	what := "framework"
	if f == flagTest {
		what = "test"
	}
	var list []string
	for elem := range strings.SplitSeq(val, ",") {
		elem = strings.TrimSpace(elem)
		if elem == "" {
			return usage(fmt.Sprintf("empty %s name in %s", what, arg(name+" "+val)), "separate names with single commas: %s", md.Code(name+" a,b"))
		}
		if err := checkName(what, elem); err != nil {
			return err
		}
		dup := false
		for _, have := range list {
			dup = dup || have == elem
		}
		if !dup {
			list = append(list, elem)
		}
	}
	if f == flagTest {
		c.Tests = list
	} else {
		c.Frameworks = list
	}
	return nil
}

// check applies the rules that span flags.
func (c *Command) check() error {
	switch c.Kind {
	case KindBenchmark:
		if len(c.Frameworks) > 1 {
			return usage(md.Code(KindBenchmark.Word())+" takes one framework", "to run several, use %s", md.Code("/benchmark-multiple -f "+strings.Join(c.Frameworks, ",")))
		}
		if c.Compare != "" && len(c.Frameworks) == 1 && c.Compare == c.Frameworks[0] {
			return usage(md.Code("--compare "+c.Compare)+" names the framework being measured",
				"compare with another framework, or leave %s out to compare with %s", md.Code("--compare"), md.Code("main"))
		}
	case KindTest:
		if len(c.Tests) == 0 {
			return usage(md.Code(KindTest.Word())+" needs a test", "write %s, e.g. %s", md.Code("/benchmark-test -t <test>"), md.Code("/benchmark-test -t baseline"))
		}
		if len(c.Tests) > 1 {
			return usage(md.Code(KindTest.Word())+" takes one test", "post one %s per test, or use %s", md.Code(KindTest.Word()), md.Code("/benchmark-multiple -t "+strings.Join(c.Tests, ",")))
		}
	}
	return nil
}

// ValidName reports whether s is a valid framework or test name: it matches
// ^[a-z0-9][a-z0-9._-]*$ and is at most MaxName bytes long.
func ValidName(s string) bool {
	if s == "" || len(s) > MaxName {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case 'a' <= b && b <= 'z', '0' <= b && b <= '9':
		case i > 0 && (b == '.' || b == '_' || b == '-'):
		default:
			return false
		}
	}
	return true
}

func checkName(what, s string) error {
	if ValidName(s) {
		return nil
	}
	if len(s) > MaxName {
		return usage(fmt.Sprintf("%s name %s is longer than %d characters", what, arg(s), MaxName), "check the name in %s", md.Code("frameworks/"))
	}
	fix := "names use lowercase letters, digits, " + md.Code(".") + ", " + md.Code("_") + " and " + md.Code("-") +
		", and start with a letter or digit"
	if l := strings.ToLower(s); ValidName(l) {
		fix = "names are lowercase: did you mean " + md.Code(l) + "?"
	}
	return usage(fmt.Sprintf("%s name %s is not valid", what, arg(s)), "%s", fix)
}

// argMax bounds what an error message echoes of an argument, in bytes.
const argMax = 40

// arg echoes what the user wrote in an error message: a code span (md.Code), cut to argMax
// bytes, so that whatever it holds it mentions no one, references nothing and renders as
// typed.
func arg(s string) string { return md.Code(md.Clip(s, argMax)) }

// quoteArg renders w for an example command line: as is when it is a valid name, else as
// a placeholder.
func quoteArg(w string) string {
	if ValidName(w) {
		return w
	}
	return "<name>"
}

// closest returns the command words nearest to word by edit distance, as code:
// "`/benchmark-help`" or "`/benchmark`, `/benchmark-test` or `/benchmark-help`".
func closest(word string) string {
	if len(word) > 40 {
		word = word[:40] // bounded work; no command word is this long
	}
	word = strings.ToLower(word)
	best, names := -1, []string(nil)
	for _, k := range Kinds {
		d := text.Distance(word, k.Word())
		switch {
		case best < 0 || d < best:
			best, names = d, []string{md.Code(k.Word())}
		case d == best:
			names = append(names, md.Code(k.Word()))
		}
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
