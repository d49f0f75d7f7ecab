package bot

// TestLifecycleRandomized drives the whole request lifecycle through random interleavings
// of comments (requests by bob, who has write access, and by alice and carol, who have
// not; approvals; cancels by requesters, bob and strangers), reactions on status comments
// and approval polls, clock jumps (progress throttling, retries, the approval TTL), a
// runner working the queue directly (claim, progress and row events, heartbeats that see
// a cancel, done and failed outcomes), GitHub 5xx answers (FailNext on a random endpoint,
// and, with -lostanswers, writes GitHub carried out whose answer is lost), a reporter
// pass, a poll and a comment at once, and restarts of the bot (a new Bot on the same
// GitHub client and queue: the queue survives, the reporter's memory does not). A comment
// whose handling failed is handed in again later, as the inbox would. Then the faults stop,
// the runner empties the queue, the clock passes the approval TTL, and the reporter runs
// pass after pass, a minute apart, until nothing changes; and the test checks what a user
// of the pull request sees (issue 12, "Must show"):
//
//  1. every request that got a queue record has exactly one final reply;
//  2. every record ends, and its status comment shows the record's end: the phase
//     headline, exactly the rendering the reporter would write now, and the record's
//     Shown digest is that of the comment's body;
//  3. no write is made twice: no hidden marker is posted by two successful POSTs, and no
//     PATCH repeats the body of the previous successful write of its comment;
//  4. a record has at most one status comment (the one it names).
//
// Every round is a subtest named after its seed; its steps are logged, so a failure reads
// as a script. A round is reproduced with
//
//	go test -race -run TestLifecycleRandomized ./bot/ -seed N -rounds 1
//
// The steps and their choices are reproduced exactly; what they meet may still vary a
// little: the concurrent step races on purpose, and the reporter walks its dirty set (a
// map) in Go's random order, so a fault may hit another call of the same pass. Rerun
// with -count to catch a failure again.
//
// The rounds run in parallel; a run stops starting rounds after randBudget.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/bot/hook"
	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/result"
)

var (
	randSeed   = flag.Int64("seed", 0, "TestLifecycleRandomized: seed of the first round; 0 takes one from the clock")
	randRounds = flag.Int("rounds", 100, "TestLifecycleRandomized: rounds to run (each is a subtest named seed=N)")
	randSteps  = flag.Int("steps", 30, "TestLifecycleRandomized: random steps per round")
	randLog    = flag.Bool("randlog", false, "TestLifecycleRandomized: write the bot's own log to the test log too")
	randLost   = flag.Bool("lostanswers", true, "TestLifecycleRandomized: also lose the answers of some writes GitHub carried out")
)

// randBudget is the wall time after which no new round starts, so that the test stays well
// under 30 s whatever -rounds says.
const randBudget = 10 * time.Second

// randPR is the second pull request of a round (setup makes prNum).
const randPR = 43

func TestLifecycleRandomized(t *testing.T) {
	seed := *randSeed
	if seed == 0 {
		seed = time.Now().UnixNano() % 1_000_000_000
	}
	rounds := *randRounds
	if testing.Short() {
		rounds = min(rounds, 10)
	}
	t.Logf("seed %d: rerun a round with -run TestLifecycleRandomized -seed N -rounds 1 (N is in its subtest's name)", seed)
	start := time.Now()
	var ran, skipped atomic.Int64
	var failed atomic.Bool
	all := &randStats{n: map[string]int{}}
	t.Cleanup(func() {
		t.Logf("%d rounds in %s; over all rounds: %s", ran.Load(), time.Since(start).Round(time.Millisecond), all)
		if n := skipped.Load(); n > 0 {
			t.Logf("time budget of %s spent: %d of %d rounds skipped", randBudget, n, rounds)
		}
	})
	// The rounds share nothing (each has its own fake GitHub, queue and clock), so they
	// run in parallel.
	for i := range rounds {
		s := roundSeed(seed, i)
		t.Run(fmt.Sprintf("seed=%d", s), func(t *testing.T) {
			t.Parallel()
			if failed.Load() {
				t.Skip("an earlier round failed")
			}
			if time.Since(start) > randBudget {
				skipped.Add(1)
				t.Skip("time budget spent")
			}
			ran.Add(1)
			randRound(t, s, all)
			if t.Failed() {
				failed.Store(true)
				t.Logf("round with seed %d failed; rerun it with -seed %d -rounds 1", s, s)
			}
		})
	}
}

// randStats adds up what the rounds did, to show what the random steps reached.
type randStats struct {
	mu sync.Mutex
	n  map[string]int
}

func (st *randStats) add(m map[string]int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for k, v := range m {
		st.n[k] += v
	}
}

func (st *randStats) String() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	var sb strings.Builder
	for _, k := range slices.Sorted(maps.Keys(st.n)) {
		fmt.Fprintf(&sb, "\n\t%6d %s", st.n[k], k)
	}
	return sb.String()
}

// roundSeed is the seed of round i of a run seeded with seed: seed itself for the first
// round (so -seed N -rounds 1 replays the round named seed=N), a mix of both for the
// others (so runs with nearby seeds share no round).
func roundSeed(seed int64, i int) int64 {
	if i == 0 {
		return seed
	}
	x := uint64(seed) + uint64(i)*0x9e3779b97f4a7c15 // splitmix64
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return int64(x % 1_000_000_000_000)
}

