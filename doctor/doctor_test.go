package doctor

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/runner/loadgen"
)

// byName indexes lines by check name.
func byName(lines []Line) map[string]Line {
	m := map[string]Line{}
	for _, l := range lines {
		m[l.Name] = l
	}
	return m
}

func printed(lines []Line) string {
	var b bytes.Buffer
	Print(&b, lines)
	return b.String()
}

// TestThisHost runs the runner checks against this machine: its Docker engine and its
// pinned load tools, which the rest of the tests rely on too.
func TestThisHost(t *testing.T) {
	if testing.Short() {
		t.Skip("reaches Docker and runs the load tools")
	}
	env := System() // with the real host lock: while another run holds it, the ports are not bound
	lines := RunAll(t.Context(), RunnerChecks(RunnerConfig{WorkDir: t.TempDir()}, env))
	t.Logf("doctor on this host:\n%s", printed(lines))
	got := byName(lines)
	if got["docker"].Status != OK {
		t.Skipf("no Docker engine here: %s", got["docker"])
	}
	for _, name := range []string{"tool wrk", "tool h2load", "tool ghz", "tool arenaload", "git", "host lock"} {
		if l := got[name]; l.Status != OK {
			t.Errorf("%s: want ok on this host (the tests measure with these tools)", l)
		}
	}
	if l := got["cgroup"]; l.Status == Fail {
		t.Errorf("%s: Docker runs here, so some cgroup hierarchy is mounted", l)
	}

	// The image map: a stand-in deploy/base-images.sh made here, and one nobody made.
	m, err := build.ParseImageMap("golang:*=arenabot/golang:local,nosuch:*=arenabot/nosuch:local")
	if err != nil {
		t.Fatal(err)
	}
	images := byName(RunAll(t.Context(), RunnerChecks(RunnerConfig{WorkDir: t.TempDir(), ImageMap: m, Ports: []Port{}}, env)))["images"]
	t.Logf("with a stand-in missing:\n%s", printed([]Line{images}))
	if images.Status != Fail || !strings.Contains(images.Value, "1 of 2 mapped images missing: arenabot/nosuch:local") {
		t.Errorf("%s: want FAIL naming only arenabot/nosuch:local (arenabot/golang:local is made by .ci/setup)", images)
	}
}

// brokenHost is this machine with a PATH that holds only a wrk of the wrong version (no
// h2load, ghz, arenaload, git, flock or perf) and a private host lock.
func brokenHost(t *testing.T) Env {
	t.Helper()
	bin := t.TempDir()
	script := "#!/bin/sh\necho 'wrk 4.0.2 [epoll] Copyright (C) 2012 Will Glozer'\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "wrk"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env := System()
	env.Getenv = func(k string) string {
		if k == "PATH" {
			return bin
		}
		return ""
	}
	env.Docker = func(ctx context.Context) (Docker, error) {
		return nil, errors.New("Docker is not reachable at unix:///nowhere.sock")
	}
	env.LockPath = filepath.Join(t.TempDir(), "host.lock")
	return env
}

// takePort listens on 8082 when it can do so safely, else on a free port, and returns that
// port. 8082 is a port other runs' servers use, so the test holds the host lock while it
// listens there; when another run holds the lock it takes a free port instead of waiting.
func takePort(t *testing.T) Port {
	t.Helper()
	var l net.Listener
	if f, err := os.OpenFile(host.LockPath, os.O_RDWR|os.O_CREATE, 0o666); err == nil {
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			l, _ = net.Listen("tcp", ":8082")
		}
		t.Cleanup(func() { f.Close() }) // after the listener's cleanup: releases the lock
	}
	if l == nil {
		var err error
		if l, err = net.Listen("tcp", ":0"); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { l.Close() })
	return Port{Number: l.Addr().(*net.TCPAddr).Port, Use: "server of baseline-h2c and json-h2c"}
}

func TestBrokenHost(t *testing.T) {
	env := brokenHost(t)
	port := takePort(t)
	cfg := RunnerConfig{WorkDir: t.TempDir(), Ports: []Port{port}, Tools: []loadgen.Tool{loadgen.Wrk(), loadgen.H2load()}}
	lines := RunAll(t.Context(), RunnerChecks(cfg, env))
	out := printed(lines)
	t.Logf("doctor on a broken host:\n%s", out)
	got := byName(lines)
	self := fmt.Sprintf("(pid %d)", os.Getpid())
	for _, c := range []struct{ name, want string }{
		{"docker", "not reachable"},
		{"tool wrk", "is 4.0.2, pinned 4.1.0"},
		{"tool h2load", "not on PATH"},
		{portName(port), "taken by "},
		{"git", "not on PATH"},
	} {
		l := got[c.name]
		if l.Status != Fail || !strings.Contains(l.Value, c.want) || l.Fix == "" {
			t.Errorf("%s: want FAIL with %q and a fix", l, c.want)
		}
	}
	if l := got[portName(port)]; !strings.Contains(l.Value, self) {
		t.Errorf("%s: want the owner named, this test %s", l, self)
	}
	if l := got["flock"]; l.Status != Warn {
		t.Errorf("%s: want warn, the runner locks without flock(1)", l)
	}
	if l := got["perf"]; l.Status != Warn {
		t.Errorf("%s: want warn, profiling is optional", l)
	}

	err := Gate(t.Context(), RunnerChecks(cfg, env), slog.New(slog.DiscardHandler))
	if !errors.Is(err, ErrFailed) || !regexp.MustCompile(`(?m)^FAIL +tool h2load +not on PATH`).MatchString(err.Error()) {
		t.Errorf("Gate = %v; want ErrFailed naming the missing h2load", err)
	}

	cfg.Lite = true
	lite := byName(RunAll(t.Context(), RunnerChecks(cfg, env)))
	for _, name := range []string{"tool wrk", "tool h2load"} {
		if l := lite[name]; l.Status != Warn {
			t.Errorf("lite: %s: want warn, lite runs the tools in the load-generator image", l)
		}
	}
}

