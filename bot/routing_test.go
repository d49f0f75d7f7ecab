package bot

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/queue"
)

// announce registers a live runner host in the bot's queue.
func (e *env) announce(h queue.Host) {
	e.t.Helper()
	if err := e.q.Announce(e.t.Context(), h, time.Hour); err != nil {
		e.t.Fatal(err)
	}
}

// TestRouteByHostCPUs: with ARENA_POOLS default,big, a request whose rows a small host runs
// stays in default; one with a row that needs 68 CPUs goes to big, whose host has 128; with
// no big host live, that row is refused at the ack (its reason in the status comment) and
// the rest is queued; a request of that row alone gets one reply saying why, and no job.
func TestRouteByHostCPUs(t *testing.T) {
	pools := func(c *Config) { c.Pools = []string{"default", "big"} }
	small := queue.Host{Pool: "default", Name: "vm", Threads: "2"}
	big := queue.Host{Pool: "big", Name: "tr", Threads: "128"}

	e := setupWith(t, pools)
	e.announce(small)
	e.announce(big)
	e.comment("bob", "/benchmark -f nethttp -t baseline")
	e.comment("bob", "/benchmark -f gin -t latency-500k-8cpu")
	pool := map[string]string{}
	for _, j := range e.jobs() {
		pool[j.Command] = j.Pool
	}
	if want := map[string]string{"/benchmark -f nethttp -t baseline": "default", "/benchmark -f gin -t latency-500k-8cpu": "big"}; !maps.Equal(pool, want) {
		t.Fatalf("pools by command = %v, want %v", pool, want)
	}

	e = setupWith(t, pools)
	e.announce(small)
	e.comment("bob", "/benchmark -f nethttp -t baseline,latency-500k-8cpu")
	js := e.jobs()
	if len(js) != 1 || js[0].Pool != "default" {
		t.Fatalf("%d jobs, want one in default", len(js))
	}
	for _, r := range js[0].Rows {
		if r.Test != "baseline" {
			t.Errorf("the job carries row %+v, which no live host can run", r)
		}
	}
	if len(js[0].Rows) == 0 {
		t.Errorf("the job has no rows: %+v", js[0].Rows)
	}
	body := e.onlyStatus().Body
	for _, want := range []string{"Not run: `latency-500k-8cpu` needs a runner host with 68 CPUs and no pool has only such hosts (the best has 2)", "run in pool `default`"} {
		if !strings.Contains(body, want) {
			t.Errorf("the ack does not say %q:\n%s", want, body)
		}
	}

	e = setupWith(t, pools)
	e.announce(small)
	id := e.comment("bob", "/benchmark -f nethttp -t latency-500k-8cpu")
	if js := e.records(); len(js) != 0 {
		t.Errorf("%d records, want none for a request no host can run", len(js))
	}
	cs := e.botComments()
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "no live runner host can run this request") || !strings.Contains(cs[0].Body, "68 CPUs") || !strings.Contains(cs[0].Body, replyMarker(id)) {
		t.Errorf("want one reply saying no host can run it, got %+v", cs)
	}

	// No live host at all: the request waits in the first pool, as before hosts were known.
	e = setupWith(t, pools)
	e.comment("bob", "/benchmark -f nethttp -t latency-500k-8cpu")
	if js := e.jobs(); len(js) != 1 {
		t.Errorf("%d jobs, want one", len(js))
	} else if js[0].Pool != "default" || len(js[0].Rows) == 0 {
		t.Errorf("the job went to pool %q with rows %+v, want default with its rows", js[0].Pool, js[0].Rows)
	}
}
