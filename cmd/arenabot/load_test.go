package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/bot/hook"
	"github.com/arenabot/arenabot/queue/queuetest"
)

var (
	loadRate     = flag.Int("load.rate", 1000, "BenchmarkServeLoad: signed deliveries a second")
	loadDuration = flag.Duration("load.duration", time.Minute, "BenchmarkServeLoad: how long deliveries are sent")
	loadStore    = flag.String("load.store", "embedded,redis", "BenchmarkServeLoad: the stores to run against (embedded, redis)")
	loadPRs      = flag.Int("load.prs", 60, "BenchmarkServeLoad: pull requests the commands are spread over")
)

// BenchmarkServeLoad sends `arenabot serve` (a child process, no runner) -load.rate signed
// issue_comment deliveries a second for -load.duration, open loop (each is sent at its
// scheduled time, whatever the earlier ones met, and its latency counts from that time):
// comments that are not commands, and one command a second (carol's /benchmark, which
// waits for approval) spread over -load.prs pull requests. It reports the acks' latency,
// serve's peak RSS (VmHWM), the most GitHub writes (POST, PATCH, PUT, DELETE) in any 60 s
// window, and how long until every command had its status comment; it fails when a
// delivery is not acked 2xx or a command gets no status comment. One iteration is the
// whole run, so run it with -benchtime 1x:
//
//	go test ./cmd/arenabot -run '^$' -bench ServeLoad -benchtime 1x -load.duration 10s -load.store redis
func BenchmarkServeLoad(b *testing.B) {
	for _, store := range strings.Split(*loadStore, ",") {
		b.Run(store, func(b *testing.B) {
			for range b.N {
				serveLoad(b, store)
			}
		})
	}
}

// loadConns bounds the client's connections to serve.
const loadConns = 512

// loadRepoFiles adds this repository's nethttp entry to the fake at sha, so a command's
// plan can be made.
func loadRepoFiles(b *testing.B, gh *githubtest.Server, sha string) {
	root := filepath.Join("..", "..", "frameworks", "nethttp")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join("..", ".."), p)
		data, err := os.ReadFile(p)
		if err == nil {
			gh.AddFile(loopRepo, sha, filepath.ToSlash(rel), data)
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}

