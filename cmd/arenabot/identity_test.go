package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/bot/hook"
)

func TestParseRepos(t *testing.T) {
	got, err := parseRepos("serve", " octo/arena,octo/arena-next  Octo/Arena\tacme/x.y_z ")
	if want := []string{"octo/arena", "octo/arena-next", "acme/x.y_z"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("parseRepos = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{"arena", "octo/arena/x", "https://github.com/octo/arena", "octo/arena.git", "-octo/arena", "/arena"} {
		if _, err := parseRepos("serve", bad); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("ARENA_REPOS entry %q", bad)) {
			t.Errorf("parseRepos(%q) err = %v; want one naming the entry", bad, err)
		}
	}
}

// appKeyFile writes a fresh GitHub App private key and returns its path.
func appKeyFile(t *testing.T) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "app.pem")
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// identityServe is the config of a serve on the embedded store against gh, with token auth
// and ARENA_REPOS unset unless over says otherwise ("" unsets).
func identityServe(t *testing.T, gh *githubtest.Server, over map[string]string) serveConfig {
	t.Helper()
	env := map[string]string{
		"ARENA_WEBHOOK_SECRET": "s3cret", "ARENA_GITHUB_TOKEN": "tok", "ARENA_GITHUB_API_URL": gh.URL,
		"ARENA_LISTEN": "127.0.0.1:0", "ARENA_STATE_DIR": t.TempDir(),
	}
	maps.Copy(env, over)
	c, err := parseServe(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestServeRefusesUnknownIdentity: serve does not start (never listens, writes nothing to
// GitHub) when it cannot tell its own login or which repositories it serves, and says
// which and what to set.
func TestServeRefusesUnknownIdentity(t *testing.T) {
	key := appKeyFile(t)
	app := map[string]string{"ARENA_GITHUB_TOKEN": "", "ARENA_GITHUB_APP_ID": "1234", "ARENA_GITHUB_PRIVATE_KEY_FILE": key}
	for _, tt := range []struct {
		name  string
		env   map[string]string
		fake  func(gh *githubtest.Server)
		wants []string
	}{
		{name: "token without ARENA_REPOS", env: nil,
			wants: []string{"ARENA_REPOS is not set: with token auth", "reaches every repository arenabot[bot] can", "ARENA_REPOS=octo/arena"}},
		{name: "GET /user fails", env: map[string]string{"ARENA_REPOS": "octo/arena"},
			fake:  func(gh *githubtest.Server) { gh.FailNext("GET", "/user", 1, http.StatusUnauthorized) },
			wants: []string{"cannot tell the bot's own login", "GET /user", "401"}},
		{name: "ARENA_BOT_LOGIN differs", env: map[string]string{"ARENA_REPOS": "octo/arena", "ARENA_BOT_LOGIN": "benchbot[bot]"},
			wants: []string{`the bot's login is "arenabot[bot]" according to GitHub but ARENA_BOT_LOGIN says "benchbot[bot]"`}},
		{name: "App without a slug", env: withEnv(app, "ARENA_REPOS", "octo/arena"),
			fake:  func(gh *githubtest.Server) { gh.SetApp("") },
			wants: []string{"cannot tell the bot's own login", "GET /app", "no slug"}},
		{name: "App on two repositories", env: app,
			fake: func(gh *githubtest.Server) {
				gh.AddInstallation(1, "octo/arena")
				gh.AddInstallation(2, "mallory/fork")
			},
			wants: []string{"ARENA_REPOS is not set and the GitHub App arenabot[bot] is installed on 2 repositories (mallory/fork, octo/arena)", "set ARENA_REPOS"}},
		{name: "App installed nowhere", env: app,
			wants: []string{"installed on no repository"}},
		{name: "installations unreadable", env: app,
			fake:  func(gh *githubtest.Server) { gh.FailNext("GET", "/app/installations", 1, http.StatusForbidden) },
			wants: []string{"listing the repositories the GitHub App is installed on failed", "403", "set ARENA_REPOS"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			gh := githubtest.New(t)
			gh.AddRepo("octo", "arena")
			if tt.fake != nil {
				tt.fake(gh)
			}
			c := identityServe(t, gh, tt.env)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			c.ReadyListening = func(string) { t.Error("serve started listening"); cancel() }
			err := serve(ctx, c, io.Discard)
			for _, w := range tt.wants {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("serve = %v; want an error saying %q", err, w)
				}
			}
			for _, call := range gh.Calls() {
				if call.Method != http.MethodGet && !strings.HasSuffix(call.Path, "/access_tokens") {
					t.Errorf("serve wrote to GitHub before refusing: %s %s", call.Method, call.Path)
				}
			}
		})
	}
}

// TestServeSingleInstallation: without ARENA_REPOS, an App installed on one repository
// serves that one: a signed command from another repository is ignored through the whole
// serve (no record, no GitHub call), and one from the served repository is accepted.
func TestServeSingleInstallation(t *testing.T) {
	gh := githubtest.New(t)
	gh.AddInstallation(1, "octo/arena")
	gh.AddRepo("mallory", "fork")
	c := identityServe(t, gh, map[string]string{"ARENA_GITHUB_TOKEN": "", "ARENA_GITHUB_APP_ID": "1234", "ARENA_GITHUB_PRIVATE_KEY_FILE": appKeyFile(t)})
	var logs syncBuffer
	base, stop := startServe(t, c, &logs)
	mark := len(gh.Calls())
	send := func(repo, delivery string) string {
		t.Helper()
		body := fmt.Appendf(nil, `{"action":"created","issue":{"number":42,"pull_request":{"url":"x"},"user":{"login":"mallory","type":"User"}},`+
			`"comment":{"id":77,"body":"/benchmark-help","user":{"login":"mallory","type":"User"}},`+
			`"repository":{"full_name":%q},"installation":{"id":1},"sender":{"login":"mallory","type":"User"}}`, repo)
		req, _ := http.NewRequest(http.MethodPost, base+"/webhook", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(hook.EventHeader, "issue_comment")
		req.Header.Set(hook.DeliveryHeader, delivery)
		req.Header.Set(hook.SignatureHeader, hook.Sign([]byte("s3cret"), body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if got := send("mallory/fork", "d-foreign"); got != "202 ignored: repository not served" {
		t.Errorf("foreign delivery answered %q", got)
	}
	if got := send("octo/arena", "d-served"); got != "202 accepted" {
		t.Errorf("served delivery answered %q", got)
	}
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, call := range gh.Calls()[mark:] {
		if strings.Contains(call.Path, "mallory") {
			t.Errorf("serve called GitHub for the foreign repository: %s %s", call.Method, call.Path)
		}
	}
	for _, w := range []string{`"login":"arenabot[bot]"`, `"repos":["octo/arena"]`, `"repo":"mallory/fork"`} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("the log does not say %s:\n%s", w, logs.String())
		}
	}
}

// TestRunnerRefusesUnknownRepository: work (and serve --runner) refuse to start when they
// could not tell a foreign job from their own, or when ARENA_REPOS leaves out the one
// repository their clone fetches from.
func TestRunnerRefusesUnknownRepository(t *testing.T) {
	clone := func(url string) string {
		dir := t.TempDir()
		for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", url}} {
			if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v: %s", args, err, out)
			}
		}
		return dir
	}
	local, github := clone("/srv/arena.git"), clone("git@github.com:octo/arena.git")
	for _, tt := range []struct {
		dir     string
		repos   string
		wantErr string
	}{
		{dir: local, wantErr: `ARENA_REPOS is not set and remote "origin" of the clone ` + local + " is not a GitHub repository URL"},
		{dir: github, repos: "octo/other", wantErr: "ARENA_REPOS octo/other does not hold octo/arena"},
		{dir: local, repos: "octo/arena"},
		{dir: github},
		{dir: github, repos: "OCTO/arena,octo/other"},
	} {
		env := map[string]string{"ARENA_REDIS_URL": "redis://127.0.0.1:6379", "ARENA_REPO_DIR": tt.dir, "ARENA_REPOS": tt.repos, "ARENA_CACHE_DIR": t.TempDir()}
		c, err := parseWork(nil, func(k string) string { return env[k] }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		err = checkRunnerRepos(t.Context(), "work", c)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s with ARENA_REPOS %q: %v; want %q", tt.dir, tt.repos, err, tt.wantErr)
		}
	}
}
