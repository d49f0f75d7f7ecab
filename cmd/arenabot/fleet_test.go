package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/result"
)

// TestWorkProcessesShareAPool: three `arenabot work` processes on one pool (their measurement
// a stand-in of 3 s a row, runner.WorkerConfig.StandIn, since one machine has one set of ports
// and CPUs) run three jobs of three pull requests at once. One of them is killed with SIGKILL
// while all three run: its job's lease lapses, the job goes back to the front of the line
// and another process runs it to its end; every job ends done, the lost one on its second
// attempt, and nothing is left running. Then a job of six rows is split over the two runners
// left (each named by --host-name): it ends done with every row, each naming the host that
// measured it, never the runner that was killed. (Real runners sharing a pool, one of them
// killed mid-share, are TestChaos's Redis scenario.)
func TestWorkProcessesShareAPool(t *testing.T) {
	l := newLoop(t, []string{"nethttp"}, nil)
	l.envOver = map[string]string{standInEnv: "3s"}
	const jobs = 5
	reaper, stopReaper := context.WithCancel(t.Context())
	defer stopReaper()
	go l.q.RunReaper(reaper, 200*time.Millisecond) // serve's reaper, which this test has no serve for

	var procs []*exec.Cmd
	for i := range 3 {
		procs = append(procs, l.startWorkProcess("--lite", "--heartbeat", "200ms", "--lease-ttl", "1s", "--host-name", fmt.Sprintf("runner-%d", i+1)))
	}
	// The jobs are queued once the three runners wait for them: a runner that started first
	// would run them all.
	l.waitFor("three runners to wait for jobs", time.Minute, func() bool {
		return strings.Count(l.logs.String(), `"msg":"waiting for jobs"`) >= 3
	})
	var ids []string
	for pr := 1; pr <= jobs; pr++ {
		git(t, l.remote, "update-ref", fmt.Sprintf("refs/pull/%d/head", pr), l.head)
		j, _, err := l.q.Enqueue(t.Context(), queue.Job{
			Repo: loopRepo, PR: pr, Requester: "alice", Approver: "maintainer", Kind: queue.Benchmark,
			Frameworks: []string{"nethttp"}, Tests: []string{"baseline"}, SHA: l.head,
			Rows: []profile.Row{{Entry: "nethttp", Test: "baseline", Conns: 512}},
		})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	running := func() int {
		lines, err := l.q.Status(t.Context())
		if err != nil || len(lines) == 0 {
			return 0
		}
		return len(lines[0].Running())
	}
	l.waitFor("three jobs to run at once", time.Minute, func() bool { return running() == 3 })
	if err := procs[0].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()

	l.waitFor("every job to end", 2*time.Minute, func() bool {
		for _, id := range ids {
			if j, err := l.q.Get(t.Context(), id); err != nil || !j.State.Terminal() {
				return false
			}
		}
		return true
	})
	retried := 0
	for _, id := range ids {
		j, err := l.q.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		var rep result.Report
		if err := json.Unmarshal(j.Result, &rep); err != nil || len(rep.Rows) != 1 {
			t.Fatalf("job %s (PR %d): %d rows (%v), want 1", id, j.PR, len(rep.Rows), err)
		}
		switch row := rep.Rows[0]; {
		case j.State != queue.Done:
			t.Errorf("job %s (PR %d) ended %s (%s), want done", id, j.PR, j.State, j.Reason)
		case !strings.Contains(row.Err, "not measured: a stand-in"):
			t.Errorf("job %s (PR %d) on %s: %q, want its row stood in for", id, j.PR, rep.Host, row.Err)
		}
		if j.Attempt == 2 {
			retried++
			t.Logf("job %s (PR %d) was lost with the killed runner and done by another %s after the kill", id, j.PR, j.Finished.Sub(killed).Round(time.Millisecond))
		}
	}
	if retried != 1 {
		t.Errorf("%d jobs ran a second time, want the one the killed runner held", retried)
	}
	if n := running(); n != 0 {
		t.Errorf("%d jobs still running", n)
	}

	var rows []profile.Row
	for c := 1; c <= 6; c++ {
		rows = append(rows, profile.Row{Entry: "nethttp", Test: "baseline", Conns: c})
	}
	big, _, err := l.q.Enqueue(t.Context(), queue.Job{
		Repo: loopRepo, PR: 1, Requester: "alice", Approver: "maintainer", Kind: queue.Benchmark,
		Frameworks: []string{"nethttp"}, Tests: []string{"baseline"}, SHA: l.head, Rows: rows,
	})
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	l.waitFor("the six-row job to end", 2*time.Minute, func() bool {
		j, err := l.q.Get(t.Context(), big.ID)
		return err == nil && j.State.Terminal()
	})
	j, err := l.q.Get(t.Context(), big.ID)
	if err != nil {
		t.Fatal(err)
	}
	var rep result.Report
	if err := json.Unmarshal(j.Result, &rep); err != nil || j.State != queue.Done || len(rep.Rows) != len(rows) {
		t.Fatalf("the six-row job ended %s (%s) with %d rows (%v), want done with 6", j.State, j.Reason, len(rep.Rows), err)
	}
	byHost := map[string]int{}
	for _, r := range rep.Rows {
		byHost[r.Host]++
	}
	t.Logf("the six-row job took %v on the runners left: rows by host %v", time.Since(started).Round(time.Millisecond), byHost)
	if len(byHost) != 2 || byHost["runner-1"] > 0 || byHost[""] > 0 {
		t.Errorf("rows by host %v, want them spread over the two stand-ins left (runner-2, runner-3), every row named", byHost)
	}
}
