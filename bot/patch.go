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

// filePatch returns a self-contained diff that `git apply`, run at the root of the
// repository, applies to turn the file at path from old into new. existed false means the
// file does not exist yet (old is ignored) and the diff creates it; otherwise the diff is
// one hunk that replaces the whole content, which needs no context lines and so applies to
// exactly old. Identical contents give "". A missing final newline is marked as git does.
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
	fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(len(oldLines)), hunkRange(len(newLines)))
	writeLines(&sb, '-', oldLines)
	writeLines(&sb, '+', newLines)
	return sb.String()
}

// hunkRange is one side of a hunk header for a hunk that covers a whole file of n lines.
func hunkRange(n int) string {
	if n == 0 {
		return "0,0"
	}
	return fmt.Sprintf("1,%d", n)
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
