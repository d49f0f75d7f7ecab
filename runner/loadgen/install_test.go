package loadgen

import (
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite image/<tool>.Dockerfile and the load-tool block of .ci/setup from the adapters' Install")

// setupScript is .ci/setup, from this package's directory.
var setupScript = filepath.Join("..", "..", ".ci", "setup")

// TestInstallFiles: the load-generator image's Dockerfile and .ci/setup's load tools are the
// ones the adapters' Install describe, at the pinned versions. With -update it rewrites
// them.
func TestInstallFiles(t *testing.T) {
	block, err := RenderSetup(All())
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(setupScript)
	if err != nil {
		t.Fatal(err)
	}
	old, err := SetupBlock(string(script))
	if err != nil {
		t.Fatalf("%s: %v", setupScript, err)
	}
	if *update {
		if err := os.WriteFile(setupScript, []byte(strings.Replace(string(script), old, block, 1)), 0o755); err != nil {
			t.Fatal(err)
		}
		old = block
	}
	if diff := cmp.Diff(block, old); diff != "" {
		t.Errorf(".ci/setup's load tools disagree with the adapters (-rendered +file):\n%s\nrun go test ./runner/loadgen -update", diff)
	}
	files, err := fs.Glob(ImageContext, "image/*")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, tool := range All() {
		name := "image/" + DockerfileName(tool)
		want = append(want, name)
		df, err := RenderDockerfile([]Tool{tool})
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.WriteFile(name, []byte(df), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := ImageContext.ReadFile(name)
		if err != nil {
			t.Errorf("%s: %v; run go test ./runner/loadgen -update", name, err)
			continue
		}
		if diff := cmp.Diff(df, string(got)); diff != "" {
			t.Errorf("%s disagrees with the adapters (-rendered +file):\n%s\nrun go test ./runner/loadgen -update", name, diff)
		}
		in := tool.Install
		if pkg := in.Debian + in.GoPackage + in.Module; !strings.Contains(df, pkg) || !strings.Contains(block, pkg) {
			t.Errorf("%s: %s is not in both %s and .ci/setup", tool.Name, pkg, name)
		}
		for _, other := range All() {
			if o := other.Install; other.Name != tool.Name && strings.Contains(df, o.Debian+o.GoPackage+o.Module) {
				t.Errorf("%s holds %s too: each tool's image holds that tool only", name, other.Name)
			}
		}
	}
	if !*update {
		sort.Strings(want)
		if diff := cmp.Diff(want, files); diff != "" {
			t.Errorf("image/ holds other files than one Dockerfile per tool (-want +got):\n%s\nrun go test ./runner/loadgen -update and remove the rest", diff)
		}
	}
}

// TestSetupScript runs .ci/setup's load-tool functions against the machine's tools, with
// the package manager and go install replaced: every tool is there at its pinned version,
// so nothing is installed and every check passes (CI installed them with .ci/setup); this
// module's own tools are rebuilt if the checkout has moved since they were built.
func TestSetupScript(t *testing.T) {
	for _, tool := range All() {
		needTool(t, tool.Binary)
	}
	script, err := os.ReadFile(setupScript)
	if err != nil {
		t.Fatal(err)
	}
	s := string(script)
	start := strings.Index(s, "install_deb() {")
	block, err := SetupBlock(s)
	if start < 0 || err != nil {
		t.Fatalf("%s: no install_deb or no load-tool block (%v)", setupScript, err)
	}
	funcs := s[start:strings.Index(s, "# BEGIN load tools")]
	// apt-get and go install must not run: the tools are installed.
	stub := "apt-get() { echo \"apt-get $*\"; exit 3; }\n"
	cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+stub+funcs+
		"go() { if [ \"$1\" = install ]; then echo \"go $*\"; exit 4; fi; command go \"$@\"; }\n"+block+"echo ok\n")
	cmd.Dir = filepath.Join("..", "..") // .ci/setup runs from the repository root
	out, err := cmd.CombinedOutput()
	// This module's own tools are built from the checkout whenever it moved (a real go
	// build, which the stub lets through); nothing else may be installed.
	var rest []string
	for line := range strings.Lines(string(out)) {
		if !strings.HasPrefix(line, "setup: building ") {
			rest = append(rest, line)
		}
	}
	if err != nil || strings.TrimSpace(strings.Join(rest, "")) != "ok" {
		t.Fatalf("the load-tool block: %v\n%s", err, out)
	}
}

func TestRenderInstall(t *testing.T) {
	if got, want := ImageFor(H2load()), "arenabot/loadgen:h2load-1.52.0"; got != want {
		t.Errorf("ImageFor(h2load) = %q, want %q", got, want)
	}
	if got, want := ImageFor(Arenaload()), "arenabot/loadgen:arenaload-"+ArenaloadVersion; got != want {
		t.Errorf("ImageFor(arenaload) = %q, want %q", got, want)
	}
	if diff := cmp.Diff(map[string]string{"GHZ_VERSION": "0.121.0"}, ImageBuildArgs(Ghz())); diff != "" {
		t.Errorf("ImageBuildArgs(ghz) (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		tool Tool
		want string
	}{
		{Wrk(), "Debian: apt-get install wrk, version 4.1.0-*"},
		{H2load(), "Debian: apt-get install nghttp2-client, version 1.52.0-*"},
		{Ghz(), "go install github.com/bojand/ghz/cmd/ghz@v0.121.0"},
		{Arenaload(), `in this repository: CGO_ENABLED=0 go build -buildvcs=true -o "$(go env GOPATH)/bin/arenaload" ./cmd/arenaload, or .ci/setup`},
	} {
		if got := Hint(tt.tool); got != tt.want {
			t.Errorf("Hint(%s) = %q, want %q", tt.tool.Name, got, tt.want)
		}
	}
	// A tool of each kind renders its facts: a Go build stage with its flags, a Debian check.
	tools := []Tool{fakeTool("deb", Install{Debian: "pkg"}),
		fakeTool("gotool", Install{GoPackage: "example.com/m/cmd/t", GoModule: "example.com/m", GoLDFlags: "-X main.v={version}"}),
		fakeTool("own", Install{Module: "./cmd/own"})}
	df, err := RenderDockerfile(tools)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"FROM ${GO_IMAGE} AS gotool\nARG GOTOOL_VERSION=1.2.3\n",
		`-ldflags="-s -w -X main.v=${GOTOOL_VERSION}" "example.com/m/cmd/t@v${GOTOOL_VERSION}"`,
		`go version -m /out/gotool | grep -Eq "^[[:space:]]+mod[[:space:]]+example.com/m[[:space:]]+v${GOTOOL_VERSION}[[:space:]]"`,
		"COPY --from=gotool /out/gotool /usr/local/bin/gotool\n",
		"COPY own /usr/local/bin/own\nRUN own --version | grep -Eq \"^own ${OWN_VERSION}([[:space:]]|$)\"\n",
		"apt-get install -y --no-install-recommends pkg \\\n",
		`dpkg-query -W -f='${Version}' pkg | grep -Eq "^([0-9]+:)?${DEB_VERSION}-"`,
	} {
		if !strings.Contains(df, want) {
			t.Errorf("rendered Dockerfile lacks %q:\n%s", want, df)
		}
	}
	setup, err := RenderSetup(tools)
	if err != nil {
		t.Fatal(err)
	}
	if want := setupBegin + "\ninstall_deb pkg 1.2.3\ninstall_go gotool example.com/m/cmd/t example.com/m v1.2.3 '-s -w -X main.v=1.2.3' -v\ninstall_module own ./cmd/own 1.2.3\n" + setupEnd + "\n"; setup != want {
		t.Errorf("RenderSetup =\n%s\nwant\n%s", setup, want)
	}
	for _, bad := range []Install{
		{},
		{Debian: "a", GoPackage: "b"},
		{Debian: "a", Module: "./cmd/a"},
		{Module: "../elsewhere/cmd/a"},
		{GoPackage: "example.com/x/cmd/y", GoModule: "example.com/other"},
		{Debian: "a", GoLDFlags: "-X x=y"},
		{Debian: "a; rm -rf /"},
		{GoPackage: "example.com/m/t", GoModule: "example.com/m", GoLDFlags: "-X 'a=b'"},
	} {
		if _, err := RenderDockerfile([]Tool{fakeTool("bad", bad)}); err == nil {
			t.Errorf("Install %+v rendered without an error", bad)
		}
		if _, err := RenderSetup([]Tool{fakeTool("bad", bad)}); err == nil {
			t.Errorf("Install %+v rendered into .ci/setup without an error", bad)
		}
	}
	if _, err := SetupBlock("#!/bin/sh\n"); err == nil {
		t.Error("SetupBlock of a script without the block succeeded")
	}
}

// fakeTool is a Tool with the given name and Install, version 1.2.3, wrk's version
// arguments and Adapter.
func fakeTool(name string, install Install) Tool {
	t := Wrk()
	t.Name, t.Binary, t.PinnedVersion, t.Install = name, name, "1.2.3", install
	return t
}

// TestRenderPrebuilt: a Go tool the host built as the image would is copied from the build
// context, checked by its version output, and has no build stage; the others are unchanged.
func TestRenderPrebuilt(t *testing.T) {
	gotool := fakeTool("gotool", Install{GoPackage: "example.com/m/cmd/t", GoModule: "example.com/m", GoLDFlags: "-X main.v={version}"})
	tools := []Tool{fakeTool("deb", Install{Debian: "pkg"}), gotool}
	plain, err := RenderImageDockerfile(tools, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := RenderDockerfile(tools); plain != want {
		t.Errorf("with nothing prebuilt the Dockerfile differs from RenderDockerfile's")
	}
	df, err := RenderImageDockerfile(tools, map[string]bool{"gotool": true})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"ARG GO_IMAGE", "FROM ${GO_IMAGE}", "go install", "--from=gotool"} {
		if strings.Contains(df, bad) {
			t.Errorf("prebuilt Dockerfile has %q:\n%s", bad, df)
		}
	}
	for _, want := range []string{"COPY gotool /usr/local/bin/gotool\nRUN gotool -v 2>&1 | grep -Fq \"${GOTOOL_VERSION}\"\n", "apt-get install -y --no-install-recommends pkg"} {
		if !strings.Contains(df, want) {
			t.Errorf("prebuilt Dockerfile lacks %q:\n%s", want, df)
		}
	}
}

// TestCheckBuildInfo: only a build of the pinned module version with CGO_ENABLED=0 and
// -trimpath may stand in for the image's build stage.
func TestCheckBuildInfo(t *testing.T) {
	good := func() *debug.BuildInfo {
		return &debug.BuildInfo{Path: "github.com/bojand/ghz/cmd/ghz", Main: debug.Module{Path: "github.com/bojand/ghz", Version: "v0.121.0"},
			Settings: []debug.BuildSetting{{Key: "-trimpath", Value: "true"}, {Key: "CGO_ENABLED", Value: "0"}}}
	}
	if err := checkBuildInfo(Ghz(), "ghz", good()); err != nil {
		t.Errorf("the image's own build: %v", err)
	}
	for name, change := range map[string]func(*debug.BuildInfo){
		"another version": func(bi *debug.BuildInfo) { bi.Main.Version = "v0.120.0" },
		"another module":  func(bi *debug.BuildInfo) { bi.Main.Path, bi.Path = "example.com/x", "example.com/x" },
		"cgo":             func(bi *debug.BuildInfo) { bi.Settings[1].Value = "1" },
		"no -trimpath":    func(bi *debug.BuildInfo) { bi.Settings = bi.Settings[1:] },
	} {
		bi := good()
		change(bi)
		if err := checkBuildInfo(Ghz(), "ghz", bi); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// TestCheckPrebuilt: .ci/setup's ghz is the image's build (so the image copies it rather than
// compiling ghz again); a binary that is not ghz is not.
func TestCheckPrebuilt(t *testing.T) {
	path := needTool(t, "ghz")
	if err := CheckPrebuilt(t.Context(), Ghz(), path); err != nil {
		t.Errorf("the installed ghz: %v; .ci/setup builds it as the image does", err)
	}
	self, _ := os.Executable()
	if err := CheckPrebuilt(t.Context(), Ghz(), self); err == nil {
		t.Error("this test binary passed as ghz")
	}
	if err := CheckPrebuilt(t.Context(), Wrk(), path); err == nil {
		t.Error("wrk, a Debian tool, passed as a Go build")
	}
}
