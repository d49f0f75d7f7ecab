package main

// TestChaos runs seeded scenarios against the real `arenabot serve` and `arenabot work`
// processes (with Redis, or the embedded store and `serve --runner`), the fake GitHub
// injecting faults, and real Docker: random interleavings of commands, edits, deletes,
// cancels, 👍/👎 by users with and without permission, runner SIGKILL and SIGTERM with
// restarts (with Redis, two runners, each a host of its own, split each request's two rows
// into two shares, and a host is killed while it runs one), serve restarts (with Redis, two serve
// replicas take the deliveries, and one of them is killed and restarted), Redis restarts (kill -9, then the AOF), GitHub 5xx bursts,
// secondary limits (403 and 429 with Retry-After), slow answers and connection resets.
// Each scenario then settles (the faults stop having anything left to hit, the runner
// empties the queue, unapproved requests expire) and the suite checks:
//
//  1. every queue record has exactly one final reply (a share of a split job none: its
//     job's holds its rows), and no final reply is of a request without a record;
//  2. every record ended, and its status comment (at most one, the one it names) is headed
//     by its end's phase and is the body the bot last wrote (its digest is the record's
//     Shown);
//  3. no hidden marker was posted by two successful POSTs (a retried write never posts
//     twice);
//  4. no job was measured to completion twice (the runners' "job finished" log lines);
//  5. no container of a job is left (docker ps -a by the job label);
//  6. no results commit is duplicated;
//  7. a pool never had more than one running request (a scenario's requests are all of one
//     pull request, which runs one at a time) and one waiting, nor more shares running than
//     runners (the queue's gauges on /metrics, sampled through the scenario);
//  8. every request leaves its check run completed.
//
// A scenario is named after its seed; its trace is logged when it fails, and
//
//	go test ./cmd/arenabot -run TestChaos -chaos.seed N
//
// replays it: the same events in the same order with the same choices (what the processes
// meet in between still depends on timing). -chaos.seeds N runs N seeds from the clock
// instead of the CI set (not in CI: each scenario measures for real).

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/runner"
)

var (
	chaosSeed   = flag.Int64("chaos.seed", 0, "TestChaos: replay this one seed")
	chaosSeeds  = flag.Int("chaos.seeds", 0, "TestChaos: run this many seeds taken from the clock instead of the CI set")
	chaosEvents = flag.Int("chaos.events", 12, "TestChaos: events per scenario")
	chaosDry    = flag.Bool("chaos.dry", false, "TestChaos: only print the scenarios' events (what a dry run can tell), to choose seeds")
)

// chaosCISeeds are the scenarios CI runs: one with Redis (two serve replicas; it kills
// Redis, the runner and a replica), one with the embedded store (the seed's parity picks
// the store).
var chaosCISeeds = []int64{991256314, 991256289}

func TestChaos(t *testing.T) {
	seeds := chaosCISeeds
	switch {
	case *chaosSeed != 0:
		seeds = []int64{*chaosSeed}
	case *chaosSeeds > 0:
		seeds = nil
		base := time.Now().UnixNano() % 1_000_000_000
		for i := range *chaosSeeds {
			seeds = append(seeds, base+int64(i))
		}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			if *chaosDry {
				c := &chaos{loop: &loop{t: t, gh: githubtest.New(t)}, seed: seed, r: rand.New(rand.NewPCG(uint64(seed), 0x5eed)),
					useRedis: seed%2 == 0, start: time.Now(), runs: 2, dry: true, pickR: rand.New(rand.NewPCG(uint64(seed), 0x2e9)),
					hostR: rand.New(rand.NewPCG(uint64(seed), 0x4057))}
				c.serveP = make([]*serveProc, 1+int(1-seed%2)) // two replicas with Redis
				c.gh.AddRepo("octo", "arena")
				c.logf("store %s", c.store())
				c.run(*chaosEvents)
				t.Logf("dry run of seed %d:\n%s", seed, strings.Join(c.trace, "\n"))
				return
			}
			// The scenarios share nothing but the host lock, which serialises their
			// measurements; the rest of them overlaps.
			t.Parallel()
			c := newChaos(t, seed)
			defer func() {
				if t.Failed() {
					t.Logf("scenario seed %d (%s) failed; replay it with -run TestChaos -chaos.seed %d; trace:\n%s",
						seed, c.store(), seed, strings.Join(c.trace, "\n"))
				}
			}()
			c.run(*chaosEvents)
			c.settle()
			c.check()
			t.Logf("seed %d (%s): %d events, %d requests, %s", seed, c.store(), *chaosEvents, len(c.requests), time.Since(c.start).Round(time.Second))
		})
	}
}

