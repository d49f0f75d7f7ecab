// Package cgroup measures the CPU time and the peak memory of a container over an exact
// window by reading its cgroup files, instead of asking the Docker daemon for stats.
//
// It reads cgroup v2 (the unified hierarchy: cpu.stat, memory.peak, memory.current) and
// cgroup v1 (the cpuacct and memory controllers: cpuacct.usage, memory.max_usage_in_bytes,
// memory.usage_in_bytes). A hybrid host, whose controllers are mounted as v1 beside an empty
// unified hierarchy, is read as v1.
//
// The process reading the files needs the host's view of the cgroup tree: run it on the host,
// or in a container with the host's cgroup namespace and /sys/fs/cgroup mounted. Resetting
// the memory high-water mark needs write access to the group's files (root); without it the
// package samples the current memory every 50 ms instead.
package cgroup

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrGone is wrapped by every error caused by the group (or the process looked up) having
// disappeared: the container exited or was removed.
var ErrGone = errors.New("cgroup is gone")

// Root is where the cgroup hierarchy is normally mounted.
const Root = "/sys/fs/cgroup"

// sampleEvery is the period of the memory sampler used where the high-water mark cannot be
// reset.
var sampleEvery = 50 * time.Millisecond

// procDir is where the /proc/<pid>/cgroup files are read (a variable for tests).
var procDir = "/proc"

// searchDepth bounds how deep ForContainer looks under the root for a container's directory.
const searchDepth = 6

// A Group is the cgroup of one container (or process). The zero value is not usable; get
// one from ForPID or ForContainer.
type Group struct {
	version int
	cpuDir  string   // v2: the group's directory; v1: its directory in the cpuacct hierarchy
	memDir  string   // v2: the same as cpuDir; v1: its directory in the memory hierarchy
	more    []*Group // Join: the other groups measured with this one
}

// ForPID finds the cgroup of the process pid (normally a container's init PID) from
// /proc/<pid>/cgroup, under root (normally Root, "/sys/fs/cgroup").
//
// When root holds a unified hierarchy (root/cgroup.controllers exists) the group is read as
// cgroup v2 from the "0::<path>" line; otherwise as cgroup v1 from the lines of the cpuacct
// and memory controllers. It is ForContainer with no container ID, so it fails when the
// path in /proc/<pid>/cgroup does not lead to the group (a reader in another cgroup
// namespace).
func ForPID(root string, pid int) (*Group, error) {
	return ForContainer(root, pid, "")
}

// ForContainer is ForPID for a container whose full ID is id. When the path that
// /proc/<pid>/cgroup shows does not lead to a usable group under root (it is relative to a
// cgroup namespace the reader is not in, such as "/" or "/../<id>"), it searches root for a
// directory whose name ends in id ("<id>" with the cgroupfs driver, "docker-<id>.scope"
// with systemd). An empty id disables the search.
func ForContainer(root string, pid int, id string) (*Group, error) {
	file := filepath.Join(procDir, strconv.Itoa(pid), "cgroup")
	data, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return nil, fmt.Errorf("cgroup of process %d: the process has exited: %w", pid, ErrGone)
		}
		return nil, fmt.Errorf("cgroup of process %d: %w", pid, err)
	}
	entries, err := parseProcCgroup(string(data))
	if err != nil {
		return nil, fmt.Errorf("cgroup of process %d: %s: %w", pid, file, err)
	}
	g, err := resolve(root, entries, id)
	if err != nil {
		return nil, fmt.Errorf("cgroup of process %d: %w", pid, err)
	}
	return g, nil
}

// Version is 2 for the unified hierarchy and 1 for the v1 cpuacct and memory controllers.
func (g *Group) Version() int { return g.version }

