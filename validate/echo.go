package validate

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
)

// echoSizes are the body sizes the 8gbit checks post to /echo: empty, one byte, small, the
// load's 10 KB (arenadata's echo-10k.bin is 10,240 bytes) and larger than a 64 KiB
// buffer.
var echoSizes = []int{0, 1, 1000, 10240, 100000}

// echoChecks are the checks of 8gbit: the TLS checks of 8081, then POST /echo of random
// bodies, which must come back byte for byte.
func echoChecks(p string) []check {
	checks := tlsChecks(p, "/baseline11?a=1&b=1", "/baseline11?a=13&b=42")
	for _, n := range echoSizes {
		checks = append(checks, check{
			name:     "POST /echo " + byteCount(n),
			contract: contract(p, fmt.Sprintf("POST /echo with a body of %s (random, Content-Type application/octet-stream) over TLS → 200 and the same %s, byte for byte", byteCount(n), byteCount(n)), ""),
			run: func(ctx context.Context, e *env) result {
				body := randomBytes(e.rand(), n)
				return echoCheck(ctx, e, body, func(r *response) string {
					if r.Status != 200 {
						return describe(r)
					}
					if !bytes.Equal(r.Body, body) {
						return describe(r) + ": " + diffSent(r.Body, body)
					}
					return ""
				})
			},
		})
	}
	return append(checks, check{
		name:     "POST /echo headers",
		contract: contract(p, "POST /echo → Content-Type application/octet-stream and a Content-Length equal to the body's length", "RFC 9110 §8.3, §8.6"),
		run: func(ctx context.Context, e *env) result {
			body := randomBytes(e.rand(), 2000)
			return echoCheck(ctx, e, body, func(r *response) string {
				switch {
				case r.Status != 200:
					return describe(r)
				case !typeMatches(r.get("Content-Type"), "application/octet-stream"):
					return describe(r) + " (expected Content-Type application/octet-stream)"
				case r.Framing != framingLength:
					return describe(r) + " (expected a Content-Length, not " + r.Framing.String() + ")"
				}
				return ""
			})
		},
	}.advisory())
}

// byteCount renders n as "0 bytes", "1 byte", "10,240 bytes".
func byteCount(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if n == 1 {
		return s + " byte"
	}
	return s + " bytes"
}

// echoCheck posts body to /echo with a Content-Length, sending it while the answer is read
// (an echo may start before the body has all arrived), and judges the response with judge,
// which returns "" or what is wrong.
func echoCheck(ctx context.Context, e *env, body []byte, judge func(r *response) string) result {
	head := request("POST", "/echo", []string{"Content-Type: application/octet-stream", "Content-Length: " + strconv.Itoa(len(body))}, nil)
	req := show(head)
	if len(body) > 0 {
		req += fmt.Sprintf("<%s of random bytes>", byteCount(len(body)))
	}
	exp := fmt.Sprintf("200 with the %s sent, byte for byte", byteCount(len(body)))
	c, err := dial(ctx, e)
	if err != nil {
		return failed(req, exp, err.Error())
	}
	defer c.close()
	sent := make(chan error, 1)
	go func() { sent <- c.write(append(head, body...)) }()
	r, rerr := c.response("POST")
	if rerr != nil {
		c.close() // unblock the sender
		<-sent
		return failed(req, exp, rerr.Error())
	}
	if werr := <-sent; werr != nil {
		return failed(req, exp, fmt.Sprintf("%s, but the body could not be sent completely (%v)", describe(r), werr))
	}
	if problem := judge(r); problem != "" {
		return failed(req, exp, problem)
	}
	return passed(req, exp, describe(r))
}

// diffSent says how got differs from the body sent.
func diffSent(got, sent []byte) string {
	n := min(len(got), len(sent))
	i := 0
	for i < n && got[i] == sent[i] {
		i++
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s back for %s sent", byteCount(len(got)), byteCount(len(sent)))
	if i == n && len(got) != len(sent) {
		fmt.Fprintf(&sb, " (the first %s agree)", byteCount(n))
	} else {
		fmt.Fprintf(&sb, ", differing from byte %d on", i)
	}
	return sb.String()
}
