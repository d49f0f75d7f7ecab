package deploy_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/deploy"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/docker"
)

// TestEdgeStandIns checks the compose stacks' edge stand-ins that base-images.sh makes, by
// running their own version commands (a second each, no network): arenabot/nginx:local
// has the modules the edges' configurations use, arenabot/caddy:local is caddy 2.6 with
// file_server's precompressed encodings (its HTTP/3 is in the core, not a module).
func TestEdgeStandIns(t *testing.T) {
	ctx := t.Context()
	eng := engine(t)
	for _, tt := range []struct {
		image string
		cmd   []string
		want  []string
	}{
		{"arenabot/nginx:local", []string{"nginx", "-V"}, []string{"nginx/1.22.", "--with-http_ssl_module",
			"--with-http_v2_module", "--with-http_auth_request_module", "--with-http_gzip_static_module"}},
		{"arenabot/caddy:local", []string{"caddy", "version"}, []string{"2.6."}},
		{"arenabot/caddy:local", []string{"caddy", "list-modules"}, []string{"http.handlers.file_server",
			"http.handlers.reverse_proxy", "http.precompressed.br", "http.precompressed.gzip"}},
	} {
		if ok, err := eng.ImageExists(ctx, tt.image); err != nil || !ok {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI needs %s (deploy/base-images.sh): %v", tt.image, err)
			}
			t.Skipf("no %s on this host; run deploy/base-images.sh", tt.image)
		}
		var out bytes.Buffer
		code, err := eng.Run(ctx, docker.RunOptions{Image: tt.image, Cmd: tt.cmd,
			Labels: map[string]string{"arenabot.test": "edge-stand-ins"}}, &out)
		if err != nil || code != 0 {
			t.Errorf("%s %v: exit %d, %v\n%s", tt.image, tt.cmd, code, err, out.String())
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s %v lacks %q:\n%s", tt.image, tt.cmd, w, out.String())
			}
		}
	}
}

// TestImageMapLine checks the map base-images.sh prints: every stand-in it makes is in it,
// the edges' and sidecars' images map to theirs, and names print only their part.
func TestImageMapLine(t *testing.T) {
	printMap := func(names ...string) map[string]string {
		t.Helper()
		out, err := exec.Command("bash", append([]string{"base-images.sh", "--print-map"}, names...)...).Output()
		if err != nil {
			t.Fatalf("base-images.sh --print-map %v: %v", names, err)
		}
		line, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "ARENA_IMAGE_MAP=")
		if !ok {
			t.Fatalf("base-images.sh --print-map printed %q", out)
		}
		if _, err := build.ParseImageMap(line); err != nil {
			t.Errorf("the map does not parse: %v", err)
		}
		pairs := map[string]string{}
		for _, p := range strings.Split(line, ",") {
			image, local, _ := strings.Cut(p, "=")
			pairs[image] = local
		}
		return pairs
	}
	pairs := printMap()
	for image, want := range map[string]string{"nginx:*": "arenabot/nginx:local", "caddy:*": "arenabot/caddy:local",
		"redis:*": "arenabot/redis:local", "postgres:*": "arenabot/postgres:local", "golang:*": "arenabot/golang:local",
		"debian:*": "arenabot/debian:local", "alpine:*": "arenabot/debian:local"} {
		if pairs[image] != want {
			t.Errorf("the map sends %s to %q, want %s", image, pairs[image], want)
		}
	}
	mapped := map[string]bool{}
	for _, local := range pairs {
		mapped[local] = true
	}
	for _, name := range deploy.StandIns {
		if !mapped["arenabot/"+name+":local"] {
			t.Errorf("base-images.sh makes arenabot/%s:local but its map does not name it", name)
		}
	}
	if got := printMap("redis"); len(got) != 1 || got["redis:*"] != "arenabot/redis:local" {
		t.Errorf("--print-map redis = %v; want redis's pair alone", got)
	}
	out, err := exec.Command("bash", "base-images.sh", "rust").CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "unknown argument rust") {
		t.Errorf("base-images.sh rust: exit %d, %q; want 2 and the names it knows", code, out)
	}
}

func exitCode(err error) int {
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestMakeStandIn runs the embedded script as arenabot bench does on first use, for the
// Debian stand-in under a tag of its own (the shared rootfs .ci/setup made is reused, so it
// takes seconds): the image is made and is bookworm, its progress came line by line; an
// image the script does not make is not tried.
func TestMakeStandIn(t *testing.T) {
	ctx := t.Context()
	eng := engine(t)
	if os.Geteuid() != 0 {
		t.Skip("making a stand-in needs root")
	}
	tag := fmt.Sprintf("test-%d", os.Getpid())
	t.Setenv(deploy.TagEnv, tag)
	image := "arenabot/debian:" + tag
	t.Cleanup(func() { exec.Command("docker", "image", "rm", image).Run() })

	if made, err := deploy.MakeStandIn(ctx, "arenabot/rust:"+tag, nil); made || err != nil {
		t.Errorf("MakeStandIn(rust) = %v, %v; want not made, no error: the script makes no rust", made, err)
	}
	if made, err := deploy.MakeStandIn(ctx, "arenabot/debian:local", nil); made || err != nil {
		t.Errorf("MakeStandIn under another tag than %s = %v, %v; want not made", tag, made, err)
	}
	var lines []string
	made, err := deploy.MakeStandIn(ctx, image, func(l string) { lines = append(lines, l) })
	if err != nil || !made {
		t.Fatalf("MakeStandIn(%s) = %v, %v", image, made, err)
	}
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "base-images: importing ") }) ||
		!slices.Contains(lines, "base-images: ready: "+image) {
		t.Errorf("progress %q; want the import and the ready line", lines)
	}
	var out bytes.Buffer
	code, err := eng.Run(ctx, docker.RunOptions{Image: image, Cmd: []string{"cat", "/etc/debian_version"}}, &out)
	if err != nil || code != 0 || !strings.HasPrefix(out.String(), "12.") {
		t.Errorf("%s: /etc/debian_version %q (exit %d, %v); want bookworm (12.x)", image, out.String(), code, err)
	}
}

// engine connects to the Docker Engine, or skips the test without one (CI fails it).
func engine(t *testing.T) *docker.Engine {
	t.Helper()
	eng, err := docker.New(t.Context())
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI needs a Docker Engine: %v", err)
		}
		t.Skipf("no Docker Engine: %v", err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}
