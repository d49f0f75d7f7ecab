// Command probe is the program inside the test images of runner/docker. It is built
// statically and copied into images FROM scratch, so it does everything itself:
//
//	probe report DIR PORT  print the cpuset, the capabilities, no_new_privs, the nofile, memory
//	                       and pids limits, DIR/hello.txt and
//	                       whether DIR is writable,
//	                       then serve the same report on 127.0.0.1:PORT until killed
//	probe ls DIR           list DIR, one name a line
//	probe exit CODE        write a line to stdout and one to stderr, exit with CODE
//	probe line N           write one line of N bytes (and its newline) to stdout, exit 0
//	probe fail             fail a build step: print a message and exit 3
//	probe sleep            print a line, then sleep until killed
package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: probe report|ls|exit|fail|sleep ...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "report":
		report(os.Args[2], os.Args[3])
	case "ls":
		des, err := os.ReadDir(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, de := range des {
			fmt.Println(de.Name())
		}
	case "exit":
		code, _ := strconv.Atoi(os.Args[2])
		fmt.Println("to stdout")
		fmt.Fprintln(os.Stderr, "to stderr")
		os.Exit(code)
	case "line":
		n, _ := strconv.Atoi(os.Args[2])
		os.Stdout.Write(append([]byte(strings.Repeat("x", n)), '\n'))
	case "fail":
		fmt.Fprintln(os.Stderr, "boom: this step fails on purpose")
		os.Exit(3)
	case "sleep":
		fmt.Println("sleeping until killed")
		for {
			time.Sleep(time.Hour)
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", os.Args[1])
		os.Exit(2)
	}
}

func report(dir, port string) {
	var b strings.Builder
	status, _ := os.ReadFile("/proc/self/status")
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			fmt.Fprintf(&b, "cpus=%s\n", strings.TrimSpace(v))
		}
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			fmt.Fprintf(&b, "capeff=%s\n", strings.TrimSpace(v))
		}
		if v, ok := strings.CutPrefix(line, "NoNewPrivs:"); ok {
			fmt.Fprintf(&b, "nonewprivs=%s\n", strings.TrimSpace(v))
		}
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Fprintf(&b, "nofile=error %v\n", err)
	} else {
		fmt.Fprintf(&b, "nofile=%d/%d\n", lim.Cur, lim.Max)
	}
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if v, err := os.ReadFile(f); err == nil {
			fmt.Fprintf(&b, "memory=%s\n", strings.TrimSpace(string(v)))
			break
		}
	}
	for _, f := range []string{"/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max"} {
		if v, err := os.ReadFile(f); err == nil {
			fmt.Fprintf(&b, "pids=%s\n", strings.TrimSpace(string(v)))
			break
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "hello.txt"))
	fmt.Fprintf(&b, "read=%q %v\n", strings.TrimSpace(string(data)), err)
	if err := os.WriteFile(filepath.Join(dir, "written.txt"), []byte("x"), 0o644); err != nil {
		fmt.Fprintf(&b, "write=%v\n", err)
	} else {
		fmt.Fprintf(&b, "write=ok\n")
	}
	fmt.Print(b.String())
	fmt.Println("ready")
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, b.String())
	})
	if err := http.ListenAndServe("127.0.0.1:"+port, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
