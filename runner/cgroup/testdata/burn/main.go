// Command burn is the program inside the test image of runner/cgroup. It serves on
// 127.0.0.1:$PORT:
//
//	GET /ping  answers "ok"
//	GET /burn  allocates and touches 64 MiB, burns 1.5 s of CPU time on one thread, frees
//	           the memory back to the kernel and answers with the process CPU time the
//	           request took, in nanoseconds
package main

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"
)

const (
	busy  = 1500 * time.Millisecond
	alloc = 64 << 20
)

var sink []byte

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func burn(w http.ResponseWriter, r *http.Request) {
	start := cpuTime()
	sink = make([]byte, alloc)
	for i := 0; i < len(sink); i += 4096 {
		sink[i] = 1
	}
	x := 0
	for cpuTime()-start < busy {
		for i := range 200000 {
			x += i * i
		}
	}
	used := cpuTime() - start
	sink = nil
	runtime.GC()
	debug.FreeOSMemory()
	fmt.Fprintf(w, "%d %d\n", used.Nanoseconds(), x&1)
}

func main() {
	http.HandleFunc("/ping", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	http.HandleFunc("/burn", burn)
	if err := http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