// Procs lists the processes in the group (cgroup.procs of its CPU directory), in the
// order the kernel gives them: a container's processes, for keeping only their samples of a
// profile recorded on its CPUs. A group that is gone wraps ErrGone.
func (g *Group) Procs() ([]int, error) {
	path := filepath.Join(g.cpuDir, "cgroup.procs")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fileErr(path, err)
	}
	var pids []int
	for f := range strings.FieldsSeq(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a process ID", path, f)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// String names the group's directories, for logs.
func (g *Group) String() string {
	if len(g.more) > 0 {
		return g.joinedString()
	}
	if g.version == 2 {
		return g.cpuDir
	}
	return g.cpuDir + " + " + g.memDir
}

// procEntry is one line of /proc/<pid>/cgroup: "hierarchy-ID:controller-list:path".
type procEntry struct {
	hierarchy   string
	controllers []string // empty for the unified hierarchy; "name=systemd" for named ones
	path        string
}

// parseProcCgroup parses the contents of /proc/<pid>/cgroup.
func parseProcCgroup(data string) ([]procEntry, error) {
	var entries []procEntry
	for n, line := range strings.Split(data, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("line %d: %q is not hierarchy:controllers:path", n+1, line)
		}
		e := procEntry{hierarchy: parts[0], path: parts[2]}
		if parts[1] != "" {
			e.controllers = strings.Split(parts[1], ",")
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, errors.New("no cgroup lines")
	}
	return entries, nil
}

// unified returns the path of the v2 line ("0::<path>").
func unified(entries []procEntry) (string, bool) {
	for _, e := range entries {
		if e.hierarchy == "0" && len(e.controllers) == 0 {
			return e.path, true
		}
	}
	return "", false
}

// v1Controller returns the line of a v1 controller ("4:memory:<path>", "3:cpu,cpuacct:<path>").
func v1Controller(entries []procEntry, controller string) (procEntry, bool) {
	for _, e := range entries {
		if slices.Contains(e.controllers, controller) {
			return e, true
		}
	}
	return procEntry{}, false
}

// resolve turns the lines of /proc/<pid>/cgroup into a Group under root.
func resolve(root string, entries []procEntry, id string) (*Group, error) {
	if exists(filepath.Join(root, "cgroup.controllers")) {
		path, ok := unified(entries)
		if !ok {
			return nil, fmt.Errorf("%s is a cgroup v2 hierarchy but the process has no \"0::\" line", root)
		}
		dir, err := groupDir(root, path, id, "cpu.stat", "memory.current")
		if err != nil {
			return nil, err
		}
		return &Group{version: 2, cpuDir: dir, memDir: dir}, nil
	}

	cpu, ok := v1Controller(entries, "cpuacct")
	if !ok {
		return nil, fmt.Errorf("%s has no cgroup.controllers (not v2) and the process has no cpuacct line (not v1)", root)
	}
	mem, ok := v1Controller(entries, "memory")
	if !ok {
		return nil, errors.New("cgroup v1 without a memory controller line")
	}
	cpuRoot, err := v1Root(root, "cpuacct", cpu.controllers)
	if err != nil {
		return nil, err
	}
	memRoot, err := v1Root(root, "memory", mem.controllers)
	if err != nil {
		return nil, err
	}
	cpuDir, err := groupDir(cpuRoot, cpu.path, id, "cpuacct.usage")
	if err != nil {
		return nil, err
	}
	memDir, err := groupDir(memRoot, mem.path, id, "memory.usage_in_bytes", "memory.max_usage_in_bytes")
	if err != nil {
		return nil, err
	}
	return &Group{version: 1, cpuDir: cpuDir, memDir: memDir}, nil
}

// v1Root finds where a v1 controller is mounted under root: root/<controller> (a mount or
// the usual symlink to "cpu,cpuacct"), else the directory named like the line's controller
// list, else any directory whose comma-separated name lists the controller.
func v1Root(root, controller string, list []string) (string, error) {
	for _, name := range []string{controller, strings.Join(list, ",")} {
		if dir := filepath.Join(root, name); isDir(dir) {
			return dir, nil
		}
	}
	des, _ := os.ReadDir(root)
	for _, de := range des {
		if slices.Contains(strings.Split(de.Name(), ","), controller) {
			if dir := filepath.Join(root, de.Name()); isDir(dir) {
				return dir, nil
			}
		}
	}
	return "", fmt.Errorf("cgroup v1 controller %s is not mounted under %s", controller, root)
}

// groupDir joins the path from /proc/<pid>/cgroup to the hierarchy's root and checks that
// the group has the files wanted; when it does not, and id is set, it searches the
// hierarchy for the container's directory.
func groupDir(hierarchy, path, id string, want ...string) (string, error) {
	if p, ok := strings.CutSuffix(path, " (deleted)"); ok {
		return "", fmt.Errorf("%s: %w", p, ErrGone)
	}
	// A path relative to another cgroup namespace ("/../x") must not climb out of root.
	if !slices.Contains(strings.Split(path, "/"), "..") {
		dir := filepath.Join(hierarchy, filepath.FromSlash(path))
		if hasAll(dir, want) && (id == "" || path != "/") {
			return dir, nil
		}
	}
	if id == "" {
		return "", fmt.Errorf("no cgroup with %s at %s under %s (the reader may be in another cgroup namespace; pass the container ID to search for it)",
			strings.Join(want, " and "), path, hierarchy)
	}
	dir, err := search(hierarchy, id, want)
	if err != nil {
		return "", err
	}
	return dir, nil
}

// search walks hierarchy (searchDepth levels deep) for a directory whose name ends in id
// or id+".scope" and that has the files wanted.
func search(hierarchy, id string, want []string) (string, error) {
	var found string
	hierarchy = filepath.Clean(hierarchy)
	base := strings.Count(hierarchy, string(filepath.Separator))
	err := filepath.WalkDir(hierarchy, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a group that vanished while walking, or unreadable: skip it
		}
		if !d.IsDir() {
			return nil
		}
		if strings.Count(p, string(filepath.Separator))-base > searchDepth {
			return filepath.SkipDir
		}
		name := d.Name()
		if (strings.HasSuffix(name, id) || strings.HasSuffix(name, id+".scope")) && hasAll(p, want) {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if found == "" {
		return "", fmt.Errorf("no cgroup directory for container %s under %s: %w", id, hierarchy, ErrGone)
	}
	return found, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func hasAll(dir string, files []string) bool {
	for _, f := range files {
		if !exists(filepath.Join(dir, f)) {
			return false
		}
	}
	return true
}

// A Window is an open measurement over a group, from Begin to End.
type Window struct {
	g      *Group
	start  time.Time
	cpu0   time.Duration
	peakFD *os.File // v2 with a resettable memory.peak: the fd whose peak was reset
	sample *sampler // no resettable high-water mark: memory.current sampled
	ended  bool
	more   []*Window // the windows of the joined groups
}

// A Usage is what a group used during a window.
type Usage struct {
	CPU        time.Duration // CPU time of all the group's tasks (user + system)
	Wall       time.Duration // the window's wall-clock length
	MemoryPeak int64         // the highest memory usage during the window, bytes
}

// Cores is CPU/Wall: 1.0 is one full CPU busy for the whole window.
func (u Usage) Cores() float64 {
	if u.Wall <= 0 {
		return 0
	}
	return u.CPU.Seconds() / u.Wall.Seconds()
}

// Percent is Cores*100, as docker stats shows it (100% is one full CPU).
func (u Usage) Percent() float64 { return u.Cores() * 100 }

// Begin starts a measured window: it reads the CPU usage now and resets the memory
// high-water mark.
//
// v1 resets memory.max_usage_in_bytes by writing 0 to it. v2 writes to memory.peak, which
// on Linux ≥ 6.12 resets the peak seen through that open file, kept open until End. Where
// neither works (no write access, older kernels, no memory.peak), a goroutine samples the
// current usage every 50 ms until End.
func (g *Group) Begin() (*Window, error) {
	if len(g.more) > 0 {
		return g.beginJoined()
	}
	w := &Window{g: g}
	cpu, err := g.cpuUsage()
	if err != nil {
		return nil, fmt.Errorf("begin window: %w", err)
	}
	w.cpu0, w.start = cpu, time.Now()

	switch g.version {
	case 1:
		err := writeExisting(filepath.Join(g.memDir, "memory.max_usage_in_bytes"), "0\n")
		if err != nil {
			if gone(err) {
				return nil, fmt.Errorf("begin window: %w", goneErr(err))
			}
			w.sample, err = startSampler(filepath.Join(g.memDir, "memory.usage_in_bytes"))
		}
		if err != nil {
			return nil, fmt.Errorf("begin window: %w", err)
		}
	case 2:
		w.peakFD = resetPeak(filepath.Join(g.memDir, "memory.peak"))
		if w.peakFD == nil {
			if w.sample, err = startSampler(filepath.Join(g.memDir, "memory.current")); err != nil {
				return nil, fmt.Errorf("begin window: %w", err)
			}
		}
	}
	return w, nil
}

// resetPeak opens a v2 memory.peak file, resets its fd-local peak and returns the open file;
// nil when the kernel cannot (the file is missing or read-only, or a read after the write
// does not give a number).
func resetPeak(path string) *os.File {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	if _, err := f.WriteAt([]byte("0\n"), 0); err != nil {
		f.Close()
		return nil
	}
	if _, err := readIntAt(f); err != nil {
		f.Close()
		return nil
	}
	return f
}

// End closes the window and returns the CPU time the group used during it, the wall time,
// and the peak memory. It fails, wrapping ErrGone, when the group disappeared; either way
// the window is closed, and a second End is an error.
func (w *Window) End() (Usage, error) {
	if w.ended {
		return Usage{}, errors.New("end window: already ended")
	}
	w.ended = true
	if w.more != nil {
		return w.endJoined()
	}
	cpu, cpuErr := w.g.cpuUsage()
	u := Usage{Wall: time.Since(w.start), CPU: cpu - w.cpu0}

	var memErr error
	switch {
	case w.sample != nil:
		u.MemoryPeak, memErr = w.sample.stop()
	case w.peakFD != nil:
		u.MemoryPeak, memErr = readIntAt(w.peakFD)
		w.peakFD.Close()
		if memErr != nil {
			memErr = fileErr(w.peakFD.Name(), memErr)
		}
	default: // v1 with a reset high-water mark
		u.MemoryPeak, memErr = readInt(filepath.Join(w.g.memDir, "memory.max_usage_in_bytes"))
	}
	if err := cmp.Or(cpuErr, memErr); err != nil {
		return Usage{}, fmt.Errorf("end window: %w", err)
	}
	if u.CPU < 0 { // the counter was reset: the group was replaced under us
		return Usage{}, fmt.Errorf("end window: CPU usage of %s went backwards: %w", w.g, ErrGone)
	}
	return u, nil
}

// cpuUsage reads the group's total CPU time.
func (g *Group) cpuUsage() (time.Duration, error) {
	if g.version == 1 {
		ns, err := readInt(filepath.Join(g.cpuDir, "cpuacct.usage"))
		return time.Duration(ns), err
	}
	path := filepath.Join(g.cpuDir, "cpu.stat")
	f, err := os.Open(path)
	if err != nil {
		return 0, fileErr(path, err)
	}
	defer f.Close()
	usec, err := parseCPUStat(f)
	if err != nil {
		return 0, fileErr(path, err)
	}
	return time.Duration(usec) * time.Microsecond, nil
}

// parseCPUStat returns usage_usec from a v2 cpu.stat.
func parseCPUStat(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == "usage_usec" {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("usage_usec: %w", err)
			}
			return n, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("no usage_usec line")
}

// writeExisting writes s to an existing file (cgroup files cannot be created).
func writeExisting(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	return errors.Join(err, f.Close())
}

// readInt reads a file holding one integer.
func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fileErr(path, err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fileErr(path, err)
	}
	return n, nil
}

// readIntAt reads the integer on the first line of an open file, from its start.
func readIntAt(f *os.File) (int64, error) {
	buf := make([]byte, 64)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(buf[:n])), "\n")
	return strconv.ParseInt(strings.TrimSpace(first), 10, 64)
}

