package build

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/loadgen"
)

// Loadgen builds the pinned load-generator image (loadgen.Image) that --lite runs the load
// tools in, unless it is on the host and holds the same build of this module's own tools
// as the host has.
func (b *Builder) Loadgen(ctx context.Context) error {
	ok, err := b.eng.ImageExists(ctx, loadgen.Image)
	if err != nil {
		return err
	}
	if ok {
		stale, why := b.ownToolsStale(ctx)
		if !stale {
			return nil
		}
		b.note("rebuilding the load-generator image " + loadgen.Image + ": " + why)
	}
	scratch, err := b.Scratch()
	if err != nil {
		return err
	}
	dir := filepath.Join(scratch, "loadgen-image")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	prebuilt := map[string]bool{}
	for _, tool := range loadgen.All() {
		switch in := tool.Install(); {
		case in.Module != "":
			// This module's own generator: the binary .ci/setup built from the checkout,
			// checked to be the pinned version before it goes into the image.
			if err := b.copyOwnTool(ctx, tool, dir); err != nil {
				return err
			}
		case in.GoPackage != "":
			// A Go tool the host already built as the image would (.ci/setup does) goes in
			// as it is; otherwise the image compiles it.
			if b.copyPrebuilt(ctx, tool, dir) {
				prebuilt[tool.Name()] = true
			}
		}
	}
	df, err := loadgen.RenderImageDockerfile(loadgen.All(), prebuilt)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
		return err
	}
	b.note("building the load-generator image " + loadgen.Image + " (first use)")
	in, err := b.baseImages(ctx, filepath.Join(dir, "Dockerfile"))
	if err != nil {
		return fmt.Errorf("load-generator image: %w", err)
	}
	maps.Copy(in.args, loadgen.ImageBuildArgs())
	return b.build(ctx, dir, loadgen.Image, "loadgen", in, nil)
}

// ownToolsStale reports whether the load-generator image holds another build of this
// module's own tools than the one installed natively: their pinned version names the
// behaviour, but a checkout that moved without changing it must not be measured with the
// image's older binary. The build's VCS revision in --version tells them apart.
func (b *Builder) ownToolsStale(ctx context.Context) (bool, string) {
	for _, tool := range loadgen.All() {
		if tool.Install().Module == "" {
			continue
		}
		path, err := exec.LookPath(tool.Binary())
		if err != nil {
			continue // nothing to compare with: the image's build is the one there is
		}
		native, _ := exec.CommandContext(ctx, path, tool.VersionArgs()...).CombinedOutput()
		var inImage strings.Builder
		if _, err := b.eng.Run(ctx, b.versionContainer(append([]string{tool.Binary()}, tool.VersionArgs()...)), &inImage); err != nil {
			return true, fmt.Sprintf("%s --version in the image: %v", tool.Binary(), err)
		}
		if n, i := strings.TrimSpace(string(native)), strings.TrimSpace(inImage.String()); n != i {
			return true, fmt.Sprintf("it holds %q, %s is %q", i, path, n)
		}
	}
	return false, ""
}

// versionContainer runs a tool's version command in the load-generator image: host network,
// the runner's labels. It needs none of a measurement's mounts or CPUs.
func (b *Builder) versionContainer(argv []string) docker.RunOptions {
	return docker.RunOptions{
		Image:       loadgen.Image,
		Cmd:         argv,
		HostNetwork: true,
		Labels:      docker.Labels(b.cfg.Labels, LabelManaged, "true", LabelEntry, "loadgen"),
	}
}

// copyPrebuilt copies the host's build of a Go tool into the image's build context when it
// is the one the image's build stage would make (loadgen.CheckPrebuilt), and says whether it
// did.
func (b *Builder) copyPrebuilt(ctx context.Context, tool loadgen.Tool, dir string) bool {
	path, err := exec.LookPath(tool.Binary())
	if err != nil {
		return false
	}
	if err := loadgen.CheckPrebuilt(ctx, tool, path); err != nil {
		b.cfg.Log.Info("load-generator image: building the tool in the image", "tool", tool.Name(), "reason", err)
		return false
	}
	if err := copyBinary(path, dir, tool.Binary()); err != nil {
		b.cfg.Log.Info("load-generator image: building the tool in the image", "tool", tool.Name(), "reason", err)
		return false
	}
	b.note(fmt.Sprintf("load-generator image: %s %s from %s (built as the image would build it)", tool.Name(), tool.PinnedVersion(), path))
	return true
}

// copyOwnTool copies the native binary of one of this module's tools into the image's
// build context dir, after checking its version.
func (b *Builder) copyOwnTool(ctx context.Context, tool loadgen.Tool, dir string) error {
	path, err := exec.LookPath(tool.Binary())
	if err != nil {
		return fmt.Errorf("load-generator image: %s is not installed (not on PATH); build it: %s", tool.Binary(), loadgen.Hint(tool))
	}
	out, _ := exec.CommandContext(ctx, path, tool.VersionArgs()...).CombinedOutput()
	if _, err := loadgen.CheckVersion(tool, string(out)); err != nil {
		return fmt.Errorf("load-generator image: %s: %w; rebuild it: %s", path, err, loadgen.Hint(tool))
	}
	if err := copyBinary(path, dir, tool.Binary()); err != nil {
		return fmt.Errorf("load-generator image: %w", err)
	}
	return nil
}

// copyBinary copies the executable at path into dir as name.
func copyBinary(path, dir, name string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), data, 0o755)
}
