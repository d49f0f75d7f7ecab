package deploy_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/runner/docker"
)

// TestEdgeStandIns checks the compose stacks' edge stand-ins that base-images.sh makes, by
// running their own version commands (a second each, no network): arenabot/nginx:local
// has the modules the edges' configurations use, arenabot/caddy:local is caddy 2.6 with
// file_server's precompressed encodings (its HTTP/3 is in the core, not a module).
func TestEdgeStandIns(t *testing.T) {
	ctx := t.Context()
	eng, err := docker.New(ctx)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI needs a Docker Engine: %v", err)
		}
		t.Skipf("no Docker Engine: %v", err)
	}
	t.Cleanup(func() { eng.Close() })
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

// TestImageMapLine checks the map base-images.sh prints: every stand-in it imports is in it,
// and the edges' images map to theirs.
func TestImageMapLine(t *testing.T) {
	script, err := os.ReadFile("base-images.sh")
	if err != nil {
		t.Fatal(err)
	}
	var mapLine string
	imported := map[string]bool{}
	for line := range strings.Lines(string(script)) {
		line = strings.TrimSpace(line)
		if m, ok := strings.CutPrefix(line, `echo "ARENA_IMAGE_MAP=`); ok {
			mapLine = strings.TrimSuffix(m, `"`)
		}
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "import" && strings.HasPrefix(f[2], "arenabot/") {
			imported[f[2]] = true
		}
	}
	if mapLine == "" {
		t.Fatal("base-images.sh prints no ARENA_IMAGE_MAP line")
	}
	pairs := map[string]string{}
	for _, p := range strings.Split(mapLine, ",") {
		image, local, _ := strings.Cut(p, "=")
		pairs[image] = local
	}
	for image, want := range map[string]string{"nginx:*": "arenabot/nginx:local", "caddy:*": "arenabot/caddy:local",
		"redis:*": "arenabot/redis:local", "postgres:*": "arenabot/postgres:local"} {
		if pairs[image] != want {
			t.Errorf("the map sends %s to %q, want %s", image, pairs[image], want)
		}
	}
	mapped := map[string]bool{}
	for _, local := range pairs {
		mapped[local] = true
	}
	for img := range imported {
		if !mapped[img] {
			t.Errorf("base-images.sh makes %s but its map does not name it", img)
		}
	}
}