// rEnv is one round: setup's fake GitHub and queue, a bot that may be replaced, a runner
// working the queue directly, and what the round did.
type rEnv struct {
	*env
	script *rand.Rand // the steps' kinds and seeds: the same sequence whatever happens
	r      *rand.Rand // the choices of one step, seeded from script
	cfg    Config
	client *ghapi.Client
	log    *slog.Logger
	step   int

	requests  []int64         // command comments of benchmark requests
	redeliver []hook.Comment  // deliveries whose handling failed, to be handed in again
	faults    int             // FailNext calls made
	pending   []*pendingFault // in the order injected
	restarts  int
	lease     *queue.Lease   // the runner's job
	planned   []result.Row   // what the runner measures for it
	measured  []result.Row   // rows published so far
	stats     map[string]int // what happened, for the round's summary
	lossy     *lossy
}

func randRound(t *testing.T, seed int64, all *randStats) {
	e := &rEnv{env: setup(t), script: rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)), stats: map[string]int{}}
	// Terminal records must stay readable whatever the clock did: Retain is longer than
	// every jump of a round.
	e.q = queue.NewMemory(queue.Options{Now: e.clock, Retain: 365 * 24 * time.Hour})
	e.gh.AddPR(repo, githubtest.PR{Number: randPR, HeadSHA: sha1, HeadRef: "other", User: "carol", Files: []string{"frameworks/gin/main.go"}})
	e.log = slog.New(slog.DiscardHandler)
	if *randLog {
		e.log = slog.New(slog.NewTextHandler(t.Output(), nil))
	}
	e.lossy = &lossy{next: http.DefaultTransport}
	c, err := ghapi.New(ghapi.Config{BaseURL: e.gh.URL, Token: "t", BotLogin: githubtest.BotLogin, WriteSpacing: -1,
		MaxRetries: -1, PermissionTTL: -1, Logger: e.log, Transport: e.lossy})
	if err != nil {
		t.Fatal(err)
	}
	e.client = c
	// FinalRetryFor is longer than every clock jump of a round: with the default (24 h) a
	// final event parked just before a jump past the approval TTL is given up at its next
	// failure, as designed; that is not what this test looks for.
	e.cfg = Config{WebhookSecret: []byte(secret), Now: e.clock, FinalRetryFor: 365 * 24 * time.Hour}
	e.cfg.Checks = ghapi.NewChecks(e.client)
	e.bot = New(e.cfg, e.client, e.q, e.log)

	t0 := time.Now()
	steps := *randSteps
	for e.step = 1; e.step <= steps; e.step++ {
		e.randomStep()
	}
	t1 := time.Now()
	e.step = 0
	e.settleAll()
	t2 := time.Now()
	e.check()
	e.coverage()
	all.add(e.stats)
	t.Logf("round summary: %d requests, %d records, %d faults, %d restarts, %d calls, %v; steps %s, settling %s, checks %s",
		len(e.requests), len(e.records()), e.faults, e.restarts, len(e.gh.Calls()), e.stats,
		t1.Sub(t0).Round(time.Millisecond), t2.Sub(t1).Round(time.Millisecond), time.Since(t2).Round(time.Millisecond))
}

// logf logs one step.
func (e *rEnv) logf(format string, args ...any) {
	e.t.Helper()
	if e.step > 0 {
		e.t.Logf("step %d: "+format, append([]any{e.step}, args...)...)
		return
	}
	e.t.Logf("settle: "+format, args...)
}

func (e *rEnv) pick(xs ...string) string { return xs[e.r.IntN(len(xs))] }

func (e *rEnv) pr() int {
	if e.r.IntN(3) == 0 {
		return randPR
	}
	return prNum
}

// randomStep does one random thing.
func (e *rEnv) randomStep() {
	type action struct {
		weight int
		do     func()
	}
	actions := []action{
		{16, e.stepRequest},
		{2, e.stepBadCommand},
		{5, e.stepApprove},
		{6, e.stepCancel},
		{9, e.stepReact},
		{7, e.stepPoll},
		{14, e.stepEvents},
		{9, e.stepAdvance},
		{6, e.stepClaim},
		{7, e.stepProgress},
		{6, e.stepHeartbeat},
		{7, e.stepFinish},
		{10, e.stepFault},
		{3, e.stepLostAnswer},
		{4, e.stepConcurrent},
		{3, e.stepRestart},
		{5, e.stepRedeliver},
	}
	total := 0
	for _, a := range actions {
		total += a.weight
	}
	// A step's choices come from its own generator, so that how many it draws (which
	// depends on the state) does not change the later steps.
	e.r = rand.New(rand.NewPCG(e.script.Uint64(), e.script.Uint64()))
	n := e.script.IntN(total)
	for _, a := range actions {
		if n < a.weight {
			a.do()
			return
		}
		n -= a.weight
	}
}

var randCommands = []string{
	"/benchmark -f nethttp -t baseline",
	"/benchmark -f gin -t baseline",
	"/benchmark -f nethttp -t json",
	"/benchmark -t baseline",
	"/benchmark-multiple -f nethttp,gin -t baseline",
}

