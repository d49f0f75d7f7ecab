// Package runnertest holds what the tests of the runner's packages (runner, runner/build,
// runner/measure) share: the real Docker engine with the arena data, an engine that sees
// no registry, entries written into a temporary arena, and a progress that keeps notes.
// Only tests import it.
package runnertest

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/host"
)

// CacheDir is where the arena data is generated once for every test run (shared with the
// tests of cmd/arenabot).
var CacheDir = filepath.Join(os.TempDir(), "arenabot-test-cache")

// Engine connects to the local Docker daemon (or the one at host, when given) and returns
// it with the arena data directory. It skips without a daemon, or with -short, except under
// CI, where it fails.
func Engine(t *testing.T, host string) (*docker.Engine, string) {
	t.Helper()
	ci := os.Getenv("CI") != ""
	if testing.Short() && !ci {
		t.Skip("builds images and measures; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	var opts []docker.Option
	if host != "" {
		opts = append(opts, docker.WithHost(host))
	}
	eng, err := docker.New(ctx, opts...)
	if err != nil {
		if ci {
			t.Fatalf("CI needs a Docker Engine: %v", err)
		}
		t.Skipf("no Docker Engine: %v", err)
	}
	t.Cleanup(func() { eng.Close() })
	data, err := arenadata.Ensure(CacheDir)
	if err != nil {
		t.Fatal(err)
	}
	return eng, data
}

// WithoutRegistry is the real engine on a host that lacks the Hidden images and reaches no
// registry, whatever this host has and reaches: ImageExists answers false for the hidden
// references, and every pull fails as a pull without a registry does. Builds, and every
// other image, are the real engine's.
type WithoutRegistry struct {
	*docker.Engine
	Hidden map[string]bool
	Pulls  []string // the references pulls were tried for, in order
}

// ImageExists is false for a hidden reference, else the real engine's answer.
func (e *WithoutRegistry) ImageExists(ctx context.Context, ref string) (bool, error) {
	if e.Hidden[ref] {
		return false, nil
	}
	return e.Engine.ImageExists(ctx, ref)
}

// PullImage records the pull and fails it as a host without a registry does.
func (e *WithoutRegistry) PullImage(_ context.Context, ref string) error {
	e.Pulls = append(e.Pulls, ref)
	return &docker.PullError{Ref: ref, Msg: `Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io on 127.0.0.53:53: no such host`}
}

// notJobChar is what a job ID (and so a job lock's file name) may not hold.
var notJobChar = regexp.MustCompile(`[^0-9A-Za-z_-]`)

var (
	jobsMu sync.Mutex
	jobs   = map[*testing.T]string{}
)

// JobLabel is the job ID a test puts on the images and containers it creates (the
// runner's arenabot.job label): the test's name, held as a live job (host.HoldJob) until the
// test's cleanups have run, so that a runner starting beside it (another package's test) does
// not sweep its images as a dead job's leftovers. The first call holds; later calls in the
// same test return the same ID.
func JobLabel(t *testing.T) string {
	t.Helper()
	jobsMu.Lock()
	defer jobsMu.Unlock()
	if id, ok := jobs[t]; ok {
		return id
	}
	id := notJobChar.ReplaceAllString(t.Name(), "-")
	if len(id) > 64 {
		id = id[len(id)-64:]
	}
	release, err := host.HoldJob(id)
	if err != nil {
		t.Fatalf("hold the test's job label: %v", err)
	}
	jobs[t] = id
	t.Cleanup(func() {
		release()
		jobsMu.Lock()
		delete(jobs, t)
		jobsMu.Unlock()
	})
	return id
}

// StandIns skips the test unless the host has the stand-ins deploy/base-images.sh makes
// (under CI, which runs it, their absence fails the test).
func StandIns(t *testing.T, eng *docker.Engine, images ...string) {
	t.Helper()
	for _, img := range images {
		if ok, err := eng.ImageExists(t.Context(), img); err != nil || !ok {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI needs %s (deploy/base-images.sh): %v", img, err)
			}
			t.Skipf("no %s on this host; run deploy/base-images.sh", img)
		}
	}
}

// EntryDir writes an entry's files into a temporary arena and returns the entry.
func EntryDir(t *testing.T, name string, files map[string]string) frameworks.Entry {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "frameworks", name)
	for f, body := range files {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return frameworks.Entry{Name: name, Dir: dir}
}

// Notes is a progress that collects the notes.
type Notes struct{ Lines []string }

// Step is part of the runner's Progress; steps are not kept.
func (n *Notes) Step(string, int, int) {}

// Note keeps the line.
func (n *Notes) Note(line string) { n.Lines = append(n.Lines, line) }
