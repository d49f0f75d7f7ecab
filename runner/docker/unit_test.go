package docker

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{Module: []string{"text"}})
}

// tarNames writes the context of dir and returns the names in the tar, in order.
func tarNames(t *testing.T, dir, dockerfile string) []string {
	t.Helper()
	var buf bytes.Buffer
	if err := writeContext(&buf, dir, dockerfile, nil); err != nil {
		t.Fatal(err)
	}
	var names []string
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || !h.AccessTime.IsZero() {
			t.Errorf("%s: owner %d:%d %q, atime %v; want root and no atime", h.Name, h.Uid, h.Gid, h.Uname, h.AccessTime)
		}
		names = append(names, h.Name)
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWriteContext(t *testing.T) {
	tests := []struct {
		name       string
		files      map[string]string
		dockerfile string
		want       []string
	}{{
		name:       "no ignore file",
		files:      map[string]string{"Dockerfile": "", "a/b.txt": "", ".git/HEAD": "", "sub/.git": "gitdir: x"},
		dockerfile: "Dockerfile",
		want:       []string{"Dockerfile", "a/", "a/b.txt", "sub/"},
	}, {
		name: "ignored files and dirs",
		files: map[string]string{
			"Dockerfile":    "",
			".dockerignore": "*.log\nnode_modules\n# comment\n/secret\n",
			"x.log":         "", "keep.txt": "", "node_modules/m/i.js": "", "secret": "", "src/a.log": "", "src/a.go": "",
		},
		dockerfile: "Dockerfile",
		want:       []string{".dockerignore", "Dockerfile", "keep.txt", "src/", "src/a.go", "src/a.log"},
	}, {
		name: "exceptions re-include",
		files: map[string]string{
			"Dockerfile": "", ".dockerignore": "data\n!data/keep\n",
			"data/drop": "", "data/keep": "",
		},
		dockerfile: "Dockerfile",
		want:       []string{".dockerignore", "Dockerfile", "data/keep"},
	}, {
		name: "the Dockerfile and .dockerignore are always sent",
		files: map[string]string{
			".dockerignore":    ".dockerignore\nbuild\n*\n",
			"build/Dockerfile": "", "build/other": "", "main.go": "",
		},
		dockerfile: "build/Dockerfile",
		want:       []string{".dockerignore", "build/Dockerfile"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			if got := tarNames(t, dir, tt.dockerfile); !slices.Equal(got, tt.want) {
				t.Errorf("tar holds %q; want %q", got, tt.want)
			}
		})
	}
}

func TestWriteContextSymlink(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"Dockerfile": "", "target": "x"})
	if err := os.Symlink("target", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := writeContext(&buf, dir, "Dockerfile", nil); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatal("no link in the tar")
		}
		if h.Name == "link" {
			if h.Typeflag != tar.TypeSymlink || h.Linkname != "target" {
				t.Errorf("link: type %c -> %q; want a symlink to target", h.Typeflag, h.Linkname)
			}
			return
		}
	}
}

func TestCheckContext(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"Dockerfile": "", "sub/Dockerfile.x": ""})
	for _, tt := range []struct {
		dockerfile, want string
		ok               bool
	}{
		{"", "Dockerfile", true},
		{"sub/Dockerfile.x", "sub/Dockerfile.x", true},
		{"./sub/../Dockerfile", "Dockerfile", true},
		{"../Dockerfile", "", false},
		{"/etc/passwd", "", false},
		{"missing", "", false},
		{"sub", "", false},
	} {
		got, err := checkContext(dir, tt.dockerfile, false)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("checkContext(%q) = %q, %v; want %q, ok=%v", tt.dockerfile, got, err, tt.want, tt.ok)
		}
	}
	if _, err := checkContext(filepath.Join(dir, "nope"), "", false); err == nil {
		t.Error("checkContext of a missing dir succeeded")
	}
	// Given bytes stand in for a missing Dockerfile, not for a directory.
	if got, err := checkContext(dir, "missing", true); err != nil || got != "missing" {
		t.Errorf("checkContext(missing, given) = %q, %v; want missing, nil", got, err)
	}
	if _, err := checkContext(dir, "sub", true); err == nil {
		t.Error("checkContext(sub, given) succeeded; sub is a directory")
	}
}

// tarFiles writes the context of dir with content in place of the Dockerfile and returns
// each regular file's bytes, and the names in order.
func tarFiles(t *testing.T, dir, dockerfile string, content []byte) (map[string]string, []string) {
	t.Helper()
	var buf bytes.Buffer
	if err := writeContext(&buf, dir, dockerfile, content); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	var names []string
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[h.Name] = string(b)
		}
	}
}

