package main

import (
	"strings"
	"testing"
	"time"
)

// TestServeReplicas: two serve processes share one Redis. The first takes every loop's
// lease; a request sent to the second is acked once (whichever replica accepted a delivery,
// the lease holder's intake handles it). The leader is then killed with SIGKILL: within its
// lease ttl the second replica takes its loops, and a cancel sent to it ends the request
// with exactly one final reply.
func TestServeReplicas(t *testing.T) {
	l := newLoop(t, []string{"nethttp"}, nil)
	bin := arenabotBinary(t)
	taken := func(holder string) string {
		return `"msg":"lease taken: this replica runs the loop","component":"lease","lease":"bot","holder":"` + holder + `"`
	}
	a := l.startServeProcess(bin, map[string]string{"ARENA_REPLICA": "a"}, "--leader-ttl", "1s")
	l.waitFor("replica a to take the bot's lease", 30*time.Second, func() bool { return strings.Contains(l.logs.String(), taken("a")) })
	l.startServeProcess(bin, map[string]string{"ARENA_REPLICA": "b"}, "--leader-ttl", "1s") // l.botURL is b's now

	l.comment("carol", "/benchmark -f nethttp -t baseline")
	status := l.waitComment("arenabot:status", 30*time.Second)
	if !strings.Contains(status.Body, "awaiting approval") {
		t.Fatalf("status = %s", status.Body)
	}
	time.Sleep(time.Second) // a second ack would come now
	if n := strings.Count(l.dumpComments(), "arenabot:status"); n != 1 {
		t.Fatalf("%d status comments, want 1:\n%s", n, l.dumpComments())
	}
	if strings.Contains(l.logs.String(), taken("b")) {
		t.Fatalf("b took the bot's lease while a held it:\n%s", l.logs.String())
	}

	a.kill(t)
	killed := time.Now()
	l.comment("carol", "/benchmark-cancel")
	final := l.waitFinal(30 * time.Second)
	t.Logf("b ended the request %s after a was killed", time.Since(killed).Round(time.Millisecond))
	if !strings.Contains(l.logs.String(), taken("b")) {
		t.Errorf("b never logged taking the bot's lease")
	}
	if !strings.Contains(strings.ToLower(final.Body), "cancel") {
		t.Errorf("the final reply does not say the request was cancelled:\n%s", final.Body)
	}
	time.Sleep(2 * time.Second) // a second reply would come now
	if n := len(l.results()); n != 1 {
		t.Fatalf("%d final replies, want 1:\n%s", n, l.dumpComments())
	}
	if st := l.waitComment("arenabot:status", time.Second); !strings.Contains(strings.ToLower(st.Body), "cancelled") {
		t.Errorf("status = %s", st.Body)
	}
}
