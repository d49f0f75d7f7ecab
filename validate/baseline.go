package validate

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// baselineChecks are the checks of baseline and limited-conn: the sums (h1SumChecks), the
// fragmented requests and the connection pattern of the profile's load, read from its row: a
// load that keeps its connections alive (RequestsPerConn 0, baseline) is checked on one
// connection, one that reconnects every n requests (limited-conn, 10) with n requests on each
// of 3 connections.
func baselineChecks(p string) []check {
	ref := func(text string) string { return contract(p, text, "") }
	checks := h1SumChecks(p)
	perConn := row(p).RequestsPerConn
	if perConn == 0 {
		checks = append(checks, check{
			name:     "keep-alive",
			contract: ref("connections are kept alive between requests (the load tool sends every request of a run on the same connections)"),
			run:      keepAliveCheck,
		})
	}
	checks = append(checks, fragmentChecks(p)...)
	if perConn > 0 {
		checks = append(checks, check{
			name:     fmt.Sprintf("%d requests per connection", perConn),
			contract: ref(fmt.Sprintf("the load tool sends %d requests on a connection, closes it and opens another; the server answers all %d on each", perConn, perConn)),
			run:      reconnectCheck(perConn),
		})
	}
	return checks
}

// h1SumChecks are the HTTP/1.1 sum checks baseline, limited-conn and the api profiles share:
// GET /baseline11?a=13&b=42 answers text/plain "55", the sum of the query's integers; POST
// adds the integer body, sent with a Content-Length or chunked: "75". Each check uses its own
// numbers, so a wrong answer points at one check.
func h1SumChecks(p string) []check {
	ref := func(text string) string { return contract(p, text, "") }
	refV := func(text string) string { return contract(p, text, "") }
	return []check{
		probeCheck(p, "/baseline11?a=1&b=1"),
		{
			name:     "GET sum 13+42",
			contract: ref(`GET /baseline11?a=13&b=42 → 200 text/plain "55"`),
			run: func(ctx context.Context, e *env) result {
				return expectText(ctx, e, "GET", request("GET", "/baseline11?a=13&b=42", nil, nil), "55")
			},
		},
		{
			name:     "GET Content-Type",
			contract: ref(`GET /baseline11?a=13&b=42 → 200 text/plain "55"`),
			run: func(ctx context.Context, e *env) result {
				return expectType(ctx, e, "GET", request("GET", "/baseline11?a=13&b=42", nil, nil), "text/plain")
			},
		},
		{
			name:     "POST Content-Length body",
			contract: ref(`POST /baseline11?a=13&b=42 with Content-Length: 2 and body "20" → 200 text/plain "75"`),
			run: func(ctx context.Context, e *env) result {
				return expectText(ctx, e, "POST", postCL("/baseline11?a=13&b=42", "20"), "75")
			},
		},
		{
			name:     "POST Content-Type",
			contract: ref(`POST /baseline11?a=13&b=42 with body "20" → 200 text/plain "75"`),
			run: func(ctx context.Context, e *env) result {
				return expectType(ctx, e, "POST", postCL("/baseline11?a=13&b=42", "20"), "text/plain")
			},
		},
		{
			name:     "POST chunked body",
			contract: ref(`POST /baseline11?a=13&b=42 with Transfer-Encoding: chunked and body "20" → 200 text/plain "75"`),
			run: func(ctx context.Context, e *env) result {
				return expectText(ctx, e, "POST", postChunked("/baseline11?a=13&b=42", "20"), "75")
			},
		},
		{
			name:     "GET random sum",
			contract: refV("GET /baseline11?a={a}&b={b} → 200 text/plain a+b, for any integers"),
			run: func(ctx context.Context, e *env) result {
				rng := e.rand()
				a, b := 100+rng.IntN(900), 100+rng.IntN(900)
				raw := request("GET", fmt.Sprintf("/baseline11?a=%d&b=%d", a, b), nil, nil)
				return expectText(ctx, e, "GET", raw, strconv.Itoa(a+b))
			},
		},
		{
			name:     "POST random bodies",
			contract: refV("POST /baseline11?a=13&b=42 with body {n} → 200 text/plain 55+n, for any integer n"),
			run: func(ctx context.Context, e *env) result {
				rng := e.rand()
				n1 := 100 + rng.IntN(900)
				n2 := 100 + (n1-100+1+rng.IntN(899))%900 // distinct from n1
				var r result
				for _, n := range []int{n1, n2} {
					r = expectText(ctx, e, "POST", postCL("/baseline11?a=13&b=42", strconv.Itoa(n)), strconv.Itoa(55+n))
					if r.status != Pass {
						return r
					}
				}
				return r
			},
		},
		{
			name:     "GET framing",
			contract: ref(`every response is framed by a Content-Length equal to its body's length or by chunked encoding (RFC 9112 §6); "Connection: close" closes after the response (RFC 9112 §9.6)`),
			run:      framingCheck,
		},
	}
}

