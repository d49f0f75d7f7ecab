package bot

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/bot/hook"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/result"
)

// diskBot is a bot on the embedded store, as serve runs it without Redis: the queue and
// the webhook inbox in one bbolt file. restart drops every in-process state and opens
// the file again, as a new process would.
type diskBot struct {
	*env
	path  string
	disk  *queue.Disk
	stop  func()
	grace time.Duration // Config.RecoverGrace; the tests that do not look at it hold nothing
}

func setupDisk(t *testing.T) *diskBot {
	t.Helper()
	d := &diskBot{env: setup(t), path: filepath.Join(t.TempDir(), "arenabot.db"), grace: -1}
	d.open()
	t.Cleanup(d.close)
	return d
}

func (d *diskBot) open() {
	d.t.Helper()
	disk, err := queue.OpenDisk(d.path, queue.Options{Now: d.clock})
	if err != nil {
		d.t.Fatal(err)
	}
	inbox, err := NewBoltInbox(disk.DB())
	if err != nil {
		d.t.Fatal(err)
	}
	c, err := ghapi.New(ghapi.Config{BaseURL: d.gh.URL, Token: "t", BotLogin: githubtest.BotLogin, WriteSpacing: -1, MaxRetries: -1, PermissionTTL: -1})
	if err != nil {
		d.t.Fatal(err)
	}
	d.disk = disk
	d.q = disk // the env's helpers read the store
	d.bot = New(Config{WebhookSecret: []byte(secret), Now: d.clock, InboxStore: inbox, RecoverGrace: d.grace}, c, disk, nil)
	d.hook = d.bot.Webhook()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = d.bot.Run(ctx)
	}()
	d.stop = func() { cancel(); <-done }
}

func (d *diskBot) close() {
	if d.disk == nil {
		return
	}
	d.stop()
	_ = d.disk.Close()
	d.disk = nil
}

func (d *diskBot) restart() {
	d.t.Helper()
	d.close()
	d.open()
}

// get returns a record from the store.
func (d *diskBot) get(id string) queue.Job {
	d.t.Helper()
	j, err := d.disk.Get(d.t.Context(), id)
	if err != nil {
		d.t.Fatal(err)
	}
	return j
}

// A restart between the ack and the approval, between the approval and the claim, and
// while the job runs loses nothing: the request awaits approval across the restart, the
// approval counts, the claim and the outcome are reported, and the request ends with
// exactly one final reply; its status comment shows each state as it comes.
func TestRestartOnDiskLosesNothing(t *testing.T) {
	d := setupDisk(t)
	cmd := d.say("alice", secCommand)
	id := requestID(cmd)
	st := d.statusOf(cmd)
	if !strings.Contains(st.Body, "awaiting approval") {
		t.Fatalf("status = %s", st.Body)
	}

	d.restart() // between the ack and the approval
	d.gh.React(repo, st.ID, "bob", "+1")
	d.poll()
	if j := d.get(id); j.State != queue.Queued || j.Approver != "bob" {
		t.Fatalf("after the restart the 👍 did not approve: %s by %q", j.State, j.Approver)
	}
	if got := d.statusOf(cmd); !strings.Contains(got.Body, "Benchmark queued") {
		t.Errorf("status = %s", got.Body)
	}

	d.restart() // between the approval and the claim
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	l, err := d.disk.Claim(ctx, queue.DefaultPool)
	if err != nil || l.Job.ID != id {
		t.Fatalf("claim after the restart: %v %+v", err, l.Job)
	}
	d.settle()
	if got := d.statusOf(cmd); !strings.Contains(got.Body, "Benchmark running") {
		t.Errorf("status = %s", got.Body)
	}

	d.restart() // while it runs: the runner finishes it meanwhile
	rep := nethttpOnly()
	if _, err := d.disk.Finish(t.Context(), l, outcomeOf(t, queue.Done, &rep)); err != nil {
		t.Fatal(err)
	}
	d.settle()
	rs := d.finalReplies(id)
	if len(rs) != 1 || !strings.Contains(rs[0].Body, "Benchmark Results") {
		t.Fatalf("final replies = %+v", rs)
	}
	d.restart()
	d.settle()
	if n := len(d.finalReplies(id)); n != 1 {
		t.Errorf("%d final replies after one more restart", n)
	}
	if got := d.statusOf(cmd); !strings.Contains(got.Body, "Benchmark done") {
		t.Errorf("status = %s", got.Body)
	}
}

