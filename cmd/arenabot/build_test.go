package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/runner/loadgen"
)

// TestBuild builds a real entry and one whose Dockerfile fails, as bench would, without
// measuring: a line per built image, the failing build's log tail, a non-zero exit; then
// the load-generator image; an unknown entry is refused before anything is built.
func TestBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images")
	}
	needDocker(t)
	root := arena(t, "nethttp")
	broken := filepath.Join(root, "frameworks", "broken")
	os.MkdirAll(broken, 0o755)
	os.WriteFile(filepath.Join(broken, "meta.json"), []byte(`{"display_name":"broken","language":"Go","type":"engine","engine":"none","enabled":true,"tests":["baseline"]}`), 0o644)
	os.WriteFile(filepath.Join(broken, "Dockerfile"), []byte("FROM scratch\nCOPY missing-file /missing\n"), 0o644)

	var out, errb bytes.Buffer
	err := run(t.Context(), []string{"build", "--root", root, "nethttp", "broken"}, func(string) string { return "" }, &out, &errb)
	t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	if err == nil || !strings.Contains(err.Error(), "1 of 2 images did not build ([broken])") {
		t.Errorf("err = %v; want the failed entry named", err)
	}
	if !strings.Contains(out.String(), "built arenabot-nethttp:local (nethttp) in ") {
		t.Errorf("stdout does not say nethttp was built:\n%s", out.String())
	}
	if !strings.Contains(errb.String(), "build of broken failed") || !strings.Contains(errb.String(), "missing-file") {
		t.Errorf("stderr does not show broken's failure and log tail:\n%s", errb.String())
	}

	// The load-generator image alone, as .ci/test builds it ahead of the --lite tests.
	out.Reset()
	if err := run(t.Context(), []string{"build", "--root", root, "--load-generator"}, func(string) string { return "" }, &out, &errb); err != nil {
		t.Fatalf("build --load-generator: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "built the load-generator images in ") {
		t.Errorf("stdout does not say the load-generator images were built:\n%s", out.String())
	}
	for _, tool := range loadgen.All() {
		if err := exec.Command("docker", "image", "inspect", loadgen.ImageFor(tool)).Run(); err != nil {
			t.Errorf("after build --load-generator, %s: %v", loadgen.ImageFor(tool), err)
		}
	}
	if _, err := os.Stat("loadgen-image"); err == nil {
		os.RemoveAll("loadgen-image")
		t.Errorf("build --load-generator wrote its build context into the working directory")
	}

	out.Reset()
	err = run(t.Context(), []string{"build", "--root", root, "nethtp"}, func(string) string { return "" }, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "nethtp") || out.Len() > 0 {
		t.Errorf("unknown entry: err %v, stdout %q; want it refused by name, nothing built", err, out.String())
	}
}
