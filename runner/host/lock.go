package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/arenabot/arenabot/internal/clock"
)

// LockPath is the file every arenabot process that starts servers on this host locks
// first: servers listen on fixed host ports (8080…) and measurements own the host's CPUs, so
// a bench, a validate and the runner service must take turns.
var LockPath = filepath.Join(os.TempDir(), "arenabot-host.lock")

// LockHost takes the host lock, waiting while another process holds it; waiting is called
// once when it has to wait (nil: nothing). It returns the function that releases the lock.
// Cancelling ctx ends the wait with ctx's error.
func LockHost(ctx context.Context, waiting func(holder string)) (unlock func(), err error) {
	asked := time.Now()
	f, err := LockFile(ctx, LockPath, func() {
		if waiting != nil {
			holder, _ := os.ReadFile(LockPath)
			waiting(string(holder))
		}
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, err // a cancelled wait, as the caller's context says
		}
		return nil, fmt.Errorf("host lock %s: %w", LockPath, err)
	}
	// Say who holds it, for the next process that waits.
	if err := f.Truncate(0); err == nil {
		host, _ := os.Hostname()
		fmt.Fprintf(f, "pid %d on %s since %s", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	}
	got := time.Now()
	return func() {
		f.Close() // releases the lock
		logHold(asked, got)
	}, nil
}

// LockFile takes an exclusive flock(2) on the file at path, made if missing, waiting while
// another process (or another open file of this one) holds it; waiting is called once if it
// has to wait. Cancelling ctx ends the wait with ctx's error, as it is. It returns the
// file, locked: closing it releases the lock.
func LockFile(ctx context.Context, path string, waiting func()) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		if !told && waiting != nil {
			waiting()
			told = true
		}
		if err := clock.Sleep(ctx, lockPoll); err != nil {
			f.Close()
			return nil, err
		}
	}
}

// lockPoll is how often a waiting LockFile tries again.
const lockPoll = 100 * time.Millisecond

// HoldLogEnv names a file to which every release of the host lock appends one line: the
// program, how long it waited for the lock and how long it held it. .ci/test sets it and
// sums the lines, to show where the suite's serial time goes.
const HoldLogEnv = "ARENA_HOST_LOCK_LOG"

func logHold(asked, got time.Time) {
	path := os.Getenv(HoldLogEnv)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s held %.1fs waited %.1fs from %s pid %d\n", filepath.Base(os.Args[0]),
		time.Since(got).Seconds(), got.Sub(asked).Seconds(), got.UTC().Format("15:04:05"), os.Getpid())
}
