package loadgen

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"strings"

	"github.com/arenabot/arenabot/profile"
)

// ErrUnknownTool is wrapped by ForProfile when no adapter runs the profile's tool.
var ErrUnknownTool = errors.New("no adapter for load tool")

// ErrWrongVersion is wrapped by CheckVersion when a tool is not the pinned version.
var ErrWrongVersion = errors.New("load tool is not the pinned version")

// All returns every tool, one of each.
func All() []Tool { return []Tool{Wrk(), H2load(), Ghz(), Arenaload()} }

// ForProfile returns the profile's load tool.
func ForProfile(p profile.Profile) (Tool, error) {
	var names []string
	for _, t := range All() {
		if t.Name == p.Tool {
			return t, nil
		}
		names = append(names, t.Name)
	}
	return Tool{}, fmt.Errorf("profile %s: %w %q (adapters: %s)", p.Name, ErrUnknownTool, p.Tool, strings.Join(names, ", "))
}

// CheckVersion parses out, the output of tool's VersionArgs, and returns the full version
// string; the error wraps ErrWrongVersion when the upstream version is not the pinned one.
func CheckVersion(tool Tool, out string) (full string, err error) {
	full, upstream, err := tool.ParseVersion(out)
	if err != nil {
		return "", err
	}
	if upstream != tool.PinnedVersion {
		return full, fmt.Errorf("%s %s: %w %s", tool.Binary, full, ErrWrongVersion, tool.PinnedVersion)
	}
	return full, nil
}

// binaryVersion reads the version of the executable at path, a Go tool's (Install.GoPackage),
// from its Go build information, as go version -m does: full "v0.121.0 (go1.26.8)", upstream
// "0.121.0". It fails for a binary that is not built from the tool's module.
func (t Tool) binaryVersion(path string) (full, upstream string, err error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("%s build information: %w", t.Name, err)
	}
	if bi.Main.Path != t.Install.GoModule {
		return "", "", fmt.Errorf("%s is built from module %q, not %s", path, bi.Main.Path, t.Install.GoModule)
	}
	v := bi.Main.Version
	return v + " (" + bi.GoVersion + ")", strings.TrimPrefix(v, "v"), nil
}

// CheckBinaryVersion reads the version of the executable at path from its Go build
// information when tool is a Go tool (Install.GoPackage: ghz, whose own --version an
// unstamped build leaves "dev") and returns the full version string; the error wraps
// ErrWrongVersion when it is not the pinned one. ok is false for other tools, whose version
// comes from the output of their VersionArgs (CheckVersion).
func CheckBinaryVersion(tool Tool, path string) (full string, ok bool, err error) {
	if tool.Install.GoPackage == "" {
		return "", false, nil
	}
	full, upstream, err := tool.binaryVersion(path)
	if err != nil {
		return "", true, err
	}
	if upstream != tool.PinnedVersion {
		return full, true, fmt.Errorf("%s %s: %w %s", path, full, ErrWrongVersion, tool.PinnedVersion)
	}
	return full, true, nil
}
