package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/bot/hook"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/queuetest"
)

func TestParseServe(t *testing.T) {
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "secret")
	os.WriteFile(secretFile, []byte("from-file\n"), 0o600)
	base := map[string]string{"ARENA_WEBHOOK_SECRET": "s3cret", "ARENA_GITHUB_TOKEN": "tok"}
	with := func(kv ...string) map[string]string { return withEnv(base, kv...) }
	for _, tt := range []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr string
		check   func(t *testing.T, c serveConfig)
	}{
		{name: "defaults", env: base, check: func(t *testing.T, c serveConfig) {
			if c.Listen != ":8080" || c.Depth != 1 || c.ApprovalPoll != 15*time.Second || c.ApprovalTTL != 72*time.Hour || string(c.Secret) != "s3cret" || c.APIURL != "https://api.github.com/" || c.WebURL != "https://github.com/" {
				t.Errorf("defaults = %+v", c)
			}
		}},
		{name: "flag beats variable", env: with("ARENA_LISTEN", ":9000"), args: []string{"--listen", ":9100", "--webhook-secret-file", secretFile}, check: func(t *testing.T, c serveConfig) {
			if c.Listen != ":9100" || string(c.Secret) != "from-file" {
				t.Errorf("listen %q secret %q", c.Listen, c.Secret)
			}
		}},
		{name: "no secret", env: map[string]string{"ARENA_GITHUB_TOKEN": "tok"}, wantErr: "no webhook secret"},
		{name: "no credentials", env: map[string]string{"ARENA_WEBHOOK_SECRET": "s"}, wantErr: "no GitHub credentials"},
		{name: "app without key", env: with("ARENA_GITHUB_TOKEN", "", "ARENA_GITHUB_APP_ID", "12"), wantErr: "ARENA_GITHUB_PRIVATE_KEY_FILE"},
		{name: "bad depth", env: with("ARENA_QUEUE_DEPTH", "0"), wantErr: "ARENA_QUEUE_DEPTH"},
		{name: "bad poll", env: with("ARENA_APPROVAL_POLL", "soon"), wantErr: "ARENA_APPROVAL_POLL"},
		{name: "bad progress interval", env: with("ARENA_PROGRESS_EVERY", "0s"), wantErr: "ARENA_PROGRESS_EVERY"},
		{name: "runner moves off the entries' port", env: base, args: []string{"--runner", "--cache-dir", "/c"}, check: func(t *testing.T, c serveConfig) {
			if !c.Runner || c.Listen != runnerListen || c.Work.WorkDir != "/c/work" || c.Work.Runs != 3 || c.Consumer != "arenabot" {
				t.Errorf("serve --runner = listen %q, runner %v, work %+v", c.Listen, c.Runner, c.Work)
			}
		}},
		{name: "runner refuses an entry port given on purpose", env: with("ARENA_LISTEN", ":8080"), args: []string{"--runner"}, wantErr: "port 8080, which a measurement on this host listens on (server of baseline, pipelined"},
		{name: "runner keeps a free port", env: with("ARENA_LISTEN", "127.0.0.1:9999"), args: []string{"--runner", "--runs", "1"}, check: func(t *testing.T, c serveConfig) {
			if c.Listen != "127.0.0.1:9999" || c.Work.Runs != 1 {
				t.Errorf("listen %q runs %d", c.Listen, c.Work.Runs)
			}
		}},
		{name: "runner checks its flags", env: base, args: []string{"--runner", "--heartbeat", "20s"}, wantErr: "--lease-ttl"},
		{name: "pools default to the runner's pool", env: with("ARENA_POOL", "gpu"), check: func(t *testing.T, c serveConfig) {
			if !slices.Equal(c.Pools, []string{"gpu"}) || !slices.Equal(c.botConfig().Pools, []string{"gpu"}) {
				t.Errorf("pools %v, bot's %v; want [gpu]", c.Pools, c.botConfig().Pools)
			}
		}},
		{name: "pools in order, each once", env: with("ARENA_POOLS", "default, big,default"), check: func(t *testing.T, c serveConfig) {
			if !slices.Equal(c.Pools, []string{"default", "big"}) {
				t.Errorf("pools %v, want [default big]", c.Pools)
			}
		}},
		{name: "replica names", env: base, check: func(t *testing.T, c serveConfig) {
			if want := fmt.Sprintf("-%d", os.Getpid()); !strings.HasSuffix(c.Replica, want) || c.LeaderTTL != 15*time.Second {
				t.Errorf("replica %q, leader ttl %v; want hostname-pid and 15s", c.Replica, c.LeaderTTL)
			}
		}},
		{name: "replica named", env: with("ARENA_REPLICA", "bot-2"), args: []string{"--leader-ttl", "3s"}, check: func(t *testing.T, c serveConfig) {
			if c.Replica != "bot-2" || c.LeaderTTL != 3*time.Second {
				t.Errorf("replica %q, leader ttl %v", c.Replica, c.LeaderTTL)
			}
		}},
		{name: "leader ttl too short", env: base, args: []string{"--leader-ttl", "10ms"}, wantErr: "--leader-ttl 10ms: want at least 100ms"},
		{name: "links follow the GitHub", env: with("ARENA_GITHUB_API_URL", "https://ghe.example.com/api/v3/"), check: func(t *testing.T, c serveConfig) {
			if c.WebURL != "https://ghe.example.com/" || c.botConfig().WebURL != c.WebURL {
				t.Errorf("web root %q, bot's %q; want https://ghe.example.com/", c.WebURL, c.botConfig().WebURL)
			}
		}},
		{name: "web root given", env: with("ARENA_GITHUB_WEB_URL", "https://code.example.com/"), check: func(t *testing.T, c serveConfig) {
			if c.WebURL != "https://code.example.com/" {
				t.Errorf("web root %q", c.WebURL)
			}
		}},
		{name: "bad web root", env: base, args: []string{"--github-web-url", "ghe.example.com"}, wantErr: `--github-web-url "ghe.example.com" is not a web address`},
		{name: "bad pool name", env: with("ARENA_POOLS", "default,big hosts!"), wantErr: `ARENA_POOLS: pool "hosts!" is not a pool name`},
		{name: "runner's pool not routed to", env: with("ARENA_POOLS", "big", "ARENA_POOL", "default"), args: []string{"--runner"}, wantErr: `pool "default" (ARENA_POOL), which ARENA_POOLS (big) does not route to`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseServe(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			checkParsed(t, c, err, tt.wantErr, tt.check)
		})
	}
}

