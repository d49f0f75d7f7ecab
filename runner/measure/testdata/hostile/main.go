// Command hostile is a test entry that tries, as it starts, what a hostile pull request
// would try on the benchmark host, reports each attempt on GET /attempts (JSON) and then
// serves the baseline profile.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// An attempt is one thing tried: Got says whether it worked, Detail what happened.
type attempt struct {
	Got    bool   `json:"got"`
	Detail string `json:"detail"`
}

// forkCap bounds the fork attempt: it stops at this many children if nothing stops it first.
const forkCap = 3000

func main() {
	if len(os.Args) > 1 && os.Args[1] == "child" {
		time.Sleep(time.Minute) // a child of the fork attempt; killed when it is over
		return
	}
	report := map[string]attempt{}
	try := func(name string, err error, ok string) {
		if err != nil {
			report[name] = attempt{Detail: err.Error()}
		} else {
			report[name] = attempt{Got: true, Detail: ok}
		}
	}

	os.MkdirAll("/tmp/m", 0o755)
	try("mount-tmpfs", syscall.Mount("tmpfs", "/tmp/m", "tmpfs", 0, "size=1m"), "mounted a tmpfs")
	try("unshare-userns", syscall.Unshare(syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS), "a new user and mount namespace")

	for _, r := range []struct {
		name string
		res  int
	}{{"nofile", syscall.RLIMIT_NOFILE}, {"nproc", 6}, {"memlock", 8}, {"stack", syscall.RLIMIT_STACK}} {
		var lim syscall.Rlimit
		if err := syscall.Getrlimit(r.res, &lim); err != nil {
			report["rlimit-"+r.name] = attempt{Detail: "getrlimit: " + err.Error()}
			continue
		}
		const inf = ^uint64(0)
		if lim.Max == inf {
			report["rlimit-"+r.name] = attempt{Detail: "hard limit is unlimited: nothing above it"}
			continue
		}
		raised := syscall.Rlimit{Cur: lim.Max + 1, Max: lim.Max + 1}
		try("rlimit-"+r.name, syscall.Setrlimit(r.res, &raised), fmt.Sprintf("raised the hard limit above %d", lim.Max))
	}

	var children []*exec.Cmd
	var forkErr error
	for len(children) < forkCap {
		c := exec.Command("/proc/self/exe", "child")
		c.Env = []string{"GOMAXPROCS=1"}
		if forkErr = c.Start(); forkErr != nil {
			break
		}
		children = append(children, c)
	}
	for _, c := range children {
		c.Process.Kill()
		c.Wait()
	}
	if forkErr != nil {
		report["fork-bomb"] = attempt{Detail: fmt.Sprintf("%d children, then %v", len(children), forkErr)}
	} else {
		report["fork-bomb"] = attempt{Got: true, Detail: fmt.Sprintf("%d children, stopped by the test's own cap", len(children))}
	}

	var secrets []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "ARENA_") || strings.HasPrefix(kv, "GITHUB_") {
			secrets = append(secrets, kv)
		}
	}
	if len(secrets) > 0 {
		report["runner-env"] = attempt{Got: true, Detail: strings.Join(secrets, " ")}
	} else {
		report["runner-env"] = attempt{Detail: "no ARENA_ or GITHUB_ variable; env: " + strings.Join(os.Environ(), " ")}
	}
	pid1, err := os.ReadFile("/proc/1/environ")
	cmdline, _ := os.ReadFile("/proc/1/cmdline")
	switch {
	case err != nil:
		report["host-pid1-environ"] = attempt{Detail: err.Error()}
	case strings.Contains(string(pid1), "ARENA_") || strings.Contains(string(pid1), "GITHUB_"):
		report["host-pid1-environ"] = attempt{Got: true, Detail: strings.ReplaceAll(string(pid1), "\x00", " ")}
	default:
		report["host-pid1-environ"] = attempt{Detail: "pid 1 is " + strings.ReplaceAll(string(cmdline), "\x00", " ") + " in its own pid namespace; its environ holds no ARENA_ or GITHUB_ variable"}
	}

	for _, sock := range []string{"/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock"} {
		c, err := net.DialTimeout("unix", sock, time.Second)
		if err == nil {
			c.Close()
		}
		try("socket "+sock, err, "connected")
	}
	for _, port := range []string{"2375", "2376"} {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
		if err == nil {
			c.Close()
		}
		try("docker-tcp "+port, err, "connected to the Docker API port")
	}

	for _, f := range []string{"/data/dataset.json", "/data/static/hostile.txt", "/certs/hostile.pem", "/data/large/hostile"} {
		if _, err := os.Stat(f[:strings.LastIndexByte(f, '/')]); errors.Is(err, os.ErrNotExist) {
			continue
		}
		err := os.WriteFile(f, []byte("owned"), 0o644)
		try("write "+f, err, "wrote it")
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	var targets []string
	for line := range strings.Lines(string(mounts)) {
		if f := strings.Fields(line); len(f) > 4 {
			targets = append(targets, f[4])
		}
	}
	status, _ := os.ReadFile("/proc/self/status")
	caps := ""
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps = strings.TrimSpace(v)
		}
	}
	body, _ := json.Marshal(struct {
		Attempts map[string]attempt `json:"attempts"`
		Mounts   []string           `json:"mounts"`
		CapEff   string             `json:"cap_eff"`
	}{report, targets, caps})
	fmt.Println(string(body))

	http.HandleFunc("/attempts", func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		a, _ := strconv.Atoi(r.URL.Query().Get("a"))
		b, _ := strconv.Atoi(r.URL.Query().Get("b"))
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, a+b)
	})
	panic(http.ListenAndServe(":8080", nil))
}
