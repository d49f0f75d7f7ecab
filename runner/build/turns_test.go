package build

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/runner/docker"
)

// TestBuildTurns: two builds of one image name take turns (the second says it waits, and
// goes on once the first ends), builds of other names do not wait, and a cancel ends a wait.
func TestBuildTurns(t *testing.T) {
	old := TurnsDir
	TurnsDir = t.TempDir()
	t.Cleanup(func() { TurnsDir = old })

	release, err := buildTurn(t.Context(), "arenabot-nethttp", nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := buildTurn(t.Context(), "arenabot-fasthttp", func() { t.Error("a build of another entry waited") })
	if err != nil {
		t.Fatal(err)
	}
	other()

	waited := make(chan struct{})
	got := make(chan error, 1)
	go func() {
		second, err := buildTurn(t.Context(), "arenabot-nethttp", func() { close(waited) })
		if err == nil {
			second()
		}
		got <- err
	}()
	select {
	case <-waited:
	case err := <-got:
		t.Fatalf("the second build of the same name did not wait (%v)", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the second build neither waited nor went on")
	}
	select {
	case err := <-got:
		t.Fatalf("the second build went on while the first held its turn (%v)", err)
	case <-time.After(time.Second):
	}
	release()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second build did not go on after the first ended")
	}

	held, err := buildTurn(t.Context(), "arenabot-nethttp", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held()
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if _, err := buildTurn(ctx, "arenabot-nethttp", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a wait past its context: %v; want the context's error", err)
	}
}

func TestTurnKey(t *testing.T) {
	for tag, want := range map[string]string{
		"arenabot-nethttp:local":                               "arenabot-nethttp",
		"arenabot-nethttp:0123456789ab":                        "arenabot-nethttp",
		"arenabot-nethttp-stack-gateway-64-proxy:09dea67ad9b8": "arenabot-nethttp-stack-gateway-64-proxy",
		"arenabot/loadgen:wrk-4.1.0":                           "arenabot/loadgen:wrk-4.1.0",
		"arenabot:test":                                        "arenabot:test",
	} {
		if got := turnKey(tag); got != want {
			t.Errorf("turnKey(%q) = %q; want %q", tag, got, want)
		}
	}
	if got := turnFile("arenabot/loadgen:wrk-4.1.0"); got != "arenabot_loadgen_wrk-4.1.0.lock" {
		t.Errorf("turnFile = %q", got)
	}
}

// turnEngine builds nothing: it reports each Build's tag on built.
type turnEngine struct {
	Engine
	built chan string
}

func (e turnEngine) ImageExists(context.Context, string) (bool, error) { return false, nil }
func (e turnEngine) Build(_ context.Context, o docker.BuildOptions) (string, error) {
	e.built <- o.Tag
	return "sha256:0", nil
}

// noteFunc is a Progress that is a function.
type noteFunc func(string)

func (f noteFunc) Note(line string) { f(line) }

// TestServiceTurn: a stack service takes the turn of its entry and service, whichever
// stack's tag it builds (nethttp-stack's gateway-64 and gateway-h3 build one server), so
// the second build waits for the first and comes from the cache.
func TestServiceTurn(t *testing.T) {
	old := TurnsDir
	TurnsDir = t.TempDir()
	t.Cleanup(func() { TurnsDir = old })
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nCOPY Dockerfile /\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	held, err := buildTurn(t.Context(), "arenabot-nethttp-stack-server", nil) // gateway-64's build
	if err != nil {
		t.Fatal(err)
	}
	eng := turnEngine{built: make(chan string, 1)}
	waited := make(chan string, 1)
	b := New(eng, Config{ScratchDir: t.TempDir(), Progress: noteFunc(func(line string) {
		if strings.Contains(line, "waiting for another build") {
			waited <- line
		}
	})})
	done := make(chan error, 1)
	go func() {
		_, err := b.Service(t.Context(), Service{Name: "nethttp-stack-server", Context: dir, Tag: "arenabot-nethttp-stack-gateway-h3-server:af0bc444520d"})
		done <- err
	}()
	select {
	case line := <-waited:
		if want := "nethttp-stack-server: waiting for another build of it on this host to finish"; line != want {
			t.Errorf("note %q; want %q", line, want)
		}
	case tag := <-eng.built:
		t.Fatalf("built %s while another stack's build of the service held its turn", tag)
	case err := <-done:
		t.Fatalf("Service returned %v without waiting", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the service's build neither waited nor built")
	}
	held()
	select {
	case tag := <-eng.built:
		if tag != "arenabot-nethttp-stack-gateway-h3-server:af0bc444520d" {
			t.Errorf("built %s", tag)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the build did not go on once the turn was free")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