// chaos is one scenario.
type chaos struct {
	*loop
	seed     int64
	r        *rand.Rand
	useRedis bool
	start    time.Time
	// serveP are the serve processes: two replicas on the Redis scenarios, which deliveries
	// and serve kills pick from with pickR (a generator of its own, so a seed replays the
	// same events as before there were two); one with the embedded store.
	serveP []*serveProc
	urls   []string
	pickR  *rand.Rand
	// works are the runner processes (Redis only; the embedded store runs one in serve): two,
	// each a host of its own (--host-name), so a request of two rows is split into two
	// shares, one per host. Runner kills pick one with hostR (a generator of its own, so a
	// seed replays the same events as with one runner).
	works   []*exec.Cmd
	workUps []chan struct{} // each closed at its runner's first log line: its signal handler is installed
	hostR   *rand.Rand
	// killedShare is set once a runner was killed while it ran a share (killShareHost).
	killedShare bool

	trace    []string
	posted   []int64 // every comment delivered, for edits and deletes
	requests []int64 // the benchmark commands' comments
	runs     int     // benchmark requests left that may run
	dry      bool    // -chaos.dry: no processes, no deliveries, no waits

	sampleMu  sync.Mutex
	peak      map[string]int // "pool/state" → the most the requests gauge showed
	sharePeak map[string]int // "pool/state" → the most the shares gauge showed
	stopSamp  chan struct{}
	sampDone  chan struct{}
}

func newChaos(t *testing.T, seed int64) *chaos {
	// The PR changes only nethttp's README, which its image does not hold (newLoop's tune):
	// head and base build from the same context, which the host's build cache keeps.
	l := newLoop(t, []string{"nethttp"}, nil)
	c := &chaos{loop: l, seed: seed, r: rand.New(rand.NewPCG(uint64(seed), 0x5eed)), useRedis: seed%2 == 0,
		start: time.Now(), runs: 2, peak: map[string]int{}, sharePeak: map[string]int{}}
	l.gh.SetPermission(loopRepo, "maintainer", "write") // carol (the author) and dave have none
	// Request IDs (r and the comment's ID) of their own, so the containers checked at the
	// end are this scenario's and not another test's on the same engine.
	l.gh.SetNextID(1_000_000_000 + time.Now().UnixNano()/1000%1_000_000_000)
	l.envOver = map[string]string{"ARENA_APPROVAL_TTL": "15s"}
	if !c.useRedis {
		l.redisURL = ""
		l.envOver["ARENA_REDIS_URL"] = ""
	}
	c.logf("store %s", c.store())
	c.pickR = rand.New(rand.NewPCG(uint64(seed), 0x2e9))
	c.hostR = rand.New(rand.NewPCG(uint64(seed), 0x4057))
	replicas := 1
	if c.useRedis {
		replicas = 2
	}
	c.serveP, c.urls = make([]*serveProc, replicas), make([]string, replicas)
	for i := range replicas {
		c.startServe(i)
	}
	if c.useRedis {
		c.works, c.workUps = make([]*exec.Cmd, chaosRunners), make([]chan struct{}, chaosRunners)
		for i := range chaosRunners {
			c.startWorker(i)
		}
		// A job is split over the hosts live when it starts: both announce first.
		c.waitFor("the runners to announce their hosts", lockWait, func() bool {
			hs, err := c.q.Hosts(t.Context())
			return err == nil && len(hs) == chaosRunners
		})
	}
	c.stopSamp, c.sampDone = make(chan struct{}), make(chan struct{})
	go c.sample()
	t.Cleanup(c.stopSampling)
	return c
}

func (c *chaos) store() string {
	if c.useRedis {
		return "redis"
	}
	return "embedded"
}

func (c *chaos) logf(format string, args ...any) {
	line := fmt.Sprintf("%7.1fs ", time.Since(c.start).Seconds()) + fmt.Sprintf(format, args...)
	c.trace = append(c.trace, line)
	if testing.Verbose() {
		c.t.Log(line)
	}
}

