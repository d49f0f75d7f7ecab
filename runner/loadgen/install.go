package loadgen

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strings"
	"time"
)

// An Install is where a load tool's pinned version comes from and how that is checked. The
// files that put the tools on a machine are rendered from the tools' Installs, so they
// cannot drift from the versions the runner checks: each tool's load-generator image
// (image/<tool>.Dockerfile, RenderDockerfile) and the load-tool block of .ci/setup (RenderSetup).
// TestInstallFiles fails when either file disagrees; go test ./runner/loadgen -update
// rewrites them.
//
// A tool comes from a Debian bookworm package, from the Go module proxy, or from this
// module itself (the arena's own generators).
type Install struct {
	// Debian is the package that provides the binary ("nghttp2-client"). Its version must be
	// the pinned upstream version with a Debian revision ("1.52.0-1+deb12u3"), which the image
	// build and .ci/setup check with dpkg-query.
	Debian string

	// GoPackage is the main package go install builds at "v"+PinnedVersion
	// ("github.com/bojand/ghz/cmd/ghz"), and GoModule the module whose version the binary's
	// build information must name ("github.com/bojand/ghz"): go install stamps no version the
	// tool itself prints.
	GoPackage, GoModule string
	// GoLDFlags are linker flags the image's build adds ("-X main.version=v{version}", with
	// {version} the pinned version), so that the tool's own version output names it.
	GoLDFlags string

	// Module is a main package of this module ("./cmd/arenaload"): .ci/setup builds it from
	// the checkout (statically, CGO_ENABLED=0) into GOPATH/bin, and the load-generator image
	// copies in that binary (the runner puts it into the image's build context), so the
	// image and the native runs use the same build. Its --version names the pinned version.
	Module string
}

// kinds counts how many of the three sources an Install names.
func (in Install) kinds() int {
	n := 0
	for _, s := range []string{in.Debian, in.GoPackage, in.Module} {
		if s != "" {
			n++
		}
	}
	return n
}

// Hint says, for an error message, how to install tool at its pinned version.
func Hint(tool Tool) string {
	in := tool.Install
	if in.GoPackage != "" {
		return "go install " + in.GoPackage + "@v" + tool.PinnedVersion
	}
	if in.Module != "" {
		return "in this repository: CGO_ENABLED=0 go build -buildvcs=true -o \"$(go env GOPATH)/bin/" + tool.Binary + "\" " + in.Module + ", or .ci/setup"
	}
	return fmt.Sprintf("Debian: apt-get install %s, version %s-*", in.Debian, tool.PinnedVersion)
}

// imageTag is the tag of a load-generator image of tools: each tool's name and pinned
// version, so a version change builds a new image instead of reusing a stale one.
func imageTag(tools []Tool) string {
	parts := make([]string, len(tools))
	for i, t := range tools {
		parts[i] = t.Name + "-" + t.PinnedVersion
	}
	return "arenabot/loadgen:" + strings.Join(parts, "-")
}

// versionArg is the image's build argument that holds a tool's version ("H2LOAD_VERSION").
func versionArg(t Tool) string {
	return strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(t.Name)) + "_VERSION"
}

// imageBuildArgs are the image's build arguments: each tool's pinned version.
func imageBuildArgs(tools []Tool) map[string]string {
	args := map[string]string{}
	for _, t := range tools {
		args[versionArg(t)] = t.PinnedVersion
	}
	return args
}

// checkInstall says what is wrong with a tool's Install, or nil.
func checkInstall(t Tool) error {
	in := t.Install
	switch {
	case in.kinds() != 1:
		return fmt.Errorf("%s: Install names %q, %q and %q; want exactly one of a Debian package, a Go package or a package of this module", t.Name, in.Debian, in.GoPackage, in.Module)
	case in.Module != "" && !strings.HasPrefix(in.Module, "./cmd/"):
		return fmt.Errorf("%s: module package %q is not a command of this module (./cmd/…)", t.Name, in.Module)
	case in.GoPackage != "" && (in.GoModule == "" || !strings.HasPrefix(in.GoPackage, in.GoModule)):
		return fmt.Errorf("%s: Go package %q is not in module %q", t.Name, in.GoPackage, in.GoModule)
	case in.GoPackage == "" && (in.GoModule != "" || in.GoLDFlags != ""):
		return fmt.Errorf("%s: Go module or flags for a Debian package", t.Name)
	case !shellWord.MatchString(in.Debian + in.GoPackage + in.GoModule + in.Module + t.Binary + t.PinnedVersion):
		return fmt.Errorf("%s: a name or version the rendered shell cannot carry as it is", t.Name)
	case strings.ContainsAny(in.GoLDFlags, "\"'`$\\\n"):
		return fmt.Errorf("%s: linker flags %q need quoting", t.Name, in.GoLDFlags)
	}
	return nil
}

var shellWord = regexp.MustCompile(`^[A-Za-z0-9._/+-]+$`)

