package validate

import (
	"context"
	"fmt"
	"strconv"
)

// pipelinedChecks send the profile's pipelining depth (its row's Pipeline) of requests
// before reading the first answer.
func pipelinedChecks(p string) []check {
	ref := func(text string) string { return contract(p, text, "") }
	depth := row(p).Pipeline
	return []check{
		probeCheck(p, "/baseline11?a=1&b=1"),
		{
			name:     "GET /pipeline",
			contract: ref(`GET /pipeline → 200 text/plain "ok"`),
			run: func(ctx context.Context, e *env) result {
				return expectText(ctx, e, "GET", request("GET", "/pipeline", nil, nil), "ok")
			},
		},
		{
			name:     "GET /pipeline Content-Type",
			contract: ref(`GET /pipeline → 200 text/plain "ok"`),
			run: func(ctx context.Context, e *env) result {
				return expectType(ctx, e, "GET", request("GET", "/pipeline", nil, nil), "text/plain")
			},
		},
		{
			name:     fmt.Sprintf("%d pipelined GET /pipeline", depth),
			contract: ref(fmt.Sprintf(`%[1]d × GET /pipeline sent in one write (pipelining depth %[1]d) → %[1]d responses "ok", in order (RFC 9112 §9.3.2)`, depth)),
			run: func(ctx context.Context, e *env) result {
				var reqs []seqRequest
				for range depth {
					reqs = append(reqs, seqRequest{"GET", request("GET", "/pipeline", nil, nil), "ok"})
				}
				return pipeline(ctx, e, reqs, fmt.Sprintf(`%d × "GET /pipeline HTTP/1.1\r\nHost: localhost:8080\r\n\r\n" in one write`, depth))
			},
		},
		{
			name:     fmt.Sprintf("%d pipelined mixed, in order", depth),
			contract: ref(`requests pipelined in one write are answered completely and in the order sent (RFC 9112 §9.3.2); GET /pipeline → "ok", GET /baseline11?a=i&b=0 → "i"`),
			run: func(ctx context.Context, e *env) result {
				var reqs []seqRequest
				for i := range depth {
					if i%2 == 0 {
						reqs = append(reqs, seqRequest{"GET", request("GET", "/pipeline", nil, nil), "ok"})
					} else {
						reqs = append(reqs, seqRequest{"GET", request("GET", fmt.Sprintf("/baseline11?a=%d&b=0", i), nil, nil), strconv.Itoa(i)})
					}
				}
				return pipeline(ctx, e, reqs, fmt.Sprintf("%d requests in one write: GET /pipeline and GET /baseline11?a=i&b=0 alternating, i = 1, 3, …, %d", depth, depth-1))
			},
		},
	}
}

// pipeline sends every request in one write and reads the answers in order.
func pipeline(ctx context.Context, e *env, reqs []seqRequest, req string) result {
	var all []byte
	var want []string
	for _, q := range reqs {
		all = append(all, q.raw...)
		want = append(want, strconv.Quote(q.want))
	}
	exp := fmt.Sprintf("%d responses, 200 each, with bodies in the order sent: %v", len(reqs), want)
	c, err := dial(ctx, e)
	if err != nil {
		return failed(req, exp, err.Error())
	}
	defer c.close()
	if err := c.write(all); err != nil {
		return failed(req, exp, err.Error())
	}
	var got []string
	for i, q := range reqs {
		r, err := c.response(q.method)
		if err != nil {
			return failed(req, exp, fmt.Sprintf("after %d responses %v: response %d: %v", i, got, i+1, err))
		}
		if r.Status != 200 || string(r.Body) != q.want {
			return failed(req, exp, fmt.Sprintf("after %d responses %v: response %d: %s (expected %q)", i, got, i+1, describe(r), q.want))
		}
		got = append(got, strconv.Quote(string(r.Body)))
		if r.closes() && i < len(reqs)-1 {
			return failed(req, exp, fmt.Sprintf("after %d responses %v: the server closes the connection with %d requests unanswered", i+1, got, len(reqs)-i-1))
		}
	}
	return passed(req, exp, fmt.Sprintf("%d responses in order", len(got)))
}
