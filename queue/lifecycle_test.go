package queue

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A lifecycleCase is where the job "j" of pool "p" is before a command.
type lifecycleCase struct {
	name  string
	scene func() scene
}

var lcNow = time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)

// lcScene returns a scene holding the job j in state st, lined up as that
// state is: awaiting approval in no line, queued waiting (or retried),
// running with the claim "tok".
func lcScene(st State, edit func(*Job, *lineState)) func() scene {
	return func() scene {
		j := &Job{ID: "j", Pool: "p", State: st, Attempt: 1, Repo: "octo/arena", PR: 1, Requester: "alice"}
		l := lineState{Pool: "p"}
		switch st {
		case AwaitingApproval:
			j.Attempt = 0
			j.Expires = lcNow.Add(time.Hour)
		case Queued:
			l.Waiting = []string{"j"}
		case Running:
			l.Runs = []runClaim{{Job: "j", Token: "tok", Live: true}}
		}
		if st.Terminal() {
			j.Finished = lcNow.Add(-time.Minute)
		}
		if edit != nil {
			edit(j, &l)
		}
		return scene{Now: lcNow, Depth: 1, Fence: 7, Jobs: map[string]*Job{"j": j}, Line: l}
	}
}

// An lcWant is a command's expected result: the job's state after it, or the
// refusal.
type lcWant struct {
	state State
	err   error
}

func to(s State) lcWant   { return lcWant{state: s} }
func no(err error) lcWant { return lcWant{err: err} }

// lcCommand is the command op applied to the job j (or its pool's line).
func lcCommand(o op) command {
	c := command{Op: o, ID: "j", By: "bob", Token: "tok"}
	switch o {
	case opSubmit:
		c.Job = prepareSubmit(Job{ID: "j", Pool: "p", Repo: "octo/arena", PR: 1, Requester: "alice"}, lcNow)
	case opEnqueue:
		c.Job = prepare(Job{ID: "j", Pool: "p"}, lcNow)
	case opClaim:
		c.ID, c.Token = "", "new"
	case opReap:
		c.ID = ""
	case opAmend:
		c.Amendment = Amendment{StatusCommentID: 9}
	case opFinish:
		c.Outcome = Outcome{State: Done}
	}
	return c
}

