package metrics

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/arenabot/arenabot/queue"
)

// TestCollector: /metrics gives the requests awaiting approval and how long ago each
// pool's runner was seen (+Inf: never).
func TestCollector(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	q := queue.NewMemory(queue.Options{Now: clock})
	for i, who := range []string{"alice", "bob"} {
		if _, _, err := q.Submit(ctx, queue.Job{ID: fmt.Sprint("p", i), Repo: "octo/arena", PR: i + 1, Requester: who, Kind: queue.Benchmark, SHA: "abc", Expires: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := q.Enqueue(ctx, queue.Job{ID: "j1", Repo: "octo/arena", PR: 3, Kind: queue.Benchmark, SHA: "abc"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := q.Enqueue(ctx, queue.Job{ID: "j2", Repo: "octo/arena", PR: 4, Kind: queue.Benchmark, SHA: "abc", Pool: "big"}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Claim(ctx, queue.DefaultPool); err != nil {
		t.Fatal(err)
	}
	// j1 is split: two shares wait; they count apart from the requests.
	for n := 1; n <= 2; n++ {
		if _, _, err := q.Enqueue(ctx, queue.Job{ID: queue.ShareID("j1", n), Parent: "j1", Repo: "octo/arena", PR: 3, Kind: queue.Benchmark, SHA: "abc"}); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(42 * time.Second)
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(q, clock))
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics = %d %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	for _, want := range []string{
		"arena_pending_requests 2\n",
		`arena_runner_last_seen_seconds{pool="default"} 42` + "\n",
		`arena_runner_last_seen_seconds{pool="big"} +Inf` + "\n",
		`arena_queue_jobs{pool="default",state="running"} 1` + "\n",
		`arena_queue_jobs{pool="big",state="queued"} 1` + "\n",
		`arena_queue_jobs{pool="default",state="queued"} 0` + "\n",
		`arena_queue_shares{pool="default",state="queued"} 2` + "\n",
		`arena_queue_shares{pool="default",state="running"} 0` + "\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
}
