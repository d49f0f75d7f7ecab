package build

import (
	"context"
	"errors"
	"testing"
	"time"
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
