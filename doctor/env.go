package doctor

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/arenabot/arenabot/cpuprof"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/host"
)

// Docker is what the checks ask of the Docker Engine.
type Docker interface {
	Info(ctx context.Context) (docker.Info, error)
	ImageExists(ctx context.Context, ref string) (bool, error)
}

// Env is the machine as the checks see it. System returns the real one; a test replaces
// fields to break it.
type Env struct {
	// Getenv reads PATH (where tools are looked up) and the ARENA_* variables.
	Getenv func(string) string
	// ReadFile reads /proc, /sys and the files the variables name.
	ReadFile func(name string) ([]byte, error)
	// Docker connects to the engine.
	Docker func(ctx context.Context) (Docker, error)
	// Output runs a program and returns what it printed on stdout and stderr.
	Output func(ctx context.Context, path string, args ...string) ([]byte, error)
	// Listen binds network ("tcp", "udp") addr and returns what releases it.
	Listen func(network, addr string) (io.Closer, error)
	// Free is the space available to an unprivileged user on the file system holding path.
	Free func(path string) (uint64, error)
	// HardNofile is the open-files hard limit the runner gets (after host.RaiseNofile).
	HardNofile func() int64
	// PerfRecord records cpu-clock on CPU 0 for a moment with the perf at path.
	PerfRecord func(ctx context.Context, perf string) error
	// Proc is the proc file system, where a taken port's process is looked for.
	Proc string
	// LockPath is the host lock file.
	LockPath string
}

// System is this machine.
func System() Env {
	return Env{
		Getenv:   os.Getenv,
		ReadFile: os.ReadFile,
		Docker: func(ctx context.Context) (Docker, error) {
			return docker.New(ctx)
		},
		Output: func(ctx context.Context, path string, args ...string) ([]byte, error) {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			var out bytes.Buffer
			cmd := exec.CommandContext(ctx, path, args...)
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			return out.Bytes(), err
		},
		Listen: func(network, addr string) (io.Closer, error) {
			if network == "udp" {
				return net.ListenPacket(network, addr)
			}
			return net.Listen(network, addr)
		},
		Free: func(path string) (uint64, error) {
			var st syscall.Statfs_t
			if err := syscall.Statfs(path, &st); err != nil {
				return 0, err
			}
			return st.Bavail * uint64(st.Bsize), nil
		},
		HardNofile: func() int64 {
			_ = host.RaiseNofile() // what work does first; the limit it leaves is what counts
			return host.HardNofile()
		},
		PerfRecord: func(ctx context.Context, perf string) error {
			dir, err := os.MkdirTemp("", "arenabot-doctor-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			r := cpuprof.Recording{Perf: perf, CPUs: "0", Duration: 10 * time.Millisecond, Output: filepath.Join(dir, "perf.data")}
			return r.Run(ctx)
		},
		Proc:     "/proc",
		LockPath: host.LockPath,
	}
}

// lookPath finds an executable in the directories of the Env's PATH.
func (e Env) lookPath(name string) (string, error) {
	for _, dir := range filepath.SplitList(e.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("not on PATH")
}
