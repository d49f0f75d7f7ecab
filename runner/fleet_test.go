package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
)

// TestFleetRunsSideBySide: a pool runs one job per runner. Six jobs of six pull requests, each
// of one row that the runners' stand-in (WorkerConfig.StandIn) takes a second to "measure",
// run one at a time on one runner and three at a time on three (from the jobs' claim and end
// times); each job ends done with its row reported not measured, and the three runners each
// ran some of them (the report names the runner's host). The two runs' times are logged side
// by side: on a busy machine the checkouts they share the CPUs for make the ratio vary, so
// it is not what the test judges.
func TestFleetRunsSideBySide(t *testing.T) {
	privateHostLock(t)
	a := newArenaRemote(t)
	const jobs, standIn = 6, time.Second
	for pr := 1; pr <= jobs; pr++ {
		gitT(t, a.work, "push", "-q", a.URL, fmt.Sprintf("%s:refs/pull/%d/head", a.PR, pr))
	}
	run := func(runners int) (time.Duration, map[string]int, int) {
		t.Helper()
		mem := queue.NewMemory(queue.Options{})
		var ids []string
		for pr := 1; pr <= jobs; pr++ {
			j := prJob(a, queue.Benchmark, "nethttp")
			j.PR = pr
			j.Rows = []profile.Row{{Entry: "nethttp", Test: "baseline", Conns: 512}}
			stored, _, err := mem.Enqueue(t.Context(), j)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, stored.ID)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		start := time.Now()
		var wg sync.WaitGroup
		for i := range runners {
			w := testWorker(t, mem, &fakeEngine{}, a.clone(t), t.TempDir())
			w.cfg.StandIn = standIn
			w.cfg.Bench.Host = fmt.Sprintf("host-%d", i+1)
			wg.Go(func() { w.Run(ctx) })
		}
		byHost := map[string]int{}
		var spans [][2]time.Time
		for _, id := range ids {
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
				j, err := mem.Get(t.Context(), id)
				if err != nil {
					t.Fatal(err)
				}
				if j.State.Terminal() {
					r := report(t, j)
					if j.State != queue.Done || len(r.Rows) != 1 || r.Rows[0].Err == "" {
						t.Errorf("job %s: %s, %d rows; want done with its one row not measured", id, j.State, len(r.Rows))
					}
					byHost[r.Host]++
					spans = append(spans, [2]time.Time{j.Started, j.Finished})
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d runners: job %s still %s after a minute", runners, id, j.State)
				}
			}
		}
		took := time.Since(start)
		cancel()
		wg.Wait()
		return took, byHost, mostAtOnce(spans)
	}
	one, oneHosts, oneAtOnce := run(1)
	three, threeHosts, threeAtOnce := run(3)
	t.Logf("%d one-second jobs: one runner %v %v, at most %d at once; three runners %v %v, at most %d at once (%.2f of one's time)",
		jobs, one.Round(time.Millisecond), oneHosts, oneAtOnce, three.Round(time.Millisecond), threeHosts, threeAtOnce, three.Seconds()/one.Seconds())
	if len(oneHosts) != 1 || len(threeHosts) != 3 {
		t.Errorf("jobs by host: %v with one runner, %v with three; want one host, then three", oneHosts, threeHosts)
	}
	if n := slices.Max(mapValues(threeHosts)); n > jobs/3+1 {
		t.Errorf("one of three runners ran %d of %d jobs, want about a third", n, jobs)
	}
	if oneAtOnce != 1 || threeAtOnce != 3 {
		t.Errorf("jobs running at once: %d on one runner, %d on three; want 1 and 3", oneAtOnce, threeAtOnce)
	}
}

