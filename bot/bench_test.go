package bot

// Benchmarks of the webhook path. Run them with
//
//	go test -run '^$' -bench 'SignedDeliveries' -cpu 1 ./bot/
//	go test -run '^$' -bench 'WebhookToAck/spacing=test' ./bot/
//	go test -run '^$' -bench 'WebhookToAck/spacing=1s' -benchtime 1x ./bot/
//
// The fake GitHub's Call.Time is truncated to the second, so WebhookToAck timestamps the
// calls in a transport wrapped around the bot's HTTP client instead: a call "exists"
// once the fake's answer came back.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/bot/hook"
	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/queue"
)

// benchEnv is setup for benchmarks: the same fake repository, with the GitHub client's
// write spacing and transport chosen by the caller.
type benchEnv struct {
	gh  *githubtest.Server
	q   *queue.Memory
	bot *Bot
}

func newBenchEnv(tb testing.TB, spacing time.Duration, rt http.RoundTripper, cfg Config) *benchEnv {
	tb.Helper()
	e := &benchEnv{gh: githubtest.New(tb), q: queue.NewMemory(queue.Options{})}
	e.gh.AddRepo("octo", "arena")
	// Thousands of requests would exhaust the fake's default 5000 calls an hour.
	e.gh.SetRateLimit(1<<30, time.Now().Add(time.Hour))
	e.gh.AddPR(repo, githubtest.PR{Number: prNum, HeadSHA: sha1, HeadRef: "feature", User: "alice", Files: []string{"frameworks/nethttp/main.go"}})
	for _, fw := range []string{"nethttp", "gin"} {
		meta, err := os.ReadFile("../frameworks/" + fw + "/meta.json")
		if err != nil {
			tb.Fatal(err)
		}
		e.gh.AddFile(repo, sha1, "frameworks/"+fw+"/meta.json", meta)
		e.gh.AddFile(repo, sha1, "frameworks/"+fw+"/go.mod", []byte("module example.com/"+fw+"\n"))
		e.gh.AddFile(repo, sha1, "frameworks/"+fw+"/main.go", []byte("package main\n"))
	}
	e.gh.SetPermission(repo, "bob", "write")
	c, err := ghapi.New(ghapi.Config{BaseURL: e.gh.URL, Token: "t", BotLogin: githubtest.BotLogin, WriteSpacing: spacing, MaxRetries: -1, PermissionTTL: -1, Transport: rt})
	if err != nil {
		tb.Fatal(err)
	}
	cfg.WebhookSecret = []byte(secret)
	e.bot = New(cfg, c, e.q, nil)
	return e
}

// run starts the bot's workers until the benchmark ends.
func (e *benchEnv) run(tb testing.TB) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = e.bot.Run(ctx)
	}()
	events := make(chan struct{})
	go func() {
		defer close(events)
		_ = e.bot.RunEvents(ctx, "bench")
	}()
	tb.Cleanup(func() {
		cancel()
		<-done
		<-events
	})
}

func benchRequest(body []byte, sig, delivery string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(hook.EventHeader, "issue_comment")
	r.Header.Set(hook.DeliveryHeader, delivery)
	r.Header.Set(hook.SignatureHeader, sig)
	return r
}

// BenchmarkSignedDeliveries measures signed issue_comment deliveries through the whole
// ServeHTTP path (verify, decode, SeenDelivery with a fresh id, push to the inbox).
//
//   - no-command: the workers run (on the same core with -cpu 1) and ignore the comment,
//     so no GitHub call happens.
//   - command-http-only: the comment holds a command but no worker runs; the inbox is
//     emptied every 1024 deliveries with the timer stopped, so only the HTTP path counts.
func BenchmarkSignedDeliveries(b *testing.B) {
	for _, tc := range []struct {
		name    string
		body    string
		workers bool
	}{
		{"no-command", "looks good to me, thanks!", true},
		{"command-http-only", secCommand, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := newBenchEnv(b, -1, nil, Config{Inbox: 1 << 16, DeliveryTTL: time.Hour})
			if tc.workers {
				e.run(b)
			}
			payload := secComment(b, "created", prNum, true, 1, "bob", "User", tc.body)
			sig := hook.Sign([]byte(secret), payload)
			h := e.bot.Webhook()
			ctx := context.Background()
			drain := func() {
				for {
					if _, _, err := e.bot.Inbox().Pop(ctx, 0); err != nil {
						return
					}
				}
			}
			refused := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if !tc.workers && i%1024 == 1023 {
					b.StopTimer()
					drain()
					b.StartTimer()
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, benchRequest(payload, sig, "d"+strconv.Itoa(i)))
				if w.Code != http.StatusAccepted {
					refused++
				}
			}
			b.StopTimer()
			if refused > 0 {
				b.Fatalf("%d of %d deliveries refused", refused, b.N)
			}
			if js, _ := e.q.List(ctx, queue.Filter{}); len(js) != 0 {
				b.Fatalf("jobs enqueued: %d", len(js))
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
		})
	}
}