// startServe starts serve replica i: with the embedded store it runs the runner too.
func (c *chaos) startServe(i int) {
	args := []string{"--reap-every", "300ms", "--leader-ttl", "1s"}
	if !c.useRedis {
		args = append(append([]string{"--runner"}, c.workArgs()...), "--lite", "--lease-ttl", "2s", "--reap-every", "300ms")
	}
	c.serveP[i] = c.startServeProcess(arenabotBinary(c.t), map[string]string{"ARENA_REPLICA": fmt.Sprintf("chaos-%d", i)}, args...)
	c.urls[i] = c.botURL
}

// replica picks a serve replica, from pickR.
func (c *chaos) replica() int {
	if len(c.serveP) < 2 {
		return 0
	}
	return c.pickR.IntN(len(c.serveP))
}

// chaosRunners is how many runner processes a Redis scenario runs.
const chaosRunners = 2

// startWorker starts runner i, `arenabot work` as a child process running main(), so SIGTERM
// meets the real signal handling.
func (c *chaos) startWorker(i int) {
	raw, _ := json.Marshal(append(append([]string{"work"}, c.workArgs()...), "--lite", "--lease-ttl", "2s", "--host-name", c.hostName(i)))
	cmd := exec.Command(arenabotBinary(c.t), "-test.run=^$")
	cmd.Env = append(os.Environ(), helperMainEnv+"="+string(raw))
	for k, v := range c.env() {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	up := &firstWrite{w: c.logs, up: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = up, up
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	c.works[i], c.workUps[i] = cmd, up.up
}

// hostName is runner i's host name.
func (c *chaos) hostName(i int) string { return fmt.Sprintf("chaos-%d-host-%d", c.seed, i) }

// killShareHost waits for a share of a split job to run on a host (the Redis scenarios'
// requests have two rows, split over the two runners) and kills that host's runner with
// SIGKILL mid-share, then starts it again: the share's lease lapses and it runs again.
func (c *chaos) killShareHost() {
	ctx := c.t.Context()
	// The runners may first wait for the host lock other tests hold.
	for deadline := time.Now().Add(lockWait + 2*time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		hosts, err := c.q.Hosts(ctx)
		if err != nil {
			continue
		}
		for _, h := range hosts {
			if h.Job == "" {
				continue
			}
			j, err := c.q.Get(ctx, h.Job)
			if err != nil || j.Parent == "" || j.State != queue.Running {
				continue
			}
			for i := range c.works {
				if c.hostName(i) == h.Name {
					c.logf("runner %d (%s): SIGKILL while it runs share %s of %s, then a new runner", i, h.Name, j.ID, j.Parent)
					c.stopWorker(i, syscall.SIGKILL)
					c.startWorker(i)
					c.killedShare = true
					return
				}
			}
		}
	}
	c.logf("no share ran on a host in time: no host killed mid-share")
}

// firstWrite passes writes on to w and closes up at the first. main installs the SIGTERM
// handler before anything is written, so a SIGTERM sent after that meets the runner's own
// shutdown; one sent earlier (a -race binary on a loaded machine can take seconds to reach
// main) meets the default action, which is not what a "terminated" event tests.
type firstWrite struct {
	w    io.Writer
	once sync.Once
	up   chan struct{}
}

func (f *firstWrite) Write(p []byte) (int, error) {
	f.once.Do(func() { close(f.up) })
	return f.w.Write(p)
}

// stopServe ends serve replica i with sig and waits for it.
func (c *chaos) stopServe(i int, sig syscall.Signal) {
	p := c.serveP[i]
	p.cmd.Process.Signal(sig)
	select {
	case err := <-p.done:
		p.done <- err
		if sig == syscall.SIGTERM && err != nil {
			c.t.Errorf("serve exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(2 * time.Minute):
		c.t.Fatalf("serve still running 2m after %v", sig)
	}
}

func (c *chaos) stopWorker(i int, sig syscall.Signal) {
	if sig == syscall.SIGTERM {
		select {
		case <-c.workUps[i]:
		case <-time.After(2 * time.Minute):
			c.t.Fatalf("work wrote nothing in 2m; its SIGTERM handling cannot be tested")
		}
	}
	c.works[i].Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- c.works[i].Wait() }()
	select {
	case err := <-done:
		if sig == syscall.SIGTERM && err != nil {
			c.t.Errorf("work exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(2 * time.Minute):
		c.t.Fatalf("work still running 2m after %v", sig)
	}
}

// sample reads the queue's gauges from serve's /metrics until the scenario's checks.
func (c *chaos) sample() {
	defer close(c.sampDone)
	line := regexp.MustCompile(`^arena_queue_(jobs|shares)\{pool="([^"]*)",state="([^"]*)"\} (\d+)`)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case <-c.stopSamp:
			return
		case <-time.After(200 * time.Millisecond):
		}
		c.sampleMu.Lock()
		url := c.botURL
		c.sampleMu.Unlock()
		resp, err := client.Get(url + "/metrics")
		if err != nil {
			continue // serve is restarting
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if m := line.FindStringSubmatch(sc.Text()); m != nil {
				n, _ := strconv.Atoi(m[4])
				peak := c.peak
				if m[1] == "shares" {
					peak = c.sharePeak
				}
				c.sampleMu.Lock()
				peak[m[2]+"/"+m[3]] = max(peak[m[2]+"/"+m[3]], n)
				c.sampleMu.Unlock()
			}
		}
		resp.Body.Close()
	}
}

func (c *chaos) stopSampling() {
	select {
	case <-c.stopSamp:
	default:
		close(c.stopSamp)
	}
	<-c.sampDone
}

// deliver sends a delivery through the fake GitHub until serve answers 2xx (a delivery
// answered otherwise is redelivered, as an operator or the App's recovery would).
func (c *chaos) deliver(guid string, payload []byte) {
	c.t.Helper()
	if c.dry {
		return
	}
	for try := 0; ; try++ {
		code, err := c.gh.Deliver(c.urls[c.replica()]+"/webhook", []byte(loopSecret), "issue_comment", guid, payload)
		if err == nil && code/100 == 2 {
			return
		}
		c.logf("  delivery %s answered %d (%v); redelivering", guid, code, err)
		if try == 30 {
			c.t.Fatalf("delivery %s not accepted after %d tries", guid, try)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// say posts a new comment by user and delivers it.
func (c *chaos) say(user, body string) int64 {
	id := c.gh.AddComment(loopRepo, loopPR, user, body)
	c.logf("%s comments %q (#%d)", user, body, id)
	c.deliver(fmt.Sprintf("chaos-%d-%d", c.seed, id), issueCommentPayload(c.gh, loopPR, "created", user, body, id))
	c.posted = append(c.posted, id)
	return id
}

func (c *chaos) pick(xs ...string) string { return xs[c.r.IntN(len(xs))] }

// statusOf returns the status comment of a random request, if one was posted yet.
func (c *chaos) statusOf() (githubtest.Comment, bool) {
	if len(c.requests) == 0 {
		return githubtest.Comment{}, false
	}
	id := c.requests[c.r.IntN(len(c.requests))]
	m := report.Marker("r" + strconv.FormatInt(id, 10))
	for _, cm := range c.gh.Comments(loopRepo, loopPR) {
		if strings.Contains(cm.Body, m) {
			return cm, true
		}
	}
	return githubtest.Comment{}, false
}

func (c *chaos) run(events int) {
	// The first event is a request, so every scenario measures something; with Redis, a
	// host is then killed while it runs a share of it.
	c.request()
	if c.useRedis && !c.dry {
		c.killShareHost()
	}
	for range events - 1 {
		c.sleep(time.Duration(c.r.IntN(800)) * time.Millisecond)
		c.event()
	}
}

func (c *chaos) request() {
	user := c.pick("maintainer", "carol")
	// Two rows (baseline at two connection counts): with Redis, a share for each of the two
	// hosts.
	id := c.say(user, "/benchmark -f nethttp -t baseline"+c.pick("", " --save"))
	c.requests = append(c.requests, id)
	c.runs--
}

// event runs one random event. The choice is drawn first and every choice of the event
// after it, from the scenario's generator only, so a seed replays the same events.
func (c *chaos) event() {
	switch k := c.r.IntN(16); {
	case k == 0 && c.runs > 0:
		c.request()
	case k <= 1:
		c.say(c.pick("carol", "dave", "maintainer"), "/benchmark-help")
	case k == 2:
		c.say(c.pick("carol", "dave"), c.pick("Nice, thanks!", "LGTM", "> /benchmark -f nethttp\nquoted, not a command"))
	case k == 3:
		c.say(c.pick("carol", "maintainer"), c.pick("/benchmark -f nosuch", "/benchmark -f nethttp -t nosuch", "/benchmark --bogus"))
	case k == 4:
		user, content := c.pick("maintainer", "dave"), c.pick("+1", "-1")
		st, ok := c.statusOf()
		if !ok {
			c.logf("%s would react %s: no status comment yet", user, content)
			return
		}
		c.logf("%s reacts %s to status comment #%d", user, content, st.ID)
		c.gh.React(loopRepo, st.ID, user, content)
	case k == 5:
		c.say(c.pick("maintainer", "dave"), "/benchmark-approve")
	case k == 6:
		c.say(c.pick("carol", "maintainer", "dave"), "/benchmark-cancel")
	case k == 7:
		if len(c.posted) == 0 {
			return
		}
		id := c.posted[c.r.IntN(len(c.posted))]
		action := c.pick("edited", "deleted")
		c.logf("comment #%d %s", id, action)
		c.deliver(fmt.Sprintf("chaos-%d-%d-%s", c.seed, id, action), issueCommentPayload(c.gh, loopPR, action, "carol", "/benchmark -f nethttp -t baseline", id))
	case k <= 10:
		c.fault()
	case k == 11:
		if c.useRedis {
			sig := []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM}[c.r.IntN(2)]
			i := c.hostR.IntN(chaosRunners)
			c.logf("runner %d: %v, then a new runner", i, sig)
			if !c.dry {
				c.stopWorker(i, sig)
				c.startWorker(i)
			}
			return
		}
		fallthrough
	case k == 12:
		sig := []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM}[c.r.IntN(2)]
		i := c.replica()
		c.logf("serve replica %d of %d: %v, then a new one", i, len(c.serveP), sig)
		if !c.dry {
			c.stopServe(i, sig)
			c.sampleMu.Lock()
			c.startServe(i)
			c.sampleMu.Unlock()
		}
	case k == 13 && c.useRedis:
		c.logf("redis: SIGKILL, then restarted from its AOF")
		if !c.dry {
			c.loop.redis.Restart()
		}
	default:
		d := time.Duration(1+c.r.IntN(3)) * time.Second
		c.logf("wait %s", d)
		c.sleep(d)
	}
}

// fault injects one GitHub fault.
func (c *chaos) fault() {
	method := c.pick("", "GET", "POST", "PATCH")
	switch c.r.IntN(5) {
	case 0:
		n, status := 1+c.r.IntN(4), []int{500, 502, 503}[c.r.IntN(3)]
		c.logf("github: the next %d %s calls answer %d", n, orAny(method), status)
		c.gh.FailNext(method, "", n, status)
	case 1:
		c.logf("github: the next POST hits a secondary limit, 403 Retry-After 2s")
		c.gh.RateLimitNext("POST", "", 2*time.Second)
	case 2:
		c.logf("github: the next %s call hits a secondary limit, 429 Retry-After 1s", orAny(method))
		c.gh.SecondaryLimitNext(method, "", http.StatusTooManyRequests, time.Second)
	case 3:
		n := 1 + c.r.IntN(3)
		c.logf("github: the next %d %s calls answer after 1.5s", n, orAny(method))
		c.gh.SlowNext(method, "", n, 1500*time.Millisecond)
	case 4:
		done := c.r.IntN(2) == 0
		c.logf("github: the next %s call's connection is reset (carried out first: %v)", orAny(method), done)
		c.gh.ResetNext(method, "", 1, done)
	}
}

func (c *chaos) sleep(d time.Duration) {
	if !c.dry {
		time.Sleep(d)
	}
}

func orAny(method string) string {
	if method == "" {
		return "(any)"
	}
	return method
}

// settle waits until nothing is left to happen: no job queued or running, none awaiting
// approval, no delivery held back after a restart, and no GitHub write for a while; then it stops the processes so the checks
// read a store nothing changes.
func (c *chaos) settle() {
	c.logf("settling")
	quiet := func() bool {
		resp, err := http.Get(c.botURL + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		busy := false
		for sc.Scan() {
			l := sc.Text()
			if (strings.HasPrefix(l, "arena_queue_jobs{") || strings.HasPrefix(l, "arena_queue_shares{") || strings.HasPrefix(l, "arena_pending_requests ") ||
				strings.HasPrefix(l, "arena_webhook_recovering ")) && !strings.HasSuffix(l, " 0") {
				busy = true
			}
		}
		if busy {
			return false
		}
		calls := c.gh.Calls()
		for i := len(calls) - 1; i >= 0; i-- {
			if calls[i].Method != http.MethodGet {
				return time.Since(calls[i].Time) > 4*time.Second
			}
		}
		return true
	}
	// Quiet for a few seconds on end: an expiry or a retry may start writes again.
	var since time.Time
	c.waitFor("the scenario to settle", lockWait+3*time.Minute, func() bool {
		if !quiet() {
			since = time.Time{}
			return false
		}
		if since.IsZero() {
			since = time.Now()
		}
		return time.Since(since) > 6*time.Second
	})
	c.logf("settled")
	c.stopSampling()
	for i := range c.serveP {
		c.stopServe(i, syscall.SIGTERM)
	}
	for i := range c.works {
		c.stopWorker(i, syscall.SIGTERM)
	}
}

// records reads every record of the scenario from the store serve used.
func (c *chaos) records() []queue.Job {
	ctx := c.t.Context()
	q := c.q
	if !c.useRedis {
		d, err := queue.OpenDisk(filepath.Join(c.stateDir, stateFile), queue.Options{})
		if err != nil {
			c.t.Fatal(err)
		}
		defer d.Close()
		q = d
	}
	jobs, err := q.List(ctx, queue.Filter{})
	if err != nil {
		c.t.Fatal(err)
	}
	return jobs
}

func chaosDigest(body string) string {
	h := sha256.Sum256([]byte(body))
	return hex.EncodeToString(h[:12])
}

func (c *chaos) check() {
	t := c.t
	var bots []githubtest.Comment
	for _, cm := range c.gh.Comments(loopRepo, loopPR) {
		if cm.User == githubtest.BotLogin {
			bots = append(bots, cm)
		}
	}
	holding := func(marker string) []githubtest.Comment {
		var out []githubtest.Comment
		for _, cm := range bots {
			if strings.Contains(cm.Body, marker) {
				out = append(out, cm)
			}
		}
		return out
	}
	jobs := c.records()
	byID := map[string]queue.Job{}
	saves := 0
	shares := 0
	for _, j := range jobs {
		byID[j.ID] = j
		c.logf("record %s: %s (attempt %d) %q", j.ID, j.State, j.Attempt, j.Command)
		if j.Parent != "" {
			// A share of a split job: the bot posts nothing for it; its job's reply holds
			// its rows. It ended, as everything did.
			shares++
			if !j.State.Terminal() {
				t.Errorf("invariant 2: share %s is still %s after settling", j.ID, j.State)
			}
			if len(holding(report.Marker(j.ID))) > 0 || len(holding(report.EndingMarker(j.ID))) > 0 {
				t.Errorf("invariant 1: share %s got a comment of its own", j.ID)
			}
			continue
		}
		// 1. Exactly one final reply.
		finals := append(holding(report.ResultsMarker(j.ID, 1)), holding(report.EndingMarker(j.ID))...)
		if len(finals) != 1 {
			t.Errorf("invariant 1: %s (%s) has %d final replies, want 1:%s", j.ID, j.State, len(finals), chaosBodies(finals))
		}
		// 2. Ended, and its status comment shows its end.
		if !j.State.Terminal() {
			t.Errorf("invariant 2: %s is still %s after settling", j.ID, j.State)
			continue
		}
		if j.State == queue.Done && strings.Contains(j.Command, "--save") {
			saves++
		}
		status := holding(report.Marker(j.ID))
		if j.StatusCommentID == 0 {
			if len(status) != 0 {
				t.Errorf("invariant 2: %s names no status comment, but %d hold its marker:%s", j.ID, len(status), chaosBodies(status))
			}
			continue
		}
		if len(status) != 1 || status[0].ID != j.StatusCommentID {
			t.Errorf("invariant 2: %s names status comment %d; comments holding its marker:%s", j.ID, j.StatusCommentID, chaosBodies(status))
			continue
		}
		phase := report.Phase(j.State)
		head, _, _ := strings.Cut(report.RenderStatus(report.Status{RequestID: j.ID, Phase: phase}), "\n")
		if first, _, _ := strings.Cut(status[0].Body, "\n"); first != head {
			t.Errorf("invariant 2: the status comment of %s (%s) is headed %q, want %q", j.ID, j.State, first, head)
		}
		if d := chaosDigest(status[0].Body); d != j.Shown {
			t.Errorf("invariant 2: the status comment of %s is not what the bot last wrote (digest %s, record's Shown %s):\n%s", j.ID, d, j.Shown, status[0].Body)
		}
	}
	// 1, the other way round.
	final := regexp.MustCompile(`<!-- arenabot:(?:results (\S+) part=1|ending request=(\S+)) -->`)
	for _, cm := range bots {
		for _, m := range final.FindAllStringSubmatch(cm.Body, -1) {
			if id := m[1] + m[2]; byID[id].ID == "" {
				t.Errorf("invariant 1: comment %d is a final reply of %s, which has no record", cm.ID, id)
			}
		}
	}
	// 3. No marker posted twice.
	marker := regexp.MustCompile(`<!-- arenabot:[^>]*-->`)
	posted := map[string]int{}
	for _, call := range c.gh.CallsTo(http.MethodPost, "/repos/*/*/issues/*/comments") {
		if call.Status/100 != 2 {
			continue
		}
		var in struct{ Body string }
		json.Unmarshal(call.Body, &in)
		ms := marker.FindAllString(in.Body, -1)
		if len(ms) == 0 {
			continue
		}
		m := ms[len(ms)-1]
		posted[m]++
		if posted[m] == 2 {
			t.Errorf("invariant 3: %s was posted twice", m)
		}
	}
	// 4. Measured to completion at most once.
	finished := map[string]int{}
	for line := range strings.Lines(c.logs.String()) {
		var rec struct{ Msg, Job, State string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "job finished" {
			finished[rec.Job]++
			if finished[rec.Job] == 2 {
				t.Errorf("invariant 4: job %s finished twice (the second time %s)", rec.Job, rec.State)
			}
		}
	}
	// 5. No container left.
	for id := range byID {
		if left := dockerPS(t, "label="+runner.LabelJob+"="+id); len(left) > 0 {
			t.Errorf("invariant 5: containers of job %s left: %q", id, left)
		}
	}
	// 6. No results commit twice.
	commits := c.gh.Commits(loopRepo)
	seen := map[string]bool{}
	n := 0
	for _, cm := range commits {
		if cm.SHA == c.base || cm.SHA == c.head || len(cm.Files) == 0 {
			continue
		}
		n++
		if seen[cm.Message] {
			t.Errorf("invariant 6: results commit %q made twice", cm.Message)
		}
		seen[cm.Message] = true
	}
	if n > saves {
		t.Errorf("invariant 6: %d results commits for %d requests with --save that ended done", n, saves)
	}
	// 7. One running and one waiting per pool, and at most a share per runner running.
	c.sampleMu.Lock()
	defer c.sampleMu.Unlock()
	for k, v := range c.peak {
		if v > 1 {
			t.Errorf("invariant 7: the queue's gauges showed %d jobs %s at once, want at most 1", v, k)
		}
	}
	for k, v := range c.sharePeak {
		if strings.HasSuffix(k, "/running") && v > max(len(c.works), 1) {
			t.Errorf("invariant 7: the queue's gauges showed %d shares running at once, with %d runners", v, len(c.works))
		}
	}
	// 8. Every request leaves its check run completed.
	latest := map[string]githubtest.CheckRun{}
	for _, cr := range c.gh.CheckRuns(loopRepo) {
		latest[cr.ExternalID] = cr
	}
	for id, j := range byID {
		if j.Parent != "" {
			continue
		}
		if cr, ok := latest[id]; !ok || cr.Status != "completed" {
			t.Errorf("invariant 8: the check run of %s (%s) is %+v, want one completed", id, j.State, cr)
		}
	}
	if c.useRedis && (!c.killedShare || shares == 0) {
		t.Errorf("the scenario never killed a host mid-share (%d shares): choose a seed whose first request is approved at once", shares)
	}
	c.logf("peaks %v, shares %v; %d records (%d shares), %d bot comments, %d results commits", c.peak, c.sharePeak, len(jobs), shares, len(bots), n)
}

func chaosBodies(cs []githubtest.Comment) string {
	var sb strings.Builder
	for _, cm := range cs {
		fmt.Fprintf(&sb, "\n--- comment %d (%d edits)\n%s", cm.ID, cm.Edits, cm.Body)
	}
	return sb.String()
}
