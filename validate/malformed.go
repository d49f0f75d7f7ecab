package validate

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// followUpTarget is the request that shows a server still answers after a malformed one: a new
// connection, a plain GET.
const followUpTarget = "/baseline11?a=50&b=5"

// malformedChecks send the arena's noise requests, each on its own connection. A server
// should reject one with a 4xx (or close the connection without answering): the RFCs ask
// for it, the arena never did, so a miss is a Warn. It must then go on serving: a server
// that stops answering has no number worth measuring, so that part is required. Where RFC 9110/9112 let a recipient repair the message instead (obsolete line
// folding, bare CR or NUL in a field value, all replaced by SP) or set no limit (a large
// header section), the correct answer to the repaired request passes too.
func malformedChecks(p string) []check {
	// Fixed bytes, so a failure can be replayed: a TLS record header, then 64 bytes with
	// the high bit set.
	junk := []byte("\x16\x03\x01\x02\x1f")
	for i := range 64 {
		junk = append(junk, 0x80|byte(i*37+11))
	}
	junk = append(junk, "\r\n\r\n"...)
	const get = "GET /baseline11?a=13&b=42 HTTP/1.1\r\nHost: localhost:8080\r\n"
	m := func(name, what, repair, ref string, raw []byte) check {
		text := fmt.Sprintf("a request with %s → a 4xx or the connection closed", what)
		if repair != "" {
			text += `, or 200 "55" after ` + repair
		}
		text += fmt.Sprintf(`; then a new GET %s → 200 "55"`, followUpTarget)
		return check{
			name:         "malformed " + name,
			contract:     contract(p, text, ref),
			advisoryPart: "the answer to the malformed request itself",
			serial:       true,
			run:          func(ctx context.Context, e *env) result { return malformed(ctx, e, raw, repair) },
		}
	}
	return []check{
		m("bad Content-Length", "Content-Length: abc", "", "RFC 9112 §6.3",
			[]byte("POST /baseline11?a=13&b=42 HTTP/1.1\r\nHost: localhost:8080\r\nContent-Type: text/plain\r\nContent-Length: abc\r\n\r\n20")),
		m("bad header", `whitespace between a field name and its colon ("X-Bad : 1")`, "", "RFC 9112 §5.1",
			[]byte(get+"X-Bad : 1\r\n\r\n")),
		m("bare CR", "a bare CR in a field value", "replacing it with SP", "RFC 9112 §2.2",
			[]byte(get+"X-Bad: a\rb\r\n\r\n")),
		m("NUL byte", "a NUL byte in a field value", "replacing it with SP", "RFC 9110 §5.5",
			[]byte(get+"X-Bad: a\x00b\r\n\r\n")),
		m("obs-fold", "a field value folded onto a second line (obsolete line folding)", "unfolding it", "RFC 9112 §5.2",
			[]byte(get+"X-Folded: a\r\n b\r\n\r\n")),
		m("80 KB header", "an 80 KB header field", "reading it (no limit is mandated; RFC 9110 §5.4 asks for a 4xx when one is exceeded)", "RFC 9110 §5.4",
			[]byte(get+"X-Big: "+strings.Repeat("a", 80<<10)+"\r\n\r\n")),
		m("binary junk", "binary junk instead of a request line", "", "RFC 9112 §2.2, §3",
			junk),
	}
}

func malformed(ctx context.Context, e *env, raw []byte, repair string) result {
	exp := "a 4xx response or the connection closed without one"
	if repair != "" {
		exp += `, or 200 "55" (` + repair + ")"
	}
	exp += fmt.Sprintf(`; then a new GET %s → 200 "55"`, followUpTarget)
	req := show(raw)
	first, ok := malformedAnswer(ctx, e, raw, repair != "")
	follow := request("GET", followUpTarget, nil, nil)
	r := expectText(ctx, e, "GET", follow, "55")
	if r.status != Pass {
		return failed(req, exp, fmt.Sprintf("%s; then the new request %s got %s: the server stopped serving", first, show(follow), r.got))
	}
	if !ok {
		// The server answered wrongly but goes on serving: only the advisory part missed.
		res := failed(req, exp, first+`; the new request after it got "55"`)
		res.advisory = true
		return res
	}
	return passed(req, exp, first+`; then the new request got "55"`)
}

// malformedAnswer sends raw and judges the answer: ok is false for a 2xx (other than the
// repaired answer, when allowed), 3xx or 5xx, an unreadable answer, or none at all on a
// connection left open.
func malformedAnswer(ctx context.Context, e *env, raw []byte, repairable bool) (got string, ok bool) {
	c, err := dial(ctx, e)
	if err != nil {
		return err.Error(), false
	}
	defer c.close()
	// A server may close while the request is still being sent (a large header); its
	// answer, if any, is still read.
	werr := c.write(raw)
	r, err := c.response("GET")
	switch {
	case errors.Is(err, errNoResponse):
		return "the connection closed without a response", true
	case err != nil && werr != nil && !errors.As(err, new(errTimeout)):
		return "the connection closed while the request was sent (" + werr.Error() + ")", true
	case errors.As(err, new(errTimeout)):
		return fmt.Sprintf("no answer within %v, and the connection stayed open", e.timeout), false
	case err != nil:
		return err.Error(), false
	case r.Status >= 400 && r.Status < 500:
		return describe(r), true
	case repairable && r.Status == 200 && string(r.Body) == "55":
		return describe(r), true
	}
	return describe(r), false
}
