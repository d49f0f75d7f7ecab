package docker_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/runner/docker"
)

// TestStackOptions: a compose service's options reach the container: the entrypoint, a
// ulimit other than nofile, and a healthcheck whose state Health reports, starting and
// then healthy, or unhealthy for a test that fails.
func TestStackOptions(t *testing.T) {
	e := engine(t)
	const img = "arenabot/debian:local"
	if ok, err := e.ImageExists(t.Context(), img); err != nil || !ok {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI needs %s (deploy/base-images.sh): %v", img, err)
		}
		t.Skipf("no %s (deploy/base-images.sh): %v", img, err)
	}
	var out strings.Builder
	code, err := e.Run(t.Context(), docker.RunOptions{Image: img, Entrypoint: []string{"sh", "-c"}, Cmd: []string{"ulimit -l; ulimit -n"},
		Nofile: 4096, Ulimits: []docker.Ulimit{{Name: "memlock", Soft: 65536, Hard: 65536}, {Name: "nofile", Soft: 2048, Hard: 2048}}, Labels: labels(t, e)}, &out)
	if err != nil || code != 0 {
		t.Fatalf("Run: %d, %v: %s", code, err, out.String())
	}
	if got := strings.Fields(out.String()); len(got) != 2 || got[0] != "64" || got[1] != "2048" {
		t.Errorf("ulimit -l, -n = %q; want 64 (KiB) and 2048 (the Ulimits entry replaces Nofile)", got)
	}
	for _, c := range []struct {
		test []string
		want string
	}{{[]string{"CMD", "true"}, "healthy"}, {[]string{"CMD-SHELL", "echo no; exit 1"}, "unhealthy"}} {
		ct, err := e.Start(t.Context(), docker.RunOptions{Image: img, Cmd: []string{"sleep", "30"}, Labels: labels(t, e),
			Healthcheck: &docker.Healthcheck{Test: c.test, Interval: 200 * time.Millisecond, Timeout: time.Second, Retries: 1}})
		if err != nil {
			t.Fatal(err)
		}
		var h docker.Health
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if h, err = e.Health(t.Context(), ct.ID); err != nil {
				t.Fatal(err)
			}
			if h.Status == c.want {
				break
			}
		}
		if h.Status != c.want || !h.Running {
			t.Errorf("health of %q: %+v; want %s and running", c.test, h, c.want)
		}
		if c.want == "unhealthy" && h.Log != "no" {
			t.Errorf("last check output %q, want %q", h.Log, "no")
		}
		e.Remove(t.Context(), ct.ID)
	}
}
