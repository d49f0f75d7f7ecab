package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ErrNoPidsParent is wrapped by PidsParent's error when the engine's cgroup driver leaves
// no cgroup the runner can limit: the systemd driver wants a slice that systemd manages.
var ErrNoPidsParent = errors.New("no pids limit for builds")

// PidsParent makes the cgroup name directly under root (normally Root) with a pids.max of
// max, and returns the cgroup parent to give the engine for containers that should count
// toward that limit together ("/<name>"). The Docker Engine's builds take a cgroup parent
// but no pids limit of their own, so this is how a build's processes are bounded: the RUN
// steps of every build made under it share max. version is the engine's cgroup version (1
// or 2) and driver its cgroup driver; with "systemd" the error wraps ErrNoPidsParent (the
// parent would be a slice systemd owns, whose TasksMax is systemd's to set). Writing under
// root needs root.
func PidsParent(root string, version int, driver, name string, max int64) (string, error) {
	if driver == "systemd" {
		return "", fmt.Errorf("the Docker Engine's cgroup driver is systemd, whose cgroup parents are slices systemd manages: builds run without a pids limit (%w); run dockerd with native.cgroupdriver=cgroupfs to have one", ErrNoPidsParent)
	}
	if name == "" || strings.ContainsAny(name, "/.") || max <= 0 {
		return "", fmt.Errorf("pids parent %q with max %d: want a plain name and a positive max", name, max)
	}
	var dir string
	switch version {
	case 1:
		dir = filepath.Join(root, "pids", name)
	case 2:
		dir = filepath.Join(root, name)
		// The pids controller must be enabled for the root's children; it normally is
		// where Docker runs on cgroup v2.
		ctl := filepath.Join(root, "cgroup.subtree_control")
		if b, err := os.ReadFile(ctl); err == nil && !slices.Contains(strings.Fields(string(b)), "pids") {
			if err := os.WriteFile(ctl, []byte("+pids"), 0o644); err != nil {
				return "", fmt.Errorf("enable the pids controller in %s: %w", ctl, err)
			}
		}
	default:
		return "", fmt.Errorf("cgroup version %d: want 1 or 2", version)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("make the cgroup %s: %w", dir, err)
	}
	file := filepath.Join(dir, "pids.max")
	if err := os.WriteFile(file, []byte(strconv.FormatInt(max, 10)), 0o644); err != nil {
		return "", fmt.Errorf("set %s to %d: %w", file, max, err)
	}
	return "/" + name, nil
}
