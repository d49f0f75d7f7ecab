package statuspage

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/internal/deptest"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
	"github.com/google/go-cmp/cmp"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{
		Module: []string{"queue", "profile", "text"},
		Banned: map[string]string{
			"github.com/arenabot/arenabot/runner": "the page reads the queue; it never runs anything",
			"github.com/arenabot/arenabot/bot":    "the page reads the queue's records, not the bot's state",
		},
	})
}

func get(t *testing.T, h http.Handler, target, accept string) (*http.Response, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	body, _ := io.ReadAll(w.Result().Body)
	return w.Result(), string(body)
}

// TestFormats: the HTML page holds every part without a script (the fragment is the same
// markup), hostile strings escaped; the text form is queue.WriteOperatorPage's; the JSON
// form counts what the queue holds.
func TestFormats(t *testing.T) {
	q, clk := seed(t)
	h := Handler(Config{Queue: q, LeaseTTL: 30 * time.Second, Now: clk.Now})

	resp, page := get(t, h, "/", "text/html,*/*")
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("GET / Content-Type = %q, want text/html", ct)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'nonce-") {
		t.Errorf("CSP = %q, want scripts by nonce only", csp)
	}
	for _, want := range []string{
		`<meta name="viewport"`,
		`href="https://github.com/octo/arena/pull/42"`,                   // the running job's PR
		`href="https://github.com/octo/arena/pull/42#issuecomment-4201"`, // the failed job's status comment
		`href="https://github.com/octo/arena/pull/52"`,                   // rejected, no status comment: the PR
		`&lt;script&gt;alert(1)&lt;/script&gt;`, `&lt;img src=x onerror=alert(2)&gt;`, `&#34;&gt;&lt;svg onload=alert(3)&gt;`,
		"no live runner", "4m0s of ~10m0s (40%)", "ends in ~6m0s", "the server did not start", "rejected by bob",
		`id="n-awaiting" data-count="2"`,
		`<section id="hosts">`, "Hosts (2 live)", "Pool <code>default</code>: 2 hosts", `data-host="tr-1"`,
		"AMD Ryzen Threadripper PRO 3995WX 64-Cores", "64 cores, 128 threads", "6.17.0-22-generic", "29.3.0",
		"server <code>0-31,64-95</code>, load <code>32-63,96-127</code>", `<code class="host-job">d2</code>`, ">4s ago<",
		`&lt;iframe src=javascript:alert(4)&gt;`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, "g-1") {
		t.Errorf("the page shows gpu's host, whose announcement expired")
	}
	for _, bad := range []string{"<script>alert", "<img src=x", "<svg", "<iframe"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %s unescaped", bad)
		}
	}
	_, frag := get(t, h, "/?format=fragment", "")
	if !strings.Contains(page, strings.TrimSpace(frag)) || strings.Contains(frag, "<html") {
		t.Errorf("the fragment is not the page's live part:\n%s", frag)
	}

	var want strings.Builder
	if err := queue.WriteOperatorPage(t.Context(), &want, q, clk.Now(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ target, accept string }{{"/?format=text", ""}, {"/", "text/plain"}} {
		resp, text := get(t, h, c.target, c.accept)
		if text != want.String() || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("GET %s (Accept %q) = %s\n%s\nwant the operator page:\n%s", c.target, c.accept, resp.Header.Get("Content-Type"), text, want.String())
		}
	}

	_, body := get(t, h, "/?format=json", "")
	var v View
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("?format=json: %v\n%s", err, body)
	}
	wantCounts := Counts{Running: 1, Waiting: 2, Awaiting: 2, Finished: 4, Runners: 2, LiveRunners: 1, Hosts: 2}
	if v.Counts != wantCounts {
		t.Errorf("counts = %+v, want %+v", v.Counts, wantCounts)
	}
	if len(v.Finished) == 0 || v.Finished[0].ID != "x2" || v.Finished[len(v.Finished)-1].ID != "g1" {
		t.Errorf("finished = %+v, want the latest (x2) first and g1 last", v.Finished)
	}

	wantHosts := []Hosts{{Pool: queue.DefaultPool, Routed: true, Hosts: []Host{
		{Name: hostileHost, Seen: t0.Add(-20 * time.Second), Ago: "20s ago"},
		{Name: "tr-1", CPU: "AMD Ryzen Threadripper PRO 3995WX 64-Cores", Cores: "64", Threads: "128", Kernel: "6.17.0-22-generic",
			Docker: "29.3.0", ServerCPUs: "0-31,64-95", LoadgenCPUs: "32-63,96-127", Job: "d2", Seen: t0.Add(-4 * time.Second), Ago: "4s ago"},
	}}}
	if diff := cmp.Diff(wantHosts, v.Hosts); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}

	if resp, _ := get(t, h, "/?format=xml", ""); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("?format=xml = %d, want 400", resp.StatusCode)
	}
}

