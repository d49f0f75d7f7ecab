package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/runner/loadgen"
)

// RunnerConfig is what the runner would use, from work's flags and variables.
type RunnerConfig struct {
	ServerCPUs  string // "" : the lower half (host.SplitCPUs)
	LoadgenCPUs string // "" : the upper half
	Lite        bool   // load tools in the load-generator image, no pinning
	ImageMap    build.ImageMap
	WorkDir     string         // where jobs are checked out
	Ports       []Port         // nil: RunnerPorts
	Tools       []loadgen.Tool // nil: loadgen.All()
	NumCPU      int            // 0: host.NumCPU()
}

// Port is a port the servers, sidecars or stack services listen on, and who.
type Port struct {
	Number int
	UDP    bool   // also UDP (HTTP/3)
	Use    string // who listens there: "production-stack's authsvc"
}

// RunnerPorts are the ports a measurement takes on the host network: every port of
// profile.HostPorts, the profiles' servers', sidecars' and compose stacks' (the stacks'
// from the profile table's StackPorts, which runner/compose's TestStackPorts keeps true to
// the shipped compose files).
var RunnerPorts = hostPorts()

func hostPorts() []Port {
	var ports []Port
	for _, h := range profile.HostPorts() {
		ports = append(ports, Port{Number: h.Port, UDP: h.UDP, Use: h.Who()})
	}
	return ports
}

// Disk thresholds: an entry's image with its build cache takes about 1-2 GiB (a Go base
// image alone is near 1 GiB), and a job builds the head and the base of each entry, so
// under 2 GiB even one build fails; 20 GiB holds a few jobs' images before the
// labelled images are cleaned up.
const (
	diskWarn = 20 << 30
	diskFail = 2 << 30
)

// udpBufferWant is the socket buffer quic-go asks for (it logs a warning and runs slower
// with less).
const udpBufferWant = 7_500_000

// MinAPIVersion is the oldest Docker API the SDK speaks; WantAPIVersion the oldest that
// reports the daemon's cgroup version, which the runner reads.
const (
	MinAPIVersion  = "1.24"
	WantAPIVersion = "1.40"
)

// RunnerChecks are the checks of a benchmark host, in the order they are printed.
func RunnerChecks(c RunnerConfig, env Env) []Check {
	if c.Ports == nil {
		c.Ports = RunnerPorts
	}
	if c.Tools == nil {
		c.Tools = loadgen.All()
	}
	if c.NumCPU == 0 {
		c.NumCPU = host.NumCPU()
	}
	dockerInfo := sync.OnceValues(func() (dockerState, error) { return connect(env, c.ImageMap) })
	checks := []Check{
		{"docker", func(ctx context.Context) Result { return checkDocker(dockerInfo) }},
		{"cgroup", func(ctx context.Context) Result { return checkCgroup(env, dockerInfo) }},
		{"cpus", func(ctx context.Context) Result { return checkCPUs(c, env) }},
		{"nofile", func(ctx context.Context) Result { return checkNofile(env, profile.All) }},
		{"udp buffers", func(ctx context.Context) Result { return checkUDP(env) }},
	}
	for _, t := range c.Tools {
		checks = append(checks, Check{"tool " + t.Binary, func(ctx context.Context) Result { return checkTool(ctx, env, t, c.Lite) }})
	}
	checks = append(checks,
		Check{"images", func(ctx context.Context) Result { return checkImages(c.ImageMap, dockerInfo) }},
		Check{"perf", func(ctx context.Context) Result { return checkPerf(ctx, env) }},
	)
	for _, p := range c.Ports {
		checks = append(checks, Check{portName(p), func(ctx context.Context) Result { return checkPort(env, p) }})
	}
	checks = append(checks,
		Check{"disk docker", func(ctx context.Context) Result {
			st, err := dockerInfo()
			if err != nil {
				return fail("Docker not reachable", "see the docker line")
			}
			return checkDisk(env, st.info.RootDir, "Docker's data root")
		}},
		Check{"disk work dir", func(ctx context.Context) Result { return checkDisk(env, c.WorkDir, "the jobs' checkouts") }},
		Check{"git", func(ctx context.Context) Result {
			return checkBinary(env, "git", "jobs fetch and check out commits; apt-get install git")
		}},
		Check{"flock", func(ctx context.Context) Result {
			// The runner locks with flock(2) itself; flock(1) holds the lock from a shell
			// (maintenance, the CI), so its absence is only a warning.
			r := checkBinary(env, "flock", "")
			if r.Status == Fail {
				return warn(r.Value, "install util-linux to hold the host lock from a shell: flock "+env.LockPath+" <command>")
			}
			return r
		}},
		Check{"host lock", func(ctx context.Context) Result { return checkLock(env) }},
	)
	return checks
}