// ackClock timestamps the fake's answers to the two calls of an ack: the 👀 reaction on
// a command comment and the status comment created on a pull request.
type ackClock struct {
	next http.RoundTripper
	mu   sync.Mutex
	eyes map[int64]time.Time // command comment id → 👀 answered
	stat map[int]time.Time   // PR number → status comment answered
	ch   chan struct{}       // poked after each record
}

var (
	reactionPath = regexp.MustCompile(`/repos/[^/]+/[^/]+/issues/comments/(\d+)/reactions$`)
	commentPath  = regexp.MustCompile(`/repos/[^/]+/[^/]+/issues/(\d+)/comments$`)
)

func newAckClock() *ackClock {
	return &ackClock{next: http.DefaultTransport, eyes: map[int64]time.Time{}, stat: map[int]time.Time{}, ch: make(chan struct{}, 1)}
}

func (a *ackClock) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := a.next.RoundTrip(r)
	if err != nil || r.Method != http.MethodPost || resp.StatusCode >= 300 {
		return resp, err
	}
	now := time.Now()
	a.mu.Lock()
	if m := reactionPath.FindStringSubmatch(r.URL.Path); m != nil {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		a.eyes[id] = now
	} else if m := commentPath.FindStringSubmatch(r.URL.Path); m != nil {
		n, _ := strconv.Atoi(m[1])
		if _, ok := a.stat[n]; !ok {
			a.stat[n] = now
		}
	}
	a.mu.Unlock()
	select {
	case a.ch <- struct{}{}:
	default:
	}
	return resp, nil
}

// wait returns when both calls of the ack of comment id on PR n were answered, and when
// the later one was.
func (a *ackClock) wait(tb testing.TB, id int64, n int) time.Time {
	deadline := time.After(30 * time.Second)
	for {
		a.mu.Lock()
		e, okE := a.eyes[id]
		s, okS := a.stat[n]
		a.mu.Unlock()
		if okE && okS {
			if e.After(s) {
				return e
			}
			return s
		}
		select {
		case <-a.ch:
		case <-deadline:
			tb.Fatalf("no ack of comment %d on PR %d within 30s", id, n)
		}
	}
}

// BenchmarkWebhookToAck measures, with Run's workers running, the time from POST
// /webhook of a collaborator's /benchmark to the moment both the 👀 reaction and the
// status comment exist on the fake GitHub. Each iteration uses a new PR. The next
// iteration starts once the previous event is fully handled (its status edited to queued).
//
//   - spacing=test: WriteSpacing -1 (no pacing), as setup in bot_test.go uses.
//   - spacing=1s: ghapi's default WriteSpacing of 1s; run it with -benchtime 1x for one
//     sample on an idle installation (👀 and the status comment are two writes, so the
//     second waits for the gap).
func BenchmarkWebhookToAck(b *testing.B) {
	for _, tc := range []struct {
		name    string
		spacing time.Duration
	}{
		{"spacing=test", -1},
		{"spacing=1s", time.Second},
	} {
		b.Run(tc.name, func(b *testing.B) {
			clock := newAckClock()
			e := newBenchEnv(b, tc.spacing, clock, Config{})
			e.run(b)
			h := e.bot.Webhook()
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				n := 1000 + i
				e.gh.AddPR(repo, githubtest.PR{Number: n, HeadSHA: sha1, HeadRef: fmt.Sprintf("f%d", n), User: "alice", Files: []string{"frameworks/nethttp/main.go"}})
				id := e.gh.AddComment(repo, n, "bob", secCommand)
				payload := prPayload(b, n, id, "bob", secCommand)
				sig := hook.Sign([]byte(secret), payload)
				b.StartTimer()

				start := time.Now()
				w := httptest.NewRecorder()
				h.ServeHTTP(w, benchRequest(payload, sig, "ack"+strconv.Itoa(i)))
				if w.Code != http.StatusAccepted {
					b.Fatalf("delivery %d: %d %s", i, w.Code, w.Body)
				}
				lat = append(lat, clock.wait(b, id, n).Sub(start))
				e.bot.Intake.inflight.Wait()
			}
			b.StopTimer()
			if js, _ := e.q.List(context.Background(), queue.Filter{}); len(js) == 0 {
				b.Fatal("no job enqueued")
			}
			slices.Sort(lat)
			pct := func(p float64) float64 {
				k := min(int(p*float64(len(lat))), len(lat)-1)
				return float64(lat[k]) / float64(time.Millisecond)
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
			b.ReportMetric(0, "ns/op") // the loop also waits for the edit; the percentiles are the result
		})
	}
}