func TestWriteContextDockerfileContent(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"Dockerfile": "FROM golang:1.26-alpine\n", "a.txt": "a", "sub/Dockerfile.x": "FROM alpine\n"})
	before, err := os.ReadFile(filepath.Join(dir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	files, names := tarFiles(t, dir, "Dockerfile", []byte("FROM arenabot/golang:local\n"))
	if got := files["Dockerfile"]; got != "FROM arenabot/golang:local\n" {
		t.Errorf("the tar's Dockerfile holds %q; want the given content", got)
	}
	if want := []string{"Dockerfile", "a.txt", "sub/", "sub/Dockerfile.x"}; !slices.Equal(names, want) {
		t.Errorf("tar holds %q; want %q", names, want)
	}
	if after, err := os.ReadFile(filepath.Join(dir, "Dockerfile")); err != nil || !bytes.Equal(after, before) {
		t.Errorf("the Dockerfile on disk changed: %q, %v", after, err)
	}

	files, _ = tarFiles(t, dir, "sub/Dockerfile.x", []byte("FROM x\n"))
	if files["sub/Dockerfile.x"] != "FROM x\n" || files["Dockerfile"] != string(before) {
		t.Errorf("sub/Dockerfile.x = %q, Dockerfile = %q; want only the named one replaced", files["sub/Dockerfile.x"], files["Dockerfile"])
	}

	// A Dockerfile that is not on disk is added at the end.
	files, names = tarFiles(t, dir, "Dockerfile.gen", []byte("FROM y\n"))
	if files["Dockerfile.gen"] != "FROM y\n" || names[len(names)-1] != "Dockerfile.gen" {
		t.Errorf("tar holds %q with Dockerfile.gen = %q; want it last with the given content", names, files["Dockerfile.gen"])
	}
}

func TestPullErrorText(t *testing.T) {
	e := &PullError{Ref: "alpine:3.23", Msg: "no such host"}
	if got, want := e.Error(), "pull alpine:3.23: no such host"; got != want {
		t.Errorf("Error() = %q; want %q", got, want)
	}
}

func TestReadBuildStream(t *testing.T) {
	stream := `{"stream":"Step 1/2 : FROM scratch"}
{"stream":"\n"}
{"stream":" ---\u003e \n"}
{"stream":"Step 2/2 : RUN x\n"}
{"stream":" ---\u003e Running in 0123\n"}
{"stream":"\u001b[1;31mred\u001b[0m text  \r\n"}
{"stream":"progress 10%\rprogress 100%\n"}
{"stream":"partial "}{"stream":"line\nlast without newline"}
{"status":"Downloading","progressDetail":{"current":1},"id":"abc"}
{"status":"Pulling fs layer","id":"abc"}
{"errorDetail":{"code":1,"message":"The command '/bin/sh -c x' returned a non-zero code: 1"},"error":"The command '/bin/sh -c x' returned a non-zero code: 1"}
`
	var out strings.Builder
	log := &lineLog{out: &out}
	id, msg, err := readBuildStream(strings.NewReader(stream), log)
	if err != nil {
		t.Fatal(err)
	}
	if id != "" || msg != "The command '/bin/sh -c x' returned a non-zero code: 1" {
		t.Errorf("id %q, msg %q", id, msg)
	}
	wantLines := []string{"Step 1/2 : FROM scratch", " --->", "Step 2/2 : RUN x", " ---> Running in 0123", "red text", "progress 100%", "partial line", "last without newline", "abc: Pulling fs layer"}
	if got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"); !slices.Equal(got, wantLines) {
		t.Errorf("log lines\n%q\nwant\n%q", got, wantLines)
	}
	if !slices.Equal(log.tail, wantLines) {
		t.Errorf("tail %q", log.tail)
	}

	id, msg, err = readBuildStream(strings.NewReader(`{"stream":"Successfully built 0123"}`+"\n"+`{"aux":{"ID":"sha256:0123"}}`), &lineLog{})
	if err != nil || id != "sha256:0123" || msg != "" {
		t.Errorf("readBuildStream = %q, %q, %v; want the aux ID", id, msg, err)
	}
	if _, _, err := readBuildStream(strings.NewReader(`{"stream":"x"`), &lineLog{}); err == nil {
		t.Error("a truncated stream gave no error")
	}
}

func TestLineLogTail(t *testing.T) {
	log := &lineLog{}
	for i := range 50 {
		log.write(strings.Repeat("x", i+1) + "\n")
	}
	if len(log.tail) != tailLines || log.tail[0] != strings.Repeat("x", 31) || log.tail[19] != strings.Repeat("x", 50) {
		t.Errorf("tail has %d lines, first %q", len(log.tail), log.tail[0])
	}
}

func TestBuildErrorText(t *testing.T) {
	e := &BuildError{Tag: "arenabot/gin", Msg: oneLine("COPY failed:\n  stat x: \x1b[31mno such file\x1b[0m\r\n")}
	if got, want := e.Error(), "build arenabot/gin: COPY failed: stat x: no such file"; got != want {
		t.Errorf("Error() = %q; want %q", got, want)
	}
}

// TestLostLayer: the daemon's words for a cached layer removed during the build (seen when
// another process removed an image while this one built) are retried; a real failure is not.
func TestLostLayer(t *testing.T) {
	for msg, want := range map[string]bool{
		"failed to get digest sha256:5b68a430e15d005fe11b7beaa371a22ae9b764c4d4a829c30342652f90312795: open /var/lib/docker/image/fuse-overlayfs/imagedb/content/sha256/5b68a430e15d005fe11b7beaa371a22ae9b764c4d4a829c30342652f90312795: no such file or directory": true,
		"No such image: sha256:5b68a430e15d005fe11b7beaa371a22ae9b764c4d4a829c30342652f90312795":                            true,
		"The command '/bin/sh -c go build' returned a non-zero code: 1":                                                     false,
		"COPY failed: file not found in build context or excluded by .dockerignore: stat missing-file: file does not exist": false,
		"unknown parent image ID sha256:78994820344b00791702b4cbf43be8a07f90694045631bfc0a96b37636ebd73b":                   true,
		"No such image: arenabot/golang:local":                                                                              false,
	} {
		if got := lostLayer(msg); got != want {
			t.Errorf("lostLayer(%q) = %v, want %v", msg, got, want)
		}
	}
}