// dockerState is what the checks learn from the engine, asked once: the daemon's facts and
// which of the image map's local images it has.
type dockerState struct {
	info    docker.Info
	locals  []string // the map's local images, in its order
	missing []string // those the engine lacks
}

// connect asks the engine everything the checks need and closes the connection.
func connect(env Env, m build.ImageMap) (dockerState, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eng, err := env.Docker(ctx)
	if err != nil {
		return dockerState{}, err
	}
	if c, ok := eng.(io.Closer); ok {
		defer c.Close()
	}
	in, err := eng.Info(ctx)
	if err != nil {
		return dockerState{}, err
	}
	st := dockerState{info: in}
	for pair := range strings.SplitSeq(m.String(), ",") {
		_, local, _ := strings.Cut(pair, "=")
		if local == "" || slices.Contains(st.locals, local) {
			continue
		}
		st.locals = append(st.locals, local)
		if has, err := eng.ImageExists(ctx, local); err != nil || !has {
			st.missing = append(st.missing, local)
		}
	}
	return st, nil
}

func checkDocker(state func() (dockerState, error)) Result {
	st, err := state()
	if err != nil {
		return fail(firstLine(err.Error()), "start the Docker daemon (systemctl start docker) or set DOCKER_HOST")
	}
	v := fmt.Sprintf("API %s (Docker %s)", st.info.APIVersion, st.info.ServerVersion)
	switch {
	case versionLess(st.info.APIVersion, MinAPIVersion):
		return fail(v, "the Docker SDK needs API "+MinAPIVersion+" or later; upgrade Docker")
	case versionLess(st.info.APIVersion, WantAPIVersion):
		return warn(v, "API "+WantAPIVersion+" (Docker 19.03) or later reports the cgroup version; older daemons are taken for cgroup v1")
	}
	return ok("%s", v)
}

// checkCgroup reads the host's hierarchy as runner/cgroup does: v2 when the unified
// hierarchy has controllers, else v1 with the cpuacct and memory controllers.
func checkCgroup(env Env, state func() (dockerState, error)) Result {
	if b, err := env.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		ctrl := strings.Fields(string(b))
		var missing []string
		for _, want := range []string{"cpu", "memory", "cpuset"} {
			if !slices.Contains(ctrl, want) {
				missing = append(missing, want)
			}
		}
		if missing != nil {
			return warn("v2 without "+strings.Join(missing, ", "), "enable the controllers in the root's cgroup.subtree_control; CPU or memory figures need them")
		}
		v := "v2 (" + strings.Join(ctrl, " ") + ")"
		if st, err := state(); err == nil && st.info.CgroupVersion == 1 {
			return warn(v, "Docker reports cgroup v1: the daemon and the host disagree")
		}
		return ok("%s", v)
	}
	_, cpuErr := env.ReadFile("/sys/fs/cgroup/cpuacct/cpuacct.usage")
	_, memErr := env.ReadFile("/sys/fs/cgroup/memory/memory.max_usage_in_bytes")
	if cpuErr != nil || memErr != nil {
		return fail("neither v2 nor v1 cpuacct and memory under /sys/fs/cgroup", "mount cgroup2 (systemd.unified_cgroup_hierarchy=1) or the v1 cpuacct and memory controllers: CPU and memory are read there")
	}
	// runner/cgroup reads v1 in full; only resetting the memory high-water mark needs write
	// access, without which it samples the current memory every 50 ms (a peak may be missed).
	if syscall.Access("/sys/fs/cgroup/memory/memory.max_usage_in_bytes", 2 /* W_OK */) != nil {
		return warn("v1 (cpuacct, memory), memory.max_usage_in_bytes not writable", "peak memory is sampled every 50 ms instead of reset and read: run the runner as root")
	}
	return ok("v1 (cpuacct, memory)")
}

