package main

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arenabot/arenabot/runner"
	"github.com/arenabot/arenabot/runner/build"
)

// kill ends a serve process with SIGKILL: nothing it had not committed survives.
func (p *serveProc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-p.done
	p.done <- err
}

// TestServeSIGKILLLosesNothing kills `arenabot serve` (embedded store) with SIGKILL at the
// three places a request can be caught: between the ack and the approval, between the
// approval and the claim, and while `serve --runner` measures it. Each time the next
// process on the same state directory carries on, and the request ends with exactly one
// final reply, with results.
func TestServeSIGKILLLosesNothing(t *testing.T) {
	l := newLoop(t, []string{"nethttp"}, nil)
	l.redisURL = ""
	bin := arenabotBinary(t)
	env := map[string]string{"ARENA_REDIS_URL": "", "ARENA_STATE_DIR": t.TempDir()}

	// 1. Acked, awaiting approval, then killed.
	p := l.startServeProcess(bin, env)
	job := fmt.Sprintf("r%d", l.comment("carol", "/benchmark -f nethttp -t baseline")) // its containers carry its ID
	status := l.waitComment("arenabot:status", 30*time.Second)
	if !strings.Contains(status.Body, "awaiting approval") {
		t.Fatalf("status = %s", status.Body)
	}
	p.kill(t)

	// 2. Approved by a 👍 the next process reads; killed before any runner claims it.
	p = l.startServeProcess(bin, env)
	l.approve()
	l.waitFor("the status comment to say queued", time.Minute, func() bool {
		return strings.Contains(l.waitComment("arenabot:status", time.Second).Body, "Benchmark queued")
	})
	p.kill(t)

	// 3. Claimed and measured by serve --runner, killed in the middle of a row.
	args := append([]string{"--runner"}, l.workArgs()...)
	args = append(args, "--lite", "--duration", "10s", "--lease-ttl", "2s", "--reap-every", "300ms")
	p = l.startServeProcess(bin, env, args...)
	l.waitFor("the job's server container to run", 5*time.Minute, func() bool {
		return len(dockerPS(t, "label="+build.LabelManaged+"=true", "label="+build.LabelEntry+"=nethttp", "label="+runner.LabelJob+"="+job, "status=running")) > 0
	})
	time.Sleep(2 * time.Second)
	p.kill(t)
	if n := len(l.results()); n != 0 {
		t.Fatalf("%d final replies before the job ran to its end:\n%s", n, l.dumpComments())
	}

	// 4. The next serve --runner cleans up what the killed one left, retries the job once
	// and replies once.
	l.startServeProcess(bin, env, append(args[:len(args):len(args)], "--duration", "1s")...)
	final := l.waitFinal(5 * time.Minute)
	time.Sleep(2 * time.Second) // a second reply would come now
	if rs := l.results(); len(rs) != 1 || !strings.Contains(final.Body, "Benchmark Results") {
		t.Fatalf("final replies = %d, want one with results:\n%s", len(rs), l.dumpComments())
	}
	st := l.waitComment("arenabot:status", time.Second)
	if !strings.Contains(st.Body, "Benchmark done") {
		t.Errorf("status = %s", st.Body)
	}
	rows := tableRows(final.Body)
	if len(rows) == 0 {
		t.Errorf("the reply has no rows:\n%s", final.Body)
	}
	for k, cells := range rows { // lite: one connection count
		if strings.HasPrefix(cells[2], "❌") {
			t.Errorf("%s: %v, want measured", k, cells)
		}
	}
}