// mostAtOnce is the largest number of the spans (start, end) that overlap at one instant.
func mostAtOnce(spans [][2]time.Time) int {
	most := 0
	for _, s := range spans {
		n := 0
		for _, o := range spans {
			if !o[0].After(s[0]) && o[1].After(s[0]) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// startFleet starts n runners on mem (named host-1, host-2, …), each measuring with the
// stand-in of standIn a row, and waits until every one announced its host: a job is split
// over the hosts live when it starts. It returns each runner's stop; all stop with the test.
func startFleet(t *testing.T, mem *queue.Memory, a *arenaRemote, n int, standIn time.Duration) []context.CancelFunc {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	var stops []context.CancelFunc
	for i := range n {
		w := testWorker(t, mem, &fakeEngine{}, a.clone(t), t.TempDir())
		w.cfg.StandIn = standIn
		w.cfg.Bench.Host = fmt.Sprintf("host-%d", i+1)
		wctx, stop := context.WithCancel(ctx)
		stops = append(stops, stop)
		wg.Go(func() { w.Run(wctx) })
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if hs, _ := mem.Hosts(t.Context()); len(hs) == n {
			return stops
		}
		if time.Now().After(deadline) {
			t.Fatalf("the %d runners did not announce their hosts", n)
		}
	}
}

// baselineRows are n rows of nethttp's baseline, at 1 to n connections: the stand-in takes
// the same time for each.
func baselineRows(n int) []profile.Row {
	var rows []profile.Row
	for c := 1; c <= n; c++ {
		rows = append(rows, profile.Row{Entry: "nethttp", Test: "baseline", Conns: c})
	}
	return rows
}

// waitEnded waits up to two minutes for a job to end and returns it.
func waitEnded(t *testing.T, q *queue.Memory, id string) queue.Job {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		j, err := q.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State.Terminal() {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s after two minutes", id, j.State)
		}
	}
}

func mapValues(m map[string]int) []int {
	var out []int
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// TestFleetSplitsAJob: a job of 24 rows on a pool of three live hosts is split into three
// shares of 8 rows, one per host, which run at once (from their claim and end times; the
// stand-in measurement takes 250 ms a row, and the job's time on one host and on three is
// logged side by side); its report has every row once, in the job's order, each naming the
// host that measured it. Then a host is
// killed mid-job: its unfinished share goes back to the line and another host measures it,
// and the job still ends done with all 24 rows.
func TestFleetSplitsAJob(t *testing.T) {
	privateHostLock(t)
	a := newArenaRemote(t)
	const rows, standIn = 24, 250 * time.Millisecond
	jobRows := baselineRows(rows)
	type fleet struct {
		mem   *queue.Memory
		stops []context.CancelFunc
	}
	start := func(runners int) *fleet {
		t.Helper()
		f := &fleet{mem: queue.NewMemory(queue.Options{LeaseTTL: time.Second})}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		t.Cleanup(func() { cancel(); <-done })
		go func() { defer close(done); _ = f.mem.RunReaper(ctx, 100*time.Millisecond) }()
		f.stops = startFleet(t, f.mem, a, runners, standIn)
		return f
	}
	measure := func(runners int, kill func(f *fleet)) (time.Duration, queue.Job, *queue.Memory) {
		t.Helper()
		f := start(runners)
		j := prJob(a, queue.BenchmarkTest, "nethttp")
		j.Rows = jobRows
		j.Estimate = rows * standIn
		stored, _, err := f.mem.Enqueue(t.Context(), j)
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		if kill != nil {
			kill(f)
		}
		done := waitEnded(t, f.mem, stored.ID)
		return time.Since(began), done, f.mem
	}
	check := func(name string, j queue.Job, hosts int) map[string]int {
		t.Helper()
		r := report(t, j)
		if j.State != queue.Done || len(r.Rows) != rows {
			t.Fatalf("%s: job %s with %d rows (%s), want done with %d", name, j.State, len(r.Rows), j.Reason, rows)
		}
		byHost := map[string]int{}
		for i, row := range r.Rows {
			if row.Conns != i+1 {
				t.Fatalf("%s: row %d has %d connections; want the job's order", name, i+1, row.Conns)
			}
			if row.Err == "" || !strings.Contains(row.Err, "stand-in") {
				t.Errorf("%s: row %d: %q, want the stand-in's not measured", name, i+1, row.Err)
			}
			byHost[row.Host]++
		}
		if hosts > 1 && (len(byHost) != hosts || byHost[""] > 0) {
			t.Errorf("%s: rows by host %v, want every row named with one of %d hosts", name, byHost, hosts)
		}
		return byHost
	}
	one, j1, _ := measure(1, nil)
	check("one host", j1, 1)
	three, j3, mem3 := measure(3, nil)
	byHost := check("three hosts", j3, 3)
	var spans [][2]time.Time
	for n := 1; ; n++ {
		s, err := mem3.Get(t.Context(), queue.ShareID(j3.ID, n))
		if err != nil {
			break
		}
		spans = append(spans, [2]time.Time{s.Started, s.Finished})
	}
	t.Logf("a %d-row job, %v a row: one host %v, three hosts %v %v, %d shares, at most %d at once (%.2f of one host's time)",
		rows, standIn, one.Round(time.Millisecond), three.Round(time.Millisecond), byHost, len(spans), mostAtOnce(spans), three.Seconds()/one.Seconds())
	if n := mostAtOnce(spans); len(spans) != 3 || n != 3 {
		t.Errorf("%d shares, at most %d running at once; want three, measured side by side", len(spans), n)
	}
	for h, n := range byHost {
		if n > rows/2 {
			t.Errorf("host %s measured %d of %d rows, want about a third", h, n, rows)
		}
	}
	if r := report(t, j3); strings.Count(r.Host, "host-") != 3 {
		t.Errorf("the report's hosts are %q, want the three", r.Host)
	}

	// A host killed mid-job: 1 s in, every share runs; the second runner stops without
	// finishing its share, whose lease lapses; the share runs again on another host.
	_, jk, _ := measure(3, func(f *fleet) {
		time.Sleep(time.Second)
		f.stops[1]()
	})
	killed := check("a host killed", jk, 2)
	if killed["host-2"] > 0 {
		t.Errorf("rows by host %v: the killed host-2 is named on rows of the report", killed)
	}
	t.Logf("with host-2 killed 1 s in: rows by host %v", killed)
}

// TestFleetSweepYields: a sweep on one host yields it to a pull request's job between rows:
// the job queued while the sweep measures starts within about a row (not after the sweep's
// 12 rows), and the sweep then goes on with the rows it had left, ending done with every row
// once.
func TestFleetSweepYields(t *testing.T) {
	privateHostLock(t)
	a := newArenaRemote(t)
	const rows, standIn = 12, 300 * time.Millisecond
	mem := queue.NewMemory(queue.Options{})
	startFleet(t, mem, a, 1, standIn)

	sweep := prJob(a, queue.BenchmarkSweep, "nethttp")
	sweep.Rows = baselineRows(rows)
	sweep.Estimate = rows * standIn
	stored, _, err := mem.Enqueue(t.Context(), sweep)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * standIn) // the sweep measures its first rows
	gitT(t, a.work, "push", "-q", a.URL, a.PR+":refs/pull/8/head")
	pr := prJob(a, queue.Benchmark, "nethttp")
	pr.PR = 8
	pr.Rows = []profile.Row{{Entry: "nethttp", Test: "baseline", Conns: 512}}
	prStored, _, err := mem.Enqueue(t.Context(), pr)
	if err != nil {
		t.Fatal(err)
	}
	pj, sj := waitEnded(t, mem, prStored.ID), waitEnded(t, mem, stored.ID)
	waited := pj.Started.Sub(pj.Queued)
	t.Logf("the PR's job waited %v behind the sweep (a row is %v); the sweep ended %v after it", waited.Round(time.Millisecond), standIn, sj.Finished.Sub(pj.Finished).Round(time.Millisecond))
	if pj.State != queue.Done || waited > 5*standIn {
		t.Errorf("the PR's job ended %s after waiting %v, want done after about one row (%v)", pj.State, waited, standIn)
	}
	if !sj.Finished.After(pj.Finished) {
		t.Errorf("the sweep ended at %v, before the PR's job it should have yielded to (%v)", sj.Finished, pj.Finished)
	}
	r := report(t, sj)
	if sj.State != queue.Done || len(r.Rows) != rows {
		t.Fatalf("the sweep ended %s (%s) with %d rows, want done with %d", sj.State, sj.Reason, len(r.Rows), rows)
	}
	for i, row := range r.Rows {
		if row.Conns != i+1 {
			t.Fatalf("the sweep's row %d has %d connections, want the job's order, each row once", i+1, row.Conns)
		}
	}
	if _, err := mem.Get(t.Context(), queue.ShareID(stored.ID, 2)); err != nil {
		t.Errorf("no second share (the rest after the yield): %v", err)
	}
}

// TestFleetCancelSplitJob: a cancel of a job split over three hosts cancels its shares: the
// running ones stop on their next heartbeat, and the job ends cancelled, once, with the rows
// measured before the cancel, long before its rows would all have run.
func TestFleetCancelSplitJob(t *testing.T) {
	privateHostLock(t)
	a := newArenaRemote(t)
	const rows, standIn = 24, 250 * time.Millisecond
	mem := queue.NewMemory(queue.Options{})
	startFleet(t, mem, a, 3, standIn)
	j := prJob(a, queue.BenchmarkTest, "nethttp")
	j.Rows = baselineRows(rows)
	stored, _, err := mem.Enqueue(t.Context(), j)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := mem.Get(t.Context(), queue.ShareID(stored.ID, 3)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job was not split into three shares")
		}
	}
	time.Sleep(4 * standIn)
	if _, err := mem.Cancel(t.Context(), stored.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	done := waitEnded(t, mem, stored.ID)
	took := time.Since(start)
	r := report(t, done)
	t.Logf("cancelled after %v: ended %s in %v with %d rows", 4*standIn, done.State, took.Round(time.Millisecond), len(r.Rows))
	if done.State != queue.Cancelled || done.CancelledBy != "alice" {
		t.Errorf("the job ended %s (by %q), want cancelled by alice", done.State, done.CancelledBy)
	}
	if took > rows*standIn/3 {
		t.Errorf("the cancelled job took %v, as long as its rows would on three hosts", took)
	}
	for n := 1; n <= 3; n++ {
		if s, err := mem.Get(t.Context(), queue.ShareID(stored.ID, n)); err != nil || s.State != queue.Cancelled {
			t.Errorf("share %d: %s (%v), want cancelled", n, s.State, err)
		}
	}
}