// gone reports whether err means the group's files no longer exist.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENODEV) || errors.Is(err, syscall.ESRCH)
}

// goneErr says that the group disappeared, keeping the error that showed it.
func goneErr(err error) error {
	return fmt.Errorf("%w (the container exited or was removed): %v", ErrGone, err)
}

// fileErr names the file an error came from, and marks errors of a vanished group.
func fileErr(path string, err error) error {
	if gone(err) {
		return goneErr(err)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// A sampler polls a memory usage file and keeps the highest value.
type sampler struct {
	path string
	quit chan struct{}
	done chan struct{}

	mu   sync.Mutex
	peak int64
	err  error
}

func startSampler(path string) (*sampler, error) {
	s := &sampler{path: path, quit: make(chan struct{}), done: make(chan struct{})}
	if err := s.once(); err != nil {
		return nil, err
	}
	go s.run()
	return s, nil
}

func (s *sampler) run() {
	defer close(s.done)
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			if s.once() != nil {
				return
			}
		}
	}
}

// once takes one sample; the first error is kept and ends the sampling.
func (s *sampler) once() error {
	n, err := readInt(s.path)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if err != nil {
		s.err = err
		return err
	}
	s.peak = max(s.peak, n)
	return nil
}

// stop ends the sampling after one last sample and returns the peak.
func (s *sampler) stop() (int64, error) {
	close(s.quit)
	<-s.done
	s.once()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak, s.err
}
