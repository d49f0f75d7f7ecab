package bot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/arenabot/arenabot/bot/ghapi"
)

// patchContext is the number of unchanged lines a hunk keeps on each side, as diff -u does.
const patchContext = 3

// filePatch returns a self-contained diff that `git apply`, run at the root of the
// repository, applies to turn the file at path from old into new. existed false means the
// file does not exist yet (old is ignored) and the diff creates it; otherwise the diff is one
// hunk from the first changed line to the last, with up to three unchanged lines around it,
// so a results file that gained or replaced a few rows gives a patch of those rows, not of
// the whole file. Identical contents give "". A missing final newline is marked as git does.
func filePatch(path string, old []byte, existed bool, new []byte) string {
	if existed && bytes.Equal(old, new) {
		return ""
	}
	a, b := diffName("a/", path), diffName("b/", path)
	var sb strings.Builder
	fmt.Fprintf(&sb, "diff --git %s %s\n", a, b)
	if !existed {
		old = nil
		sb.WriteString("new file mode 100644\n")
		if len(new) == 0 {
			return sb.String() // an empty new file has no hunk
		}
		a = "/dev/null"
	}
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", a, b)
	oldLines, newLines := splitLines(old), splitLines(new)
	pre := 0 // lines both start with
	for pre < len(oldLines) && pre < len(newLines) && oldLines[pre] == newLines[pre] {
		pre++
	}
	suf := 0 // lines both end with, after pre
	for suf < len(oldLines)-pre && suf < len(newLines)-pre && oldLines[len(oldLines)-1-suf] == newLines[len(newLines)-1-suf] {
		suf++
	}
	start := max(0, pre-patchContext)
	after := min(suf, patchContext)
	oldEnd, newEnd := len(oldLines)-suf+after, len(newLines)-suf+after
	fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(start, oldEnd-start), hunkRange(start, newEnd-start))
	writeLines(&sb, ' ', oldLines[start:pre])
	writeLines(&sb, '-', oldLines[pre:len(oldLines)-suf])
	writeLines(&sb, '+', newLines[pre:len(newLines)-suf])
	writeLines(&sb, ' ', oldLines[len(oldLines)-suf:oldEnd])
	return sb.String()
}

// hunkRange is one side of a hunk header for n lines from the 0-based line start: "1,3", or
// for no lines the line before them ("0,0" at the top of the file).
func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// splitLines cuts b after each newline; the last line lacks one when b does not end in one.
func splitLines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}

func writeLines(sb *strings.Builder, sign byte, lines []string) {
	for _, l := range lines {
		sb.WriteByte(sign)
		sb.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// diffName renders prefix+path for a diff header, quoted the way git quotes a name that
// holds a space, a quote, a backslash, a control character or a non-ASCII byte.
func diffName(prefix, path string) string {
	name := prefix + path
	plain := true
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= ' ' || c == '"' || c == '\\' || c >= 0x7f {
			plain = false
			break
		}
	}
	if plain {
		return name
	}
	var sb strings.Builder
	sb.WriteByte('"')
	for i := 0; i < len(name); i++ {
		switch c := name[i]; c {
		case '"', '\\':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case '\t':
			sb.WriteString(`\t`)
		case '\n':
			sb.WriteString(`\n`)
		default:
			if c < ' ' || c >= 0x7f {
				fmt.Fprintf(&sb, `\%03o`, c)
			} else {
				sb.WriteByte(c)
			}
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

// resultPatches returns, in path order, one diff per file that turns repo at ref into
// files: a replacement of the whole file where it exists at ref, else a new file. A file
// that could not be read (other than not found) is given as a new file, and the failure
// logged: the patch then fails to apply loudly rather than silently losing the file.
func (rp *finisher) resultPatches(ctx context.Context, inst int64, repo, ref string, files map[string][]byte) []string {
	var out []string
	for _, p := range slices.Sorted(maps.Keys(files)) {
		old, err := rp.gh.File(ctx, inst, repo, ref, p)
		existed := err == nil
		if err != nil && !errors.Is(err, ghapi.ErrNotFound) {
			rp.log.Warn("read file for patch", "repo", repo, "ref", ref, "path", p, "err", err)
		}
		if d := filePatch(p, old, existed, files[p]); d != "" {
			out = append(out, d)
		}
	}
	return out
}
