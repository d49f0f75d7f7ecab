package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/queue"
)

// helperWorkEnv makes the test binary run `arenabot work` with the JSON-encoded arguments
// instead of the tests, so a test can kill a real runner process with SIGKILL.
const helperWorkEnv = "ARENABOT_TEST_WORK_ARGS"

// helperMainEnv makes the test binary run main() with the JSON-encoded arguments instead of
// the tests: a child process that is `arenabot` itself, signals and exit code included.
const helperMainEnv = "ARENABOT_TEST_MAIN_ARGS"

// standInEnv sets, in a helper process, the stand-in for the measurement of its runner
// (standIn), a duration per row.
const standInEnv = "ARENABOT_TEST_STAND_IN"

func TestMain(m *testing.M) {
	if raw := os.Getenv(helperMainEnv); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			panic(err)
		}
		os.Args = append([]string{"arenabot"}, args...)
		main()
		os.Exit(0)
	}
	if d := os.Getenv(standInEnv); d != "" {
		var err error
		if standIn, err = time.ParseDuration(d); err != nil {
			panic(err)
		}
	}
	if raw := os.Getenv(helperWorkEnv); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			panic(err)
		}
		if err := run(context.Background(), append([]string{"work"}, args...), os.Getenv, os.Stdout, os.Stderr); err != nil {
			os.Stderr.WriteString("arenabot work: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startWorkProcess runs `arenabot work` in a child process.
func (l *loop) startWorkProcess(args ...string) *exec.Cmd {
	l.t.Helper()
	raw, _ := json.Marshal(append(l.workArgs(), args...))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperWorkEnv+"="+string(raw))
	for k, v := range l.env() {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = l.logs, l.logs
	if err := cmd.Start(); err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// TestLoopRunnerKilled kills the runner process with SIGKILL in the middle of a job, twice:
// the job is retried once at the front of the line, then fails, and the requester gets
// exactly one final reply saying so.
func TestLoopRunnerKilled(t *testing.T) {
	l := newLoop(t, []string{"nethttp"}, nil)
	l.startServe("--reap-every", "300ms")
	l.comment("maintainer", "/benchmark -f nethttp -t baseline")

	ctx := t.Context()
	for attempt := 1; attempt <= 2; attempt++ {
		p := l.startWorkProcess("--lease-ttl", "2s", "--duration", "3s")
		// Wait until this attempt measures (a progress event after its start), then kill it.
		started := false
		l.waitFor("attempt to measure", lockWait, func() bool {
			ds, err := l.q.Events(ctx, "test", "t", 100, 100*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			seen := false
			for _, d := range ds {
				l.q.Ack(ctx, "test", d.ID)
				if d.Kind == queue.EventStarted {
					var j queue.Job
					json.Unmarshal(d.Data, &j)
					started = started || j.Attempt == attempt
				}
				if d.Kind == queue.EventProgress && started {
					seen = true
				}
			}
			return seen
		})
		if err := p.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		p.Wait()
		t.Logf("attempt %d killed while measuring", attempt)
	}
	final := l.waitFinal(time.Minute)
	t.Logf("final reply:\n%s", final.Body)
	if !strings.Contains(final.Body, "stopped responding") {
		t.Errorf("the final reply does not say the runner stopped responding")
	}
	time.Sleep(time.Second)
	if n := len(l.results()); n != 1 {
		t.Fatalf("%d results comments, want exactly 1:\n%s", n, l.dumpComments())
	}
	jobs, err := l.q.List(ctx, queue.Filter{})
	if err != nil || len(jobs) != 1 || jobs[0].State != queue.Failed || jobs[0].Attempt != 2 {
		t.Errorf("jobs = %+v (%v), want one failed after 2 attempts", jobs, err)
	}
}
