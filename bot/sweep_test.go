package bot

import (
	"slices"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/profile/selection"
	"github.com/arenabot/arenabot/queue"
)

// TestSweepRequest: /benchmark-sweep is for maintainers: anyone else gets a reply saying so
// and no record; a maintainer's is queued at once as a sweep of every enabled entry on every
// test it subscribes to (only those -f and -t name), its results committed (--save) and its
// Δ against the committed results (no base measured); a test that does not exist is refused
// naming it.
func TestSweepRequest(t *testing.T) {
	e := setup(t)
	botSays := func(s string) bool {
		for _, c := range e.gh.Comments(repo, prNum) {
			if c.User == githubtest.BotLogin && strings.Contains(c.Body, s) {
				return true
			}
		}
		return false
	}
	e.comment("carol", "/benchmark-sweep")
	if len(e.records()) != 0 || !botSays("only maintainers (write access or more) may ask for one") {
		t.Fatalf("a reader's sweep: records %v; want none and a reply saying who may", e.records())
	}

	var want []profile.Row
	for _, fw := range []string{"gin", "nethttp"} { // the fake lists entries sorted by name
		en, err := frameworks.Load("../frameworks", fw, profile.Names())
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, selection.Select(selection.Request{Entries: []frameworks.Entry{en}}).Rows...)
	}
	e.comment("bob", "/benchmark-sweep")
	js := e.jobs()
	if len(js) != 1 {
		t.Fatalf("jobs after a maintainer's sweep: %+v", js)
	}
	j := js[0]
	if j.Kind != queue.BenchmarkSweep || !j.Save || j.Baseline != queue.BaselineCommitted || j.Approver != "bob" || j.State != queue.Queued {
		t.Errorf("sweep job: kind %s save %v baseline %q approver %q state %s", j.Kind, j.Save, j.Baseline, j.Approver, j.State)
	}
	if !slices.Equal(j.Rows, want) {
		t.Errorf("sweep rows %v, want every subscribed test of both entries %v", j.Rows, want)
	}

	e.comment("bob", "/benchmark-sweep -f gin -t json,baseline")
	var narrow *queue.Job
	for _, j := range e.jobs() {
		if j.State == queue.Queued && strings.Contains(j.Command, "-f gin") {
			narrow = &j
		}
	}
	if narrow == nil {
		t.Fatalf("no queued sweep for -f gin: %+v", e.jobs())
	}
	for _, r := range narrow.Rows {
		if r.Entry != "gin" || r.Test != "json" && r.Test != "baseline" {
			t.Errorf("narrowed sweep measures %v", r)
		}
	}
	if len(narrow.Rows) == 0 {
		t.Error("narrowed sweep has no rows")
	}

	e.comment("bob", "/benchmark-sweep -t nosuchtest")
	if !botSays("`nosuchtest`") {
		t.Error("a sweep of an unknown test got no reply naming it")
	}
}