// TestPoolsAndTheirHosts: with the bot's pools known, the Hosts section lists them in the
// bot's order, one without a live host said so, then a pool only a runner names, marked as
// getting no request; a --lite host says it runs any row.
func TestPoolsAndTheirHosts(t *testing.T) {
	q, clk := seed(t)
	if err := q.Announce(t.Context(), queue.Host{Pool: "laptops", Name: "lap-1", Threads: "8", Lite: true}, time.Minute); err != nil {
		t.Fatal(err)
	}
	h := Handler(Config{Queue: q, Now: clk.Now, Pools: []string{"big", queue.DefaultPool}})
	_, body := get(t, h, "/?format=json", "")
	var v View
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range v.Hosts {
		got = append(got, fmt.Sprintf("%s routed=%v hosts=%d", p.Pool, p.Routed, len(p.Hosts)))
	}
	want := []string{"big routed=true hosts=0", "default routed=true hosts=2", "laptops routed=false hosts=1"}
	if !slices.Equal(got, want) {
		t.Errorf("pools = %q, want %q", got, want)
	}
	_, page := get(t, h, "/", "text/html")
	for _, want := range []string{
		`Pool <code>big</code>: no live host</h3>`,
		`Pool <code>laptops</code>: 1 host <span class="muted">(the bot routes no request here)</span>`,
		`<code>--lite</code>: runs any row, scaled down`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, "Pool <code>default</code>: 2 hosts <span") {
		t.Errorf("a routed pool is marked as getting no request")
	}
}

// TestFinishedCapped: the page lists the last Finished requests only.
func TestFinishedCapped(t *testing.T) {
	clk := &clock{t: t0}
	q := queue.NewMemory(queue.Options{Now: clk.Now})
	for i := range Finished + 5 {
		clk.Set(t0.Add(time.Duration(i) * time.Minute))
		j := queue.Job{ID: "c" + string(rune('a'+i)), Repo: "octo/arena", PR: 1, Requester: "alice", Kind: queue.Benchmark}
		if _, _, err := q.Submit(t.Context(), j); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Reject(t.Context(), j.ID, "bob"); err != nil {
			t.Fatal(err)
		}
	}
	_, body := get(t, Handler(Config{Queue: q, Now: clk.Now}), "/?format=json", "")
	var v View
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Finished) != Finished || v.Finished[0].ID != "c"+string(rune('a'+Finished+4)) {
		t.Errorf("finished: %d, first %+v; want %d, the latest first", len(v.Finished), v.Finished[0], Finished)
	}
}

