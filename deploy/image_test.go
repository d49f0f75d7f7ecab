// Package deploy_test checks the deployment material against the real Docker Engine: the bot's
// own image (the top-level Dockerfile, which deploy/compose.yaml builds).
package deploy_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/bot/hook"
	"github.com/arenabot/arenabot/runner/docker"
)

// TestBotImage builds the bot's own image from the top-level Dockerfile (as deploy/compose.yaml
// does) and runs `arenabot serve` in it against the fake GitHub: it answers /healthz, takes
// a signed ping and refuses a forged delivery.
func TestBotImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image")
	}
	ctx := t.Context()
	eng := engine(t)
	args := map[string]string{}
	// Without a registry, the image builds on the local stand-in of golang:1.26-bookworm.
	if ok, _ := eng.ImageExists(ctx, "golang:1.26-bookworm"); !ok {
		if ok, _ := eng.ImageExists(ctx, "arenabot/golang:local"); ok {
			args["GO_IMAGE"] = "arenabot/golang:local"
		}
	}
	const tag = "arenabot:test"
	var log bytes.Buffer
	start := time.Now()
	// The lowest CPU weight: the compile runs beside the suite's measuring tests, which
	// take turns on the host lock and are the suite's long pole; this build yields to them.
	if _, err := eng.Build(ctx, docker.BuildOptions{ContextDir: "..", Tag: tag, BuildArgs: args,
		NetworkMode: "host", CPUShares: 2, Labels: map[string]string{"arenabot.test": "bot-image"}, Log: &log}); err != nil {
		t.Fatalf("build: %v\n%s", err, log.String())
	}
	t.Logf("built %s in %s", tag, time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		rm, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := eng.RemoveImage(rm, tag); err != nil {
			t.Logf("remove %s: %v", tag, err)
		}
	})

	gh := githubtest.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := eng.Start(ctx, docker.RunOptions{
		Image: tag, Cmd: []string{"serve"}, HostNetwork: true,
		Env: []string{"ARENA_WEBHOOK_SECRET=img-secret", "ARENA_GITHUB_TOKEN=tok", "ARENA_GITHUB_API_URL=" + gh.URL,
			"ARENA_LISTEN=" + addr, "ARENA_REPOS=octo/arena"},
		Labels: map[string]string{"arenabot.test": "bot-image"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		rm, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		eng.Remove(rm, c.ID)
	}()
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
				t.Fatalf("/healthz = %d %q", resp.StatusCode, body)
			}
			break
		}
		if time.Now().After(deadline) {
			logs, _ := eng.Logs(ctx, c.ID, 20)
			t.Fatalf("serve in the image never answered: %v; log:\n%s", err, logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ping := []byte(`{"zen":"Design for failure.","hook_id":1,"hook":{"type":"App","id":1}}`)
	for _, d := range []struct {
		secret string
		want   int
	}{{"img-secret", http.StatusOK}, {"forged", http.StatusUnauthorized}} {
		req, _ := http.NewRequest(http.MethodPost, base+"/webhook", bytes.NewReader(ping))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "ping")
		req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("ping-%s", d.secret))
		req.Header.Set("X-Hub-Signature-256", hook.Sign([]byte(d.secret), ping))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != d.want {
			t.Errorf("ping signed with %q answered %d, want %d", d.secret, resp.StatusCode, d.want)
		}
	}
}