func serveLoad(b *testing.B, store string) {
	gh := githubtest.New(b)
	owner, name, _ := strings.Cut(loopRepo, "/")
	gh.AddRepo(owner, name)
	const sha = "0123456789abcdef0123456789abcdef01234567"
	gh.SetRef(loopRepo, "main", sha)
	loadRepoFiles(b, gh, sha)
	for n := 1; n <= *loadPRs; n++ {
		gh.AddPR(loopRepo, githubtest.PR{Number: n, HeadSHA: sha, HeadRef: fmt.Sprintf("pr%d", n), User: "carol",
			Files: []string{"frameworks/nethttp/main.go"}})
	}
	vars := map[string]string{
		"ARENA_WEBHOOK_SECRET": loopSecret, "ARENA_GITHUB_TOKEN": "tok", "ARENA_GITHUB_API_URL": gh.URL,
		"ARENA_LISTEN": "127.0.0.1:0", "ARENA_BOT_LOGIN": githubtest.BotLogin, "ARENA_STATE_DIR": b.TempDir(),
		"ARENA_REDIS_URL": "", "ARENA_REPOS": loopRepo,
	}
	switch store {
	case "redis":
		vars["ARENA_REDIS_URL"] = "redis://" + queuetest.StartRedis(b).Addr
	case "embedded":
	default:
		b.Fatalf("-load.store %q: want embedded or redis", store)
	}
	logs := &syncBuffer{}
	b.Cleanup(func() {
		if b.Failed() {
			out := logs.String()
			b.Logf("serve's log (last 20,000 bytes):\n%s", out[max(0, len(out)-20000):])
		}
	})
	p, addr := startServeChild(b, os.Args[0], vars, logs)
	url := "http://" + addr + "/webhook"

	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{
		// At most loadConns connections: a serve that falls behind makes the sends wait
		// here (their latency still counts from their scheduled time) instead of opening
		// connections until the process runs out of file descriptors.
		MaxConnsPerHost: loadConns, MaxIdleConns: loadConns, MaxIdleConnsPerHost: loadConns, IdleConnTimeout: time.Minute,
	}}
	total := int(float64(*loadRate) * loadDuration.Seconds())
	gap := time.Second / time.Duration(*loadRate)
	lat := make([]time.Duration, total)
	codes := make([]int, total)
	var commands []int // their PRs, in order
	var wg sync.WaitGroup
	start := time.Now().Add(100 * time.Millisecond)
	b.ResetTimer()
	for i := range total {
		at := start.Add(time.Duration(i) * gap)
		var payload []byte
		pr, user, body, id := 1+i%*loadPRs, "dave", "Thanks, looks good to me", int64(1_000_000_000+i)
		if i%*loadRate == 0 { // one command a second, each on the next PR
			pr = 1 + len(commands)%*loadPRs
			user, body = "carol", "/benchmark -f nethttp -t baseline"
			id = gh.AddComment(loopRepo, pr, user, body)
			commands = append(commands, pr)
		}
		payload = issueCommentPayload(gh, pr, "created", user, body, id)
		time.Sleep(time.Until(at))
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(payload))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-GitHub-Event", "issue_comment")
			req.Header.Set("X-GitHub-Delivery", "load-"+strconv.Itoa(i))
			req.Header.Set("X-Hub-Signature-256", hook.Sign([]byte(loopSecret), payload))
			resp, err := client.Do(req)
			lat[i] = time.Since(at)
			if err != nil {
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes[i] = resp.StatusCode
		})
	}
	wg.Wait()
	sent := time.Since(start)

	// Every command gets its status comment, however long the paced writes take.
	want := map[int]int{}
	for _, pr := range commands {
		want[pr]++
	}
	landed := func() bool {
		for pr, n := range want {
			got := 0
			for _, c := range gh.Comments(loopRepo, pr) {
				if c.User == githubtest.BotLogin && strings.Contains(c.Body, "<!-- arenabot:status ") {
					got++
				}
			}
			if got < n {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(15 * time.Minute)
	for !landed() {
		if time.Now().After(deadline) {
			b.Fatalf("not every command had its status comment 15m after the burst")
		}
		time.Sleep(200 * time.Millisecond)
	}
	allLanded := time.Since(start)
	b.StopTimer()
	hwm := vmHWM(p.cmd.Process.Pid)

	ok := 0
	for _, c := range codes {
		if c/100 == 2 {
			ok++
		}
	}
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	q := func(f float64) time.Duration { return sorted[min(len(sorted)-1, int(f*float64(len(sorted))))] }
	var writes []time.Time
	for _, c := range gh.Calls() {
		if c.Method != http.MethodGet && !strings.HasPrefix(c.Path, "/app/") {
			writes = append(writes, c.Time)
		}
	}
	perMin := maxInWindow(writes, time.Minute)
	b.Logf("%s: sent %d in %s (%.0f/s); 2xx %d; ack p50 %s p99 %s max %s; serve peak RSS %d MiB; GitHub writes %d, at most %d in a 60 s window; %d commands' status comments all landed %s after the start",
		store, total, sent.Round(time.Millisecond), float64(total)/sent.Seconds(), ok,
		q(0.50).Round(time.Microsecond), q(0.99).Round(time.Microsecond), sorted[len(sorted)-1].Round(time.Microsecond),
		hwm>>20, len(writes), perMin, len(commands), allLanded.Round(time.Second))
	b.ReportMetric(float64(q(0.99).Microseconds())/1000, "ack-p99-ms")
	b.ReportMetric(float64(q(0.50).Microseconds())/1000, "ack-p50-ms")
	b.ReportMetric(float64(hwm>>20), "peak-RSS-MiB")
	b.ReportMetric(float64(perMin), "writes/60s-max")
	b.ReportMetric(allLanded.Seconds(), "s-until-landed")
	if ok != total {
		b.Errorf("%d of %d deliveries not acked 2xx", total-ok, total)
	}
	if q(0.99) > 50*time.Millisecond {
		b.Errorf("ack p99 %s, want at most 50ms", q(0.99))
	}
	if perMin > 80 {
		b.Errorf("%d GitHub writes in one 60 s window, want at most 80", perMin)
	}
}

// issueCommentPayload is an issue_comment delivery of action on comment id of pull
// request pr, by user.
func issueCommentPayload(gh *githubtest.Server, pr int, action, user, body string, id int64) []byte {
	owner, name, _ := strings.Cut(loopRepo, "/")
	p, _ := json.Marshal(map[string]any{
		"action": action,
		"issue": map[string]any{"number": pr, "user": map[string]any{"login": "carol", "type": "User"},
			"pull_request": map[string]any{"url": gh.URL + "repos/" + loopRepo + "/pulls/" + strconv.Itoa(pr)}},
		"comment": map[string]any{"id": id, "body": body,
			"user": map[string]any{"login": user, "type": "User"}, "author_association": "CONTRIBUTOR"},
		"repository": map[string]any{"full_name": loopRepo, "name": name, "owner": map[string]any{"login": owner}},
		"sender":     map[string]any{"login": user, "type": "User"},
	})
	return p
}

// maxInWindow is the most times that fall in any window of length w.
func maxInWindow(ts []time.Time, w time.Duration) int {
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	most, lo := 0, 0
	for hi := range ts {
		for ts[hi].Sub(ts[lo]) >= w {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	return most
}

// vmHWM is a process's peak resident set size in bytes (VmHWM in /proc/PID/status), 0
// when it cannot be read.
func vmHWM(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