// modLine is the extended regular expression that matches the module's line of go version
// -m output at version v ("v0.121.0" or a shell variable).
func modLine(module, v string) string {
	return `^[[:space:]]+mod[[:space:]]+` + module + `[[:space:]]+` + v + `[[:space:]]`
}

// RenderDockerfile returns the Dockerfile of an image of the tools (image/<tool>.Dockerfile for one): a build stage per Go tool
// (go install at the pinned version, checked in the binary's build information), then the
// Debian packages on BASE_IMAGE, each checked to be the pinned upstream version.
func RenderDockerfile(tools []Tool) (string, error) { return RenderImageDockerfile(tools, nil) }

// RenderImageDockerfile is RenderDockerfile, except that each Go tool named in prebuilt has no
// build stage: its binary, which the host already built exactly as that stage would (the
// runner checks this with CheckPrebuilt), is copied from the build context, so a machine
// that installed it does not compile it a second time for the image.
func RenderImageDockerfile(tools []Tool, prebuilt map[string]bool) (string, error) {
	var b strings.Builder
	b.WriteString(`# A pinned load-generator image used by ` + "`arenabot bench --lite`" + ` (load tools in Docker).
# Rendered from the adapters' Install (runner/loadgen/install.go) by
# go test ./runner/loadgen -update; edit the adapters, not this file.
# Built by the runner on first use, one image per tool; on hosts without a registry BASE_IMAGE is substituted by
# arenabot/debian:local and GO_IMAGE by arenabot/golang:local (deploy/base-images.sh).
ARG BASE_IMAGE=debian:bookworm-slim
`)
	var debs, gos, mods []Tool
	for _, t := range tools {
		if err := checkInstall(t); err != nil {
			return "", err
		}
		switch in := t.Install; {
		case in.GoPackage != "":
			gos = append(gos, t)
		case in.Module != "":
			mods = append(mods, t)
		default:
			debs = append(debs, t)
		}
	}
	var built []Tool // the Go tools the image compiles
	for _, t := range gos {
		if !prebuilt[t.Name] {
			built = append(built, t)
		}
	}
	if len(built) > 0 {
		b.WriteString("ARG GO_IMAGE=golang:1.26-bookworm\n")
	}
	for _, t := range built {
		in, arg := t.Install, versionArg(t)
		ldflags := goLDFlags(t, "${"+arg+"}")
		fmt.Fprintf(&b, "# %s from the Go module proxy at the pinned version, checked in the binary's build information.\n", t.Name)
		fmt.Fprintf(&b, "FROM ${GO_IMAGE} AS %s\n", t.Name)
		fmt.Fprintf(&b, "ARG %s=%s\n", arg, t.PinnedVersion)
		fmt.Fprintf(&b, "RUN GOFLAGS= CGO_ENABLED=0 GOBIN=/out go install -trimpath -ldflags=\"%s\" \"%s@v${%s}\" \\\n", ldflags, in.GoPackage, arg)
		fmt.Fprintf(&b, " && go version -m /out/%s | grep -Eq \"%s\"\n", t.Binary, modLine(in.GoModule, "v${"+arg+"}"))
	}
	b.WriteString("FROM ${BASE_IMAGE}\n")
	for _, t := range tools {
		fmt.Fprintf(&b, "ARG %s=%s\n", versionArg(t), t.PinnedVersion)
	}
	for _, t := range gos {
		if prebuilt[t.Name] {
			fmt.Fprintf(&b, "# %s: the host's build, made as the build stage would make it (checked by the runner), from the build context.\n", t.Name)
			fmt.Fprintf(&b, "COPY %s /usr/local/bin/%s\n", t.Binary, t.Binary)
			fmt.Fprintf(&b, "RUN %s %s 2>&1 | grep -Fq \"${%s}\"\n", t.Binary, strings.Join(t.VersionArgs, " "), versionArg(t))
			continue
		}
		fmt.Fprintf(&b, "COPY --from=%s /out/%s /usr/local/bin/%s\n", t.Name, t.Binary, t.Binary)
	}
	if len(debs) > 0 {
		var pkgs []string
		for _, t := range debs {
			pkgs = append(pkgs, t.Install.Debian)
		}
		b.WriteString("# The Debian packages, each checked to be the pinned upstream version (any Debian revision).\n")
		b.WriteString("RUN apt-get update \\\n")
		fmt.Fprintf(&b, " && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends %s \\\n", strings.Join(pkgs, " "))
		b.WriteString(" && rm -rf /var/lib/apt/lists/*")
		for _, t := range debs {
			fmt.Fprintf(&b, " \\\n && dpkg-query -W -f='${Version}' %s | grep -Eq \"^([0-9]+:)?${%s}-\"", t.Install.Debian, versionArg(t))
		}
		b.WriteString("\n")
	}
	// Last, so that a new build of this module's tools (every commit) rebuilds only these
	// layers: the Go tools' stages and the packages come from the build cache.
	for _, t := range mods {
		fmt.Fprintf(&b, "# %s is this module's own (%s): the runner copies the checked binary into the build context.\n", t.Name, t.Install.Module)
		fmt.Fprintf(&b, "COPY %s /usr/local/bin/%s\n", t.Binary, t.Binary)
		fmt.Fprintf(&b, "RUN %s --version | grep -Eq \"^%s ${%s}([[:space:]]|$)\"\n", t.Binary, t.Binary, versionArg(t))
	}
	return b.String(), nil
}

