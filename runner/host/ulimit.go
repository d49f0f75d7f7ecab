package host

import "syscall"

// rlimitMemlock is RLIMIT_MEMLOCK on Linux (the syscall package does not name it).
const rlimitMemlock = 8

// HardMemlock is this process's hard limit of locked memory in bytes, -1 for unlimited:
// what a container started by the runner's Docker daemon can be granted at most (the daemon
// runs under the same limits on the hosts this project targets). 0 when unknown.
func HardMemlock() int64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(rlimitMemlock, &r); err != nil {
		return 0
	}
	if r.Max == ^uint64(0) {
		return -1
	}
	return int64(r.Max)
}