// TestTransitions applies every command to a job in every state: each pair
// is a transition to the state listed or the refusal listed.
func TestTransitions(t *testing.T) {
	lapsed := func(j *Job, l *lineState) { l.Runs[0].Live = false }
	cases := []struct {
		lifecycleCase
		// submit, approve, reject, expire, amend, enqueue, claim, heartbeat, finish, cancel, drain, reap
		want [12]lcWant
	}{
		{lifecycleCase{"unknown", func() scene { return scene{Now: lcNow, Depth: 1, Jobs: map[string]*Job{}, Line: lineState{Pool: "p"}} }},
			[12]lcWant{to(AwaitingApproval), no(ErrNotFound), no(ErrNotFound), no(ErrNotFound), no(ErrNotFound), to(Queued),
				no(errEmpty), no(ErrLeaseLost), no(ErrLeaseLost), no(ErrNotFound), no(ErrNotFound), no(errNotRunning)}},
		{lifecycleCase{"awaiting approval", lcScene(AwaitingApproval, nil)},
			[12]lcWant{no(ErrExists), to(Queued), to(Rejected), no(errNotDue), to(AwaitingApproval), no(ErrExists),
				no(errEmpty), no(ErrLeaseLost), no(ErrLeaseLost), to(Cancelled), no(errNotWaiting), no(errNotRunning)}},
		{lifecycleCase{"awaiting approval, due", lcScene(AwaitingApproval, func(j *Job, _ *lineState) { j.Expires = lcNow })},
			[12]lcWant{no(ErrExists), to(Queued), to(Rejected), to(Expired), to(AwaitingApproval), no(ErrExists),
				no(errEmpty), no(ErrLeaseLost), no(ErrLeaseLost), to(Cancelled), no(errNotWaiting), no(errNotRunning)}},
		{lifecycleCase{"awaiting approval, never expires", lcScene(AwaitingApproval, func(j *Job, _ *lineState) { j.Expires = time.Time{} })},
			[12]lcWant{no(ErrExists), to(Queued), to(Rejected), no(errNotDue), to(AwaitingApproval), no(ErrExists),
				no(errEmpty), no(ErrLeaseLost), no(ErrLeaseLost), to(Cancelled), no(errNotWaiting), no(errNotRunning)}},
		{lifecycleCase{"queued", lcScene(Queued, nil)},
			[12]lcWant{no(ErrExists), no(ErrNotAwaiting), no(ErrNotAwaiting), no(ErrNotAwaiting), to(Queued), no(ErrExists),
				to(Running), no(ErrLeaseLost), no(ErrLeaseLost), to(Cancelled), to(Cancelled), no(errNotRunning)}},
		{lifecycleCase{"queued, retried", lcScene(Queued, func(j *Job, l *lineState) {
			j.Attempt, j.Reason, l.Retry, l.Waiting = 2, ReasonRetried, []string{"j"}, nil
		})},
			[12]lcWant{no(ErrExists), no(ErrNotAwaiting), no(ErrNotAwaiting), no(ErrNotAwaiting), to(Queued), no(ErrExists),
				to(Running), no(ErrLeaseLost), no(ErrLeaseLost), to(Cancelled), to(Cancelled), no(errNotRunning)}},
		{lifecycleCase{"running", lcScene(Running, nil)},
			[12]lcWant{no(ErrExists), no(ErrNotAwaiting), no(ErrNotAwaiting), no(ErrNotAwaiting), to(Running), no(ErrExists),
				no(errEmpty), to(Running), to(Done), to(Running), no(errNotWaiting), no(errLeaseLive)}},
		{lifecycleCase{"running, lease lapsed", lcScene(Running, lapsed)},
			[12]lcWant{no(ErrExists), no(ErrNotAwaiting), no(ErrNotAwaiting), no(ErrNotAwaiting), to(Running), no(ErrExists),
				no(errEmpty), to(Running), to(Done), to(Running), no(errNotWaiting), to(Queued)}},
		{lifecycleCase{"running again, lease lapsed", lcScene(Running, func(j *Job, l *lineState) { j.Attempt, l.Runs[0].Live = MaxAttempts, false })},
			[12]lcWant{no(ErrExists), no(ErrNotAwaiting), no(ErrNotAwaiting), no(ErrNotAwaiting), to(Running), no(ErrExists),
				no(errEmpty), to(Running), to(Done), to(Running), no(errNotWaiting), to(Failed)}},
		{lifecycleCase{"running, cancel requested, lease lapsed", lcScene(Running, func(j *Job, l *lineState) { j.CancelRequested, l.Runs[0].Live = true, false })},
			[12]lcWant{no(ErrExists), no(ErrNotAwaiting), no(ErrNotAwaiting), no(ErrNotAwaiting), to(Running), no(ErrExists),
				no(errEmpty), to(Running), to(Done), to(Running), no(errNotWaiting), to(Cancelled)}},
	}
	for _, st := range []State{Done, Failed, Cancelled, Superseded, Expired, Rejected} {
		cases = append(cases, struct {
			lifecycleCase
			want [12]lcWant
		}{lifecycleCase{string(st), lcScene(st, nil)},
			[12]lcWant{no(ErrExists), no(ErrFinished), no(ErrFinished), no(ErrFinished), to(st), no(ErrExists),
				no(errEmpty), no(ErrLeaseLost), no(ErrLeaseLost), no(ErrFinished), no(errNotWaiting), no(errNotRunning)}})
	}
	if len(ops) != 12 {
		t.Fatalf("%d commands, the table has 12 columns", len(ops))
	}
	for _, tt := range cases {
		for i, o := range ops {
			t.Run(fmt.Sprintf("%s/%s", tt.name, o), func(t *testing.T) {
				want := tt.want[i]
				ch, err := transition(tt.scene(), lcCommand(o))
				if want.err != nil {
					if !errors.Is(err, want.err) {
						t.Fatalf("error %v, want %v", err, want.err)
					}
					if len(ch.Put) > 0 || len(ch.Events) > 0 || ch.Line != nil {
						t.Errorf("a refusal changed something: %+v", ch)
					}
					return
				}
				if err != nil {
					t.Fatalf("error %v, want state %s", err, want.state)
				}
				if ch.Reply.ID != "j" || ch.Reply.State != want.state {
					t.Errorf("job %q in state %s, want j in %s", ch.Reply.ID, ch.Reply.State, want.state)
				}
				checkChange(t, tt.scene(), ch)
			})
		}
	}
}