// outcomeOf is the outcome of a run that reports rep.
func outcomeOf(t *testing.T, s queue.State, rep *result.Report) queue.Outcome {
	t.Helper()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return queue.Outcome{State: s, Result: b}
}

// A delivery accepted (202) by a process that stopped before handling it is handled by the
// next one: the inbox is on disk too.
func TestRestartOnDiskKeepsAcceptedDeliveries(t *testing.T) {
	d := setupDisk(t)
	d.stop() // the workers are gone; the webhook still records
	d.stop = func() {}
	id := d.gh.AddComment(repo, prNum, "alice", secCommand)
	p := secComment(t, "created", prNum, true, id, "alice", "User", secCommand)
	if w := d.secSigned("issue_comment", "d-kept", p); w.Code != 202 {
		t.Fatalf("delivery: %d %s", w.Code, w.Body)
	}
	d.restart()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := d.disk.Get(t.Context(), requestID(id)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the accepted delivery was not handled after the restart")
		}
		time.Sleep(10 * time.Millisecond)
	}
	d.settle()
	if st := d.statusOf(id); !strings.Contains(st.Body, "awaiting approval") {
		t.Errorf("status = %s", st.Body)
	}
	// The same delivery again is a duplicate: the dedupe ids are on disk as well.
	if w := d.secSigned("issue_comment", "d-kept", p); w.Code != 200 || !strings.Contains(w.Body.String(), "duplicate") {
		t.Errorf("redelivery after the restart: %d %s", w.Code, w.Body)
	}
}

// A delivery the stopped bot was handling (popped, not acknowledged: killed mid-event) is
// handled again after a restart only once RecoverGrace has passed, so that a reply the
// stopped process had sent has landed before the handler looks for it; meanwhile the
// bot says how many it holds (the arena_webhook_recovering gauge).
func TestRecoverGraceHoldsTheDelivery(t *testing.T) {
	d := setupDisk(t)
	d.close()
	const grace = 1500 * time.Millisecond
	d.grace = grace

	// What the killed bot left: the command's delivery popped and not acknowledged.
	disk, err := queue.OpenDisk(d.path, queue.Options{Now: d.clock})
	if err != nil {
		t.Fatal(err)
	}
	inbox, err := NewBoltInbox(disk.DB())
	if err != nil {
		t.Fatal(err)
	}
	id := d.gh.AddComment(repo, prNum, "alice", secCommand)
	if err := inbox.Push(t.Context(), hook.Delivery{ID: "d-killed", Event: "issue_comment",
		Payload: secComment(t, "created", prNum, true, id, "alice", "User", secCommand)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := inbox.Pop(t.Context(), time.Second); err != nil {
		t.Fatal(err)
	}
	if err := disk.Close(); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	d.open()
	waitFor(t, func() bool { return d.bot.Intake.recovering.Load() == 1 })
	var handled time.Duration
	waitFor(t, func() bool {
		if len(d.gh.Reactions(repo, id)) == 0 {
			return false
		}
		handled = time.Since(start)
		return true
	})
	if handled < grace {
		t.Errorf("the recovered delivery was handled %v after the restart, within the %v grace", handled, grace)
	}
	if n := d.bot.Intake.recovering.Load(); n != 0 {
		t.Errorf("%d deliveries held after the grace, want 0", n)
	}
}
