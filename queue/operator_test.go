package queue

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable Options.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func operatorPage(t *testing.T, q Queue, now time.Time, ttl time.Duration) string {
	t.Helper()
	var b strings.Builder
	if err := WriteOperatorPage(t.Context(), &b, q, now, ttl); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// lineOf returns the line of page that holds every one of words, failing without one.
func lineOf(t *testing.T, page string, words ...string) string {
	t.Helper()
	for l := range strings.Lines(page) {
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(l, w)
		}
		if ok {
			return strings.TrimSpace(l)
		}
	}
	t.Fatalf("no line holds %q:\n%s", words, page)
	return ""
}

// TestOperatorPage: the page lists the requests awaiting approval with their age and
// expiry, and each pool's runner: live while it claims or beats, "no live runner" once it
// was not seen for twice the lease TTL while jobs wait, idle when nothing waits.
func TestOperatorPage(t *testing.T) {
	ctx := t.Context()
	const ttl = 10 * time.Second
	clock := &fakeClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	q := NewMemory(Options{LeaseTTL: ttl, Now: clock.Now})

	empty := operatorPage(t, q, clock.Now(), ttl)
	for _, want := range []string{"no pools", "awaiting approval: 0 requests", "none seen yet"} {
		if !strings.Contains(empty, want) {
			t.Errorf("empty queue's page lacks %q:\n%s", want, empty)
		}
	}

	// Two requests awaiting approval, the older one first.
	start := clock.Now()
	if _, _, err := q.Submit(ctx, Job{ID: "p-alice", Repo: "octo/arena", PR: 42, Requester: "alice",
		Command: "/benchmark -f gin", Kind: Benchmark, SHA: "abc", Expires: start.Add(72 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	clock.Add(5 * time.Minute)
	if _, _, err := q.Submit(ctx, Job{ID: "p-bob", Repo: "octo/arena", PR: 7, Requester: "bob",
		Command: "/benchmark -f fiber", Kind: Benchmark, SHA: "def", Expires: clock.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}

	// Pool default: a runner claims a job and beats. Pool big: a job waits, no runner ever.
	if _, _, err := q.Enqueue(ctx, Job{ID: "run-1", Repo: "octo/arena", PR: 1, Requester: "carol", Kind: Benchmark, SHA: "1"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := q.Enqueue(ctx, Job{ID: "wait-1", Repo: "octo/arena", PR: 2, Requester: "carol", Kind: Benchmark, SHA: "2", Pool: "big"}); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	l, err := q.Claim(cctx, DefaultPool)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(3 * time.Second)
	if _, err := q.Heartbeat(ctx, l); err != nil {
		t.Fatal(err)
	}
	clock.Add(2 * time.Second)

	page := operatorPage(t, q, clock.Now(), ttl)
	t.Logf("page:\n%s", page)
	if !strings.Contains(page, "awaiting approval: 2 requests") {
		t.Errorf("the page does not count 2 requests awaiting approval")
	}
	alice := lineOf(t, page, "p-alice")
	for _, want := range []string{"octo/arena#42", "alice", "/benchmark -f gin", "5m5s", "in 71h54m55s", "2026-05-04T12:00:00Z"} {
		if !strings.Contains(alice, want) {
			t.Errorf("alice's request %q lacks %q", alice, want)
		}
	}
	bob := lineOf(t, page, "p-bob")
	for _, want := range []string{"octo/arena#7", "bob", " 5s ", "in 59m55s"} {
		if !strings.Contains(bob, want) {
			t.Errorf("bob's request %q lacks %q", bob, want)
		}
	}
	if strings.Index(page, "p-alice") > strings.Index(page, "p-bob") {
		t.Errorf("the older request is not listed first")
	}
	if l := lineOf(t, page, "default", "ago"); !strings.Contains(l, "2s ago") || !strings.HasSuffix(l, "live") {
		t.Errorf("pool default: %q, want seen 2s ago and live", l)
	}
	if l := lineOf(t, page, "big", "never"); !strings.HasSuffix(l, "no live runner") {
		t.Errorf("pool big: %q, want never seen and no live runner", l)
	}

	// The runner of default dies: its job stays in the line past twice the TTL.
	clock.Add(2*ttl - 2*time.Second) // seen exactly 2×TTL ago: still live
	if l := lineOf(t, operatorPage(t, q, clock.Now(), ttl), "default", "ago"); !strings.HasSuffix(l, " live") {
		t.Errorf("pool default at 2×TTL: %q, want live", l)
	}
	clock.Add(time.Second)
	page = operatorPage(t, q, clock.Now(), ttl)
	if l := lineOf(t, page, "default", "ago"); !strings.Contains(l, "21s ago") || !strings.HasSuffix(l, "no live runner") {
		t.Errorf("pool default after 2×TTL: %q, want no live runner", l)
	}

	// Nothing left in default's line: its silent runner is idle, not missing.
	if _, err := q.Finish(ctx, l, Outcome{State: Done}); err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Minute)
	if l := lineOf(t, operatorPage(t, q, clock.Now(), ttl), "default", "ago"); !strings.HasSuffix(l, "idle") {
		t.Errorf("pool default with an empty line: %q, want idle", l)
	}
}

// TestPoolRunners covers the states on their own: a pool known only from its runner, a
// runner that is waiting in Claim right now, and the bound.
func TestPoolRunners(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	const ttl = 30 * time.Second
	lines := []Line{
		{Pool: "a", Places: []Place{{Job: Job{ID: "1", State: Queued}, Position: 1}}},
		{Pool: "b", Places: []Place{{Job: Job{ID: "2", State: Running}, Position: 1}, {Job: Job{ID: "3", State: Queued}, Position: 2}}},
		{Pool: "c"},
	}
	runners := []Runner{
		{Pool: "a", Seen: now.Add(-61 * time.Second)},
		{Pool: "b", Seen: now.Add(-60 * time.Second)},
		{Pool: "d", Seen: now},
	}
	got := poolRunners(lines, runners, now, ttl)
	want := map[string]string{"a": runnerNone, "b": runnerLive, "c": runnerIdle, "d": runnerLive}
	if len(got) != len(want) {
		t.Fatalf("poolRunners = %+v, want pools a, b, c, d", got)
	}
	for i, p := range got {
		if p.Pool != "abcd"[i:i+1] || p.State != want[p.Pool] {
			t.Errorf("pool %d = %+v, want %s %s", i, p, "abcd"[i:i+1], want[p.Pool])
		}
	}
	if got[1].Jobs != 2 || got[0].Jobs != 1 {
		t.Errorf("jobs in line: a %d, b %d; want 1, 2", got[0].Jobs, got[1].Jobs)
	}
}

// TestOperatorPageHosts: the page lists the live hosts by pool, then name, with their
// machine, CPU split and job (idle without one); an expired host is not listed, and a
// name with a line break stays on its row.
func TestOperatorPageHosts(t *testing.T) {
	ctx := t.Context()
	clock := &fakeClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	q := NewMemory(Options{Now: clock.Now})
	if page := operatorPage(t, q, clock.Now(), time.Minute); !strings.Contains(page, "hosts: 0 live\nnone announced") {
		t.Errorf("an empty queue's page does not say no host was announced:\n%s", page)
	}
	for _, h := range []Host{
		{Pool: "gpu", Name: "g-1", CPU: "Intel Xeon", Cores: "8", Threads: "16", Kernel: "6.1", Docker: "26.0", ServerCPUs: "0-3", LoadgenCPUs: "4-7", Job: "3f9c"},
		{Pool: "bench", Name: "tr\nb", CPU: "AMD EPYC", Cores: "64", Threads: "128", Kernel: "6.8", Docker: "27.3"},
		{Pool: "bench", Name: "gone"},
	} {
		ttl := time.Minute
		if h.Name == "gone" {
			ttl = 5 * time.Second
		}
		if err := q.Announce(ctx, h, ttl); err != nil {
			t.Fatal(err)
		}
	}
	clock.Add(12 * time.Second)
	page := operatorPage(t, q, clock.Now(), time.Minute)
	if strings.Contains(page, "gone") {
		t.Errorf("the expired host is listed:\n%s", page)
	}
	hdr := lineOf(t, page, "POOL", "HOST", "CPU")
	trb := lineOf(t, page, "tr b", "AMD EPYC", "64/128", "6.8", "27.3", "idle", "12s ago")
	g1 := lineOf(t, page, "g-1", "Intel Xeon", "8/16", "0-3", "4-7", "3f9c", "12s ago")
	if !strings.Contains(page, "hosts: 2 live\n") || strings.Index(page, hdr) > strings.Index(page, trb) || strings.Index(page, trb) > strings.Index(page, g1) {
		t.Errorf("want the two live hosts under their header, bench before gpu:\n%s", page)
	}
}
