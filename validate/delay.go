package validate

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// concurrentDelays is how many GET /delay/200 the async concurrency check sends at once.
const concurrentDelays = 6

// asyncChecks are the checks of async: GET /delay/{ms} waits at least ms milliseconds
// without holding up other requests, then answers text/plain {ms}.
func asyncChecks(p string) []check {
	return []check{
		probeCheck(p, "/baseline11?a=1&b=1"),
		delayCheck(p, 10),
		delayCheck(p, 200),
		check{
			name:     "GET /delay Content-Type",
			contract: contract(p, `GET /delay/{ms} → 200 text/plain "{ms}"`, ""),
			run: func(ctx context.Context, e *env) result {
				return expectType(ctx, e, "GET", request("GET", "/delay/1", nil, nil), "text/plain")
			},
		}.advisory(),
		check{
			name: fmt.Sprintf("%d concurrent GET /delay/200", concurrentDelays),
			contract: contract(p, fmt.Sprintf("%d GET /delay/200 sent at once on %d connections all finish within %d ms, half their sum, in the quickest of %d rounds: the wait holds up no other request (the load keeps 32,000 connections waiting at once)",
				concurrentDelays, concurrentDelays, concurrentDelays*200/2, concurrentRounds), ""),
			run: concurrentDelayCheck,
		}.advisory(),
	}
}

// delayRounds is how many times delayCheck asks, on one kept-alive connection: the
// quickest answer counts, so a loaded machine's own delays do not hide a server that
// answers at once.
const delayRounds = 3

// delayCheck wants GET /delay/{ms} to answer "{ms}" no sooner than ms milliseconds after
// the request was written, each of delayRounds times on one connection (its dial is not
// timed).
func delayCheck(p string, ms int) check {
	target := "/delay/" + strconv.Itoa(ms)
	return check{
		name:     "GET " + target,
		contract: contract(p, fmt.Sprintf(`GET %s → 200 text/plain "%d", no sooner than %d ms after the request`, target, ms, ms), ""),
		run: func(ctx context.Context, e *env) result {
			raw := request("GET", target, nil, nil)
			req := fmt.Sprintf("%d× %s on one connection", delayRounds, show(raw))
			exp := fmt.Sprintf("200 with body %q after at least %d ms, each time", strconv.Itoa(ms), ms)
			c, err := dial(ctx, e)
			if err != nil {
				return failed(req, exp, err.Error())
			}
			defer c.close()
			quickest := time.Duration(1<<63 - 1)
			var got string
			for i := range delayRounds {
				start := time.Now()
				if err := c.write(raw); err != nil {
					return failed(req, exp, fmt.Sprintf("request %d: %v", i+1, err))
				}
				r, err := c.response("GET")
				took := time.Since(start)
				if err != nil {
					return failed(req, exp, fmt.Sprintf("request %d: %v", i+1, err))
				}
				got = fmt.Sprintf("%s after %v", describe(r), took.Round(time.Millisecond))
				if r.Status != 200 || string(r.Body) != strconv.Itoa(ms) {
					return failed(req, exp, fmt.Sprintf("request %d: %s", i+1, got))
				}
				quickest = min(quickest, took)
			}
			if quickest < time.Duration(ms)*time.Millisecond {
				return failed(req, exp, fmt.Sprintf("the quickest answer after %v", quickest.Round(100*time.Microsecond)))
			}
			return passed(req, exp, got)
		},
	}
}

// concurrentRounds is how many times concurrentDelayCheck sends its requests when they
// came back too late: the quickest round counts, as delayCheck's quickest answer does. A
// server that waits for them one at a time takes their whole sum every round, so the rounds
// never pass it; a loaded machine (a CI run's other packages) that delays one round's dials
// and reads by a few hundred milliseconds does not make a concurrent server look serial.
const concurrentRounds = 3

// concurrentDelayCheck sends concurrentDelays GET /delay/200 at once, each on its own
// connection, and wants every one answered "200" and all within half their summed delay, in
// the quickest of up to concurrentRounds rounds.
func concurrentDelayCheck(ctx context.Context, e *env) result {
	const ms = 200
	raw := request("GET", "/delay/200", nil, nil)
	req := fmt.Sprintf("%d× %s at once, each on its own connection", concurrentDelays, show(raw))
	limit := time.Duration(concurrentDelays*ms/2) * time.Millisecond
	exp := fmt.Sprintf(`every one 200 with body "200", all within %v (serialized, they would take %v)`, limit, time.Duration(concurrentDelays*ms)*time.Millisecond)
	quickest := time.Duration(1<<63 - 1)
	for round := range concurrentRounds {
		wall, slowest, miss := concurrentDelayRound(ctx, e, raw)
		if miss != "" {
			return failed(req, exp, miss)
		}
		got := fmt.Sprintf(`all %d answered "200"; the last after %v`, concurrentDelays, slowest.Round(time.Millisecond))
		if wall <= limit {
			if round > 0 {
				got += fmt.Sprintf(" (round %d of %d; the earlier took longer)", round+1, concurrentRounds)
			}
			return passed(req, exp, got)
		}
		quickest = min(quickest, wall)
		if ctx.Err() != nil {
			break
		}
	}
	return failed(req, exp, fmt.Sprintf(`every one answered "200", but the quickest of %d rounds took %v: the server does not wait for them concurrently`,
		concurrentRounds, quickest.Round(time.Millisecond)))
}

// concurrentDelayRound sends concurrentDelays requests raw at once, each on its own
// connection. It returns the time until all were answered and the slowest answer's time,
// or what was wrong with an answer (miss).
func concurrentDelayRound(ctx context.Context, e *env, raw []byte) (wall, slowest time.Duration, miss string) {
	type answer struct {
		r    *response
		err  error
		took time.Duration
	}
	answers := make([]answer, concurrentDelays)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			r, err := exchange(ctx, e, "GET", raw)
			answers[i] = answer{r, err, time.Since(start)}
		})
	}
	wg.Wait()
	wall = time.Since(start)
	for i, a := range answers {
		if a.err != nil {
			return 0, 0, fmt.Sprintf("request %d: %v", i+1, a.err)
		}
		if a.r.Status != 200 || string(a.r.Body) != "200" {
			return 0, 0, fmt.Sprintf("request %d: %s", i+1, describe(a.r))
		}
		slowest = max(slowest, a.took)
	}
	return wall, slowest, ""
}
