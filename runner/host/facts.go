package host

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/arenabot/arenabot/result"
)

// unknown is a fact that could not be read.
const unknown = "unknown"

// Facts describes this machine as the arena's current.json does (result.HostFacts), read
// from /proc, /sys and /etc/os-release, and dmidecode for the memory speed when it is
// installed and may run. docker and runtime are the daemon's version and default runtime.
func Facts(ctx context.Context, docker, runtime string) result.HostFacts {
	return FactsFrom(os.DirFS("/"), docker, runtime, func() string { return ramSpeed(ctx) })
}

// FactsFrom is Facts reading the machine's files from root (a directory holding proc/, sys/
// and etc/) and the memory speed from speed.
func FactsFrom(root fs.FS, docker, runtime string, speed func() string) result.HostFacts {
	read := func(name string) string {
		b, err := fs.ReadFile(root, name)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	cpuinfo := read("proc/cpuinfo")
	f := result.HostFacts{
		CPU:            or(cpuField(cpuinfo, "model name", "Hardware", "Processor", "cpu model")),
		Threads:        unknown,
		ThreadsPerCore: unknown,
		Cores:          unknown,
		RAM:            or(memTotal(read("proc/meminfo"))),
		OS:             or(osName(read("etc/os-release"), read("usr/lib/os-release"))),
		Kernel:         or(read("proc/sys/kernel/osrelease")),
		Docker:         or(docker),
		DockerRuntime:  or(runtime),
		Governor:       or(read("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")),
	}
	threads := countCPUs(read("sys/devices/system/cpu/online"))
	if threads == 0 {
		threads = NumCPU() // the CPUs this process may use, as nproc counts them
	}
	tpc := countCPUs(read("sys/devices/system/cpu/cpu0/topology/thread_siblings_list"))
	if threads > 0 {
		f.Threads = strconv.Itoa(threads)
		if tpc > 0 {
			f.ThreadsPerCore, f.Cores = strconv.Itoa(tpc), strconv.Itoa(threads/tpc)
		}
	}
	if speed != nil {
		f.RAMSpeed = speed()
	}
	tcp := result.TCP{
		LoMTU:      read("sys/class/net/lo/mtu"),
		Congestion: read("proc/sys/net/ipv4/tcp_congestion_control"),
		Somaxconn:  read("proc/sys/net/core/somaxconn"),
		RmemMax:    read("proc/sys/net/core/rmem_max"),
		WmemMax:    read("proc/sys/net/core/wmem_max"),
	}
	if tcp != (result.TCP{}) {
		tcp.LoMTU, tcp.Congestion, tcp.Somaxconn = or(tcp.LoMTU), or(tcp.Congestion), or(tcp.Somaxconn)
		tcp.RmemMax, tcp.WmemMax = or(tcp.RmemMax), or(tcp.WmemMax)
		f.TCP = &tcp
	}
	return f
}

func or(s string) string {
	if s == "" {
		return unknown
	}
	return s
}

// cpuField is the first of the named fields in /proc/cpuinfo that has a value.
func cpuField(cpuinfo string, names ...string) string {
	for _, name := range names {
		for line := range strings.Lines(cpuinfo) {
			k, v, ok := strings.Cut(line, ":")
			if ok && strings.TrimSpace(k) == name && strings.TrimSpace(v) != "" {
				return strings.TrimSpace(v)
			}
		}
	}
	return ""
}

// countCPUs counts the CPUs of a kernel CPU list ("0-63,128-191"); 0 when it does not parse.
func countCPUs(list string) int {
	if list == "" {
		return 0
	}
	cpus, err := ParseCPUSet(list)
	if err != nil {
		return 0
	}
	return len(cpus)
}

// memTotal renders /proc/meminfo's MemTotal as free -h does: "251Gi", "7.7Gi", "512Mi".
func memTotal(meminfo string) string {
	for line := range strings.Lines(meminfo) {
		rest, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
		if err != nil || kb <= 0 {
			return ""
		}
		v := kb
		for _, unit := range []string{"Ki", "Mi", "Gi", "Ti"} {
			if v < 1024 || unit == "Ti" {
				if v < 10 {
					return fmt.Sprintf("%.1f%s", v, unit)
				}
				return fmt.Sprintf("%.0f%s", v, unit)
			}
			v /= 1024
		}
	}
	return ""
}

// osName is PRETTY_NAME of the first os-release file that has one.
func osName(files ...string) string {
	for _, f := range files {
		for line := range strings.Lines(f) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "PRETTY_NAME="); ok {
				if u, err := strconv.Unquote(v); err == nil {
					return u
				}
				return strings.Trim(v, `"'`)
			}
		}
	}
	return ""
}

// ramSpeed asks dmidecode for the memory's speed ("3200 MT/s"): its configured speed, else
// its rated speed; "" when dmidecode is missing, may not read the tables or knows none.
func ramSpeed(ctx context.Context) string {
	path, err := exec.LookPath("dmidecode")
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "-t", "memory").Output()
	if err != nil {
		return ""
	}
	return dmiSpeed(out)
}

// dmiSpeed reads the first known memory speed of dmidecode -t memory's output.
func dmiSpeed(out []byte) string {
	var rated string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		v = strings.TrimSpace(v)
		if !ok || v == "" || strings.EqualFold(v, "Unknown") || v == "None" {
			continue
		}
		switch k {
		case "Configured Memory Speed", "Configured Clock Speed":
			return v
		case "Speed":
			if rated == "" {
				rated = v
			}
		}
	}
	return rated
}
