package bot

import (
	"strings"
	"testing"

	"github.com/arenabot/arenabot/bot/githubtest"
)

// TestAckForkNote: --save on a fork that does not allow edits by maintainers says in the ack
// that results will come as a patch; the same request without --save says nothing.
func TestAckForkNote(t *testing.T) {
	e := setup(t)
	e.gh.AddPR(repo, githubtest.PR{Number: prNum, HeadSHA: sha1, HeadRef: "feature", HeadRepo: "mallory/arena", User: "alice", Files: []string{"frameworks/nethttp/main.go"}})
	e.comment("carol", "/benchmark -f nethttp -t baseline --save")
	if body := e.onlyStatus().Body; !strings.Contains(body, "does not allow edits by maintainers") {
		t.Errorf("ack of --save on a locked fork lacks the fork note:\n%s", body)
	}

	e2 := setup(t)
	e2.gh.AddPR(repo, githubtest.PR{Number: prNum, HeadSHA: sha1, HeadRef: "feature", HeadRepo: "mallory/arena", User: "alice", Files: []string{"frameworks/nethttp/main.go"}})
	e2.comment("carol", "/benchmark -f nethttp -t baseline")
	if body := e2.onlyStatus().Body; strings.Contains(body, "edits by maintainers") {
		t.Errorf("ack without --save carries the fork note:\n%s", body)
	}
}

// TestClosedPullRequest: a command on a closed PR gets one reply and no status comment or job.
func TestClosedPullRequest(t *testing.T) {
	e := setup(t)
	e.gh.AddPR(repo, githubtest.PR{Number: prNum, HeadSHA: sha1, HeadRef: "feature", User: "alice", State: "closed", Files: []string{"frameworks/nethttp/main.go"}})
	e.comment("bob", "/benchmark -f nethttp -t baseline")
	cs := e.botComments()
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "closed") || strings.Contains(cs[0].Body, "arenabot:status") {
		t.Errorf("want one reply saying the PR is closed, got %+v", cs)
	}
	if js := e.jobs(); len(js) != 0 {
		t.Errorf("jobs = %+v, want none", js)
	}
}

// TestSupersededLinksToNewer: a newer pending request of the same requester replaces the
// older one, whose status comment and final reply link to the newer one.
func TestSupersededLinksToNewer(t *testing.T) {
	e := setup(t)
	older := e.comment("carol", "/benchmark -f nethttp -t baseline")
	e.comment("carol", "/benchmark -f nethttp -t json")
	want := "https://github.com/" + repo + "/pull/"
	for _, body := range []string{e.statusOf(older).Body, e.oneEnding(requestID(older), "carol", "superseded").Body} {
		if !strings.Contains(body, want) || !strings.Contains(body, "#issuecomment-") {
			t.Errorf("the superseded request does not link to the newer one:\n%s", body)
		}
	}
}