func (e *rEnv) stepRequest() {
	user := e.pick("bob", "bob", "alice", "carol")
	pr := e.pr()
	id := e.say(pr, user, randCommands[e.r.IntN(len(randCommands))])
	e.requests = append(e.requests, id)
}

func (e *rEnv) stepBadCommand() {
	e.say(e.pr(), e.pick("alice", "bob"), e.pick("/benchmark --frameworks nethttp", "/benchmark -f nethtp -t baseline"))
}

func (e *rEnv) stepApprove() { e.say(e.pr(), e.pick("bob", "bob", "carol"), "/benchmark-approve") }

func (e *rEnv) stepCancel() {
	e.say(e.pr(), e.pick("alice", "carol", "bob", "dave"), "/benchmark-cancel")
}

// say posts body as user on pull request pr and hands the event to the bot once; a failed
// handling is kept for redelivery.
func (e *rEnv) say(pr int, user, body string) int64 {
	e.t.Helper()
	id := e.gh.AddComment(repo, pr, user, body)
	c := hook.Comment{Action: "created", Repo: repo, Number: pr, IsPR: true, CommentID: id, Body: body, Author: user, AuthorType: "User"}
	e.deliver(c, "")
	if e.r.IntN(3) == 0 {
		e.stepEvents() // the reporter runs all the time
	}
	return id
}

func (e *rEnv) deliver(c hook.Comment, again string) {
	e.t.Helper()
	err := e.bot.HandleComment(e.t.Context(), c)
	if err != nil {
		e.redeliver = append(e.redeliver, c)
		e.stats["handle errors"]++
	}
	e.logf("%s#%d %s %q (comment %d): err=%v", again, c.Number, c.Author, c.Body, c.CommentID, err)
}

func (e *rEnv) stepRedeliver() {
	if len(e.redeliver) == 0 {
		e.stepEvents()
		return
	}
	i := e.r.IntN(len(e.redeliver))
	c := e.redeliver[i]
	e.redeliver = slices.Delete(e.redeliver, i, i+1)
	e.deliver(c, "redelivered: ")
}

// stepReact reacts to a status comment, mostly of a request awaiting approval, and polls
// now and then.
func (e *rEnv) stepReact() {
	var with, awaiting []queue.Job
	for _, j := range e.records() {
		if j.StatusCommentID != 0 {
			with = append(with, j)
			if j.State == queue.AwaitingApproval {
				awaiting = append(awaiting, j)
			}
		}
	}
	if len(awaiting) > 0 && e.r.IntN(4) > 0 {
		with = awaiting
	}
	if len(with) == 0 {
		e.stepPoll()
		return
	}
	j := with[e.r.IntN(len(with))]
	user := e.pick("bob", "bob", "carol", "alice", j.Requester)
	content := e.pick("+1", "+1", "+1", "-1")
	e.gh.React(repo, j.StatusCommentID, user, content)
	e.logf("%s reacts %s on the status comment %d of %s (%s)", user, content, j.StatusCommentID, j.ID, j.State)
	if e.r.IntN(2) == 0 {
		e.stepPoll()
	}
}

func (e *rEnv) stepPoll() {
	err := e.bot.PollOnce(e.t.Context())
	e.logf("poll: err=%v", err)
}

func (e *rEnv) stepEvents() {
	n := e.events()
	rp := e.bot.Reporter
	rp.evMu.Lock()
	parked, dirty := len(rp.ev.parked), len(rp.ev.dirty)
	rp.evMu.Unlock()
	if parked > 0 {
		e.stats["passes leaving a parked final event"]++
	}
	e.logf("events: %d handled, %d parked, %d dirty", n, parked, dirty)
}

// stepConcurrent runs a reporter pass, an approval poll and a comment at once, as serve
// does.
func (e *rEnv) stepConcurrent() {
	ctx := e.t.Context()
	pr, user := e.pr(), e.pick("bob", "alice", "carol")
	body := e.pick(append([]string{"/benchmark-approve", "/benchmark-cancel"}, randCommands...)...)
	id := e.gh.AddComment(repo, pr, user, body)
	c := hook.Comment{Action: "created", Repo: repo, Number: pr, IsPR: true, CommentID: id, Body: body, Author: user, AuthorType: "User"}
	if strings.HasPrefix(body, "/benchmark ") || strings.HasPrefix(body, "/benchmark-multiple") {
		e.requests = append(e.requests, id)
	}
	var (
		wg             sync.WaitGroup
		n              int
		evErr, pollErr error
		handleErr      error
	)
	wg.Go(func() { n, evErr = e.bot.HandleEvents(ctx, "test", 0) })
	wg.Go(func() { pollErr = e.bot.PollOnce(ctx) })
	wg.Go(func() { handleErr = e.bot.HandleComment(ctx, c) })
	wg.Wait()
	if evErr != nil {
		e.t.Fatalf("HandleEvents: %v", evErr)
	}
	if handleErr != nil {
		e.redeliver = append(e.redeliver, c)
		e.stats["handle errors"]++
	}
	e.logf("at once: events (%d handled), poll (err=%v), #%d %s %q (comment %d, err=%v)", n, pollErr, pr, user, body, id, handleErr)
}

