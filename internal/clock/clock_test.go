package clock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/arenabot/arenabot/internal/clock"
	"github.com/arenabot/arenabot/internal/deptest"
)

func TestSleepWaits(t *testing.T) {
	start := time.Now()
	if err := clock.Sleep(context.Background(), 20*time.Millisecond); err != nil {
		t.Fatalf("Sleep = %v, want nil", err)
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Fatalf("Sleep returned after %s, want at least 20ms", d)
	}
}

func TestSleepEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	start := time.Now()
	if err := clock.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Minute {
		t.Fatalf("Sleep outlived its context by %s", d)
	}
}

func TestSleepNothing(t *testing.T) {
	if err := clock.Sleep(context.Background(), 0); err != nil {
		t.Fatalf("Sleep(0) = %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := clock.Sleep(ctx, -time.Second); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep(-1s) on a done context = %v, want context.Canceled", err)
	}
}

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{StdOnly: true})
}
