package queuetest

import (
	"testing"
	"time"

	"github.com/arenabot/arenabot/queue"
	"github.com/google/go-cmp/cmp"
)

// testHosts: Announce records a live host until Options.Now passes its ttl;
// announcing again replaces it and extends it; Hosts lists the live ones
// sorted by pool, then name.
func testHosts(t *testing.T, newQueue NewQueue) {
	clk := NewClock(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC))
	q := newQueue(t, queue.Options{Now: clk.Now})
	ctx := t.Context()
	hosts := func() []queue.Host {
		t.Helper()
		hs, err := q.Hosts(ctx)
		if err != nil {
			t.Fatalf("Hosts: %v", err)
		}
		return hs
	}
	announce := func(h queue.Host, ttl time.Duration) {
		t.Helper()
		if err := q.Announce(ctx, h, ttl); err != nil {
			t.Fatalf("Announce %s/%s: %v", h.Pool, h.Name, err)
		}
	}
	if got := hosts(); len(got) != 0 {
		t.Errorf("Hosts of an empty queue = %+v", got)
	}

	t0 := clk.Now()
	b := queue.Host{Pool: "bench", Name: "tr-b", CPU: "AMD Ryzen 9 7950X 16-Core", Cores: "16", Threads: "32",
		Kernel: "6.8.0-45-generic", Docker: "27.3.1", ServerCPUs: "0-7", LoadgenCPUs: "8-15", Lite: true}
	announce(b, time.Minute)
	want := b
	want.Seen = t0
	if diff := cmp.Diff([]queue.Host{want}, hosts()); diff != "" {
		t.Errorf("after Announce (-want +got):\n%s", diff)
	}

	// Announcing again replaces the record and extends its life.
	clk.Add(50 * time.Second)
	b.Job = "3f9c"
	announce(b, time.Minute)
	want = b
	want.Seen = clk.Now()
	if diff := cmp.Diff([]queue.Host{want}, hosts()); diff != "" {
		t.Errorf("after announcing again (-want +got):\n%s", diff)
	}

	// Two pools, several hosts: sorted by pool, then name. A host of no pool is
	// in the default pool.
	a := queue.Host{Pool: "bench", Name: "tr-a", CPU: "Intel Xeon"}
	g := queue.Host{Pool: "gpu", Name: "g-1"}
	d := queue.Host{Name: "laptop"}
	announce(g, time.Minute)
	announce(a, 20*time.Second)
	announce(d, 0) // the default ttl, a minute
	var order []string
	for _, h := range hosts() {
		order = append(order, h.Pool+"/"+h.Name)
	}
	wantOrder := []string{"bench/tr-a", "bench/tr-b", queue.DefaultPool + "/laptop", "gpu/g-1"}
	if diff := cmp.Diff(wantOrder, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}

	// tr-a's 20s pass: it is gone, the others live on.
	clk.Add(20 * time.Second)
	order = nil
	for _, h := range hosts() {
		order = append(order, h.Pool+"/"+h.Name)
	}
	if diff := cmp.Diff([]string{"bench/tr-b", queue.DefaultPool + "/laptop", "gpu/g-1"}, order); diff != "" {
		t.Errorf("after tr-a's ttl (-want +got):\n%s", diff)
	}
	// A host that announces again after expiring is back.
	announce(a, 20*time.Second)
	clk.Add(time.Hour)
	if got := hosts(); len(got) != 0 {
		t.Errorf("an hour later, Hosts = %+v, want none", got)
	}
	announce(a, time.Minute)
	if got := hosts(); len(got) != 1 || got[0].Name != "tr-a" || !got[0].Seen.Equal(clk.Now()) {
		t.Errorf("after a new Announce, Hosts = %+v, want tr-a seen now", got)
	}
}
