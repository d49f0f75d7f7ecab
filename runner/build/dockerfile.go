package build

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// A fromLine is one FROM instruction of a Dockerfile.
type fromLine struct {
	Stage   int      // 1 for the first FROM
	Name    string   // the stage's name (AS name) as written; "" without one
	Line    int      // the instruction's first line, from 1
	EndLine int      // its last line (after continuations)
	Flags   []string // its flags as written ("--platform=linux/amd64")
	Raw     string   // the image as written ("${GO_IMAGE}", "golang:1.26-alpine")
	// Image is the base image after the global ARGs are expanded; "" when the FROM names
	// no image: scratch, an earlier stage, or something the builder will reject anyway.
	Image string
	// Arg is the global build argument Raw is made of ("${GO_IMAGE}", "$GO_IMAGE",
	// "${GO_IMAGE:-golang:1.26}"); setting it replaces the image. "" when there is none.
	Arg string
}

// StageDesc says which stage a FROM starts, for messages: `1 "build"`, or `2` without a name.
func (f fromLine) StageDesc() string {
	if f.Name != "" {
		return fmt.Sprintf("%d %q", f.Stage, f.Name)
	}
	return fmt.Sprint(f.Stage)
}

var (
	directiveRE = regexp.MustCompile(`^#[ \t]*([A-Za-z][A-Za-z0-9_-]*)[ \t]*=[ \t]*(.*?)[ \t]*$`)
	argNameRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// oneArgRE matches an image that is one build argument: $X, ${X}, ${X:-default}, ${X-default}.
	oneArgRE = regexp.MustCompile(`^\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)(?::?-[^}]*)?\})$`)
)

