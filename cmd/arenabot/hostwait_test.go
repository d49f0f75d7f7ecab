package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/host"
)

// TestBenchBuildsWhileItWaits holds the host lock in another process (flock(1) on a private
// lock file) and starts a bench: it builds the entry's image first, then says that it waits
// for the other run, and a cancel ends the wait with nothing started.
func TestBenchBuildsWhileItWaits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image")
	}
	needDocker(t)
	old := host.LockPath
	host.LockPath = filepath.Join(t.TempDir(), "host.lock")
	t.Cleanup(func() { host.LockPath = old })
	os.WriteFile(host.LockPath, []byte("pid 1 on elsewhere"), 0o644)
	holder := exec.Command("flock", "-x", host.LockPath, "sleep", "600")
	if err := holder.Start(); err != nil {
		t.Fatalf("flock(1) (apt-get install util-linux): %v", err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if exec.Command("flock", "-n", host.LockPath, "true").Run() != nil {
			break // the holder has it
		}
		if time.Now().After(deadline) {
			t.Fatal("the holder did not take the lock within 10s")
		}
	}

	root := arena(t, "nethttp")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"bench", "nethttp", "-t", "baseline", "--cache-dir", cacheDir, "--root", root}, func(string) string { return "" }, &stdout, &stderr)
	}()
	const waiting = "waiting for another arenabot run on this host to finish (pid 1 on elsewhere holds "
	deadline := time.After(5 * time.Minute)
	for !strings.Contains(stderr.String(), waiting) {
		select {
		case err := <-done:
			t.Fatalf("bench ended before waiting for the host: %v\n%s", err, stderr.String())
		case <-deadline:
			t.Fatalf("bench did not say it waits within 5 minutes:\n%s", stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	log := stderr.String()
	built := strings.Index(log, "nethttp: building "+build.ImageTag("nethttp"))
	if built < 0 || built > strings.Index(log, waiting) {
		t.Errorf("the image was not built before the wait:\n%s", log)
	}
	if out, err := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", build.ImageTag("nethttp")).CombinedOutput(); err != nil {
		t.Errorf("while bench waits, %s is not built: %v %s", build.ImageTag("nethttp"), err, out)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled while waiting: %v; want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("bench did not end within 30s of the cancel")
	}
	if strings.Contains(stderr.String(), "[0/") {
		t.Errorf("bench measured although it never had the host:\n%s", stderr.String())
	}

	// An entry whose image fails to build leaves nothing to run on the host: bench reports
	// the failure at once instead of waiting for the host the holder still has.
	broken := t.TempDir()
	scratchEntry(t, broken, "unbuildable", "package main\nfunc main() {}\n", "COPY server /server\nCOPY missing-file /missing\n")
	bounded, stop := context.WithTimeout(t.Context(), 3*time.Minute)
	defer stop()
	var errb syncBuffer
	err := run(bounded, []string{"bench", "unbuildable", "-t", "baseline", "--runs", "1", "--duration", "1s", "--cache-dir", cacheDir, "--root", broken},
		func(string) string { return "" }, io.Discard, &errb)
	if err == nil || errors.Is(err, context.DeadlineExceeded) || strings.Contains(errb.String(), "waiting for another") ||
		!strings.Contains(errb.String(), "build of unbuildable failed") {
		t.Errorf("bench of an entry that fails to build: %v; want its build failure at once, without waiting for the host:\n%s", err, errb.String())
	}
}