// prPayload is secComment on PR n.
func prPayload(tb testing.TB, n int, id int64, user, body string) []byte {
	return secComment(tb, "created", n, true, id, user, "User", body)
}

// BenchmarkFinalReply measures the time from the bot reading a job's final event (a done
// --save job of four measured rows over two frameworks) to the results commit made on the PR
// head and to the reply posted, against the fake GitHub. Each iteration is a new PR.
//
//   - spacing=test: no write pacing: the bot's own cost and the fake's round trips.
//   - spacing=1s: ghapi's default WriteSpacing of 1s (GitHub's secondary rate limit for
//     content-creating calls); run it with -benchtime 1x.
func BenchmarkFinalReply(b *testing.B) {
	rep := testReport(false)
	body, err := json.Marshal(rep)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		spacing time.Duration
	}{
		{"spacing=test", -1},
		{"spacing=1s", time.Second},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var mu sync.Mutex
			var timings []ReplyTiming
			e := newBenchEnv(b, tc.spacing, nil, Config{OnReply: func(t ReplyTiming) {
				mu.Lock()
				timings = append(timings, t)
				mu.Unlock()
			}})
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				n := 2000 + i
				e.gh.AddPR(repo, githubtest.PR{Number: n, HeadSHA: sha1, HeadRef: fmt.Sprintf("fr%d", n), User: "alice", Files: []string{"frameworks/nethttp/main.go"}})
				status := e.gh.AddComment(repo, n, githubtest.BotLogin, "status "+report.Marker(fmt.Sprintf("fr%d", i)))
				if _, _, err := e.q.Enqueue(ctx, queue.Job{ID: fmt.Sprintf("fr%d", i), Repo: repo, PR: n, Requester: "alice",
					Command: "/benchmark-multiple -f nethttp,gin -t baseline --save", Kind: queue.BenchmarkMultiple,
					Frameworks: []string{"nethttp", "gin"}, Tests: []string{"baseline"}, Save: true, SHA: sha1, StatusCommentID: status}); err != nil {
					b.Fatal(err)
				}
				l, err := e.q.Claim(ctx, queue.DefaultPool)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := e.q.Finish(ctx, l, queue.Outcome{State: queue.Done, Result: body}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for want := i + 1; ; {
					if _, err := e.bot.HandleEvents(ctx, "bench", 0); err != nil {
						b.Fatal(err)
					}
					mu.Lock()
					got := len(timings)
					mu.Unlock()
					if got >= want {
						break
					}
				}
			}
			b.StopTimer()
			var commit, reply []time.Duration
			for _, t := range timings {
				if t.CommitSHA == "" || t.Parts != 1 {
					b.Fatalf("final reply %+v: want a commit and one comment", t)
				}
				commit, reply = append(commit, t.Commit), append(reply, t.Reply)
			}
			slices.Sort(commit)
			slices.Sort(reply)
			ms := func(d []time.Duration) float64 { return float64(d[len(d)/2]) / float64(time.Millisecond) }
			b.ReportMetric(ms(commit), "commit-p50-ms")
			b.ReportMetric(ms(reply), "reply-p50-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}
