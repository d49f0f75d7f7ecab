package githubtest

import (
	"net"
	"net/http"
	"strings"
	"time"
)

// Faults of the connection rather than of the answer: a slow answer and a connection that
// is reset. They are matched like FailNext's, before any answer fault.

// transportFault is one SlowNext or ResetNext.
type transportFault struct {
	method, pattern string
	n               int
	delay           time.Duration // SlowNext
	reset           bool          // ResetNext
	carriedOut      bool          // ResetNext: the call is carried out before the reset
}

// SlowNext makes the next n calls matching method and pathPattern (as FailNext) wait delay
// before they are handled. Other calls are not held up meanwhile.
func (s *Server) SlowNext(method, pathPattern string, n int, delay time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.transport = append(s.transport, &transportFault{method: method, pattern: pathPattern, n: n, delay: delay})
}

// ResetNext makes the next n calls matching method and pathPattern (as FailNext) end with
// the connection reset instead of an answer. With carriedOut the call is carried out (and
// recorded with the status it would have had) and only its answer is lost, as when a
// connection breaks after GitHub acted on a write; without, it is not carried out and is
// recorded with status 0.
func (s *Server) ResetNext(method, pathPattern string, n int, carriedOut bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.transport = append(s.transport, &transportFault{method: method, pattern: pathPattern, n: n, reset: true, carriedOut: carriedOut})
}

// SecondaryLimitNext makes the next matching call hit a secondary rate limit answered with
// status (403 or 429) and a Retry-After header, as RateLimitNext does with 403.
func (s *Server) SecondaryLimitNext(method, pathPattern string, status int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{method: method, pattern: pathPattern, n: 1, status: status, retryAfter: max(retryAfter, time.Second)})
}

// takeTransportFault removes one use of the first connection fault matching the call and
// returns it, or nil.
func (s *Server) takeTransportFault(method, p string) *transportFault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.transport {
		if !matches(f.method, f.pattern, method, p) {
			continue
		}
		f.n--
		if f.n <= 0 {
			s.transport = append(s.transport[:i:i], s.transport[i+1:]...)
		}
		return f
	}
	return nil
}

// resetConn closes the request's connection abruptly (RST, not FIN), so the client sees
// "connection reset by peer" or an unexpected EOF.
func resetConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

// apiPath is the request's path without the optional /api/v3 prefix.
func apiPath(req *http.Request) string {
	p := req.URL.Path
	if rest, ok := strings.CutPrefix(p, "/api/v3"); ok && (rest == "" || rest[0] == '/') {
		p = rest
	}
	return p
}

// recordReset records a call that was reset before it was carried out.
func (s *Server) recordReset(req *http.Request, p string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requestSeq++
	s.calls = append(s.calls, Call{
		Method: req.Method, Path: p, Query: cloneValues(req.URL.Query()), Body: body,
		Header: req.Header.Clone(), Status: 0, Time: s.now(),
	})
}