// checkCPUs reports the server and load-generator CPU sets work would use and whether the
// kernel keeps other tasks off them.
func checkCPUs(c RunnerConfig, env Env) Result {
	if c.Lite {
		return ok("lite: not pinned (%d CPUs)", c.NumCPU)
	}
	dServer, dLoad := host.SplitCPUs(c.NumCPU)
	server, load := c.ServerCPUs, c.LoadgenCPUs
	if server == "" {
		server = dServer
	}
	if load == "" {
		load = dLoad
	}
	if err := host.CheckCPUSet(server, c.NumCPU); err != nil {
		return fail("server "+err.Error(), "set ARENA_SERVER_CPUS (--server-cpus) to CPUs this host has")
	}
	if err := host.CheckCPUSet(load, c.NumCPU); err != nil {
		return fail("load generator "+err.Error(), "set ARENA_LOADGEN_CPUS (--loadgen-cpus) to CPUs this host has")
	}
	v := fmt.Sprintf("server %s, load generator %s", server, load)
	sc, _ := host.ParseCPUSet(server)
	lc, _ := host.ParseCPUSet(load)
	if slices.ContainsFunc(sc, func(x int) bool { return slices.Contains(lc, x) }) {
		return warn(v+" (shared)", "servers and load tools share CPUs, so they compete; give them disjoint sets on a host with more CPUs")
	}
	iso := "none"
	var isolated []int
	if b, err := env.ReadFile("/sys/devices/system/cpu/isolated"); err == nil && strings.TrimSpace(string(b)) != "" {
		iso = strings.TrimSpace(string(b))
		isolated, _ = host.ParseCPUSet(iso)
	}
	for _, x := range append(sc, lc...) {
		if !slices.Contains(isolated, x) {
			return warn(v+", isolated: "+iso, "other tasks may run on these CPUs; boot with isolcpus="+server+","+load+" (or a cpuset for system.slice) for steadier numbers")
		}
	}
	return ok("%s, isolated", v)
}

// checkNofile compares the open-files hard limit with what each row needs (a file per
// connection, and the margin). A row over the limit fails and the job goes on, so only a
// limit that no row fits is a FAIL.
func checkNofile(env Env, profiles []profile.Profile) Result {
	need, least := int64(0), int64(-1)
	got := env.HardNofile()
	var over []string
	for _, p := range profiles {
		for _, n := range p.ConnCounts(false) {
			want := int64(n) + host.NofileMargin
			need = max(need, want)
			if least < 0 || want < least {
				least = want
			}
			if want > got {
				over = append(over, fmt.Sprintf("%s %dc", p.Name, n))
			}
		}
	}
	v := fmt.Sprintf("hard limit %d, profiles need up to %d", got, need)
	fix := fmt.Sprintf("raise it to %d (LimitNOFILE= in the runner's and the Docker daemon's units, or run as root)", host.NofileWant)
	switch {
	case least > got:
		return fail(v, "no row fits: "+fix)
	case over != nil:
		return warn(v, fmt.Sprintf("these rows would fail: %s; %s", strings.Join(over, ", "), fix))
	}
	return ok("%s", v)
}

