package measure

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/loadgen"
	"github.com/arenabot/arenabot/runner/runnertest"
)

// countingEngine is the real engine, with the builds asked of it recorded.
type countingEngine struct {
	*docker.Engine
	mu     sync.Mutex
	builds []string
}

func (e *countingEngine) Build(ctx context.Context, o docker.BuildOptions) (string, error) {
	e.mu.Lock()
	e.builds = append(e.builds, o.Tag)
	e.mu.Unlock()
	return e.Engine.Build(ctx, o)
}

func (e *countingEngine) count(tag string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, b := range e.builds {
		if b == tag {
			n++
		}
	}
	return n
}

// TestPrebuild builds a plan's images ahead, as bench and the worker do before they wait for
// the host lock, and then measures: an image that built is not built again, nor noted again; a Dockerfile that failed is not
// built again, and its rows carry the build failure as they would without Prebuild.
func TestPrebuild(t *testing.T) {
	real, _ := runnertest.Engine(t, "")
	eng := &countingEngine{Engine: real}
	good := runnertest.EntryDir(t, "prebuilt", map[string]string{"Dockerfile": "FROM scratch\nCOPY hello /hello\n", "hello": "hi\n"})
	bad := runnertest.EntryDir(t, "prebroken", map[string]string{"Dockerfile": "FROM scratch\nCOPY missing /missing\n"})
	progress := &runnertest.Notes{}
	b := New(eng, Config{ScratchDir: t.TempDir(), Progress: progress, SkipValidation: true, Labels: map[string]string{labelJob: runnertest.JobLabel(t)}})
	t.Cleanup(func() { real.RemoveImagesLabeled(context.Background(), labelJob, runnertest.JobLabel(t)) })
	p, _ := profile.Lookup("baseline")
	p.Conns = p.Conns[:1]
	plan := Plan{Targets: []Target{{Entry: good}, {Entry: bad, Profiles: []profile.Profile{p}}}}

	b.Prebuild(t.Context(), plan)
	if n, m := eng.count(build.ImageTag("prebuilt")), eng.count(build.ImageTag("prebroken")); n != 1 || m != 1 {
		t.Fatalf("Prebuild built %d and %d times; want each once", n, m)
	}
	if ok, err := real.ImageExists(t.Context(), build.ImageTag("prebuilt")); !ok || err != nil {
		t.Fatalf("after Prebuild, %s exists %v (%v)", build.ImageTag("prebuilt"), ok, err)
	}
	rows, err := b.Measure(t.Context(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if n := eng.count(build.ImageTag("prebuilt")); n != 1 {
		t.Errorf("the good entry was asked of the engine %d times; want once (ahead; Measure finds it built)", n)
	}
	if n := eng.count(build.ImageTag("prebroken")); n != 1 {
		t.Errorf("the failing Dockerfile was built %d times; want once", n)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows; want the broken entry's one", len(rows))
	}
	if r := rows[0]; r.Short != "build failed" || !strings.HasPrefix(r.Err, "build of prebroken failed: ") || len(r.BuildLog) == 0 {
		t.Errorf("the broken entry's row: %q (%q), build log %q; want its build failure and the log's tail", r.Err, r.Short, r.BuildLog)
	}
	notes := building(progress.Lines)
	slices.Sort(notes) // built side by side: in either order
	if want := []string{"prebroken: building " + build.ImageTag("prebroken"), "prebuilt: building " + build.ImageTag("prebuilt")}; !slices.Equal(notes, want) {
		t.Errorf("build notes %q; want %q (one each)", notes, want)
	}
}

// hidingEngine is a countingEngine on a host that lacks the hidden images until it builds
// them.
type hidingEngine struct {
	*countingEngine
	hidden map[string]bool
}

func (e *hidingEngine) ImageExists(ctx context.Context, ref string) (bool, error) {
	e.mu.Lock()
	hidden := e.hidden[ref] && !slices.Contains(e.builds, ref)
	e.mu.Unlock()
	if hidden {
		return false, nil
	}
	return e.Engine.ImageExists(ctx, ref)
}

// TestPrebuildLiteTools: in --lite mode Prebuild builds the load-generator image of each
// tool the plan uses and of no other (a wrk-only run waits for no h2load, ghz or arenaload),
// side by side with the entries' images.
func TestPrebuildLiteTools(t *testing.T) {
	real, _ := runnertest.Engine(t, "")
	runnertest.StandIns(t, real, "arenabot/debian:local")
	hidden := map[string]bool{}
	for _, tool := range loadgen.All() {
		hidden[loadgen.ImageFor(tool)] = true
	}
	eng := &hidingEngine{countingEngine: &countingEngine{Engine: real}, hidden: hidden}
	good := runnertest.EntryDir(t, "litetools", map[string]string{"Dockerfile": "FROM scratch\nCOPY hello /hello\n", "hello": "hi\n"})
	progress := &runnertest.Notes{}
	b := New(eng, Config{Lite: true, ScratchDir: t.TempDir(), Progress: progress, SkipValidation: true, Labels: map[string]string{labelJob: runnertest.JobLabel(t)}})
	t.Cleanup(func() { real.RemoveImagesLabeled(context.Background(), labelJob, runnertest.JobLabel(t)) })
	p, _ := profile.Lookup("baseline") // wrk
	plan := Plan{Targets: []Target{{Entry: good, Profiles: []profile.Profile{p}}}}

	b.Prebuild(t.Context(), plan)
	for _, tool := range loadgen.All() {
		want := 0
		if tool.Name == "wrk" {
			want = 1
		}
		if n := eng.count(loadgen.ImageFor(tool)); n != want {
			t.Errorf("%s built %d times; want %d for a wrk-only plan", loadgen.ImageFor(tool), n, want)
		}
	}
	if n := eng.count(build.ImageTag("litetools")); n != 1 {
		t.Errorf("the entry built %d times; want once", n)
	}
	if !slices.ContainsFunc(progress.Lines, func(l string) bool {
		return strings.Contains(l, "building the load-generator image "+loadgen.ImageFor(loadgen.Wrk())+" (first use")
	}) {
		t.Errorf("no first-use line for the wrk image: %q", progress.Lines)
	}
}
