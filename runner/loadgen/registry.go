package loadgen

import (
	"errors"
	"fmt"
	"strings"

	"github.com/arenabot/arenabot/profile"
)

// ErrUnknownTool is wrapped by ForProfile when no adapter runs the profile's tool.
var ErrUnknownTool = errors.New("no adapter for load tool")

// ErrWrongVersion is wrapped by CheckVersion when a tool is not the pinned version.
var ErrWrongVersion = errors.New("load tool is not the pinned version")

// All returns every adapter, one per tool.
func All() []Tool { return []Tool{Wrk{}, H2load{}, Ghz{}, Arenaload{}} }

// ForProfile returns the adapter for the profile's load tool.
func ForProfile(p profile.Profile) (Tool, error) {
	var names []string
	for _, t := range All() {
		if t.Name() == p.Tool {
			return t, nil
		}
		names = append(names, t.Name())
	}
	return nil, fmt.Errorf("profile %s: %w %q (adapters: %s)", p.Name, ErrUnknownTool, p.Tool, strings.Join(names, ", "))
}

// CheckVersion parses out, the output of tool's VersionArgs, and returns the full version
// string; the error wraps ErrWrongVersion when the upstream version is not the pinned one.
func CheckVersion(tool Tool, out string) (full string, err error) {
	full, upstream, err := tool.ParseVersion(out)
	if err != nil {
		return "", err
	}
	if upstream != tool.PinnedVersion() {
		return full, fmt.Errorf("%s %s: %w %s", tool.Binary(), full, ErrWrongVersion, tool.PinnedVersion())
	}
	return full, nil
}
