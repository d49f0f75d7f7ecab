package build

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/runner/cgroup"
	"github.com/arenabot/arenabot/runner/runnertest"
)

// sleepers lists the processes and containers, anywhere on the host, that run `sleep n`.
func sleepers(t *testing.T, n int) []string {
	t.Helper()
	var found []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	want := fmt.Sprintf("sleep\x00%d\x00", n)
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.HasSuffix(string(b), want) {
			found = append(found, "process "+filepath.Base(filepath.Dir(p)))
		}
	}
	out, err := exec.Command("docker", "ps", "--all", "--no-trunc", "--format", "{{.ID}} {{.Command}}").Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		if strings.Contains(line, fmt.Sprintf("sleep %d", n)) {
			found = append(found, "container "+strings.TrimSpace(line))
		}
	}
	return found
}

// TestBuildThatNeverEnds: an entry's Dockerfile and a stack service's whose RUN step never
// ends are stopped at the build limit; each fails with a *BuildFailure that names the
// limit and the build, the step's process and container are gone, and asking again gives
// the same failure without building.
func TestBuildThatNeverEnds(t *testing.T) {
	eng, _ := runnertest.Engine(t, "")
	runnertest.StandIns(t, eng, "arenabot/debian:local")
	n := 86400 + os.Getpid()%10000 // this run's own sleep, to find its process
	dockerfile := fmt.Sprintf("FROM arenabot/debian:local\nRUN sleep %d\n", n)
	e := runnertest.EntryDir(t, "sleeper", map[string]string{"Dockerfile": dockerfile, "stack/Dockerfile": dockerfile})
	const limit = 1500 * time.Millisecond
	b := New(eng, Config{Timeout: limit, Labels: map[string]string{labelJob: runnertest.JobLabel(t)}, Log: slog.New(slog.NewTextHandler(t.Output(), nil))})
	t.Cleanup(func() { eng.RemoveImagesLabeled(context.Background(), labelJob, runnertest.JobLabel(t)) })

	for _, c := range []struct {
		name  string
		build func() (string, error)
	}{
		{"sleeper", func() (string, error) { return b.Entry(t.Context(), e) }},
		{"sleeper-stack", func() (string, error) {
			return b.Service(t.Context(), Service{Name: "sleeper-stack", Context: filepath.Join(e.Dir, "stack"), Tag: "arenabot-sleeper-stack:test"})
		}},
	} {
		start := time.Now()
		_, err := c.build()
		took := time.Since(start)
		t.Logf("%s: stopped after %s: %v", c.name, took.Round(time.Millisecond), err)
		bf, ok := errors.AsType[*BuildFailure](err)
		if !ok {
			t.Fatalf("%s: build = %v, want a *BuildFailure", c.name, err)
		}
		want := fmt.Sprintf("the build of %s exceeded its 1.5s limit and was stopped (ARENA_BUILD_TIMEOUT)", c.name)
		if bf.Limit != limit || !strings.Contains(err.Error(), want) || bf.Short() != "build timed out" {
			t.Errorf("%s: error %q (limit %s, cell %q), want it to say %q", c.name, err, bf.Limit, bf.Short(), want)
		}
		if len(bf.Tail()) == 0 || !strings.Contains(strings.Join(bf.Tail(), "\n"), fmt.Sprintf("RUN sleep %d", n)) {
			t.Errorf("%s: log tail %q, want the step that ran", c.name, bf.Tail())
		}
		if took > limit+5*time.Second {
			t.Errorf("%s: the build took %s to stop, want about its limit %s", c.name, took, limit)
		}
		var left []string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if left = sleepers(t, n); len(left) == 0 {
				break
			}
		}
		if len(left) > 0 {
			t.Errorf("%s: the stopped build left %v running", c.name, left)
		}
		start = time.Now()
		if _, again := c.build(); !errors.Is(again, bf) || time.Since(start) > time.Second {
			t.Errorf("%s: asking again = %v after %s, want the same failure at once", c.name, again, time.Since(start))
		}
	}
}

// TestBuildMemoryAndPidsLimits: a RUN step that holds more memory than the build's limit
// is killed and the error says why; one that forks past the pids.max of the builds' cgroup
// parent cannot fork.
func TestBuildMemoryAndPidsLimits(t *testing.T) {
	eng, _ := runnertest.Engine(t, "")
	runnertest.StandIns(t, eng, "arenabot/debian:local")
	info, err := eng.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("arenabot-test-builds-%d", os.Getpid())
	parent, err := cgroup.PidsParent(cgroup.Root, info.CgroupVersion, info.CgroupDriver, name, 20)
	if err != nil {
		t.Skipf("no pids parent on this host: %v", err)
	}
	t.Cleanup(func() {
		// The engine made the parent in every v1 hierarchy; empty now, it can go.
		dirs, _ := filepath.Glob(filepath.Join(cgroup.Root, "*", name))
		for _, d := range append(dirs, filepath.Join(cgroup.Root, name)) {
			os.Remove(d)
		}
	})
	e := runnertest.EntryDir(t, "hungry", map[string]string{
		"Dockerfile":      "FROM arenabot/debian:local\nRUN x=$(head -c 64m /dev/zero | tr '\\0' a); echo ${#x}\n",
		"fork/Dockerfile": "FROM arenabot/debian:local\nRUN for i in $(seq 40); do sleep 5 & done; wait\n",
	})
	b := New(eng, Config{Memory: 16 << 20, CgroupParent: parent, Labels: map[string]string{labelJob: runnertest.JobLabel(t)}, Log: slog.New(slog.NewTextHandler(t.Output(), nil))})
	t.Cleanup(func() { eng.RemoveImagesLabeled(context.Background(), labelJob, runnertest.JobLabel(t)) })

	_, err = b.Entry(t.Context(), e)
	if bf, ok := errors.AsType[*BuildFailure](err); !ok || !strings.Contains(err.Error(), "non-zero code: 137 (killed: a build step may use at most 16 MiB of memory)") {
		t.Errorf("build past its memory limit = %v (%T), want a *BuildFailure that says it was killed at 16 MiB", err, bf)
	}
	_, err = b.Service(t.Context(), Service{Name: "hungry-fork", Context: filepath.Join(e.Dir, "fork"), Tag: "arenabot-hungry-fork:test"})
	bf, ok := errors.AsType[*BuildFailure](err)
	if !ok || !strings.Contains(strings.Join(bf.Tail(), "\n"), "Cannot fork") {
		t.Errorf("build past the pids limit = %v, want a *BuildFailure whose log says it could not fork", err)
	}
}