// checkChange checks what every transition keeps true.
func checkChange(t *testing.T, before scene, ch change) {
	t.Helper()
	for _, j := range ch.Put {
		if b := before.Jobs[j.ID]; b != nil && b.State.Terminal() && b.State != j.State {
			t.Errorf("terminal job %s changed from %s to %s", j.ID, b.State, j.State)
		}
		if j.State.Terminal() && j.Finished.IsZero() {
			t.Errorf("job %s is %s without Finished", j.ID, j.State)
		}
	}
	for _, id := range ch.Ended {
		found := false
		for _, e := range ch.Events {
			found = found || e.Job == id
		}
		if !found {
			t.Errorf("job %s ended without an event", id)
		}
	}
	if l := ch.Line; l != nil {
		n := len(l.Waiting)
		if n > before.Depth {
			t.Errorf("%d waiting, depth %d", n, before.Depth)
		}
		for _, r := range l.Runs {
			if r.Job == "" || r.Token == "" {
				t.Errorf("a running claim without a job or a token: %+v", r)
			}
		}
	}
}

// TestTransitionsLine covers the line: displacement, retried jobs kept, the
// same owner's request replaced, fencing and the repeated call.
func TestTransitionsLine(t *testing.T) {
	queued := func(id string, pr int) *Job {
		return &Job{ID: id, Pool: "p", State: Queued, Attempt: 1, Repo: "octo/arena", PR: pr}
	}
	s := scene{Now: lcNow, Depth: 1, Fence: 41, Line: lineState{Pool: "p", Runs: []runClaim{{Job: "r", Token: "t", Live: true}}, Retry: []string{"x"}, Waiting: []string{"a", "w", "b"}},
		Jobs: map[string]*Job{"r": queued("r", 1), "x": queued("x", 1), "a": queued("a", 2), "w": queued("w", 1), "b": queued("b", 3)},
		PRs:  map[string]string{"a": "octo/arena#2", "w": "octo/arena#1", "b": "octo/arena#3"}}
	s.Jobs["r"].State = Running
	// A newer job of pull request 1 (the repository compared without case) takes the
	// place of that pull request's waiting job; the running and the retried job of the
	// same pull request, and the other pull requests' jobs, keep theirs.
	ch, err := transition(s, command{Op: opEnqueue, Job: prepare(Job{ID: "n", Pool: "p", Repo: "Octo/Arena", PR: 1}, lcNow)})
	if err != nil || ch.Other == nil || ch.Other.ID != "w" || ch.Other.State != Superseded || ch.Other.SupersededBy != "n" {
		t.Fatalf("enqueue of a pull request that has a job waiting: displaced %+v, %v; want w superseded by n", ch.Other, err)
	}
	if got := fmt.Sprintln(runJobs(ch.Line.Runs), ch.Line.Retry, ch.Line.Waiting, ch.Wake); got != "[r] [x] [a n b] true\n" {
		t.Errorf("line after the displacement: %s", got)
	}
	if got := fmt.Sprint(ch.Events); got != "[{n queued} {w superseded}]" {
		t.Errorf("events %s", got)
	}
	// A job of another pull request, or of none, waits at the back and displaces nobody.
	for _, j := range []Job{{ID: "n", Pool: "p", Repo: "octo/arena", PR: 4}, {ID: "n", Pool: "p"}, {ID: "n", Pool: "p", Repo: "octo/other", PR: 1}} {
		ch, err := transition(s, command{Op: opEnqueue, Job: prepare(j, lcNow)})
		if err != nil || ch.Other != nil || fmt.Sprint(ch.Line.Waiting) != "[a w b n]" {
			t.Errorf("enqueue of %s: displaced %+v, line %v, %v; want none displaced, n at the back", prKey(j), ch.Other, ch.Line, err)
		}
	}
	// Two places per pull request: the pull request's oldest waiting job is displaced and
	// its others move up, so its jobs keep their order and the pull request its turn.
	s3 := s
	s3.Depth = 2
	s3.Line.Waiting = []string{"w", "a", "w2", "b"}
	s3.Jobs = map[string]*Job{"w": queued("w", 1), "a": queued("a", 2), "w2": queued("w2", 1), "b": queued("b", 3)}
	s3.PRs = map[string]string{"w": "octo/arena#1", "a": "octo/arena#2", "w2": "octo/arena#1", "b": "octo/arena#3"}
	ch, err = transition(s3, command{Op: opEnqueue, Job: prepare(Job{ID: "n", Pool: "p", Repo: "octo/arena", PR: 1}, lcNow)})
	if err != nil || ch.Other == nil || ch.Other.ID != "w" || fmt.Sprint(ch.Line.Waiting) != "[w2 a n b]" {
		t.Errorf("depth 2: displaced %+v, line %v, %v; want w displaced, line [w2 a n b]", ch.Other, ch.Line, err)
	}
	if ch, err := transition(s3, command{Op: opEnqueue, Job: prepare(Job{ID: "n", Pool: "p", Repo: "octo/arena", PR: 2}, lcNow)}); err != nil || ch.Other != nil || fmt.Sprint(ch.Line.Waiting) != "[w a w2 b n]" {
		t.Errorf("depth 2, the second job of pull request 2: displaced %+v, line %v, %v; want none displaced", ch.Other, ch.Line, err)
	}

	s.Line.Runs = nil
	ch, err = transition(s, command{Op: opClaim, Token: "c"})
	if err != nil || ch.Reply.ID != "x" || ch.Fence != 42 || ch.Reply.Fence != 42 || fmt.Sprint(ch.Line.Runs) != "[{x c true}]" || ch.Renew != "c" {
		t.Fatalf("claim = %+v, %v; want the retried x with fence 42", ch, err)
	}
	s.Line.Runs, s.Jobs["x"] = ch.Line.Runs, &ch.Reply
	if ch, err := transition(s, command{Op: opClaim, Token: "c"}); err != nil || !ch.Again || ch.Reply.ID != "x" || len(ch.Put) > 0 {
		t.Errorf("the same claim again = %+v, %v; want x again, nothing written", ch, err)
	}

	// Several running: each claim starts the next job whose pull request runs none.
	// The claims' leases are their own: a heartbeat renews its claim's, a reap recovers
	// the claim whose lease lapsed and leaves the others running.
	slots := scene{Now: lcNow, Depth: 1, Fence: 50,
		Line: lineState{Pool: "p", Runs: []runClaim{{Job: "r", Token: "t", Live: true}}, Waiting: []string{"w", "a", "b"}},
		Jobs: map[string]*Job{"r": queued("r", 1), "w": queued("w", 1), "a": queued("a", 2), "b": queued("b", 3)},
		PRs:  map[string]string{"r": "octo/arena#1", "w": "octo/arena#1", "a": "octo/arena#2", "b": "octo/arena#3"}}
	slots.Jobs["r"].State = Running
	ch, err = transition(slots, command{Op: opClaim, Token: "t2"})
	if err != nil || ch.Reply.ID != "a" || fmt.Sprint(runJobs(ch.Line.Runs), ch.Line.Waiting) != "[r a] [w b]" {
		t.Fatalf("second claim = %v, %+v; want a (w waits for its PR's running r), line [r a] [w b]", err, ch.Line)
	}
	slots.Line, slots.Fence = *ch.Line, ch.Fence
	ra := ch.Reply
	slots.Jobs["a"] = &ra
	ch, err = transition(slots, command{Op: opClaim, Token: "t3"})
	if err != nil || ch.Reply.ID != "b" || fmt.Sprint(runJobs(ch.Line.Runs), ch.Line.Waiting) != "[r a b] [w]" {
		t.Fatalf("third claim = %v, %+v; want b", err, ch.Line)
	}
	slots.Line, slots.Fence = *ch.Line, ch.Fence
	rb := ch.Reply
	slots.Jobs["b"] = &rb
	if _, err := transition(slots, command{Op: opClaim, Token: "t4"}); !errors.Is(err, errBusy) {
		t.Errorf("a claim with only w waiting behind its PR's running r = %v, want errBusy", err)
	}
	for i := range slots.Line.Runs {
		slots.Line.Runs[i].Live = slots.Line.Runs[i].Token != "t2" // a's runner stopped
	}
	if ch, err := transition(slots, command{Op: opHeartbeat, ID: "b", Token: "t3"}); err != nil || ch.Renew != "t3" {
		t.Errorf("heartbeat of b = %v, renew %q; want its own claim renewed", err, ch.Renew)
	}
	ch, err = transition(slots, command{Op: opReap})
	if err != nil || ch.Reply.ID != "a" || fmt.Sprint(runJobs(ch.Line.Runs), ch.Line.Retry) != "[r b] [a]" {
		t.Fatalf("reap = %v, %+v; want a back in line, r and b running", err, ch.Line)
	}
	slots.Line = *ch.Line
	if _, err := transition(slots, command{Op: opReap}); !errors.Is(err, errLeaseLive) {
		t.Errorf("reap with every lease live = %v, want errLeaseLive", err)
	}
	ch, err = transition(slots, command{Op: opFinish, ID: "r", Token: "t", Outcome: Outcome{State: Done}})
	if err != nil || fmt.Sprint(runJobs(ch.Line.Runs)) != "[b]" || !ch.Wake {
		t.Errorf("finish of r = %v, %+v; want b still running and a claim woken", err, ch.Line)
	}
	if _, err := transition(slots, command{Op: opFinish, ID: "r", Token: "t3"}); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("finish of r with b's token = %v, want ErrLeaseLost", err)
	}

	// Submit replaces the same owner's request awaiting approval.
	old := &Job{ID: "o", Pool: "p", State: AwaitingApproval, Repo: "octo/arena", PR: 1, Requester: "alice"}
	s2 := scene{Now: lcNow, Depth: 1, Jobs: map[string]*Job{"o": old}, Owner: "o", Line: lineState{Pool: "p"}}
	ch, err = transition(s2, command{Op: opSubmit, Job: prepareSubmit(Job{ID: "n", Repo: "Octo/Arena", PR: 1, Requester: "ALICE"}, lcNow)})
	if err != nil || ch.Other == nil || ch.Other.ID != "o" || ch.Other.State != Superseded || fmt.Sprint(ch.Unawaited) != "[o]" || ch.Awaits != "n" {
		t.Fatalf("submit = %+v, %v; want o replaced", ch, err)
	}
	// A call repeated after its reply was lost (Redis) is answered as the first.
	s2.Op = "nonce"
	old.State = Queued
	if ch, err := transition(s2, command{Op: opApprove, ID: "o", Nonce: "nonce"}); err != nil || !ch.Again || ch.Reply.State != Queued {
		t.Errorf("approve again = %+v, %v; want the queued job", ch, err)
	}
	if _, err := transition(s2, command{Op: opApprove, ID: "o", Nonce: "other"}); !errors.Is(err, ErrNotAwaiting) {
		t.Errorf("approve of a queued job: %v, want ErrNotAwaiting", err)
	}
	if _, err := transition(s2, command{Op: "fly"}); !errors.Is(err, errBadCommand) {
		t.Errorf("unknown command: %v", err)
	}
}

// TestCheckPool: a pool's name is a short word of letters, digits, '.', '_' and '-'; the
// error says what a good one looks like.
func TestCheckPool(t *testing.T) {
	for _, ok := range []string{"default", "big", "big-hosts", "gpu.2", "a_b"} {
		if err := CheckPool(ok); err != nil {
			t.Errorf("CheckPool(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-x", "big hosts", "a:b", "pool\x00", strings.Repeat("p", 65)} {
		if err := CheckPool(bad); err == nil || !strings.Contains(err.Error(), "e.g. big-hosts") {
			t.Errorf("CheckPool(%q) = %v, want an error with an example", bad, err)
		}
	}
}
