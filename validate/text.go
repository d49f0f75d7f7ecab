package validate

import (
	"fmt"
	"strings"
)

// maxShown is roughly how many bytes of a request or response an outcome shows.
const maxShown = 300

// printable renders b for a one-line report: printable ASCII as is, backslash, CR, LF and
// tab escaped, every other byte as \xNN; cut after about limit output bytes with a note of
// how much was left out.
func printable(b []byte, limit int) string {
	var sb strings.Builder
	for i, c := range b {
		if sb.Len() >= limit {
			fmt.Fprintf(&sb, "…(+%d bytes)", len(b)-i)
			break
		}
		switch {
		case c == '\\':
			sb.WriteString(`\\`)
		case c == '\r':
			sb.WriteString(`\r`)
		case c == '\n':
			sb.WriteString(`\n`)
		case c == '\t':
			sb.WriteString(`\t`)
		case c >= 0x20 && c < 0x7f:
			sb.WriteByte(c)
		default:
			fmt.Fprintf(&sb, `\x%02x`, c)
		}
	}
	return sb.String()
}

// show is printable with the outcome limit.
func show(b []byte) string { return printable(b, maxShown) }

// describe summarises a response for an outcome's Got: status line, the fields the checks
// look at, framing and body.
func describe(r *response) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %d %s", r.Proto, r.Status, printable([]byte(r.Reason), 60))
	for _, name := range []string{"Content-Type", "Content-Encoding", "Content-Length", "Transfer-Encoding", "Vary", "Connection"} {
		if vs := r.Header.Values(name); len(vs) > 0 {
			fmt.Fprintf(&sb, "; %s: %s", name, printable([]byte(strings.Join(vs, ", ")), 80))
		}
	}
	fmt.Fprintf(&sb, "; %s body of %d bytes", r.Framing, len(r.Body))
	if len(r.Body) > 0 {
		fmt.Fprintf(&sb, ": \"%s\"", printable(r.Body, 100))
	}
	return sb.String()
}
