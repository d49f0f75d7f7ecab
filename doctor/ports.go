package doctor

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

func portName(p Port) string {
	if p.UDP {
		return fmt.Sprintf("port %d/tcp+udp", p.Number)
	}
	return fmt.Sprintf("port %d", p.Number)
}

// checkPort binds the port on every address, as a server on the host network does. While
// another arenabot run holds the host lock the ports are that run's (work waits for it),
// so they are not bound then, only looked up, lest the probe take a port a server of that
// run is about to listen on.
func checkPort(env Env, p Port) Result {
	nets := []string{"tcp"}
	if p.UDP {
		nets = append(nets, "udp")
	}
	if holder, held := env.lockHolder(); held {
		var taken []string
		for _, n := range nets {
			if owner, found := env.findOwner(n, p.Number); found {
				taken = append(taken, n+" taken by "+owner)
			}
		}
		v := "not probed"
		if taken != nil {
			v = strings.Join(taken, ", ")
		}
		return warn(v+" while pid "+holder+" holds the host lock", "runs take turns on the host lock; work waits for it, then the ports are free again")
	}
	var taken []string
	for _, n := range nets {
		l, err := env.Listen(n, fmt.Sprintf(":%d", p.Number))
		if err != nil {
			taken = append(taken, n+" taken by "+env.portOwner(n, p.Number))
			continue
		}
		l.Close()
	}
	if taken == nil {
		return ok("free")
	}
	return fail(strings.Join(taken, ", "), "stop it: a measurement listens there ("+p.Use+")")
}

// lockHolder reports whether a process holds the host lock now, and its pid, from the
// kernel's lock table (taking the lock to find out would make a waiting run wait longer).
func (e Env) lockHolder() (pid string, held bool) {
	fi, err := os.Stat(e.LockPath)
	if err != nil {
		return "", false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	b, err := e.ReadFile(filepath.Join(e.Proc, "locks"))
	if err != nil {
		return "", false
	}
	ino := ":" + strconv.FormatUint(st.Ino, 10)
	for line := range strings.Lines(string(b)) {
		// "1: FLOCK  ADVISORY  WRITE 1234 00:2b:5678 0 EOF"; a waiter's line starts "1: ->"
		f := strings.Fields(line)
		if len(f) >= 6 && f[1] == "FLOCK" && strings.HasSuffix(f[5], ino) {
			return f[4], true
		}
	}
	return "", false
}

func (e Env) portOwner(network string, port int) string {
	owner, _ := e.findOwner(network, port)
	return owner
}

// findOwner names the process with a socket bound to port, from the socket tables under
// proc and the processes' descriptors: "nginx (pid 123)", or "another process" when proc
// does not tell (another user's process, another network namespace). found is false when
// no socket table lists the port.
func (e Env) findOwner(network string, port int) (owner string, found bool) {
	inodes := map[string]bool{}
	for _, table := range []string{network, network + "6"} {
		b, err := e.ReadFile(filepath.Join(e.Proc, "net", table))
		if err != nil {
			continue
		}
		for _, ino := range socketInodes(b, port, network == "tcp") {
			inodes[ino] = true
		}
	}
	if len(inodes) == 0 {
		return "another process", false
	}
	dirs, _ := filepath.Glob(filepath.Join(e.Proc, "[0-9]*", "fd"))
	for _, fd := range dirs {
		ents, err := os.ReadDir(fd)
		if err != nil {
			continue
		}
		for _, ent := range ents {
			link, err := os.Readlink(filepath.Join(fd, ent.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			if inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				dir := filepath.Dir(fd)
				comm, _ := e.ReadFile(filepath.Join(dir, "comm"))
				return fmt.Sprintf("%s (pid %s)", strings.TrimSpace(string(comm)), filepath.Base(dir)), true
			}
		}
	}
	return "another process", true
}

// socketInodes reads a /proc/net/{tcp,udp}[6] table and returns the inodes of the sockets
// bound to port locally (listening ones only for TCP: state 0A).
func socketInodes(table []byte, port int, listenOnly bool) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(table))
	sc.Scan() // header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 {
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(hexPort, 16, 16)
		if err != nil || int(n) != port || (listenOnly && f[3] != "0A") {
			continue
		}
		out = append(out, f[9])
	}
	return out
}
