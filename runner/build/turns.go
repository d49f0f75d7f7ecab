package build

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// TurnsDir holds one lock file per image name: builds of one entry (or one stack service)
// on this host take turns, whichever process asks, so that a second build of the same
// source waits for the first and then comes from Docker's layer cache instead of compiling
// the same code beside it (the classic builder shares no work between two builds in
// flight). Builds of different entries still run side by side.
var TurnsDir = filepath.Join(os.TempDir(), "arenabot-builds")

// turnPoll is how often a waiting build tries the lock again.
const turnPoll = 200 * time.Millisecond

// buildTurn takes the build lock of name, waiting while another build of it runs on this
// host; waiting is called once if it has to wait. Cancelling ctx ends the wait.
func buildTurn(ctx context.Context, name string, waiting func()) (release func(), err error) {
	if err := os.MkdirAll(TurnsDir, 0o777); err != nil {
		return nil, fmt.Errorf("build lock: %w", err)
	}
	path := filepath.Join(TurnsDir, turnFile(name))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("build lock: %w", err)
	}
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("build lock %s: %w", path, err)
		}
		if !told && waiting != nil {
			waiting()
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(turnPoll):
		}
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// turnKey is the build lock's name for the image tag: an entry's images (arenabot-<name>,
// at any commit, its stack services too) share one, since their versions mostly share
// their layers and a base and a head of the same entry build from one source more often
// than not; any other image (a load-generator image) has its own.
func turnKey(tag string) string {
	if repo, _, _ := strings.Cut(tag, ":"); strings.HasPrefix(repo, "arenabot-") {
		return repo
	}
	return tag
}

// turnFile is name as a file name: anything but letters, digits, '.', '-' and '_' becomes
// '_'.
func turnFile(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, name) + ".lock"
}
