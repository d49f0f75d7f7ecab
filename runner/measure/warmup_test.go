package measure

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/loadgen"
)

// shTool is a load tool that is a shell line: each run appends the run's duration to file.
// The rest of it is ghz, which a warm-up does not use.
func shTool(file string) loadgen.Tool {
	t := loadgen.Ghz()
	t.Binary = "sh"
	t.Adapter = shArgs{t.Adapter, file}
	return t
}

type shArgs struct {
	loadgen.Adapter
	file string
}

func (a shArgs) Args(spec loadgen.Spec) ([]string, error) {
	return []string{"-c", "echo " + spec.Duration.String() + " >> " + a.file}, nil
}

// TestWarmUp: a profile with a Warmup runs the tool once, for the warm-up's length, before
// the measured runs; one without runs nothing.
func TestWarmUp(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "runs")
	b := New(nil, Config{ScratchDir: dir, LoadgenCPUs: "0"})
	tool := shTool(file)
	stream, _ := profile.Lookup("stream-grpc")
	if stream.Warmup != 2*time.Second {
		t.Fatalf("stream-grpc Warmup = %v; want the arena's 2s", stream.Warmup)
	}
	baseline, _ := profile.Lookup("baseline")
	for _, p := range []profile.Profile{baseline, stream} {
		spec := loadgen.Spec{Profile: p, Conns: 64, Duration: 5 * time.Second, ScriptDir: dir}
		if err := b.tools.warmUp(context.Background(), tool, spec, p.Warmup); err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
	}
	got, _ := os.ReadFile(file)
	if strings.TrimSpace(string(got)) != "2s" {
		t.Errorf("warm-up runs: %q; want one run of 2s (stream-grpc) and none for baseline", got)
	}
	failing := shTool("/nonexistent/dir/runs")
	if err := b.tools.warmUp(context.Background(), failing, loadgen.Spec{Profile: stream, Duration: time.Second}, stream.Warmup); err == nil {
		t.Error("a failing warm-up returned no error")
	}
}
