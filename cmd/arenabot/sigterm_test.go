package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arenabot/arenabot/runner"
	"github.com/arenabot/arenabot/runner/build"
)

// arenabotBinary is the program a child `arenabot` process runs: this test binary, which runs
// main() itself when helperMainEnv holds the arguments (TestMain), so the child has the real
// entry point (its signal handling included) without a second build of the module.
func arenabotBinary(t *testing.T) string {
	t.Helper()
	return os.Args[0]
}

// serveProc is `arenabot serve` running as a child process.
type serveProc struct {
	cmd  *exec.Cmd
	addr chan string // the address it listens on, from its "serving" log line
	done chan error  // its Wait
}

// startServeProcess runs the binary as `serve` with args, the loop's environment (env
// overrides it) and its logs going to l.logs.
func (l *loop) startServeProcess(bin string, env map[string]string, args ...string) *serveProc {
	l.t.Helper()
	vars := l.env()
	for k, v := range env {
		vars[k] = v
	}
	p, addr := startServeChild(l.t, bin, vars, l.logs, args...)
	l.botURL = "http://" + addr
	return p
}

// startServeChild runs the binary as `serve` with args and exactly the variables vars
// (besides this process's environment), its logs going to logs, and returns it once it
// listens, with the address it listens on. The process is killed when tb ends.
func startServeChild(tb testing.TB, bin string, vars map[string]string, logs io.Writer, args ...string) (*serveProc, string) {
	tb.Helper()
	raw, _ := json.Marshal(append([]string{"serve"}, args...))
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperMainEnv+"="+string(raw))
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = logs, pw
	p := &serveProc{cmd: cmd, addr: make(chan string, 1), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			logs.Write(append(line, '\n'))
			var rec struct{ Msg, Listen string }
			if json.Unmarshal(line, &rec) == nil && rec.Msg == "serving" {
				select {
				case p.addr <- rec.Listen:
				default:
				}
			}
		}
		io.Copy(io.Discard, pr)
	}()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		pw.Close()
		p.done <- err
	}()
	tb.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
	})
	select {
	case a := <-p.addr:
		return p, a
	case err := <-p.done:
		p.done <- err
		tb.Fatalf("serve exited before listening: %v", err)
	case <-time.After(2 * time.Minute):
		tb.Fatal("serve did not listen within 2m")
	}
	return nil, ""
}

// dockerPS lists the containers matching the filters (docker ps -a --filter ...), as
// "id job-label state" lines.
func dockerPS(t *testing.T, filters ...string) []string {
	t.Helper()
	args := []string{"ps", "-a", "--format", `{{.ID}} {{.Label "` + runner.LabelJob + `"}} {{.State}}`}
	for _, f := range filters {
		args = append(args, "--filter", f)
	}
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker ps: %v\n%s", err, out)
	}
	var lines []string
	for l := range strings.Lines(strings.TrimSpace(string(out))) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// ofJob keeps the dockerPS lines of job's containers and of containers without a job:
// another test's jobs may run on the same engine at the same time (.ci/flaky found a runner
// test's nethttp server, and another loop's, taken for a leftover of this one).
func ofJob(lines []string, job string) []string {
	var kept []string
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 3 || f[1] == job {
			kept = append(kept, l)
		}
	}
	return kept
}

// TestServeRunnerSIGTERM is SIGTERM to the single-machine service (`arenabot serve
// --runner`, embedded store) while its runner measures: the process stops the job, removes
// every container of it and exits 0 within the bound. The job was left for retry: the
// service started again on the same state directory measures it and replies once.
func TestServeRunnerSIGTERM(t *testing.T) {
	l := newLoop(t, []string{"nethttp"}, nil)
	l.redisURL = "" // the embedded store
	bin := arenabotBinary(t)
	state := t.TempDir()
	env := map[string]string{"ARENA_REDIS_URL": "", "ARENA_STATE_DIR": state}
	// One 10-second run per row, so SIGTERM comes in the middle of one; the lease is short
	// so the restarted service retries the job soon.
	args := append([]string{"--runner"}, l.workArgs()...)
	args = append(args, "--lite", "--duration", "10s", "--lease-ttl", "2s", "--reap-every", "300ms")
	p := l.startServeProcess(bin, env, args...)
	// The job is the request of this comment: its containers carry its ID, so other tests'
	// jobs on the same engine (.ci/flaky: another loop's, found by label alone) are not
	// taken for this one.
	job := fmt.Sprintf("r%d", l.comment("maintainer", "/benchmark -f nethttp -t baseline"))

	// The measurement runs: the job's server container and its load tool's container (the
	// validation's server runs alone before it, and the load-generator image may be built
	// first), both labelled by the runner.
	l.waitFor("the job's server and load tool to run", 5*time.Minute, func() bool {
		servers := dockerPS(t, "label="+build.LabelManaged+"=true", "label="+build.LabelEntry+"=nethttp", "label="+runner.LabelJob+"="+job, "status=running")
		tools := dockerPS(t, "label="+build.LabelManaged+"=true", "label="+build.LabelEntry+"=loadgen", "label="+runner.LabelJob+"="+job, "status=running")
		return len(servers) > 0 && len(tools) > 0
	})
	time.Sleep(time.Second) // into the 10-second run
	running := dockerPS(t, "label="+runner.LabelJob+"="+job)
	t.Logf("job %s: containers before SIGTERM: %q", job, running)

	sent := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	const bound = 90 * time.Second // the shutdown's own bound (1m) and the HTTP server's (10s)
	select {
	case err := <-p.done:
		took := time.Since(sent)
		t.Logf("serve --runner exited %v after SIGTERM (%v)", took.Round(time.Millisecond), err)
		if err != nil {
			t.Errorf("serve --runner exited with %v, want 0", err)
		}
		p.done <- err
	case <-time.After(bound):
		t.Fatalf("serve --runner still running %v after SIGTERM", bound)
	}
	if left := dockerPS(t, "label="+runner.LabelJob+"="+job); len(left) > 0 {
		t.Errorf("containers of job %s left after serve exited: %q", job, left)
	}
	if left := ofJob(dockerPS(t, "label="+build.LabelManaged+"=true", "label="+build.LabelEntry+"=nethttp"), job); len(left) > 0 {
		t.Errorf("nethttp containers of the runner left after serve exited: %q", left)
	}
	logs := l.logs.String()
	for _, want := range []string{`"msg":"shutting down"`, "job stopped, not finished", `"msg":"stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("the service's log lacks %s", want)
		}
	}
	if n := len(l.results()); n != 0 {
		t.Fatalf("%d results comments after the shutdown, want none (the job is to be retried)", n)
	}

	// The next start on the same state directory retries the job and replies once.
	l.startServeProcess(bin, env, append(args[:len(args):len(args)], "--duration", "1s")...)
	final := l.waitComment("arenabot:results", 5*time.Minute)
	t.Logf("results comment after the restart:\n%s", final.Body)
	time.Sleep(time.Second)
	if n := len(l.results()); n != 1 {
		t.Errorf("%d results comments, want 1:\n%s", n, l.dumpComments())
	}
	for _, c := range []string{"512", "4096"} {
		if cells := tableRows(final.Body)["nethttp/baseline/"+c]; cells != nil && strings.HasPrefix(cells[2], "❌") {
			t.Errorf("nethttp baseline %s: %v, want measured", c, cells)
		}
	}
}
