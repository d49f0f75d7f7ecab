package runner

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
)

// TestFleetRunsSideBySide: a pool runs one job per runner. Six jobs of six pull requests, each
// of one row that the runners' stand-in (WorkerConfig.StandIn) takes a second to "measure",
// take three runners about a third of what one runner takes, measured side by side in this
// test; each job ends done with its row reported not measured, and the three runners each ran
// some of them (the report names the runner's host).
func TestFleetRunsSideBySide(t *testing.T) {
	privateHostLock(t)
	a := newArenaRemote(t)
	const jobs, standIn = 6, time.Second
	for pr := 1; pr <= jobs; pr++ {
		gitT(t, a.work, "push", "-q", a.URL, fmt.Sprintf("%s:refs/pull/%d/head", a.PR, pr))
	}
	run := func(runners int) (time.Duration, map[string]int) {
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
		return took, byHost
	}
	one, oneHosts := run(1)
	three, threeHosts := run(3)
	t.Logf("%d one-second jobs: one runner %v %v, three runners %v %v (%.2f of one's time)",
		jobs, one.Round(time.Millisecond), oneHosts, three.Round(time.Millisecond), threeHosts, three.Seconds()/one.Seconds())
	if len(oneHosts) != 1 || len(threeHosts) != 3 {
		t.Errorf("jobs by host: %v with one runner, %v with three; want one host, then three", oneHosts, threeHosts)
	}
	if n := slices.Max(mapValues(threeHosts)); n > jobs/3+1 {
		t.Errorf("one of three runners ran %d of %d jobs, want about a third", n, jobs)
	}
	if three.Seconds() > 0.6*one.Seconds() {
		t.Errorf("three runners took %v, one %v: want about a third, at most 0.6", three, one)
	}
}

func mapValues(m map[string]int) []int {
	var out []int
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
