package host

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestLockHostExcludesOtherProcesses holds the lock in a child process (flock(1) on the same
// file) and checks that LockHost waits, says who holds it, honours cancel, and gets the lock
// once the child lets go.
func TestLockHostExcludesOtherProcesses(t *testing.T) {
	flock, err := exec.LookPath("flock")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("flock(1) is not installed (apt-get install util-linux)")
		}
		t.Skip("flock(1) not installed")
	}
	old := LockPath
	LockPath = filepath.Join(t.TempDir(), "host.lock")
	t.Cleanup(func() { LockPath = old })
	os.WriteFile(LockPath, []byte("pid 1 on elsewhere"), 0o644)

	child := exec.Command(flock, "-x", LockPath, "sleep", "1.5")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Wait()
	time.Sleep(300 * time.Millisecond) // let the child take it

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	var told string
	if _, err := LockHost(ctx, func(h string) { told = h }); err == nil {
		t.Fatal("LockHost took a lock another process holds")
	}
	if !strings.Contains(told, "elsewhere") {
		t.Errorf("waiting was told %q, want the holder written in the file", told)
	}

	holds := filepath.Join(t.TempDir(), "holds")
	t.Setenv(HoldLogEnv, holds)
	start := time.Now()
	unlock, err := LockHost(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 500*time.Millisecond {
		t.Errorf("got the lock after %s, before the child released it", waited)
	}
	b, _ := os.ReadFile(LockPath)
	if !strings.Contains(string(b), "pid ") {
		t.Errorf("lock file holds %q, want this process named", b)
	}
	unlock()
	// The release is logged: what held it, how long it waited and held.
	if line, _ := os.ReadFile(holds); !regexp.MustCompile(`^\S+ held \d+\.\ds waited (0\.[5-9]|[1-9]\d*\.\d)s from \d\d:\d\d:\d\d pid \d+\n$`).Match(line) {
		t.Errorf("%s holds %q; want one line with the wait of at least 0.5s", HoldLogEnv, line)
	}
	// Released: another process gets it at once.
	if out, err := exec.Command(flock, "-n", "-x", LockPath, "true").CombinedOutput(); err != nil {
		t.Errorf("after unlock, flock -n failed: %v %s", err, out)
	}
}

// TestHoldJob: a held job is live, to this process and to another (flock), a second hold of
// it is refused, and a released one is not live; an ID that cannot name a file is refused.
func TestHoldJob(t *testing.T) {
	old := JobsDir
	JobsDir = filepath.Join(t.TempDir(), "jobs")
	t.Cleanup(func() { JobsDir = old })
	if JobLive("0123abcd") {
		t.Fatal("a job nobody holds is live")
	}
	release, err := HoldJob("0123abcd")
	if err != nil {
		t.Fatal(err)
	}
	if !JobLive("0123abcd") {
		t.Error("the held job is not live")
	}
	// Another process sees it held: flock(1) cannot take a shared lock on it.
	if err := exec.Command("flock", "--shared", "--nonblock", filepath.Join(JobsDir, "0123abcd.lock"), "true").Run(); err == nil {
		t.Error("another process took the held job's lock")
	}
	if _, err := HoldJob("0123abcd"); err == nil || !strings.Contains(err.Error(), "already running on this host") {
		t.Errorf("second hold: %v; want it refused as already running", err)
	}
	release()
	release() // a second release does nothing
	if JobLive("0123abcd") {
		t.Error("the released job is still live")
	}
	if _, err := HoldJob("../x"); err == nil || !strings.Contains(err.Error(), "cannot name a lock file") {
		t.Errorf("HoldJob(../x): %v; want it refused", err)
	}
}