// events has the reporter handle what was published, through consumer "test", as
// RunEvents would in a few passes.
func (e *rEnv) events() int {
	e.t.Helper()
	total := 0
	for range 10 {
		n, err := e.bot.HandleEvents(e.t.Context(), "test", 0)
		if err != nil {
			e.t.Fatalf("HandleEvents: %v", err)
		}
		total += n
		if n == 0 {
			break
		}
	}
	return total
}

func (e *rEnv) stepAdvance() {
	var d time.Duration
	switch n := e.r.IntN(100); {
	case n < 55:
		d = time.Duration(1+e.r.IntN(10)) * time.Second
	case n < 88:
		d = time.Duration(1+e.r.IntN(10)) * time.Minute
	case n < 96:
		d = time.Duration(1+e.r.IntN(3)) * time.Hour
	default:
		d = DefaultApprovalTTL + time.Minute
	}
	e.advance(d)
	e.logf("clock +%s → %s", d, e.clock().Format(time.DateTime))
}

func (e *rEnv) stepRestart() {
	rp := e.bot.Reporter
	rp.evMu.Lock()
	parked, dirty := len(rp.ev.parked), len(rp.ev.dirty)
	rp.evMu.Unlock()
	if parked > 0 {
		e.stats["restarts with a parked final event"]++
	}
	if dirty > 0 {
		e.stats["restarts with a status comment to render"]++
	}
	e.cfg.Checks = ghapi.NewChecks(e.client)
	e.bot = New(e.cfg, e.client, e.q, e.log)
	e.restarts++
	e.logf("restart: a new Bot on the same GitHub client and queue")
}

// randFaults are the GitHub calls a fault may hit: a method ("" any) and a path pattern
// ("" any), and a path that matches the pattern on a repository the fake does not hold,
// so that a probe consumes a pending fault and has no effect otherwise.
var randFaults = []struct{ method, pattern, probe string }{
	{"POST", "/repos/*/*/issues/*/comments", "/repos/probe/none/issues/1/comments"},
	{"GET", "/repos/*/*/issues/*/comments", "/repos/probe/none/issues/1/comments"},
	{"PATCH", "/repos/*/*/issues/comments/*", "/repos/probe/none/issues/comments/1"},
	{"", "/repos/*/*/issues/comments/*", "/repos/probe/none/issues/comments/1"},
	{"GET", "/repos/*/*/issues/comments/*/reactions", "/repos/probe/none/issues/comments/1/reactions"},
	{"POST", "/repos/*/*/issues/comments/*/reactions", "/repos/probe/none/issues/comments/1/reactions"},
	{"GET", "/repos/*/*/collaborators/*/permission", "/repos/probe/none/collaborators/x/permission"},
	{"GET", "/repos/*/*/pulls/*", "/repos/probe/none/pulls/1"},
	{"GET", "/repos/*/*/pulls/*/files", "/repos/probe/none/pulls/1/files"},
	{"GET", "/repos/*/*/contents/*", "/repos/probe/none/contents/x"},
	{"GET", "/repos/*/*/contents/*/*/*", "/repos/probe/none/contents/x/y/z"},
	{"GET", "", "/repos/probe/none/x"},
	{"POST", "", "/repos/probe/none/x"},
	{"", "", "/repos/probe/none/x"},
}

const probePrefix = "/repos/probe/"

func (e *rEnv) stepFault() {
	f := randFaults[e.r.IntN(len(randFaults))]
	n := 1 + e.r.IntN(3)
	status := []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable}[e.r.IntN(3)]
	e.gh.FailNext(f.method, f.pattern, n, status)
	e.pending = append(e.pending, &pendingFault{method: f.method, pattern: f.pattern, probe: f.probe, n: n})
	e.faults++
	e.logf("fault: the next %d calls %q %q answer %d", n, f.method, f.pattern, status)
}

// lostFaults are the writes whose answer may be lost.
var lostFaults = []struct{ method, pattern string }{
	{"POST", "/repos/*/*/issues/*/comments"},
	{"PATCH", "/repos/*/*/issues/comments/*"},
	{"POST", ""},
	{"", ""},
}

// stepLostAnswer makes GitHub carry out the next matching call but answer 502, as when
// the answer is lost on the way back.
func (e *rEnv) stepLostAnswer() {
	if !*randLost {
		e.stepFault()
		return
	}
	f := lostFaults[e.r.IntN(len(lostFaults))]
	e.lossy.add(&pendingFault{method: f.method, pattern: f.pattern, n: 1})
	e.logf("lost answer: the next call %q %q is carried out and answered 502", f.method, f.pattern)
}

// lostHeader marks, in the fake's record of the calls, a call whose answer lossy lost.
const lostHeader = "X-Test-Lost-Answer"

// lossy is the transport under the bot's GitHub client: it loses the answers of the calls
// it was told to.
type lossy struct {
	next    http.RoundTripper
	mu      sync.Mutex
	pending []*pendingFault
}

func (l *lossy) add(f *pendingFault) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = append(l.pending, f)
}

func (l *lossy) clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = nil
}

