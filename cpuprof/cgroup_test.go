package cpuprof

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cgroup2Mount is where the cgroup2 hierarchy is mounted, "" when it is not.
func cgroup2Mount() string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw"
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if fields := strings.Fields(pre); ok && strings.HasPrefix(post, "cgroup2 ") && len(fields) > 4 {
			return fields[4]
		}
	}
	return ""
}

// TestRecordCgroup records a cgroup2 group system-wide (-a -G): only the process moved
// into it is sampled, though another spins beside it.
func TestRecordCgroup(t *testing.T) {
	needPerf(t)
	mount := cgroup2Mount()
	if mount == "" {
		t.Skip("no cgroup2 mount")
	}
	name := fmt.Sprintf("cpuprof-test-%d", os.Getpid())
	group := filepath.Join(mount, name)
	if err := os.Mkdir(group, 0o755); err != nil {
		t.Skipf("cannot create a cgroup: %v", err)
	}
	dir := t.TempDir()
	writeModule(t, dir, spinGo)
	bin := filepath.Join(dir, "spin")
	run(t, dir, "go", "build", "-o", bin, ".")
	inside, outside := exec.Command(bin, "5s"), exec.Command(bin, "5s")
	for _, c := range []*exec.Cmd{inside, outside} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, c := range []*exec.Cmd{inside, outside} {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		// The group can go once its process has; the kernel may take a moment.
		var err error
		for range 50 {
			if err = os.Remove(group); err == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Errorf("removing the test cgroup: %v", err)
	})
	if err := os.WriteFile(filepath.Join(group, "cgroup.procs"), []byte(strconv.Itoa(inside.Process.Pid)), 0o644); err != nil {
		t.Skipf("cannot move a process into a cgroup: %v", err)
	}
	data := filepath.Join(dir, "perf.data")
	if err := (Recording{Cgroup: name, Duration: time.Second, Output: data}).Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	tr, err := Script(t.Context(), "", data)
	if err != nil {
		t.Fatal(err)
	}
	pids := map[int]int{}
	for _, s := range tr.Samples {
		pids[s.PID]++
	}
	if pids[inside.Process.Pid] < 50 || len(pids) != 1 {
		t.Errorf("samples by pid %v, want only %d's (in the group), at least 50; %d spun outside", pids, inside.Process.Pid, outside.Process.Pid)
	}
}