func TestPrintAligns(t *testing.T) {
	out := printed([]Line{
		{"docker", Result{OK, "API 1.41 (Docker 20.10.24)", ""}},
		{"port 8080", Result{Fail, "taken by nginx (pid 123)", "stop it, the servers listen there"}},
	})
	want := "ok    docker     API 1.41 (Docker 20.10.24)\nFAIL  port 8080  taken by nginx (pid 123): stop it, the servers listen there\n"
	if out != want {
		t.Errorf("Print =\n%s\nwant\n%s", out, want)
	}
}

func TestSocketInodes(t *testing.T) {
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0000000000000000 20 4 30 10 -1
   2: 00000000:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1 0000000000000000 100 0 0 10 0
`
	if got := socketInodes([]byte(table), 8080, true); len(got) != 1 || got[0] != "4242" {
		t.Errorf("socketInodes(8080, listening) = %v, want [4242]", got)
	}
	if got := socketInodes([]byte(table), 8080, false); len(got) != 2 {
		t.Errorf("socketInodes(8080, any state) = %v, want two", got)
	}
}

func TestVersionLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{{"1.9", "1.41", true}, {"1.41", "1.40", false}, {"1.40", "1.40", false}, {"1.24", "1.40", true}} {
		if got := versionLess(c.a, c.b); got != c.want {
			t.Errorf("versionLess(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestBotChecks(t *testing.T) {
	dir := t.TempDir()
	key, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "app.pem")
	os.WriteFile(good, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600)
	notPEM := filepath.Join(dir, "bad.pem")
	os.WriteFile(notPEM, []byte("not a key"), 0o600)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()

	for _, c := range []struct {
		name  string
		vars  map[string]string
		check string
		want  Status
	}{
		{"no secret", nil, "webhook secret", Fail},
		{"secret", map[string]string{"ARENA_WEBHOOK_SECRET": "s3cr3t-value"}, "webhook secret", OK},
		{"no credentials", nil, "github", Fail},
		{"token", map[string]string{"ARENA_GITHUB_TOKEN": "t", "ARENA_REPOS": "octo/arena"}, "github", OK},
		{"token without repos", map[string]string{"ARENA_GITHUB_TOKEN": "t"}, "github", Fail},
		{"app key", map[string]string{"ARENA_GITHUB_APP_ID": "1", "ARENA_GITHUB_PRIVATE_KEY_FILE": good}, "github", OK},
		{"key not PEM", map[string]string{"ARENA_GITHUB_APP_ID": "1", "ARENA_GITHUB_PRIVATE_KEY_FILE": notPEM}, "github", Fail},
		{"key missing", map[string]string{"ARENA_GITHUB_APP_ID": "1", "ARENA_GITHUB_PRIVATE_KEY_FILE": filepath.Join(dir, "none.pem")}, "github", Fail},
		{"app id only", map[string]string{"ARENA_GITHUB_APP_ID": "1"}, "github", Fail},
		{"state dir", nil, "queue", OK},
		{"listen taken", nil, "listen " + taken.Addr().String(), Fail},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := System()
			env.Getenv = func(k string) string { return c.vars[k] }
			checks := BotChecks(BotConfig{Listen: taken.Addr().String(), StateDir: filepath.Join(dir, "state")}, env)
			got := byName(RunAll(t.Context(), checks))[c.check]
			if got.Status != c.want {
				t.Errorf("%s: want %s", got, c.want)
			}
			if strings.Contains(got.String(), "s3cr3t") {
				t.Errorf("%s: the secret is printed", got)
			}
		})
	}
}

func TestRedisUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing answers there now
	got := checkQueue(t.Context(), BotConfig{RedisURL: "redis://:pw@" + addr + "/0"})
	if got.Status != Fail || strings.Contains(got.Value, "pw") {
		t.Errorf("%+v: want FAIL without the URL's password", got)
	}
}