func (l *lossy) RoundTrip(req *http.Request) (*http.Response, error) {
	l.mu.Lock()
	p := strings.TrimSuffix(req.URL.Path, "/")
	i := slices.IndexFunc(l.pending, func(f *pendingFault) bool { return f.matches(req.Method, p) })
	if i >= 0 {
		l.pending = slices.Delete(l.pending, i, i+1)
	}
	l.mu.Unlock()
	if i < 0 {
		return l.next.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	req.Header.Set(lostHeader, "1")
	resp, err := l.next.RoundTrip(req)
	if err == nil && resp.StatusCode < 300 {
		resp.Body.Close()
		resp.StatusCode, resp.Status, resp.Body = http.StatusBadGateway, "502 Bad Gateway", http.NoBody
		resp.ContentLength = 0
	}
	return resp, err
}

// drainFaults consumes the faults still pending, so that the settling runs without any.
// The fake answers a call with the first pending fault that matches it, and answers 5xx
// for nothing else: replaying the calls answered 5xx over the faults injected tells
// which are left, and one probe per fault left consumes it.
func (e *rEnv) drainFaults() {
	e.t.Helper()
	for _, c := range e.gh.Calls() {
		if c.Status < 500 || strings.HasPrefix(c.Path, probePrefix) {
			continue
		}
		i := slices.IndexFunc(e.pending, func(f *pendingFault) bool { return f.matches(c.Method, c.Path) })
		if i < 0 {
			e.t.Fatalf("%s %s answered %d by no fault injected", c.Method, c.Path, c.Status)
		}
		if e.pending[i].n--; e.pending[i].n == 0 {
			e.pending = slices.Delete(e.pending, i, i+1)
		}
	}
	for _, f := range e.pending {
		m := f.method
		if m == "" {
			m = http.MethodGet
		}
		for range f.n {
			req, err := http.NewRequestWithContext(e.t.Context(), m, strings.TrimSuffix(e.gh.URL, "/")+f.probe, strings.NewReader("{}"))
			if err != nil {
				e.t.Fatal(err)
			}
			resp, err := e.gh.Client().Do(req)
			if err != nil {
				e.t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode < 500 {
				e.t.Fatalf("probe %s %s for a pending fault %q %q: %d", m, f.probe, f.method, f.pattern, resp.StatusCode)
			}
		}
		e.logf("drained %d pending faults %q %q", f.n, f.method, f.pattern)
	}
	e.pending = nil
	e.lossy.clear()
}

// A pendingFault is one FailNext of the round.
type pendingFault struct {
	method, pattern, probe string
	n                      int
}

// matches is githubtest's matching of a fault.
func (f *pendingFault) matches(method, p string) bool {
	if f.method != "" && !strings.EqualFold(f.method, method) {
		return false
	}
	if f.pattern == "" {
		return true
	}
	ok, err := path.Match(f.pattern, p)
	return err == nil && ok
}

// Runner steps.

func (e *rEnv) stepClaim() {
	if e.lease != nil {
		e.stepProgress()
		return
	}
	// Without a job waiting the claim only waits (the runner is seen): keep that short.
	ctx, cancel := context.WithTimeout(e.t.Context(), time.Millisecond)
	defer cancel()
	l, err := e.q.Claim(ctx, queue.DefaultPool)
	if err != nil {
		e.logf("runner: claim: %v", err)
		return
	}
	e.take(l)
	e.logf("runner: claimed %s (%d rows planned)", l.Job.ID, len(e.planned))
}

// take holds lease l and plans its rows from the plan the bot kept on the record.
func (e *rEnv) take(l queue.Lease) {
	e.lease, e.planned, e.measured = &l, nil, nil
	for _, tg := range payloadOf(l.Job).Plan.Targets {
		for _, r := range tg.Rows {
			e.planned = append(e.planned, measuredRow(tg.Entry, r.Test, r.Conns, 100000+float64(len(e.planned))*1000))
		}
	}
	if len(e.planned) == 0 {
		e.planned = []result.Row{measuredRow("nethttp", "baseline", 512, 180000)}
	}
}

func (e *rEnv) stepProgress() {
	switch {
	case e.lease == nil:
		e.stepClaim()
		return
	case len(e.measured) >= len(e.planned):
		e.stepFinish()
		return
	}
	i := len(e.measured)
	row := e.planned[i]
	e.publish(e.lease.Job.ID, queue.EventProgress, result.Progress{Entry: row.Entry, Profile: row.Profile, Conns: row.Conns,
		Row: i + 1, Rows: len(e.planned), Done: i})
	e.publish(e.lease.Job.ID, queue.EventRow, row)
	e.measured = append(e.measured, row)
	e.logf("runner: %s row %d of %d", e.lease.Job.ID, i+1, len(e.planned))
}

func (e *rEnv) publish(job, kind string, v any) {
	e.t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.q.Publish(e.t.Context(), queue.Event{Job: job, Kind: kind, Data: data, Time: e.clock()}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *rEnv) stepHeartbeat() {
	if e.lease == nil {
		e.stepClaim()
		return
	}
	cancelled, err := e.q.Heartbeat(e.t.Context(), *e.lease)
	if err != nil {
		e.t.Fatalf("heartbeat of %s: %v", e.lease.Job.ID, err)
	}
	e.logf("runner: heartbeat of %s: cancelled=%v", e.lease.Job.ID, cancelled)
	if cancelled {
		e.finish(queue.Cancelled)
	}
}

func (e *rEnv) stepFinish() {
	if e.lease == nil {
		e.stepClaim()
		return
	}
	if e.r.IntN(3) == 0 {
		e.finish(queue.Failed)
		return
	}
	e.finish(queue.Done)
}

// finish ends the runner's job: done with every planned row, failed or cancelled with the
// rows measured so far.
func (e *rEnv) finish(state queue.State) {
	e.t.Helper()
	j := e.lease.Job
	rep := result.Report{Commit: j.SHA, Host: "bench-1", Runs: 3, Frameworks: j.Frameworks, Tests: j.Tests,
		Log: []string{"checkout ok"}}
	o := queue.Outcome{State: state}
	switch state {
	case queue.Done:
		rep.Rows = e.planned
	case queue.Failed:
		rep.Rows = e.measured
		if len(rep.Rows) == 0 {
			rep.Error = "the build of the entry failed"
		}
		o.Reason = "the server did not answer its probe"
	case queue.Cancelled:
		rep.Rows = e.measured
	}
	b, err := json.Marshal(rep)
	if err != nil {
		e.t.Fatal(err)
	}
	o.Result = b
	if _, err := e.q.Finish(e.t.Context(), *e.lease, o); err != nil {
		e.t.Fatalf("finish %s: %v", j.ID, err)
	}
	e.logf("runner: %s finished %s with %d rows", j.ID, state, len(rep.Rows))
	e.stats["finished "+string(state)]++
	e.lease, e.planned, e.measured = nil, nil, nil
}

// Settling.

// settleAll stops the faults, hands in the failed deliveries again, runs the queue empty,
// lets every request awaiting approval expire and has the reporter handle everything,
// with the clock moving a minute between passes, until nothing more happens.
func (e *rEnv) settleAll() {
	e.t.Helper()
	e.drainFaults()
	for attempt := 1; len(e.redeliver) > 0; attempt++ {
		if attempt > 3 {
			e.t.Fatalf("deliveries still failing without faults: %+v", e.redeliver)
		}
		cs := e.redeliver
		e.redeliver = nil
		for _, c := range cs {
			e.deliver(c, "redelivered: ")
		}
	}
	e.runOut()
	// A few passes before the TTL: the retries of failed status writes land (they wait
	// up to a minute), as they would in the minutes before any expiry.
	for range 3 {
		e.events()
		e.advance(time.Minute)
	}
	e.runOut()
	e.advance(DefaultApprovalTTL)
	if err := e.bot.PollOnce(e.t.Context()); err != nil {
		e.t.Errorf("PollOnce without faults: %v", err)
	}
	e.runOut()
	quiet := 0
	before := e.snapshot()
	for pass := 1; ; pass++ {
		n := e.events()
		after := e.snapshot()
		changed := after != before
		before = after
		rp := e.bot.Reporter
		rp.evMu.Lock()
		parked, dirty := len(rp.ev.parked), len(rp.ev.dirty)
		rp.evMu.Unlock()
		if n == 0 && !changed && parked == 0 && dirty == 0 {
			quiet++
		} else {
			quiet = 0
			e.logf("pass %d: %d events, comments changed %v, %d parked, %d dirty", pass, n, changed, parked, dirty)
		}
		if pass >= 20 && quiet >= 3 {
			return
		}
		if pass == 100 {
			e.t.Errorf("the reporter is not quiescent after %d passes: %d parked, %d dirty", pass, parked, dirty)
			return
		}
		e.advance(time.Minute)
	}
}

// snapshot sums up the comments of both pull requests: it changes with every write.
func (e *rEnv) snapshot() string {
	var sb strings.Builder
	for _, pr := range []int{prNum, randPR} {
		for _, c := range e.gh.Comments(repo, pr) {
			fmt.Fprintf(&sb, "%d:%d:%d ", c.ID, c.Edits, len(c.Body))
		}
	}
	return sb.String()
}

// runOut has the runner finish the running job and every queued one.
func (e *rEnv) runOut() {
	e.t.Helper()
	for range 100 {
		if e.lease != nil {
			e.finish(queue.Done)
			continue
		}
		js, err := e.q.List(e.t.Context(), queue.Filter{States: []queue.State{queue.Queued, queue.Running}})
		if err != nil {
			e.t.Fatal(err)
		}
		if len(js) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(e.t.Context(), 5*time.Second)
		l, err := e.q.Claim(ctx, queue.DefaultPool)
		cancel()
		if err != nil {
			e.t.Fatalf("claim with %d jobs queued or running: %v", len(js), err)
		}
		e.take(l)
		e.logf("runner: claimed %s", l.Job.ID)
	}
	e.t.Fatal("the queue does not run empty")
}

// Checks.

// markerRe finds the bot's hidden markers, as ghapi does.
var markerRe = regexp.MustCompile(`<!--\s*arenabot:[^>]*?-->`)

// writesSince returns the successful comment writes (POST and PATCH) since mark, without
// the probes.
func (e *rEnv) writesSince(mark int) []githubtest.Call {
	var out []githubtest.Call
	for _, c := range e.gh.Calls()[mark:] {
		if strings.HasPrefix(c.Path, probePrefix) || c.Status >= 300 {
			continue
		}
		if c.Method == http.MethodPost && strings.HasSuffix(c.Path, "/comments") || c.Method == http.MethodPatch && strings.Contains(c.Path, "/comments/") {
			out = append(out, c)
		}
	}
	return out
}

// finalKind is the event a terminal record ended with.
func finalKind(j queue.Job) string {
	switch j.State {
	case queue.Superseded:
		return queue.EventSuperseded
	case queue.Expired:
		return queue.EventExpired
	case queue.Rejected:
		return queue.EventRejected
	case queue.Cancelled:
		if j.Started.IsZero() {
			return queue.EventCancelled
		}
	}
	return queue.EventOutcome
}

// wantFinal is the status comment the reporter writes for terminal record j now, with the
// link to its results reply when it has one. A superseded record links the request that
// took its place by that request's status comment, or by its command comment when it had
// none yet when the link was written: both are accepted.
func (e *rEnv) wantFinal(j queue.Job, comments []githubtest.Comment) []string {
	rp := e.bot.Reporter
	kind := finalKind(j)
	var res report.Results
	results := ranToResults(kind, j)
	if results {
		res = rp.fin.results(kind, j)
	}
	s := rp.fin.finalStatus(e.t.Context(), kind, j, res)
	if results {
		for _, c := range comments {
			if strings.Contains(c.Body, report.ResultsMarker(j.ID, 1)) {
				s.ResultsURL = rp.commentURL(j.Repo, j.PR, c.ID)
			}
		}
	}
	want := []string{report.RenderStatus(s)}
	if s.Phase == report.PhaseFailed && s.Total > 0 && s.Total < len(s.Rows) {
		// finalStatus takes the number of rows in all from the reporter's memory of the
		// run's progress, which a restart loses and the final reply forgets: the reporter
		// that wrote the comment may have known it.
		s.Total = len(s.Rows)
		want = append(want, report.RenderStatus(s))
	}
	if j.State == queue.Superseded && j.SupersededBy != "" {
		if newer, err := e.q.Get(e.t.Context(), j.SupersededBy); err == nil {
			s.SupersededBy = rp.commentURL(newer.Repo, newer.PR, newer.CommentID)
			want = append(want, report.RenderStatus(s))
		}
	}
	return want
}

func (e *rEnv) check() {
	t := e.t
	t.Helper()
	var comments []githubtest.Comment // the bot's, on both pull requests
	for _, pr := range []int{prNum, randPR} {
		for _, c := range e.gh.Comments(repo, pr) {
			if c.User == githubtest.BotLogin {
				comments = append(comments, c)
			}
		}
	}
	holding := func(marker string) []githubtest.Comment {
		var out []githubtest.Comment
		for _, c := range comments {
			if strings.Contains(c.Body, marker) {
				out = append(out, c)
			}
		}
		return out
	}
	records := map[string]queue.Job{}
	for _, id := range e.requests {
		j, err := e.q.Get(t.Context(), requestID(id))
		if errors.Is(err, queue.ErrNotFound) {
			continue // refused at the ack (a plan error): no record, a reply
		}
		if err != nil {
			t.Fatal(err)
		}
		records[j.ID] = j
	}
	for _, j := range e.records() {
		if _, ok := records[j.ID]; !ok {
			t.Errorf("record %s (%s) of no request comment of the round", j.ID, j.State)
		}
	}
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range records {
			if !yield(id) {
				return
			}
		}
	})
	for _, id := range ids {
		j := records[id]
		e.stats["ended "+string(j.State)]++
		// 1. Exactly one final reply.
		finals := append(holding(report.ResultsMarker(j.ID, 1)), holding(report.EndingMarker(j.ID))...)
		if len(finals) != 1 {
			t.Errorf("invariant 1: %s (%s, requested by %s) has %d final replies, want 1:%s", j.ID, j.State, j.Requester, len(finals), bodies(finals))
		}
		// 2. Terminal, and its status comment shows its end.
		if !j.State.Terminal() {
			t.Errorf("invariant 2: %s is still %s after settling", j.ID, j.State)
			continue
		}
		status := holding(report.Marker(j.ID))
		if j.StatusCommentID == 0 {
			e.stats["ended without a status comment"]++
			// 4. No status comment the record does not name: such a comment is never
			// edited again, so it shows an open phase forever. (A create that GitHub
			// carried out and answered 5xx, for a request that ends before the retry
			// finds the comment by its marker, leaves one.)
			if len(status) != 0 {
				t.Errorf("invariant 4: %s names no status comment, but %d hold its marker:%s", j.ID, len(status), bodies(status))
			}
			continue
		}
		// 4. One status comment, the one the record names.
		if len(status) != 1 || status[0].ID != j.StatusCommentID {
			t.Errorf("invariant 4: %s names status comment %d; comments holding its marker:%s", j.ID, j.StatusCommentID, bodies(status))
			continue
		}
		body := status[0].Body
		head, _, _ := strings.Cut(report.RenderStatus(report.Status{RequestID: j.ID, Phase: phaseOf(j.State)}), "\n")
		if first, _, _ := strings.Cut(body, "\n"); first != head {
			t.Errorf("invariant 2: the status comment of %s (%s) is headed %q, want %q:\n%s", j.ID, j.State, first, head, body)
		} else if want := e.wantFinal(j, comments); !slices.Contains(want, body) {
			t.Errorf("invariant 2: the status comment of %s (%s) is not the rendering of its record:\n--- shown\n%s\n--- rendering now\n%s", j.ID, j.State, body, want[0])
		} else if j.State == queue.Failed && len(want) > 1 && body == want[0] {
			// Not failed, but worth counting: see wantFinal.
			e.stats["failed status comments counting only the measured rows as the total"]++
			t.Logf("note: the status comment of %s counts only its measured rows as the total:\n%s", j.ID, body)
		}
		if d := digest(body); j.Shown != d {
			t.Errorf("invariant 2: %s has Shown %q, the digest of its status comment is %q", j.ID, j.Shown, d)
		}
	}
	// 1, the other way round: no final reply of something that has no record.
	for _, c := range comments {
		for _, m := range markerRe.FindAllString(c.Body, -1) {
			if id, ok := markerRequest(m); ok && (strings.Contains(m, "arenabot:ending") || strings.Contains(m, "part=1")) {
				if _, ok := records[id]; !ok {
					t.Errorf("invariant 1: comment %d is a final reply of %s, which has no record:\n%s", c.ID, id, c.Body)
				}
			}
		}
	}
	// 3. No write made twice.
	posted := map[string]int{}
	last := map[string]string{} // marker → body of the last successful write
	for _, c := range e.writesSince(0) {
		var in struct {
			Body string `json:"body"`
		}
		if err := json.Unmarshal(c.Body, &in); err != nil {
			t.Fatalf("%s %s: %v", c.Method, c.Path, err)
		}
		ms := markerRe.FindAllString(in.Body, -1)
		if len(ms) == 0 {
			t.Errorf("invariant 3: %s %s wrote a comment without a hidden marker:\n%s", c.Method, c.Path, in.Body)
			continue
		}
		m := ms[len(ms)-1]
		if c.Method == http.MethodPost {
			posted[m]++
			if posted[m] == 2 {
				t.Errorf("invariant 3: %s was posted twice (the second time:)\n%s", m, in.Body)
			}
		} else if prev, ok := last[m]; ok && prev == in.Body {
			t.Errorf("invariant 3: %s edited to the body it had already:\n%s", c.Path, in.Body)
		}
		if c.Method == http.MethodPatch && c.Header.Get(lostHeader) != "" {
			// Carried out, but the bot was told it failed: repeating it is right.
			continue
		}
		last[m] = in.Body
	}
	// 5. Every request that got a check run leaves its latest one completed, with the
	// conclusion its ending calls for.
	latest := map[string]githubtest.CheckRun{}
	for _, c := range e.gh.CheckRuns(repo) {
		latest[c.ExternalID] = c // created in order: the last is the latest
	}
	for id, c := range latest {
		j, ok := records[id]
		if !ok {
			t.Errorf("invariant 5: check run %d is of %s, which has no record", c.ID, id)
			continue
		}
		e.stats["check runs "+c.Conclusion]++
		if c.Status != "completed" || c.Conclusion != wantConclusion(j) && wantConclusion(j) != "" {
			t.Errorf("invariant 5: the check run of %s (%s) is %s %s %q, want completed %s", id, j.State, c.Status, c.Conclusion, c.Title, wantConclusion(j))
		}
	}
}

// wantConclusion is the conclusion a record's ending calls for; "" when it depends on the
// results (done) or on why it failed.
func wantConclusion(j queue.Job) string {
	switch j.State {
	case queue.Cancelled, queue.Superseded, queue.Rejected:
		return "cancelled"
	case queue.Expired:
		return "timed_out"
	}
	return ""
}

// coverage counts what the round's faults hit and how its records ended, for the summary.
func (e *rEnv) coverage() {
	for _, c := range e.gh.Calls() {
		switch {
		case strings.HasPrefix(c.Path, probePrefix):
		case c.Header.Get(lostHeader) != "" && c.Status < 300:
			e.stats["lost answers of "+c.Method+" "+callKind(c.Path)]++
		case c.Status >= 500:
			e.stats["5xx on "+c.Method+" "+callKind(c.Path)]++
		}
	}
	for _, j := range e.records() {
		if !j.Approved.IsZero() && !j.Expires.IsZero() && !j.Approved.Before(j.Expires) {
			e.stats["approved after their expiry"]++
		}
	}
}

// callKind names the GitHub endpoint of a path.
func callKind(p string) string {
	seg := strings.Split(strings.Trim(p, "/"), "/")
	if len(seg) < 4 {
		return p
	}
	for i := range seg {
		if strings.Trim(seg[i], "0123456789") == "" {
			seg[i] = "N"
		}
	}
	if seg[3] == "contents" {
		return "contents"
	}
	if seg[3] == "collaborators" {
		return "permission"
	}
	return strings.Join(seg[3:], "/")
}

// markerRequest returns the request id in a results, ending or status marker.
func markerRequest(m string) (string, bool) {
	for _, f := range strings.Fields(strings.Trim(m, "<!->")) {
		if id, ok := strings.CutPrefix(f, "request="); ok {
			return id, true
		}
		if strings.HasPrefix(f, "r") && len(f) > 1 && strings.Trim(f[1:], "0123456789") == "" {
			return f, true
		}
	}
	return "", false
}

func bodies(cs []githubtest.Comment) string {
	var sb strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&sb, "\n--- comment %d (%d edits)\n%s", c.ID, c.Edits, c.Body)
	}
	return sb.String()
}