// checkParsed checks a parse's outcome: an error naming wantErr, or a config check accepts.
func checkParsed[C any](t *testing.T, c C, err error, wantErr string, check func(*testing.T, C)) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err = %v, want one naming %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	check(t, c)
}

// TestServeEndToEnd runs the webhook service against the fake GitHub and a real Redis: a
// collaborator's signed command is acknowledged and queued with the head SHA, a forged one
// is refused, and the service stops when its context ends.
func TestServeEndToEnd(t *testing.T) {
	srv := queuetest.StartRedis(t)
	gh := githubtest.New(t)
	const repo, sha = "octo/arena", "0123456789abcdef0123456789abcdef01234567"
	gh.AddRepo("octo", "arena")
	gh.AddPR(repo, githubtest.PR{Number: 42, HeadSHA: sha, HeadRef: "feature", User: "alice", Files: []string{"frameworks/nethttp/main.go"}})
	meta, err := os.ReadFile(filepath.Join(repoRoot(t), "frameworks", "nethttp", "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	gh.AddFile(repo, sha, "frameworks/nethttp/meta.json", meta)
	gh.AddFile(repo, sha, "frameworks/nethttp/go.mod", []byte("module arena/frameworks/nethttp\n"))
	gh.SetPermission(repo, "alice", "write")
	const command = "/benchmark -f nethttp -t baseline"
	commentID := gh.AddComment(repo, 42, "alice", command)

	env := map[string]string{
		"ARENA_WEBHOOK_SECRET": "s3cret", "ARENA_GITHUB_TOKEN": "tok", "ARENA_GITHUB_API_URL": gh.URL,
		"ARENA_REDIS_URL": "redis://" + srv.Addr, "ARENA_LISTEN": "127.0.0.1:0", "ARENA_BOT_LOGIN": "arenabot[bot]",
		"ARENA_REPOS": repo, "ARENA_POOLS": "default,big",
	}
	cfg, err := parseServe(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	cfg.ReadyListening = func(a string) { addr <- a }
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, io.Discard) }()
	base := "http://" + <-addr
	started := len(gh.Calls()) // who the bot is (GET /user)

	payload, _ := json.Marshal(map[string]any{
		"action": "created",
		"issue": map[string]any{"number": 42, "user": map[string]any{"login": "alice", "type": "User"},
			"pull_request": map[string]any{"url": "https://api.github.com/repos/octo/arena/pulls/42"}},
		"comment": map[string]any{"id": commentID, "body": command,
			"user": map[string]any{"login": "alice", "type": "User"}, "author_association": "MEMBER"},
		"repository": map[string]any{"full_name": repo, "name": "arena", "owner": map[string]any{"login": "octo"}},
		"sender":     map[string]any{"login": "alice", "type": "User"},
	})
	post := func(sig, delivery string) int {
		req, _ := http.NewRequest(http.MethodPost, base+"/webhook", bytes.NewReader(payload))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "issue_comment")
		req.Header.Set("X-GitHub-Delivery", delivery)
		if sig != "" {
			req.Header.Set("X-Hub-Signature-256", sig)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(hook.Sign([]byte("wrong"), payload), "d-forged"); code != http.StatusUnauthorized {
		t.Errorf("forged delivery answered %d, want 401", code)
	}
	if code := post("", "d-unsigned"); code != http.StatusUnauthorized {
		t.Errorf("unsigned delivery answered %d, want 401", code)
	}
	if n := len(gh.Calls()) - started; n != 0 {
		t.Fatalf("refused deliveries caused %d GitHub calls", n)
	}

	// Other events of GitHub's shapes: ping answers 200, installation and a plain-issue
	// comment are accepted and do nothing.
	for _, ev := range []struct {
		event, body string
		want        int
	}{
		{"ping", `{"zen":"Keep it logically awesome.","hook_id":1,"hook":{"type":"App","id":1}}`, http.StatusOK},
		{"installation", `{"action":"created","installation":{"id":7,"account":{"login":"octo"}},"repositories":[{"full_name":"octo/arena"}],"sender":{"login":"octo","type":"User"}}`, http.StatusAccepted},
		{"issue_comment", `{"action":"created","issue":{"number":5,"user":{"login":"alice","type":"User"}},"comment":{"id":77,"body":"/benchmark -f nethttp","user":{"login":"alice","type":"User"}},"repository":{"full_name":"octo/arena"},"sender":{"login":"alice","type":"User"}}`, http.StatusAccepted},
	} {
		req, _ := http.NewRequest(http.MethodPost, base+"/webhook", strings.NewReader(ev.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", ev.event)
		req.Header.Set("X-GitHub-Delivery", "d-"+ev.event)
		req.Header.Set("X-Hub-Signature-256", hook.Sign([]byte("s3cret"), []byte(ev.body)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != ev.want {
			t.Errorf("%s delivery answered %d, want %d", ev.event, resp.StatusCode, ev.want)
		}
	}

	// GitHub fails and rate-limits while the command is acknowledged: the bot retries and
	// still ends with exactly one 👀 and one status comment.
	gh.RateLimitNext(http.MethodPost, "/repos/octo/arena/issues/comments/*/reactions", time.Second)
	gh.FailNext(http.MethodPost, "/repos/octo/arena/issues/42/comments", 1, http.StatusBadGateway)
	if code := post(hook.Sign([]byte("s3cret"), payload), "d-1"); code != http.StatusAccepted {
		t.Fatalf("signed delivery answered %d, want 202", code)
	}

	q := queue.NewRedis(srv.Client(t), queue.Options{Prefix: "arena:"})
	var jobs []queue.Job
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if jobs, err = q.List(ctx, queue.Filter{}); err == nil && len(jobs) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(jobs) != 1 || jobs[0].SHA != sha || jobs[0].PR != 42 || jobs[0].Requester != "alice" {
		t.Fatalf("queued jobs = %+v, want one for PR 42 at %s by alice", jobs, sha)
	}
	// The status comment and the 👀 are written after the job is recorded, retried
	// through the injected faults.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if len(gh.Comments(repo, 42)) >= 2 && len(gh.Reactions(repo, commentID)) >= 1 {
			break
		}
	}
	faults := 0
	for _, c := range gh.Calls() {
		if c.Status == http.StatusForbidden || c.Status == http.StatusBadGateway {
			faults++
		}
		if strings.Contains(c.Path, "/issues/5/") || strings.Contains(c.Path, "/comments/77/") || strings.Contains(c.Path, "/installation") {
			t.Errorf("a plain-issue comment or the installation event caused %s %s", c.Method, c.Path)
		}
	}
	if faults != 2 {
		t.Errorf("%d injected faults were met, want the rate limit and the 502", faults)
	}
	comments := gh.Comments(repo, 42) // the command, then the status comment
	if len(comments) != 2 || !strings.Contains(comments[1].Body, "arenabot:status") {
		t.Errorf("want exactly one status comment, got %+v", comments)
	}
	if rs := gh.Reactions(repo, commentID); len(rs) != 1 || rs[0].Content != "eyes" {
		t.Errorf("reactions on the command = %+v, want 👀", rs)
	}
	for _, c := range []struct{ path, want string }{
		{"/healthz", "ok"},
		{"/", jobs[0].ID},
		{"/", "Pool <code>big</code>: no live host"}, // ARENA_POOLS reaches the status page
		{"/?format=text", "awaiting approval: 0 requests"},
		{"/metrics", `arena_queue_jobs{pool="default",state="queued"} 1`},
		{"/metrics", "arena_pending_requests 0"},
	} {
		resp, err := http.Get(base + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), c.want) {
			t.Errorf("GET %s = %d, want 200 containing %q:\n%s", c.path, resp.StatusCode, c.want, body)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve returned %v after its context ended, want nil", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop after its context ended")
	}
}

func TestParseWork(t *testing.T) {
	base := map[string]string{"ARENA_REDIS_URL": "redis://127.0.0.1:6379", "ARENA_REPO_DIR": "/arena", "ARENA_CACHE_DIR": "/cache"}
	for _, tt := range []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr string
		check   func(t *testing.T, c workConfig)
	}{
		{name: "defaults", env: base, check: func(t *testing.T, c workConfig) {
			if c.Root != "/arena" || c.Pool != "default" || c.Remote != "origin" || c.BaseRef != "main" || c.WorkDir != "/cache/work" ||
				c.Runs != 3 || c.Heartbeat != 2*time.Second || c.LeaseTTL != 30*time.Second {
				t.Errorf("defaults = %+v", c)
			}
		}},
		{name: "flags", env: base, args: []string{"--repo-dir", "/r", "--pool", "big", "--runs", "1", "--duration", "2s", "--build-arg", "A=b"}, check: func(t *testing.T, c workConfig) {
			if c.Root != "/r" || c.Pool != "big" || c.Runs != 1 || c.Duration != 2*time.Second || c.BuildArgs["A"] != "b" {
				t.Errorf("flags = %+v", c)
			}
		}},
		{name: "no redis", env: map[string]string{}, wantErr: "set ARENA_REDIS_URL"},
		{name: "bad runs", env: base, args: []string{"--runs", "0"}, wantErr: "--runs 0"},
		{name: "short duration", env: base, args: []string{"--duration", "10ms"}, wantErr: "at least 1s"},
		{name: "lease shorter than two heartbeats", env: base, args: []string{"--lease-ttl", "3s"}, wantErr: "--lease-ttl 3s must be at least twice"},
		{name: "argument", env: base, args: []string{"extra"}, wantErr: "unexpected argument"},
		{name: "bad build arg", env: base, args: []string{"--build-arg", "novalue"}, wantErr: "want KEY=VALUE"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseWork(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			checkParsed(t, c, err, tt.wantErr, tt.check)
		})
	}
}

func TestParseServeStateDir(t *testing.T) {
	base := map[string]string{"ARENA_WEBHOOK_SECRET": "s", "ARENA_GITHUB_TOKEN": "tok"}
	with := func(kv ...string) map[string]string {
		m := maps.Clone(base)
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tt := range []struct {
		name    string
		env     map[string]string
		args    []string
		want    string
		wantErr string
	}{
		{name: "XDG state home", env: with("XDG_STATE_HOME", "/xdg", "HOME", "/home/a"), want: "/xdg/arenabot"},
		{name: "relative XDG state home is ignored", env: with("XDG_STATE_HOME", "rel", "HOME", "/home/a"), want: "/home/a/.local/state/arenabot"},
		{name: "home", env: with("HOME", "/home/a"), want: "/home/a/.local/state/arenabot"},
		{name: "variable", env: with("ARENA_STATE_DIR", "/var/lib/arenabot", "XDG_STATE_HOME", "/xdg"), want: "/var/lib/arenabot"},
		{name: "flag beats variable", env: with("ARENA_STATE_DIR", "/var/lib/arenabot"), args: []string{"--state-dir", "/srv/a"}, want: "/srv/a"},
		{name: "bad shutdown wait", env: with("HOME", "/h"), args: []string{"--shutdown-wait", "0s"}, wantErr: "--shutdown-wait"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseServe(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			checkParsed(t, c, err, tt.wantErr, func(t *testing.T, c serveConfig) {
				if c.StateDir != tt.want || c.ShutdownWait != time.Minute {
					t.Errorf("state dir %q, shutdown wait %s; want %q, 1m", c.StateDir, c.ShutdownWait, tt.want)
				}
			})
		})
	}
}

// embeddedServe returns the config of a serve without Redis whose store is in dir, against
// a fake GitHub.
func embeddedServe(t *testing.T, dir string, args ...string) serveConfig {
	t.Helper()
	gh := githubtest.New(t)
	env := map[string]string{
		"ARENA_WEBHOOK_SECRET": "s3cret", "ARENA_GITHUB_TOKEN": "tok", "ARENA_GITHUB_API_URL": gh.URL,
		"ARENA_LISTEN": "127.0.0.1:0", "ARENA_STATE_DIR": dir, "ARENA_REPOS": "octo/arena",
	}
	c, err := parseServe(args, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// startServe runs serve in this process until the returned stop is called; stop returns
// how long serve took to return once its context ended, and its error.
func startServe(t *testing.T, c serveConfig, logs io.Writer) (base string, stop func() (time.Duration, error)) {
	t.Helper()
	addr := make(chan string, 1)
	c.ReadyListening = func(a string) { addr <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, c, logs) }()
	select {
	case a := <-addr:
		base = "http://" + a
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v", err)
	}
	stopped := false
	stop = func() (time.Duration, error) {
		stopped = true
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			return time.Since(start), err
		case <-time.After(30 * time.Second):
			t.Fatal("serve did not return 30s after its context ended")
			return 0, nil
		}
	}
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
	})
	return base, stop
}

// TestServeWaitsForItsLoops: when its context ends, serve returns only after every loop it
// started has returned, however long they take to stop.
func TestServeWaitsForItsLoops(t *testing.T) {
	c := embeddedServe(t, t.TempDir())
	var mu sync.Mutex
	returned := map[string]time.Time{}
	c.WrapLoop = func(name string, loop func(context.Context) error) func(context.Context) error {
		return func(ctx context.Context) error {
			err := loop(ctx)
			time.Sleep(300 * time.Millisecond) // a loop slow to stop, as a runner removing containers
			mu.Lock()
			returned[name] = time.Now()
			mu.Unlock()
			return err
		}
	}
	base, stop := startServe(t, c, io.Discard)
	if body := get(t, base+"/healthz"); body != "ok\n" {
		t.Fatalf("healthz = %q", body)
	}
	took, err := stop()
	end := time.Now()
	if err != nil {
		t.Fatalf("serve = %v, want nil", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"bot", "events", "reaper"}; !slices.Equal(slices.Sorted(maps.Keys(returned)), want) {
		t.Errorf("loops returned: %v, want %v", slices.Sorted(maps.Keys(returned)), want)
	}
	for name, at := range returned {
		if at.After(end) {
			t.Errorf("loop %s returned %v after serve did", name, at.Sub(end))
		}
	}
	t.Logf("serve returned %v after its context ended", took.Round(time.Millisecond))
	if took < 300*time.Millisecond {
		t.Errorf("serve returned after %v, before its loops could have", took)
	}
	// The store is closed: another process can open it.
	db, err := bbolt.Open(filepath.Join(c.StateDir, stateFile), 0o600, &bbolt.Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("after serve returned, its store: %v", err)
	}
	db.Close()
}

// TestServeShutdownIsBounded: a loop that does not stop holds serve for ShutdownWait only;
// serve then says which loop is still running and returns an error naming it.
func TestServeShutdownIsBounded(t *testing.T) {
	c := embeddedServe(t, t.TempDir(), "--shutdown-wait", "500ms")
	release := make(chan struct{})
	defer close(release)
	c.WrapLoop = func(name string, loop func(context.Context) error) func(context.Context) error {
		if name != "events" {
			return loop
		}
		return func(ctx context.Context) error {
			err := loop(ctx)
			<-release // stuck, as a cleanup that never ends
			return err
		}
	}
	logs := &syncBuffer{}
	_, stop := startServe(t, c, logs)
	took, err := stop()
	if err == nil || !strings.Contains(err.Error(), "events still running after 500ms") {
		t.Errorf("serve = %v, want an error naming the events loop", err)
	}
	if took < 500*time.Millisecond || took > 5*time.Second {
		t.Errorf("serve returned after %v, want about the 500ms bound", took)
	}
	if !strings.Contains(logs.String(), `"msg":"shutdown: loops still running; exiting without them","loops":["events"]`) {
		t.Errorf("the log does not name the loop still running:\n%s", logs)
	}
}

// TestServeEmbeddedStore: without Redis, serve keeps its store in the state directory
// (created 0700); a second serve on the same directory refuses at once, saying why.
func TestServeEmbeddedStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "arenabot")
	c := embeddedServe(t, dir)
	base, _ := startServe(t, c, io.Discard)
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("state directory mode %v, want 0700", fi.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(dir, "arenabot.db")); err != nil {
		t.Errorf("no store file: %v", err)
	}
	for _, want := range []string{"awaiting approval: 0 requests", "runners"} {
		if page := get(t, base+"/?format=text"); !strings.Contains(page, want) {
			t.Errorf("GET / lacks %q:\n%s", want, page)
		}
	}

	start := time.Now()
	err = serve(t.Context(), embeddedServe(t, dir), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "in use by another process") || !strings.Contains(err.Error(), "ARENA_STATE_DIR") {
		t.Errorf("second serve on the same state dir = %v, want it in use", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the second serve took %v to refuse", d)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// withEnv is a copy of base with the key-value pairs kv set.
func withEnv(base map[string]string, kv ...string) map[string]string {
	m := maps.Clone(base)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}
