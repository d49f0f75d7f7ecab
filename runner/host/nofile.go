package host

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// HardNofile is this process's hard limit on open files, the arena's choice for containers:
// the daemon cannot grant more than the host allows, and Docker refuses "unlimited", so an
// unlimited (or larger than 1048576) or unreadable limit becomes 1048576.
func HardNofile() int64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Max > 1<<20 {
		return 1 << 20
	}
	return int64(r.Max)
}

// NofileMargin is what a server or a load tool needs open beyond one file per connection.
const NofileMargin = 1024

// NofileWant is the open-files limit the runner asks for: room for async's 32,000
// connections on both sides with margin (Docker's own cap, 1048576).
const NofileWant = 1 << 20

// RaiseNofile raises this process's open-files limit, once: the hard limit to NofileWant
// where it may (as root, within fs.nr_open), and the soft limit to the hard one, so that the
// load tools it starts natively and the containers it asks for (HardNofile) may open as many
// connections as a profile asks for (async: 32,000). Go raises its own soft limit at start
// but gives child processes the original one back unless the program sets the limit itself,
// which this does.
var RaiseNofile = sync.OnceValue(func() error {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return err
	}
	if r.Max < NofileWant {
		want := uint64(NofileWant)
		if b, err := os.ReadFile("/proc/sys/fs/nr_open"); err == nil {
			if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
				want = min(want, n)
			}
		}
		if want > r.Max {
			up := syscall.Rlimit{Cur: want, Max: want}
			if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &up); err == nil {
				return nil
			}
		}
	}
	r.Cur = r.Max
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r)
})
