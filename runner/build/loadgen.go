package build

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/loadgen"
	"github.com/arenabot/arenabot/text"
)

// Loadgen builds tool's load-generator image (loadgen.ImageFor), the one --lite runs it in,
// unless it is on the host and, for one of this module's own tools, holds the same build of
// it as the host has. Each tool has its own image, made on first use.
func (b *Builder) Loadgen(ctx context.Context, tool loadgen.Tool) error {
	return loadgenImage{b: b, tool: tool}.build(ctx)
}

// A loadgenImage is one tool's load-generator image, being built by b.
type loadgenImage struct {
	b    *Builder
	tool loadgen.Tool
}

func (li loadgenImage) build(ctx context.Context) error {
	b, tool := li.b, li.tool
	image := loadgen.ImageFor(tool)
	ok, err := b.eng.ImageExists(ctx, image)
	if err != nil {
		return err
	}
	if ok {
		stale, why := li.ownToolStale(ctx)
		if !stale {
			return nil
		}
		b.note("rebuilding the load-generator image " + image + ": " + why)
	}
	scratch, err := b.Scratch()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(scratch, "loadgen-"+tool.Name+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	prebuilt := map[string]bool{}
	switch in := tool.Install; {
	case in.Module != "":
		// This module's own generator: the binary .ci/setup built from the checkout,
		// checked to be the pinned version before it goes into the image.
		if err := li.copyOwnTool(ctx, dir); err != nil {
			return err
		}
	case in.GoPackage != "":
		// A Go tool the host already built as the image would (.ci/setup does) goes in
		// as it is; otherwise the image compiles it.
		prebuilt[tool.Name] = li.copyPrebuilt(ctx, dir)
	}
	df, err := loadgen.RenderImageDockerfile([]loadgen.Tool{tool}, prebuilt)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
		return err
	}
	if !ok {
		b.note(fmt.Sprintf("building the load-generator image %s (first use: %s %s)", image, tool.Name, tool.PinnedVersion))
	}
	in, err := b.baseImages(ctx, filepath.Join(dir, "Dockerfile"))
	if err != nil {
		return fmt.Errorf("load-generator image %s: %w", image, err)
	}
	maps.Copy(in.args, loadgen.ImageBuildArgs(tool))
	return b.build(ctx, dir, image, "loadgen", in, nil)
}

// ownToolStale reports whether tool, when it is one of this module's own, is in its
// load-generator image as another build than the one installed natively: its pinned version
// names the behaviour, but a checkout that moved without changing it must not be measured
// with the image's older binary. The build's VCS revision in --version tells them apart.
func (li loadgenImage) ownToolStale(ctx context.Context) (bool, string) {
	b, tool := li.b, li.tool
	if tool.Install.Module == "" {
		return false, ""
	}
	path, err := exec.LookPath(tool.Binary)
	if err != nil {
		return false, "" // nothing to compare with: the image's build is the one there is
	}
	native, _ := exec.CommandContext(ctx, path, tool.VersionArgs...).CombinedOutput()
	var inImage strings.Builder
	if _, err := b.eng.Run(ctx, li.versionContainer(append([]string{tool.Binary}, tool.VersionArgs...)), &inImage); err != nil {
		return true, fmt.Sprintf("%s --version in the image: %v", tool.Binary, err)
	}
	if n, i := strings.TrimSpace(string(native)), strings.TrimSpace(inImage.String()); n != i {
		return true, fmt.Sprintf("it holds %q, %s is %q", i, path, n)
	}
	return false, ""
}

// versionContainer runs a tool's version command in its load-generator image: host network,
// the runner's labels. It needs none of a measurement's mounts or CPUs.
func (li loadgenImage) versionContainer(argv []string) docker.RunOptions {
	return docker.RunOptions{
		Image:       loadgen.ImageFor(li.tool),
		Cmd:         argv,
		HostNetwork: true,
		Labels:      docker.Labels(li.b.cfg.Labels, LabelManaged, "true", LabelEntry, "loadgen"),
	}
}

// copyPrebuilt copies the host's build of a Go tool into the image's build context when it
// is the one the image's build stage would make (loadgen.CheckPrebuilt), and says whether it
// did.
func (li loadgenImage) copyPrebuilt(ctx context.Context, dir string) bool {
	b, tool := li.b, li.tool
	path, err := exec.LookPath(tool.Binary)
	if err != nil {
		return false
	}
	if err := loadgen.CheckPrebuilt(ctx, tool, path); err != nil {
		b.cfg.Log.Info("load-generator image: building the tool in the image", "tool", tool.Name, "reason", err)
		return false
	}
	if err := copyBinary(path, dir, tool.Binary); err != nil {
		b.cfg.Log.Info("load-generator image: building the tool in the image", "tool", tool.Name, "reason", err)
		return false
	}
	b.note(fmt.Sprintf("load-generator image: %s %s from %s (built as the image would build it)", tool.Name, tool.PinnedVersion, path))
	return true
}

// copyOwnTool copies the native binary of one of this module's tools into the image's
// build context dir, after checking its version. A host that has not installed it (a
// checkout's first run, before .ci/setup) gets it built from the checkout it runs in.
func (li loadgenImage) copyOwnTool(ctx context.Context, dir string) error {
	tool := li.tool
	path, err := exec.LookPath(tool.Binary)
	if err != nil {
		if path, err = li.buildOwnTool(ctx, dir); err != nil {
			return fmt.Errorf("load-generator image: %s is not installed (not on PATH) and %v; build it: %s", tool.Binary, err, loadgen.Hint(tool))
		}
	}
	out, _ := exec.CommandContext(ctx, path, tool.VersionArgs...).CombinedOutput()
	if _, err := loadgen.CheckVersion(tool, string(out)); err != nil {
		return fmt.Errorf("load-generator image: %s: %w; rebuild it: %s", path, err, loadgen.Hint(tool))
	}
	if filepath.Dir(path) == dir {
		return nil
	}
	if err := copyBinary(path, dir, tool.Binary); err != nil {
		return fmt.Errorf("load-generator image: %w", err)
	}
	return nil
}

// buildOwnTool builds one of this module's tools into dir from the module's source, as
// .ci/setup does (static, -trimpath, the VCS revision stamped), when the working directory
// is inside this module's checkout, and returns the binary's path.
func (li loadgenImage) buildOwnTool(ctx context.Context, dir string) (string, error) {
	b, tool := li.b, li.tool
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Path == "" {
		return "", errors.New("this binary does not name its module")
	}
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("no Go toolchain to build it with (%v)", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	mod, err := exec.CommandContext(ctx, "go", "list", "-m").Output()
	if err != nil || strings.TrimSpace(string(mod)) != info.Main.Path {
		return "", fmt.Errorf("the working directory is not in a checkout of %s", info.Main.Path)
	}
	b.note(fmt.Sprintf("building %s %s from this checkout for its load-generator image (first use)", tool.Name, tool.PinnedVersion))
	bin := filepath.Join(dir, tool.Binary)
	cmd := exec.CommandContext(ctx, "go", "build", "-buildvcs=true", "-trimpath", "-o", bin, tool.Install.Module)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s failed: %v: %s", tool.Install.Module, err, text.LastLine(string(out)))
	}
	return bin, nil
}

// copyBinary copies the executable at path into dir as name.
func copyBinary(path, dir, name string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), data, 0o755)
}
