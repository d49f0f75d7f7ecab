package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
)

// JobsDir holds one lock file per job a runner on this host is running, locked for the
// job's whole life: a runner that sweeps the images an earlier runner left (labelled with
// their job's ID) removes only those of jobs no live process holds. A job builds its images
// before it takes the host lock, so without it a sweep under the host lock could remove an
// image another job was building on at that moment.
var JobsDir = filepath.Join(os.TempDir(), "arenabot-jobs")

// jobID is what a job lock's name may hold: the queue's IDs are hex.
var jobID = regexp.MustCompile(`^[0-9A-Za-z_-]{1,64}$`)

// HoldJob marks the job id as running in this process until release is called (or the
// process ends: the kernel releases a dead process's flock).
func HoldJob(id string) (release func(), err error) {
	path, err := jobPath(id)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(JobsDir, 0o777); err != nil {
		return nil, fmt.Errorf("job lock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("job lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("job %s is already running on this host (%s is locked)", id, path)
		}
		return nil, fmt.Errorf("job lock %s: %w", path, err)
	}
	return sync.OnceFunc(func() {
		os.Remove(path)
		f.Close()
	}), nil
}

// JobLive reports whether a live process on this host holds the job id (HoldJob). An ID
// that cannot name a lock file is never held.
func JobLive(id string) bool {
	path, err := jobPath(id)
	if err != nil {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	return errors.Is(err, syscall.EWOULDBLOCK)
}

func jobPath(id string) (string, error) {
	if !jobID.MatchString(id) {
		return "", fmt.Errorf("job ID %q cannot name a lock file", id)
	}
	return filepath.Join(JobsDir, id+".lock"), nil
}