// postCL is a POST with a Content-Length body, as post_cl.raw.
func postCL(target, body string) []byte {
	return request("POST", target, []string{"Content-Type: text/plain", "Content-Length: " + strconv.Itoa(len(body))}, []byte(body))
}

// postChunked is a POST with the body in one chunk, as post_chunked.raw.
func postChunked(target, body string) []byte {
	return request("POST", target, []string{"Content-Type: text/plain", "Transfer-Encoding: chunked"}, chunked([]byte(body)))
}

// framingCheck sends a GET with "Connection: close" and reads everything until the server
// closes: exactly one response, framed by Content-Length or chunked, nothing after it.
func framingCheck(ctx context.Context, e *env) result {
	raw := request("GET", "/baseline11?a=40&b=15", []string{"Connection: close"}, nil)
	const exp = `200 with body "55" framed by a Content-Length equal to the body's length or by chunked encoding, then the connection closed with nothing more sent`
	c, err := dial(ctx, e)
	if err != nil {
		return failed(show(raw), exp, err.Error())
	}
	defer c.close()
	if err := c.write(raw); err != nil {
		return failed(show(raw), exp, err.Error())
	}
	r, err := c.response("GET")
	if err != nil {
		return failed(show(raw), exp, err.Error())
	}
	if r.Status != 200 || string(r.Body) != "55" {
		return failed(show(raw), exp, describe(r))
	}
	if r.Framing != framingLength && r.Framing != framingChunked {
		return failed(show(raw), exp, describe(r)+" (no Content-Length and not chunked)")
	}
	closed, extra, err := c.atEOF()
	switch {
	case len(extra) > 0:
		return failed(show(raw), exp, fmt.Sprintf("%s, then %d more bytes \"%s\": the Content-Length is shorter than the body sent", describe(r), len(extra), printable(extra, 80)))
	case err != nil:
		return failed(show(raw), exp, describe(r)+", then the connection stayed open: "+err.Error())
	case !closed:
		return failed(show(raw), exp, describe(r)+", then the connection stayed open")
	}
	return passed(show(raw), exp, describe(r)+", then the connection closed")
}

// seqRequest is one request of a sequence on one connection.
type seqRequest struct {
	method string
	raw    []byte
	want   string
}

// baselineRotation is what the load tool rotates through (get.raw, post_cl.raw,
// post_chunked.raw), with the query a=x&b=y and bodies b1 and b2.
func baselineRotation(x, y, b1, b2 int) []seqRequest {
	target := fmt.Sprintf("/baseline11?a=%d&b=%d", x, y)
	return []seqRequest{
		{"GET", request("GET", target, nil, nil), strconv.Itoa(x + y)},
		{"POST", postCL(target, strconv.Itoa(b1)), strconv.Itoa(x + y + b1)},
		{"POST", postChunked(target, strconv.Itoa(b2)), strconv.Itoa(x + y + b2)},
	}
}

// sequence sends the requests one after another on one connection, each after the
// previous answer, and wants each answered 200 with its body and the connection kept open.
func sequence(ctx context.Context, c *conn, reqs []seqRequest, label func(i int) string) (ok bool, request, got string) {
	for i, q := range reqs {
		if err := c.write(q.raw); err != nil {
			return false, label(i) + ": " + show(q.raw), err.Error()
		}
		r, err := c.response(q.method)
		if err != nil {
			return false, label(i) + ": " + show(q.raw), err.Error()
		}
		if r.Status != 200 || string(r.Body) != q.want {
			return false, label(i) + ": " + show(q.raw), fmt.Sprintf("%s (expected body %q)", describe(r), q.want)
		}
		if r.closes() && i < len(reqs)-1 {
			return false, label(i) + ": " + show(q.raw), describe(r) + ": the server closes the connection here"
		}
		if ctx.Err() != nil {
			return false, label(i) + ": " + show(q.raw), ctx.Err().Error()
		}
	}
	return true, "", ""
}