func checkUDP(env Env) Result {
	var parts []string
	low := false
	for _, k := range []string{"rmem_max", "wmem_max"} {
		b, err := env.ReadFile("/proc/sys/net/core/" + k)
		n, perr := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || perr != nil {
			parts = append(parts, k+" unknown")
			low = true
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %d", k, n))
		low = low || n < udpBufferWant
	}
	v := strings.Join(parts, ", ")
	if low {
		return warn(v, fmt.Sprintf("sysctl -w net.core.rmem_max=%d net.core.wmem_max=%d: quic-go wants that much for HTTP/3", udpBufferWant, udpBufferWant))
	}
	return ok("%s", v)
}

// checkTool looks for a pinned load tool on PATH and checks its version, as a native
// measurement does. In lite mode the tools run in the load-generator image, so a missing
// or wrong native tool is only a warning.
func checkTool(ctx context.Context, env Env, t loadgen.Tool, lite bool) Result {
	bad := fail
	suffix := ""
	if lite {
		bad = warn
		suffix = " (lite uses the load-generator image)"
	}
	path, err := env.lookPath(t.Binary)
	if err != nil {
		return bad("not on PATH"+suffix, "install "+t.PinnedVersion+": "+loadgen.Hint(t))
	}
	var full, upstream string
	if f, isBin, err := loadgen.CheckBinaryVersion(t, path); isBin {
		if err != nil && !errors.Is(err, loadgen.ErrWrongVersion) {
			return bad(path+": "+firstLine(err.Error())+suffix, "install "+t.PinnedVersion+": "+loadgen.Hint(t))
		}
		full, upstream = f, t.PinnedVersion
		if err != nil {
			upstream = ""
		}
	} else {
		out, _ := env.Output(ctx, path, t.VersionArgs...) // wrk -v exits 1; the output decides
		full, upstream, err = t.ParseVersion(string(out))
		if err != nil {
			return bad(path+": no version in its output"+suffix, "install "+t.PinnedVersion+": "+loadgen.Hint(t))
		}
	}
	if upstream != t.PinnedVersion {
		return bad(fmt.Sprintf("%s is %s, pinned %s%s", path, full, t.PinnedVersion, suffix), "install "+t.PinnedVersion+": "+loadgen.Hint(t))
	}
	return ok("%s %s", path, full)
}

// checkImages checks that every local stand-in the image map names is on the host.
func checkImages(m build.ImageMap, state func() (dockerState, error)) Result {
	if m.Len() == 0 {
		return ok("no ARENA_IMAGE_MAP: base images are pulled from their registries")
	}
	st, err := state()
	if err != nil {
		return fail("Docker not reachable", "see the docker line")
	}
	if st.missing != nil {
		return fail(fmt.Sprintf("%d of %d mapped images missing: %s", len(st.missing), len(st.locals), strings.Join(st.missing, ", ")), "run bash deploy/base-images.sh, or drop them from ARENA_IMAGE_MAP")
	}
	return ok("%d mapped images present (%s)", len(st.locals), strings.Join(st.locals, ", "))
}

// checkPerf: profiling is optional, so nothing here fails.
func checkPerf(ctx context.Context, env Env) Result {
	path, err := env.lookPath("perf")
	if err != nil {
		return warn("perf not on PATH", "install it (Debian: apt-get install linux-perf) for CPU profiles; measuring works without")
	}
	paranoid := "unknown"
	if b, err := env.ReadFile("/proc/sys/kernel/perf_event_paranoid"); err == nil {
		paranoid = strings.TrimSpace(string(b))
	}
	v := fmt.Sprintf("%s, perf_event_paranoid %s", path, paranoid)
	if err := env.PerfRecord(ctx, path); err != nil {
		return warn(v+", cannot record cpu-clock system-wide ("+firstLine(err.Error())+")", "run the runner as root or sysctl -w kernel.perf_event_paranoid=-1 for CPU profiles")
	}
	return ok("%s, records cpu-clock", v)
}

// checkDisk measures the free space on the file system holding path (or its nearest
// existing parent).
func checkDisk(env Env, path, what string) Result {
	if path == "" {
		return warn("unknown path", "")
	}
	p := path
	for {
		if _, err := os.Stat(p); err == nil || filepath.Dir(p) == p {
			break
		}
		p = filepath.Dir(p)
	}
	free, err := env.Free(p)
	if err != nil {
		return warn(path+": "+err.Error(), "")
	}
	v := fmt.Sprintf("%s free on %s (%s)", gib(free), path, what)
	switch {
	case free < diskFail:
		return fail(v, "free space: one entry's image and build cache take 1-2 GiB (docker system prune, docker image prune -a --filter label=arenabot.managed)")
	case free < diskWarn:
		return warn(v, "under 20 GiB holds only a few jobs' images (a head and a base per entry); prune or grow the disk")
	}
	return ok("%s", v)
}

func checkBinary(env Env, name, fix string) Result {
	p, err := env.lookPath(name)
	if err != nil {
		return fail(name+" not on PATH", fix)
	}
	return ok("%s", p)
}

// checkLock opens the host lock file for writing, as LockHost does, without taking it.
func checkLock(env Env) Result {
	f, err := os.OpenFile(env.LockPath, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return fail(firstLine(err.Error()), "make "+filepath.Dir(env.LockPath)+" writable for the runner's user, or remove a stale "+env.LockPath+" owned by another user")
	}
	f.Close()
	return ok("%s writable", env.LockPath)
}

func gib(n uint64) string { return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30)) }

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// versionLess compares dotted versions ("1.9" < "1.41").
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(as), len(bs)) {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}