// parseFroms finds the FROM instructions of a Dockerfile as the builder reads it: parser
// directives (# syntax=, # escape=) at the top, comment lines, line continuations, the
// global ARGs before the first FROM with their defaults, each overridden by buildArgs as a
// --build-arg is, and their expansion in FROM ($X, ${X}, ${X:-word}, ${X:+word}, quotes).
// A FROM it cannot make sense of gets no Image: the build will report it.
func parseFroms(data []byte, buildArgs map[string]string) []fromLine {
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	escape := byte('\\')
	first := 0
	for ; first < len(lines); first++ {
		m := directiveRE.FindStringSubmatch(lines[first])
		if m == nil {
			break
		}
		if strings.EqualFold(m[1], "escape") && (m[2] == "`" || m[2] == `\`) {
			escape = m[2][0]
		}
	}

	g := globalArgs{values: map[string]string{}, declared: map[string]bool{}}
	var stages []string // the stage names so far, lower case
	var froms []fromLine
	for i := first; i < len(lines); {
		if t := strings.TrimLeft(lines[i], " \t"); t == "" || t[0] == '#' {
			i++
			continue
		}
		start := i
		var text strings.Builder
		for i < len(lines) {
			l := lines[i]
			i++
			if t := strings.TrimLeft(l, " \t"); i-1 > start && (t == "" || t[0] == '#') {
				continue // comment and empty lines inside an instruction are dropped
			}
			body := strings.TrimRight(l, " \t")
			if !strings.HasSuffix(body, string(escape)) {
				text.WriteString(l)
				break
			}
			text.WriteString(body[:len(body)-1])
		}
		inst := strings.TrimLeft(text.String(), " \t")
		keyword, args := inst, ""
		if k := strings.IndexAny(inst, " \t"); k >= 0 {
			keyword, args = inst[:k], inst[k+1:]
		}
		switch strings.ToUpper(keyword) {
		case "ARG":
			if len(froms) == 0 {
				g.add(args, escape, buildArgs)
			}
		case "FROM":
			f := fromLine{Stage: len(froms) + 1, Line: start + 1, EndLine: i}
			words := strings.Fields(args)
			for len(words) > 0 && strings.HasPrefix(words[0], "--") {
				f.Flags, words = append(f.Flags, words[0]), words[1:]
			}
			if len(words) > 0 {
				f.Raw = words[0]
			}
			if len(words) == 3 && strings.EqualFold(words[1], "AS") {
				f.Name = words[2]
			}
			if len(words) == 1 || f.Name != "" {
				f.Image, _ = expandWord(f.Raw, escape, g.lookup)
			}
			if m := oneArgRE.FindStringSubmatch(f.Raw); m != nil && g.declared[m[1]+m[2]] {
				f.Arg = m[1] + m[2]
			}
			if low := strings.ToLower(f.Image); low == "scratch" || (low != "" && slices.Contains(stages, low)) {
				f.Image = ""
			}
			froms = append(froms, f)
			stages = append(stages, strings.ToLower(f.Name))
		}
	}
	return froms
}

// globalArgs are the ARGs before the first FROM, the only ones a FROM sees.
type globalArgs struct {
	values   map[string]string // the ones with a value
	declared map[string]bool   // every one declared, with a value or not
}

// add records the ARGs of one ARG instruction: NAME, NAME=default, several in one
// instruction. A build argument of the same name overrides the default, as --build-arg does.
func (g globalArgs) add(args string, escape byte, buildArgs map[string]string) {
	for _, w := range splitWords(args, escape) {
		name, def, hasDef := strings.Cut(w, "=")
		if !argNameRE.MatchString(name) {
			continue
		}
		g.declared[name] = true
		if v, ok := buildArgs[name]; ok {
			g.values[name] = v
			continue
		}
		if !hasDef {
			continue // a redeclaration without a default keeps the value
		}
		if v, err := expandWord(def, escape, g.lookup); err == nil {
			g.values[name] = v
		} else {
			delete(g.values, name)
		}
	}
}

func (g globalArgs) lookup(name string) (string, bool) {
	v, ok := g.values[name]
	return v, ok
}

// splitWords splits an instruction's arguments at unquoted, unescaped blanks, keeping quotes
// and escapes in the words.
func splitWords(s string, escape byte) []string {
	var words []string
	var w strings.Builder
	var quote byte
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == escape && quote != '\'' && i+1 < len(s):
			w.WriteByte(c)
			w.WriteByte(s[i+1])
			i++
			inWord = true
		case quote != 0:
			w.WriteByte(c)
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
			w.WriteByte(c)
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

var errBadSubst = errors.New("bad substitution")

// expandWord expands one word as the builder does for FROM and ARG: quotes are removed
// ('…' is literal), the escape character makes the next character literal, and $X, ${X},
// ${X:-word}, ${X-word}, ${X:+word}, ${X+word}, ${X:?msg} and ${X?msg} are replaced using
// lookup.
func expandWord(s string, escape byte, lookup func(string) (string, bool)) (string, error) {
	var out strings.Builder
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				out.WriteByte(c)
			}
		case c == escape:
			if i+1 < len(s) {
				i++
				out.WriteByte(s[i])
			}
		case c == '"':
			if quote == '"' {
				quote = 0
			} else {
				quote = '"'
			}
		case c == '\'' && quote == 0:
			quote = '\''
		case c == '$':
			v, n, err := expandDollar(s[i:], escape, lookup)
			if err != nil {
				return "", err
			}
			out.WriteString(v)
			i += n - 1
		default:
			out.WriteByte(c)
		}
	}
	if quote != 0 {
		return "", fmt.Errorf("unmatched %c", quote)
	}
	return out.String(), nil
}

// expandDollar expands the variable reference at the start of s (which begins with $) and
// returns its value and how many bytes of s it took.
func expandDollar(s string, escape byte, lookup func(string) (string, bool)) (string, int, error) {
	if len(s) < 2 {
		return "$", 1, nil
	}
	if s[1] != '{' {
		if s[1] != '_' && !isAlpha(s[1]) {
			return "$", 1, nil // a $ that starts no name is itself
		}
		n := 2
		for n < len(s) && (s[n] == '_' || isAlpha(s[n]) || isDigit(s[n])) {
			n++
		}
		v, _ := lookup(s[1:n])
		return v, n, nil
	}
	// ${NAME[modifier word]}: find the closing brace, minding nested ones.
	depth, end := 0, -1
	for j := 1; j < len(s) && end < 0; j++ {
		switch s[j] {
		case escape:
			j++
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				end = j
			}
		}
	}
	if end < 0 {
		return "", 0, errBadSubst
	}
	inner := s[2:end]
	n := 0
	for n < len(inner) && (inner[n] == '_' || isAlpha(inner[n]) || isDigit(inner[n])) {
		n++
	}
	name, rest := inner[:n], inner[n:]
	if !argNameRE.MatchString(name) {
		return "", 0, errBadSubst
	}
	v, set := lookup(name)
	if rest == "" {
		return v, end + 1, nil
	}
	colon := strings.HasPrefix(rest, ":")
	rest = strings.TrimPrefix(rest, ":")
	if rest == "" {
		return "", 0, errBadSubst
	}
	op, word := rest[0], rest[1:]
	empty := !set || (colon && v == "")
	switch op {
	case '-':
		if empty {
			w, err := expandWord(word, escape, lookup)
			return w, end + 1, err
		}
		return v, end + 1, nil
	case '+':
		if !empty {
			w, err := expandWord(word, escape, lookup)
			return w, end + 1, err
		}
		return "", end + 1, nil
	case '?':
		if empty {
			return "", 0, fmt.Errorf("%s: %s", name, word)
		}
		return v, end + 1, nil
	}
	return "", 0, errBadSubst
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// rewriteFroms returns data with the FROM of each stage in images (stage number → image)
// naming that image instead, its flags and stage name kept. A FROM continued over several
// lines becomes one line followed by empty ones, so every other instruction keeps its line
// number.
func rewriteFroms(data []byte, froms []fromLine, images map[int]string) []byte {
	lines := strings.Split(string(data), "\n")
	for _, f := range froms {
		image, ok := images[f.Stage]
		if !ok {
			continue
		}
		words := append([]string{"FROM"}, f.Flags...)
		words = append(words, image)
		if f.Name != "" {
			words = append(words, "AS", f.Name)
		}
		cr := ""
		if strings.HasSuffix(lines[f.EndLine-1], "\r") {
			cr = "\r"
		}
		lines[f.Line-1] = strings.Join(words, " ") + cr
		for j := f.Line; j < f.EndLine; j++ {
			lines[j] = cr
		}
	}
	return []byte(strings.Join(lines, "\n"))
}
