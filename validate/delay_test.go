package validate

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arenabot/arenabot/validate/protocol"
)

// delayServer answers GET /delay/200 after 200 ms. Its first serialFirst requests wait one
// at a time (a round slowed as a loaded machine slows it), the rest concurrently.
func delayServer(t *testing.T, serialFirst int64) *env {
	t.Helper()
	var n atomic.Int64
	var mu sync.Mutex
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= serialFirst {
			mu.Lock()
			defer mu.Unlock()
		}
		time.Sleep(200 * time.Millisecond)
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("200"))
	}))
	t.Cleanup(s.Close)
	return &env{proto: protocol.H1, addr: s.Listener.Addr().String(), timeout: 5 * time.Second, data: newData(t.TempDir())}
}

// TestConcurrentDelayLateRound: a round that came back serialized (as under .ci/flaky's
// load, 613 ms against the 600 ms limit) is tried again, and the next, concurrent round
// passes the check; a server that serializes every round fails it, with the quickest round.
func TestConcurrentDelayLateRound(t *testing.T) {
	t.Run("first round late", func(t *testing.T) {
		r := concurrentDelayCheck(t.Context(), delayServer(t, concurrentDelays))
		if r.status != Pass {
			t.Fatalf("a concurrent server whose first round was late: %s: %s", r.status, r.got)
		}
		if !strings.Contains(r.got, "round 2 of 3") && !strings.Contains(r.got, "round 3 of 3") {
			t.Errorf("passed without saying it took another round: %s", r.got)
		}
	})
	t.Run("always serial", func(t *testing.T) {
		r := concurrentDelayCheck(t.Context(), delayServer(t, 1<<62))
		if r.status != Fail {
			t.Fatalf("a server that waits one at a time every round: %s: %s", r.status, r.got)
		}
		if !strings.Contains(r.got, "quickest of 3 rounds") || !strings.Contains(r.got, "does not wait for them concurrently") {
			t.Errorf("the failure does not name the rounds and the cause: %s", r.got)
		}
	})
}
