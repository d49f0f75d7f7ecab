package ghapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
)

// gate serialises and spaces the writes of one installation.
type gate struct {
	sem  chan struct{} // capacity 1: held while a write (with its retries) is under way
	last time.Time     // when the previous write's answer arrived
}

// noRetryUnknownKey marks a request whose repetition could duplicate content: a 5xx or a
// network error is returned to the caller instead of being retried.
type noRetryUnknownKey struct{}

func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// Backoff bounds for 5xx and network errors.
const (
	backoffBase = 500 * time.Millisecond
	backoffMax  = 30 * time.Second
	// secondaryDefault is GitHub's advice for a secondary rate limit without Retry-After.
	secondaryDefault = time.Minute
)

// transport paces writes and retries rate-limited, failed and 5xx requests. It sits
// between go-github and the authenticating transport, so go-github only sees final answers.
type transport struct {
	c    *Client
	next http.RoundTripper
	gate *gate
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	cfg := &t.c.cfg
	write := isWrite(req.Method)
	if write {
		select {
		case t.gate.sem <- struct{}{}:
		case <-ctx.Done():
			closeBody(req)
			return nil, ctx.Err()
		}
		defer func() { <-t.gate.sem }()
	}
	noRetryUnknown, _ := ctx.Value(noRetryUnknownKey{}).(bool)
	for attempt := 0; ; attempt++ {
		r := req
		if attempt > 0 {
			r = req.Clone(ctx)
			if req.Body != nil && req.Body != http.NoBody {
				body, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				r.Body = body
			}
		}
		if write && cfg.WriteSpacing > 0 && !t.gate.last.IsZero() {
			if wait := t.gate.last.Add(cfg.WriteSpacing).Sub(t.c.now()); wait > 0 {
				if err := cfg.Sleep(ctx, wait); err != nil {
					closeBody(r)
					return nil, err
				}
			}
		}
		resp, err := t.next.RoundTrip(r)
		if write {
			t.gate.last = t.c.now()
		}
		if attempt >= cfg.MaxRetries || (req.Body != nil && req.Body != http.NoBody && req.GetBody == nil) {
			return resp, err
		}
		wait, retry := t.classify(ctx, resp, err, attempt, noRetryUnknown)
		if !retry {
			return resp, err
		}
		if d, ok := ctx.Deadline(); ok && t.c.now().Add(wait).After(d) {
			// Waiting would outlive the caller: hand back the answer as it is.
			return resp, err
		}
		st := 0
		if resp != nil {
			st = resp.StatusCode
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
		}
		t.c.log.Warn("github call retried", "method", req.Method, "path", req.URL.Path,
			"status", st, "err", err, "wait", wait, "attempt", attempt+1)
		if err := cfg.Sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

func closeBody(r *http.Request) {
	if r.Body != nil {
		r.Body.Close()
	}
}

// classify says whether and after how long an answer is retried.
func (t *transport) classify(ctx context.Context, resp *http.Response, err error, attempt int, noRetryUnknown bool) (time.Duration, bool) {
	if err != nil {
		if ctx.Err() != nil || noRetryUnknown {
			return 0, false
		}
		if he, ok := errors.AsType[*ghinstallation.HTTPError](err); ok && he.Response != nil && he.Response.StatusCode < 500 {
			return 0, false // the installation token was refused: retrying will not help
		}
		return backoff(attempt), true
	}
	switch code := resp.StatusCode; {
	case code == http.StatusForbidden || code == http.StatusTooManyRequests:
		// Rate-limited requests were not carried out, so even a comment create is safe to repeat.
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			if secs, err := strconv.Atoi(strings.TrimSpace(ra)); err == nil && secs >= 0 {
				return max(time.Duration(secs)*time.Second, time.Second), true
			}
			if at, err := http.ParseTime(ra); err == nil {
				return max(at.Sub(t.c.now()), time.Second), true
			}
		}
		if resp.Header.Get("X-RateLimit-Remaining") == "0" {
			if reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
				return max(time.Unix(reset, 0).Sub(t.c.now())+time.Second, time.Second), true
			}
			return secondaryDefault, true
		}
		if code == http.StatusTooManyRequests || secondaryBody(resp) {
			return max(secondaryDefault, backoff(attempt)), true
		}
		return 0, false
	case code >= 500:
		if noRetryUnknown {
			return 0, false
		}
		return backoff(attempt), true
	}
	return 0, false
}

// secondaryBody peeks at a 403's body for GitHub's secondary rate limit message and puts the
// body back.
func secondaryBody(resp *http.Response) bool {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	s := strings.ToLower(string(b))
	return strings.Contains(s, "secondary rate limit") || strings.Contains(s, "abuse")
}

// backoff is the exponential wait before retry attempt+1, with jitter: a uniformly random
// duration in [d/2, d) where d doubles from backoffBase up to backoffMax.
func backoff(attempt int) time.Duration {
	d := backoffBase << min(attempt, 16)
	d = min(d, backoffMax)
	return d/2 + rand.N(d/2)
}
