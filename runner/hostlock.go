package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// HostLockPath is the file every arenabot process that starts servers on this host locks
// first: servers listen on fixed host ports (8080…) and measurements own the host's CPUs, so
// a bench, a validate and the runner service must take turns.
var HostLockPath = filepath.Join(os.TempDir(), "arenabot-host.lock")

// LockHost takes the host lock, waiting while another process holds it; waiting is called
// once when it has to wait (nil: nothing). It returns the function that releases the lock.
// Cancelling ctx ends the wait with ctx's error.
func LockHost(ctx context.Context, waiting func(holder string)) (unlock func(), err error) {
	f, err := os.OpenFile(HostLockPath, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("host lock %s: %w", HostLockPath, err)
	}
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("host lock %s: %w", HostLockPath, err)
		}
		if !told && waiting != nil {
			holder, _ := os.ReadFile(HostLockPath)
			waiting(string(holder))
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	// Say who holds it, for the next process that waits.
	if err := f.Truncate(0); err == nil {
		host, _ := os.Hostname()
		fmt.Fprintf(f, "pid %d on %s since %s", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
