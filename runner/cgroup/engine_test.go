package cgroup_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/runner/cgroup"
	"github.com/arenabot/arenabot/runner/docker"
)

// These tests measure a real container; they need a Docker daemon and the host's view of
// /sys/fs/cgroup. Without a daemon answering within 2 s they skip, unless CI is set.

const (
	testLabel = "arenabot.test"
	busy      = 1500 * time.Millisecond // the CPU time testdata/burn burns per request
	allocated = 64 << 20                // the memory it allocates and touches
)

func engine(t *testing.T) *docker.Engine {
	t.Helper()
	ci := os.Getenv("CI") != ""
	if testing.Short() && !ci {
		t.Skip("needs a Docker daemon; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	e, err := docker.New(ctx)
	if err != nil {
		if ci {
			t.Fatalf("CI is set, so a Docker daemon is required: %v", err)
		}
		t.Skipf("no Docker daemon: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func cleanupCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Minute)
}

// burnImage builds an image FROM scratch holding testdata/burn and returns its tag.
func burnImage(t *testing.T, e *docker.Engine) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, "burn"), "./testdata/burn")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/burn: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nCOPY burn /burn\nENTRYPOINT [\"/burn\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tag := fmt.Sprintf("arenabot-test-cgroup-%d:test", time.Now().UnixNano())
	t.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		if err := e.RemoveImage(ctx, tag); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	if _, err := e.Build(t.Context(), docker.BuildOptions{ContextDir: dir, Tag: tag, Labels: map[string]string{testLabel: t.Name()}}); err != nil {
		t.Fatal(err)
	}
	return tag
}

// startBurn starts testdata/burn on the host network and waits until it answers; it
// returns the container and the server's base URL.
func startBurn(t *testing.T, e *docker.Engine) (docker.Container, string) {
	t.Helper()
	img := burnImage(t, e)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()

	t.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		if _, err := e.RemoveLabeled(ctx, testLabel, t.Name()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	c, err := e.Start(t.Context(), docker.RunOptions{
		Image:       img,
		Env:         []string{"PORT=" + port},
		HostNetwork: true,
		Labels:      map[string]string{testLabel: t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	base := "http://127.0.0.1:" + port
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := get(base + "/ping"); err == nil {
			return c, base
		} else if time.Now().After(deadline) {
			logs, _ := e.Logs(t.Context(), c.ID, 20)
			t.Fatalf("burn never answered: %v\n%s", err, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func get(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), err
}

func TestMeasureContainer(t *testing.T) {
	e := engine(t)
	c, base := startBurn(t, e)
	g, err := cgroup.ForContainer(cgroup.Root, c.Pid, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cgroup v%d: %v", g.Version(), g)

	// A busy window: 1.5 s of CPU and 64 MiB touched, started by the request.
	w, err := g.Begin()
	if err != nil {
		t.Fatal(err)
	}
	body, err := get(base + "/burn")
	if err != nil {
		t.Fatal(err)
	}
	busyUsage, err := w.End()
	if err != nil {
		t.Fatal(err)
	}
	reported, _ := strconv.ParseInt(strings.Fields(body)[0], 10, 64)
	t.Logf("busy window: CPU %v (the process counted %v), wall %v, %.2f cores, peak %.1f MiB",
		busyUsage.CPU, time.Duration(reported), busyUsage.Wall, busyUsage.Cores(), float64(busyUsage.MemoryPeak)/(1<<20))
	if lo, hi := busy*8/10, busy*13/10; busyUsage.CPU < lo || busyUsage.CPU > hi {
		t.Errorf("busy window CPU %v; want between %v and %v", busyUsage.CPU, lo, hi)
	}
	if busyUsage.MemoryPeak < allocated {
		t.Errorf("busy window peak %d bytes; want at least %d", busyUsage.MemoryPeak, allocated)
	}

	// An idle window right after: the high-water mark must have been reset.
	w, err = g.Begin()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	idle, err := w.End()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("idle window: CPU %v, wall %v, %.3f cores, peak %.1f MiB",
		idle.CPU, idle.Wall, idle.Cores(), float64(idle.MemoryPeak)/(1<<20))
	if idle.Cores() > 0.05 {
		t.Errorf("idle window used %.3f cores; want near zero", idle.Cores())
	}
	if idle.MemoryPeak > busyUsage.MemoryPeak/4 {
		t.Errorf("idle window peak %d bytes; want far below the busy one's %d (was the peak reset?)", idle.MemoryPeak, busyUsage.MemoryPeak)
	}

	// The container going away in the middle of a window.
	w, err = g.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Remove(t.Context(), c.ID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err = w.End()
		if err != nil || time.Now().After(deadline) {
			break
		}
		// The group outlived the container for a moment; try a new window.
		if w, err = g.Begin(); err != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !errors.Is(err, cgroup.ErrGone) {
		t.Errorf("measuring a removed container: %v; want ErrGone", err)
	} else {
		t.Logf("after removal: %v", err)
	}
	if _, err := cgroup.ForContainer(cgroup.Root, c.Pid, c.ID); err == nil {
		t.Error("ForContainer found the removed container's cgroup")
	}
}
