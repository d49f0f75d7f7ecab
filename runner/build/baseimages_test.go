package build

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/runner/runnertest"
)

// labelJob is the job label (runner.LabelJob) the tests put on the images they build.
const labelJob = "arenabot.job"

// oldArenaDockerfile is a Dockerfile as the old arena's entries write them: literal base
// images in both stages, neither of which a host without a registry has.
const oldArenaDockerfile = `# syntax=docker/dockerfile:1
FROM golang:1.26-alpine AS build
WORKDIR /src
COPY go.mod ./
RUN go version > /built-with

# the runtime
FROM --platform=linux/amd64 \
     alpine:3.23
COPY --from=build /built-with /built-with
RUN echo "built FROM the stand-ins with $(cat /built-with)"
`

// TestBaseImageMap builds a multi-stage Dockerfile with literal FROM golang:1.26-alpine and
// FROM alpine:3.23 on a host that has neither and reaches no registry: through
// ARENA_IMAGE_MAP it builds FROM the stand-ins, the build log and the notes say so, one line
// per substitution, and the Dockerfile on disk stays byte for byte as it was.
func TestBaseImageMap(t *testing.T) {
	real, _ := runnertest.Engine(t, "")
	runnertest.StandIns(t, real, "arenabot/golang:local", "arenabot/debian:local")
	eng := &runnertest.WithoutRegistry{Engine: real, Hidden: map[string]bool{"golang:1.26-alpine": true, "alpine:3.23": true}}
	e := runnertest.EntryDir(t, "imagemap", map[string]string{
		"Dockerfile": oldArenaDockerfile,
		"go.mod":     "module imagemap\n\ngo 1.26\n",
	})
	before, err := os.ReadFile(filepath.Join(e.Dir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseImageMap("golang:*=arenabot/golang:local,alpine:*=arenabot/debian:local")
	if err != nil {
		t.Fatal(err)
	}
	progress := &runnertest.Notes{}
	scratch := t.TempDir()
	b := New(eng, Config{Root: filepath.Dir(filepath.Dir(e.Dir)), ImageMap: m, ScratchDir: scratch, Progress: progress,
		Labels: map[string]string{labelJob: runnertest.JobLabel(t)}, Log: slog.New(slog.NewTextHandler(t.Output(), nil))})
	t.Cleanup(func() { real.RemoveImagesLabeled(context.Background(), labelJob, runnertest.JobLabel(t)) })

	tag, err := b.Entry(t.Context(), e)
	log, _ := os.ReadFile(filepath.Join(scratch, "build-imagemap.log"))
	if err != nil {
		t.Fatalf("Entry: %v\nbuild log:\n%s", err, log)
	}
	want := []string{
		`base image golang:1.26-alpine (stage 1 "build") is not on this host and cannot be pulled; building FROM arenabot/golang:local instead (ARENA_IMAGE_MAP golang:*=arenabot/golang:local)`,
		`base image alpine:3.23 (stage 2) is not on this host and cannot be pulled; building FROM arenabot/debian:local instead (ARENA_IMAGE_MAP alpine:*=arenabot/debian:local)`,
	}
	logLines := strings.Split(string(log), "\n")
	for i, w := range want {
		if i >= len(logLines) || logLines[i] != w {
			t.Errorf("build log line %d is not\n%s\nlog:\n%s", i+1, w, log)
		}
		if !slices.Contains(progress.Lines, w) {
			t.Errorf("no note\n%s\nnotes: %q", w, progress.Lines)
		}
	}
	for _, w := range []string{
		"FROM arenabot/golang:local AS build\n",
		"FROM --platform=linux/amd64 arenabot/debian:local\n",
		"built FROM the stand-ins with go version go1.",
		"Successfully tagged " + tag + "\n",
	} {
		if !strings.Contains(string(log), w) {
			t.Errorf("build log lacks %q:\n%s", w, log)
		}
	}
	if got := strings.Join(eng.Pulls, ","); got != "golang:1.26-alpine,alpine:3.23" {
		t.Errorf("pulls tried: %s; want one of each missing image, before the map", got)
	}
	after, err := os.ReadFile(filepath.Join(e.Dir, "Dockerfile"))
	if err != nil || !bytes.Equal(after, before) {
		t.Errorf("the entry's Dockerfile changed on disk:\n%s", after)
	}

	// A second build does not try the pulls that failed again.
	eng.Pulls = nil
	if _, err := b.Entry(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	if len(eng.Pulls) != 0 {
		t.Errorf("the second build pulled %q again", eng.Pulls)
	}
}

// TestBaseImageMissing: a base image that is not on the host, cannot be pulled (its
// registry does not exist) and is not mapped fails the entry before any build with one
// line naming the image, the stage, the line and the fix, as a *BaseImageError, not a
// *BuildFailure.
func TestBaseImageMissing(t *testing.T) {
	eng, _ := runnertest.Engine(t, "")
	e := runnertest.EntryDir(t, "missing", map[string]string{
		"Dockerfile": "FROM scratch AS build\nCOPY Dockerfile /\n\n# the runtime\nFROM registry.invalid/arenabot/runtime:1\nCOPY --from=build /Dockerfile /\n",
	})
	m, err := ParseImageMap("golang:*=arenabot/golang:local")
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	b := New(eng, Config{Root: filepath.Dir(filepath.Dir(e.Dir)), ImageMap: m, ScratchDir: scratch})
	_, err = b.Entry(t.Context(), e)
	bi, ok := errors.AsType[*BaseImageError](err)
	if !ok {
		t.Fatalf("Entry = %v; want a *BaseImageError", err)
	}
	if _, ok := errors.AsType[*BuildFailure](err); ok {
		t.Errorf("the error is a *BuildFailure: %v", err)
	}
	if bi.Image != "registry.invalid/arenabot/runtime:1" || bi.Stage != "2" || bi.Line != 5 || bi.Dockerfile != "frameworks/missing/Dockerfile" {
		t.Errorf("BaseImageError = %+v", bi)
	}
	msg := err.Error()
	t.Log(msg)
	wantPrefix := "base image registry.invalid/arenabot/runtime:1 (stage 2, line 5 of frameworks/missing/Dockerfile) is not on this host and cannot be pulled (lookup registry.invalid: no such host); load it (docker load) or map it to a local image with ARENA_IMAGE_MAP=registry.invalid/arenabot/runtime:*=<local image> (deploy/base-images.sh prints the map for the images it makes)"
	if !strings.HasPrefix(msg, "base image registry.invalid/arenabot/runtime:1 (stage 2, line 5 of frameworks/missing/Dockerfile) is not on this host and cannot be pulled (") ||
		!strings.HasSuffix(msg, "); load it (docker load) or map it to a local image with ARENA_IMAGE_MAP=registry.invalid/arenabot/runtime:*=<local image> (deploy/base-images.sh prints the map for the images it makes)") {
		t.Errorf("error\n%s\nwant (the pull's reason may differ)\n%s", msg, wantPrefix)
	}
	if strings.Contains(msg, "\n") || strings.Contains(msg, "fix its Dockerfile") {
		t.Errorf("error is not one line about the host: %q", msg)
	}
	if got := bi.Short(); got != "base image missing: registry.invalid/arenabot/runtime:1" {
		t.Errorf("Short = %q", got)
	}
	if _, err := os.Stat(filepath.Join(scratch, "build-missing.log")); err == nil {
		t.Error("a build was started")
	}
}

// TestBaseImageMissingStandIn: an image mapped to a stand-in the host lacks fails with the
// stand-in named; an unmapped image whose arenabot/<name>:local exists gets it suggested.
func TestBaseImageMissingStandIn(t *testing.T) {
	real, _ := runnertest.Engine(t, "")
	runnertest.StandIns(t, real, "arenabot/golang:local", "arenabot/debian:local")
	eng := &runnertest.WithoutRegistry{Engine: real, Hidden: map[string]bool{"golang:1.26-alpine": true}}
	e := runnertest.EntryDir(t, "standin", map[string]string{"Dockerfile": "FROM golang:1.26-alpine AS build\nRUN true\n"})
	root := filepath.Dir(filepath.Dir(e.Dir))

	m, err := ParseImageMap("golang:*=arenabot/missing-stand-in:local")
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(eng, Config{Root: root, ImageMap: m, ScratchDir: t.TempDir()}).Entry(t.Context(), e)
	if bi, ok := errors.AsType[*BaseImageError](err); !ok || bi.Local != "arenabot/missing-stand-in:local" {
		t.Fatalf("Entry = %v; want a *BaseImageError naming the missing stand-in", err)
	}
	want := `base image golang:1.26-alpine (stage 1 "build", line 1 of frameworks/standin/Dockerfile) is not on this host and cannot be pulled (lookup registry-1.docker.io: no such host), and its stand-in arenabot/missing-stand-in:local (ARENA_IMAGE_MAP golang:*=arenabot/missing-stand-in:local) is not on this host either; make it (deploy/base-images.sh makes arenabot/golang:local and arenabot/debian:local) or load it (docker load), or map golang:* to an image this host has`
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}

	_, err = New(eng, Config{Root: root, ScratchDir: t.TempDir()}).Entry(t.Context(), e)
	want = `base image golang:1.26-alpine (stage 1 "build", line 1 of frameworks/standin/Dockerfile) is not on this host and cannot be pulled (lookup registry-1.docker.io: no such host); load it (docker load) or map it to a local image with ARENA_IMAGE_MAP=golang:*=arenabot/golang:local (deploy/base-images.sh prints the map for the images it makes)`
	if err == nil || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
}

// TestBaseImageArg: a FROM ${GO_IMAGE} whose image is missing still builds on
// arenabot/golang:local passed as GO_IMAGE, as before ARENA_IMAGE_MAP; a configured
// GO_IMAGE that is missing is not replaced, and the fix names the build argument.
func TestBaseImageArg(t *testing.T) {
	real, _ := runnertest.Engine(t, "")
	runnertest.StandIns(t, real, "arenabot/golang:local", "arenabot/debian:local")
	eng := &runnertest.WithoutRegistry{Engine: real, Hidden: map[string]bool{"golang:1.26-bookworm": true}}
	e := runnertest.EntryDir(t, "argbase", map[string]string{"Dockerfile": "ARG GO_IMAGE=golang:1.26-bookworm\nFROM ${GO_IMAGE} AS build\nRUN go version\nFROM scratch\nCOPY --from=build /etc/hostname /x\n"})
	root := filepath.Dir(filepath.Dir(e.Dir))
	progress := &runnertest.Notes{}
	b := New(eng, Config{Root: root, ScratchDir: t.TempDir(), Progress: progress})
	in, err := b.baseImages(t.Context(), filepath.Join(e.Dir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if in.args["GO_IMAGE"] != "arenabot/golang:local" || in.dockerfile != nil {
		t.Errorf("build args %v, Dockerfile rewritten: %v; want GO_IMAGE=arenabot/golang:local and the file as it is", in.args, in.dockerfile != nil)
	}
	note := "base image golang:1.26-bookworm is not on this host; using its local stand-in arenabot/golang:local (GO_IMAGE=arenabot/golang:local)"
	if !slices.Contains(progress.Lines, note) || !slices.Contains(in.notes, note) {
		t.Errorf("notes %q, build log notes %q; want %q", progress.Lines, in.notes, note)
	}

	// A map entry wins over the convention.
	m, _ := ParseImageMap("golang:1.26-bookworm=arenabot/golang:local")
	in, err = New(eng, Config{Root: root, ImageMap: m, ScratchDir: t.TempDir()}).baseImages(t.Context(), filepath.Join(e.Dir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if _, set := in.args["GO_IMAGE"]; set || !strings.Contains(string(in.dockerfile), "\nFROM arenabot/golang:local AS build\n") {
		t.Errorf("with a map: args %v, Dockerfile %q; want the FROM rewritten", in.args, in.dockerfile)
	}

	eng.Hidden["golang:given"] = true
	_, err = New(eng, Config{Root: root, ScratchDir: t.TempDir(), BuildArgs: map[string]string{"GO_IMAGE": "golang:given"}}).Entry(t.Context(), e)
	bi, ok := errors.AsType[*BaseImageError](err)
	if !ok || bi.Image != "golang:given" || bi.Arg != "GO_IMAGE" {
		t.Fatalf("with GO_IMAGE=golang:given: %v; want a *BaseImageError about it", err)
	}
	if !strings.Contains(err.Error(), "ARENA_IMAGE_MAP=golang:*=arenabot/golang:local or --build-arg GO_IMAGE=arenabot/golang:local") {
		t.Errorf("the fix does not name the build argument: %v", err)
	}
}

// TestBaseImagePresent: present images and scratch are left alone; nothing is pulled.
func TestBaseImagePresent(t *testing.T) {
	real, _ := runnertest.Engine(t, "")
	runnertest.StandIns(t, real, "arenabot/golang:local", "arenabot/debian:local")
	eng := &runnertest.WithoutRegistry{Engine: real}
	e := runnertest.EntryDir(t, "present", map[string]string{"Dockerfile": "FROM arenabot/debian:local AS a\nFROM a\nFROM scratch\n"})
	in, err := New(eng, Config{ScratchDir: t.TempDir()}).baseImages(t.Context(), filepath.Join(e.Dir, "Dockerfile"))
	if err != nil || in.dockerfile != nil || len(in.notes) != 0 || len(eng.Pulls) != 0 {
		t.Errorf("baseImages = %+v, %v, pulls %q; want nothing to do", in, err, eng.Pulls)
	}
}

// TestStandInOnFirstUse: with Config.MakeStandIn, a FROM ${GO_IMAGE} whose stand-in the host
// lacks has it made on first use (once, however often it is asked for, with a line before
// and after), then builds on it; a stand-in the maker does not know, or fails to make, is
// the missing-stand-in error as before, the failure noted once.
func TestStandInOnFirstUse(t *testing.T) {
	real, _ := runnertest.Engine(t, "")
	runnertest.StandIns(t, real, "arenabot/golang:local")
	eng := &runnertest.WithoutRegistry{Engine: real, Hidden: map[string]bool{"golang:1.26-bookworm": true, "arenabot/golang:local": true}}
	e := runnertest.EntryDir(t, "firstuse", map[string]string{"Dockerfile": "ARG GO_IMAGE=golang:1.26-bookworm\nFROM ${GO_IMAGE} AS build\nRUN go version\n"})
	root := filepath.Dir(filepath.Dir(e.Dir))
	var asked []string
	maker := func(_ context.Context, image string, note func(string)) (bool, error) {
		asked = append(asked, image)
		if image != "arenabot/golang:local" {
			return false, nil
		}
		note("base-images: importing the Go stand-in")
		delete(eng.Hidden, image) // made: the real one is there now
		return true, nil
	}
	progress := &runnertest.Notes{}
	b := New(eng, Config{Root: root, ScratchDir: t.TempDir(), Progress: progress, MakeStandIn: maker})
	for range 2 {
		in, err := b.baseImages(t.Context(), filepath.Join(e.Dir, "Dockerfile"))
		if err != nil {
			t.Fatal(err)
		}
		if in.args["GO_IMAGE"] != "arenabot/golang:local" {
			t.Errorf("build args %v; want GO_IMAGE=arenabot/golang:local, made on first use", in.args)
		}
	}
	if len(asked) != 1 {
		t.Errorf("the maker was asked for %q; want arenabot/golang:local once", asked)
	}
	joined := strings.Join(progress.Lines, "\n")
	for _, want := range []string{"making the stand-in arenabot/golang:local on first use", "base-images: importing the Go stand-in", "made the stand-in arenabot/golang:local in "} {
		if !strings.Contains(joined, want) {
			t.Errorf("progress lacks %q:\n%s", want, joined)
		}
	}

	// A maker that fails: noted once, then the stand-in is missing, as without a maker.
	eng.Hidden["arenabot/golang:local"] = true
	progress = &runnertest.Notes{}
	asked = nil
	failing := func(_ context.Context, image string, _ func(string)) (bool, error) {
		asked = append(asked, image)
		return false, errors.New("making the stand-in " + image + " needs root")
	}
	b = New(eng, Config{Root: root, ScratchDir: t.TempDir(), Progress: progress, MakeStandIn: failing})
	for range 2 {
		_, err := b.Entry(t.Context(), e)
		if _, ok := errors.AsType[*BaseImageError](err); !ok {
			t.Fatalf("Entry = %v; want the *BaseImageError of a missing base image", err)
		}
	}
	if len(asked) != 1 || !slices.ContainsFunc(progress.Lines, func(l string) bool { return strings.Contains(l, "needs root") }) {
		t.Errorf("asked %q, notes %q; want one try, its failure noted", asked, progress.Lines)
	}

	// An image no maker knows (a literal FROM is not made either: only a stand-in that
	// would be used is).
	asked = nil
	lit := runnertest.EntryDir(t, "literal", map[string]string{"Dockerfile": "FROM golang:1.26-bookworm\nRUN true\n"})
	if _, err := New(eng, Config{Root: filepath.Dir(filepath.Dir(lit.Dir)), ScratchDir: t.TempDir(), MakeStandIn: maker}).Entry(t.Context(), lit); err == nil {
		t.Errorf("a literal FROM of a missing image built")
	}
	if len(asked) != 0 {
		t.Errorf("a literal FROM asked the maker for %q; it names no stand-in to use", asked)
	}
}

// TestDockerfileSymlinkOut: an entry whose Dockerfile is a symbolic link to a file outside
// its directory is not read: nothing of that file (here a FROM naming a secret image)
// reaches the error, which the bot would post on the pull request.
func TestDockerfileSymlinkOut(t *testing.T) {
	real, _ := runnertest.Engine(t, "")
	eng := &runnertest.WithoutRegistry{Engine: real}
	outside := filepath.Join(t.TempDir(), "host-file")
	if err := os.WriteFile(outside, []byte("FROM host-secret/s3cret:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := runnertest.EntryDir(t, "linked", map[string]string{"main.go": "package main\n"})
	if err := os.Symlink(outside, filepath.Join(e.Dir, "Dockerfile")); err != nil {
		t.Fatal(err)
	}
	_, err := New(eng, Config{ScratchDir: t.TempDir()}).baseImages(t.Context(), filepath.Join(e.Dir, "Dockerfile"))
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("baseImages = %v; want the Dockerfile refused without a word of the file it points at", err)
	}
	t.Log(err)
}