// seedFleet fills a queue with a fleet at work: in pool default, a sweep of six rows split
// into two shares (the first ended with three rows, the second runs on bench-b), beside a
// pull request's job, on hosts bench-a and bench-b; pool big has one idle host, big-1.
func seedFleet(t *testing.T) (*queue.Memory, queue.Job, queue.Lease) {
	t.Helper()
	q := queue.NewMemory(queue.Options{})
	ctx := t.Context()
	rows := make([]profile.Row, 6)
	for i := range rows {
		rows[i] = profile.Row{Entry: "gin", Test: "baseline", Conns: i + 1}
	}
	sweep, _, err := q.Enqueue(ctx, queue.Job{Repo: "octo/arena", PR: 1, Kind: queue.BenchmarkSweep, Command: "/benchmark-sweep", Rows: rows, Frameworks: []string{"gin"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := q.Enqueue(ctx, queue.Job{Repo: "octo/arena", PR: 2, Kind: queue.Benchmark, Command: "/benchmark -f gin"}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := q.Claim(ctx, queue.DefaultPool); err != nil {
			t.Fatal(err)
		}
	}
	for n := 1; n <= 2; n++ {
		s := queue.Job{ID: queue.ShareID(sweep.ID, n), Parent: sweep.ID, Repo: "octo/arena", PR: 1, Kind: queue.BenchmarkSweep,
			Command: fmt.Sprintf("share %d of 2 of /benchmark-sweep", n), Rows: rows[(n-1)*3 : n*3]}
		if _, _, err := q.Enqueue(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	l1, err := q.ClaimShare(ctx, queue.DefaultPool, sweep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Finish(ctx, l1, queue.Outcome{State: queue.Done, Result: []byte(`{"rows":[{},{},{}]}`)}); err != nil {
		t.Fatal(err)
	}
	l2, err := q.ClaimShare(ctx, queue.DefaultPool, sweep.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []queue.Host{
		{Pool: queue.DefaultPool, Name: "bench-a", CPU: "AMD EPYC 9454P 48-Core", Cores: "48", Threads: "96", ServerCPUs: "0-23", LoadgenCPUs: "24-47", Job: sweep.ID},
		{Pool: queue.DefaultPool, Name: "bench-b", CPU: "AMD EPYC 9454P 48-Core", Cores: "48", Threads: "96", ServerCPUs: "0-23", LoadgenCPUs: "24-47", Job: l2.Job.ID},
		{Pool: "big", Name: "big-1", CPU: "AMD EPYC 9754 128-Core", Cores: "128", Threads: "256", ServerCPUs: "0-63", LoadgenCPUs: "64-127"},
	} {
		if err := q.Announce(ctx, h, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	return q, sweep, l2
}

// TestSplitJobs: a pool running two jobs lists both; a job split into shares gets its own
// section, counting the rows of the shares that ended and naming the host of each running
// share.
func TestSplitJobs(t *testing.T) {
	q, sweep, l2 := seedFleet(t)
	h := Handler(Config{Queue: q, Pools: []string{queue.DefaultPool, "big"}})
	_, body := get(t, h, "/?format=json", "")
	var v View
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Pools) != 1 || len(v.Pools[0].Running) != 2 || len(v.Finished) != 0 {
		t.Fatalf("pools %+v, finished %+v: want default running the sweep and the PR's job, its shares shown under the split only", v.Pools, v.Finished)
	}
	if len(v.Splits) != 1 {
		t.Fatalf("splits %+v, want the sweep", v.Splits)
	}
	sp := v.Splits[0]
	if sp.Job.ID != sweep.ID || sp.Rows != 6 || sp.Done != 3 || sp.Percent != 50 || len(sp.Shares) != 2 ||
		sp.Shares[0].State != "done" || sp.Shares[1].State != "running" || sp.Shares[1].Host != "bench-b" {
		t.Errorf("split %+v, want 3 of 6 rows done, share 1 done, share 2 running on bench-b", sp)
	}
	if len(v.Hosts) != 2 || len(v.Hosts[0].Hosts) != 2 || v.Hosts[1].Pool != "big" || len(v.Hosts[1].Hosts) != 1 {
		t.Errorf("hosts %+v, want default's two and big's one", v.Hosts)
	}
	_, page := get(t, h, "/", "text/html")
	for _, want := range []string{"2 running", "3 of 6 rows", `data-share="` + l2.Job.ID + `"`, "on <code>bench-b</code>", "Pool <code>big</code>: 1 host"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}
