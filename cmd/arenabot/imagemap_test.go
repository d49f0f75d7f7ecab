package main

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/docker"
)

// TestImageMapFlag: --image-map and ARENA_IMAGE_MAP reach the runner's configuration in
// every subcommand that builds entries; the flag replaces the variable; a malformed pair is
// one line that names it and the expected form.
func TestImageMapFlag(t *testing.T) {
	const env = "golang:*=arenabot/golang:local,alpine:*=arenabot/debian:local"
	parsers := map[string]func(args []string, getenv func(string) string) (hostConfig, error){
		"bench": func(args []string, getenv func(string) string) (hostConfig, error) {
			c, err := parseBench(append([]string{"nethttp"}, args...), getenv, io.Discard)
			return c.hostConfig, err
		},
		"validate": func(args []string, getenv func(string) string) (hostConfig, error) {
			c, err := parseValidate(append([]string{"nethttp"}, args...), getenv, io.Discard)
			return c.hostConfig, err
		},
		"work": func(args []string, getenv func(string) string) (hostConfig, error) {
			c, err := parseWork(args, getenv, io.Discard)
			return c.hostConfig, err
		},
		"serve --runner": func(args []string, getenv func(string) string) (hostConfig, error) {
			c, err := parseServe(append([]string{"--runner", "--listen", "127.0.0.1:9"}, args...), getenv, io.Discard)
			return c.Work.hostConfig, err
		},
	}
	for name, parse := range parsers {
		t.Run(name, func(t *testing.T) {
			vars := map[string]string{"ARENA_REDIS_URL": "redis://127.0.0.1:6379", "ARENA_WEBHOOK_SECRET": "s", "ARENA_GITHUB_TOKEN": "tok"}
			getenv := func(k string) string { return vars[k] }

			c, err := parse(nil, getenv)
			if err != nil || c.ImageMap.Len() != 0 {
				t.Fatalf("without a map: %v, %d pairs", err, c.ImageMap.Len())
			}

			vars["ARENA_IMAGE_MAP"] = env
			c, err = parse(nil, getenv)
			if err != nil {
				t.Fatal(err)
			}
			if local, _, _ := c.ImageMap.Lookup("golang:1.26-alpine"); local != "arenabot/golang:local" || c.ImageMap.String() != env {
				t.Errorf("from ARENA_IMAGE_MAP: %q maps golang:1.26-alpine to %q", c.ImageMap, local)
			}
			if got := c.runnerConfig(t.Context(), "/data").ImageMap.String(); got != env {
				t.Errorf("measure.Config.ImageMap = %q; want %q", got, env)
			}

			c, err = parse([]string{"--image-map", "golang:1.26-alpine=my/go:1", "--image-map", "node:*=my/node:1,alpine:3.23=my/alpine:1"}, getenv)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := c.ImageMap.String(), "golang:1.26-alpine=my/go:1,node:*=my/node:1,alpine:3.23=my/alpine:1"; got != want {
				t.Errorf("with --image-map over ARENA_IMAGE_MAP: %q; want only the flags' %q", got, want)
			}

			for _, bad := range []struct{ from, value string }{{"env", "golang:*=arenabot/golang:local,alpine"}, {"flag", "alpine"}} {
				var args []string
				vars["ARENA_IMAGE_MAP"] = env
				if bad.from == "env" {
					vars["ARENA_IMAGE_MAP"] = bad.value
				} else {
					args = []string{"--image-map", bad.value}
				}
				_, err := parse(args, getenv)
				want := name + `: --image-map (ARENA_IMAGE_MAP): image map pair "alpine": no "="; want IMAGE=LOCAL pairs, comma separated, where IMAGE may end in * to match any tag (for example golang:*=arenabot/golang:local,alpine:*=arenabot/debian:local)`
				if err == nil || err.Error() != want {
					t.Errorf("a bad pair in the %s: %v\nwant %s", bad.from, err, want)
				}
			}
		})
	}
}

// TestOldArenaEntryBuilds builds testdata/oldarena, an entry written the old arena's way
// (FROM golang:1.26-alpine AS build … FROM alpine:3.23), through --image-map on the real
// engine, on a host that has neither image, and checks it answers the baseline checks; its
// files stay as they were.
func TestOldArenaEntryBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image")
	}
	needDocker(t)
	eng, err := docker.New(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	for _, img := range []string{"golang:1.26-alpine", "alpine:3.23"} {
		if ok, _ := eng.ImageExists(t.Context(), img); ok {
			t.Skipf("this host has %s; nothing would be built through the map", img)
		}
	}
	for _, img := range []string{"arenabot/golang:local", "arenabot/debian:local"} {
		if ok, _ := eng.ImageExists(t.Context(), img); !ok {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI needs %s (deploy/base-images.sh)", img)
			}
			t.Skipf("no %s on this host; run deploy/base-images.sh", img)
		}
	}
	root := t.TempDir()
	dir := filepath.Join(root, "frameworks", "oldarena")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "oldarena"))); err != nil {
		t.Fatal(err)
	}
	before := filesOf(t, dir)

	const imageMap = "golang:*=arenabot/golang:local,alpine:*=arenabot/debian:local"
	_, stderr, err := runCmd(t, "validate", "oldarena", "-t", "baseline", "--root", root, "--image-map", imageMap)
	if err != nil {
		t.Fatalf("validate oldarena -t baseline through the map: %v", err)
	}
	for _, want := range []string{
		`base image golang:1.26-alpine (stage 1 "build") is not on this host and cannot be pulled; building FROM arenabot/golang:local instead (ARENA_IMAGE_MAP golang:*=arenabot/golang:local)`,
		`base image alpine:3.23 (stage 2) is not on this host and cannot be pulled; building FROM arenabot/debian:local instead (ARENA_IMAGE_MAP alpine:*=arenabot/debian:local)`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks the note\n%s", want)
		}
	}
	after := filesOf(t, dir)
	for name, b := range before {
		if !bytes.Equal(after[name], b) {
			t.Errorf("%s changed", name)
		}
	}
	if len(after) != len(before) {
		t.Errorf("the entry held %d files, now %d", len(before), len(after))
	}
	if err := eng.RemoveImage(context.Background(), build.ImageTag("oldarena")); err != nil {
		t.Log(err)
	}
}

// filesOf reads every file under dir.
func filesOf(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