// keepAliveCheck sends GET, POST and chunked POST on one connection, as the load does.
func keepAliveCheck(ctx context.Context, e *env) result {
	reqs := baselineRotation(3, 4, 5, 6)
	const exp = `"7", "12" and "13", each 200, on one connection that stays open`
	req := "GET, POST (Content-Length) and POST (chunked) /baseline11?a=3&b=4 with bodies 5 and 6, one after another on one connection"
	c, err := dial(ctx, e)
	if err != nil {
		return failed(req, exp, err.Error())
	}
	defer c.close()
	if ok, sent, got := sequence(ctx, c, reqs, func(i int) string { return fmt.Sprintf("request %d of 3", i+1) }); !ok {
		return failed(sent, exp, got)
	}
	return passed(req, exp, "all three answered on one connection")
}

// reconnectCheck is limited-conn's pattern: n requests on a connection, then a new one.
func reconnectCheck(n int) func(ctx context.Context, e *env) result {
	return func(ctx context.Context, e *env) result {
		rot := baselineRotation(4, 5, 6, 7)
		var reqs []seqRequest
		for i := range n {
			reqs = append(reqs, rot[i%len(rot)])
		}
		exp := fmt.Sprintf(`%d answers per connection ("9", "15", "16", …), without the server closing early, on each of 3 connections`, n)
		req := fmt.Sprintf("3 connections, each sending %d requests (GET, POST, chunked POST /baseline11?a=4&b=5 in turn) one after another, then closing", n)
		for round := range 3 {
			c, err := dial(ctx, e)
			if err != nil {
				return failed(req, exp, fmt.Sprintf("connection %d: %v", round+1, err))
			}
			ok, sent, got := sequence(ctx, c, reqs, func(i int) string { return fmt.Sprintf("connection %d, request %d of %d", round+1, i+1, n) })
			c.close()
			if !ok {
				return failed(sent, exp, got)
			}
		}
		return passed(req, exp, fmt.Sprintf("%d answers on 3 connections", 3*n))
	}
}

// fragmentChecks send requests in pieces with pauses (TCP_NODELAY, 30 ms), as the arena's
// validate.sh did: a server must assemble a request from however many reads it takes.
func fragmentChecks(p string) []check {
	frag := func(name, text, method, want string, frags ...string) check {
		return check{
			name:     name,
			contract: contract(p, text+`; a request may arrive in any number of TCP segments (RFC 9112 §2)`, ""),
			run: func(ctx context.Context, e *env) result {
				bs := make([][]byte, len(frags))
				shown := make([]string, len(frags))
				for i, f := range frags {
					bs[i] = []byte(f)
					shown[i] = `"` + printable(bs[i], 90) + `"`
				}
				req := strings.Join(shown, " [pause] ")
				exp := fmt.Sprintf("200 with body %q", want)
				c, err := dial(ctx, e)
				if err != nil {
					return failed(req, exp, err.Error())
				}
				defer c.close()
				if err := c.writeFragments(ctx, bs); err != nil {
					return failed(req, exp, err.Error())
				}
				r, err := c.response(method)
				if err != nil {
					return failed(req, exp, err.Error())
				}
				if r.Status != 200 || string(r.Body) != want {
					return failed(req, exp, describe(r))
				}
				return passed(req, exp, describe(r))
			},
		}
	}
	const host = "Host: localhost:8080\r\n"
	postHead := func(target string) string {
		return "POST " + target + " HTTP/1.1\r\n" + host + "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\n"
	}
	return []check{
		frag("fragmented request line", `GET /baseline11?a=21&b=34 sent with the request line split mid-path → "55"`, "GET", "55",
			"GET /basel", "ine11?a=21&b=34 HTTP/1.1\r\n"+host+"\r\n"),
		frag("fragmented headers", `GET /baseline11?a=22&b=33 sent as the request line, then each header field, then the blank line → "55"`, "GET", "55",
			"GET /baseline11?a=22&b=33 HTTP/1.1\r\n", host, "Accept: */*\r\n", "\r\n"),
		frag("fragmented body after headers", `POST /baseline11?a=23&b=32 sent as the header section, then the body "20" → "75"`, "POST", "75",
			postHead("/baseline11?a=23&b=32"), "20"),
		frag("fragmented body split", `POST /baseline11?a=24&b=31 sent as the header section, then the body in two pieces "2" and "0" → "75"`, "POST", "75",
			postHead("/baseline11?a=24&b=31"), "2", "0"),
	}
}