// goLDFlags are the linker flags a Go tool is built with, in the image and by .ci/setup:
// "-s -w" and the tool's own, its {version} replaced by version.
func goLDFlags(t Tool, version string) string {
	return strings.TrimSpace("-s -w " + strings.ReplaceAll(t.Install.GoLDFlags, "{version}", version))
}

// CheckPrebuilt says whether the executable at path is a Go tool built exactly as the
// load-generator image's build stage builds it, so the image may copy it instead: the pinned
// module version, CGO_ENABLED=0 (it runs on any base) and -trimpath, read from its build
// information, and the version stamp of its linker flags in its own version output (Go
// records no -ldflags in the build information of a -trimpath build). nil means it is.
func CheckPrebuilt(ctx context.Context, tool Tool, path string) error {
	in := tool.Install
	if in.GoPackage == "" {
		return fmt.Errorf("%s is not a Go tool", tool.Name)
	}
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: build information: %w", path, err)
	}
	if err := checkBuildInfo(tool, path, bi); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, path, tool.VersionArgs...).CombinedOutput()
	if _, upstream, err := tool.ParseVersion(string(out)); err != nil || upstream != tool.PinnedVersion {
		return fmt.Errorf("%s %s does not print the pinned version %s (built without %q?)", path, strings.Join(tool.VersionArgs, " "), tool.PinnedVersion, goLDFlags(tool, tool.PinnedVersion))
	}
	return nil
}

// checkBuildInfo is CheckPrebuilt's reading of the build information.
func checkBuildInfo(tool Tool, path string, bi *debug.BuildInfo) error {
	in := tool.Install
	if bi.Path != in.GoPackage || bi.Main.Path != in.GoModule || bi.Main.Version != "v"+tool.PinnedVersion {
		return fmt.Errorf("%s is %s of %s %s, not %s of %s v%s", path, bi.Path, bi.Main.Path, bi.Main.Version, in.GoPackage, in.GoModule, tool.PinnedVersion)
	}
	want := map[string]string{"CGO_ENABLED": "0", "-trimpath": "true"}
	for _, st := range bi.Settings {
		if v, ok := want[st.Key]; ok {
			if st.Value != v {
				return fmt.Errorf("%s was built with %s=%s, the image's build with %s", path, st.Key, st.Value, v)
			}
			delete(want, st.Key)
		}
	}
	for _, k := range []string{"CGO_ENABLED", "-trimpath"} {
		if v, ok := want[k]; ok {
			return fmt.Errorf("%s was built without %s=%s, which the image's build sets", path, k, v)
		}
	}
	return nil
}

// Markers of the rendered block in .ci/setup.
const (
	setupBegin = "# BEGIN load tools: rendered from the adapters' Install by go test ./runner/loadgen -update; do not edit"
	setupEnd   = "# END load tools"
)

// RenderSetup returns the load-tool block of .ci/setup, from setupBegin to setupEnd: one
// line per tool, calling the script's install_deb (package, pinned upstream version),
// install_go (binary, package, module, version, linker flags, version arguments) or install_module (binary, package of this
// module, version).
func RenderSetup(tools []Tool) (string, error) {
	var b strings.Builder
	b.WriteString(setupBegin + "\n")
	for _, t := range tools {
		if err := checkInstall(t); err != nil {
			return "", err
		}
		in := t.Install
		if in.GoPackage != "" {
			fmt.Fprintf(&b, "install_go %s %s %s v%s '%s' %s\n", t.Binary, in.GoPackage, in.GoModule, t.PinnedVersion,
				goLDFlags(t, t.PinnedVersion), strings.Join(t.VersionArgs, " "))
		} else if in.Module != "" {
			fmt.Fprintf(&b, "install_module %s %s %s\n", t.Binary, in.Module, t.PinnedVersion)
		} else {
			fmt.Fprintf(&b, "install_deb %s %s\n", in.Debian, t.PinnedVersion)
		}
	}
	b.WriteString(setupEnd + "\n")
	return b.String(), nil
}

// SetupBlock returns the load-tool block of a .ci/setup script, from the line that starts
// "# BEGIN load tools" to setupEnd's, or an error when it has none.
func SetupBlock(script string) (string, error) {
	i := strings.Index(script, "# BEGIN load tools")
	j := strings.Index(script, setupEnd)
	if i < 0 || j < i {
		return "", fmt.Errorf("no load-tool block (%q … %q)", setupBegin, setupEnd)
	}
	end := min(j+len(setupEnd)+1, len(script))
	return script[i:end], nil
}
