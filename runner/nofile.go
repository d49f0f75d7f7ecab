package runner

import "syscall"

// hardNofile is this process's hard limit on open files, the arena's choice for containers:
// the daemon cannot grant more than the host allows, and Docker refuses "unlimited", so an
// unlimited (or larger than 1048576) or unreadable limit becomes 1048576.
func hardNofile() int64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Max > 1<<20 {
		return 1 << 20
	}
	return int64(r.Max)
}
