package bot

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/githubtest"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/profile/selection"
	"github.com/arenabot/arenabot/queue"
)

// TestAckRowsAreTheJobs: the bot plans in the runner's mode (Config.Lite), the job carries
// the planned rows, and the status comment lists those rows: the selection's, at the
// mode's connection counts.
func TestAckRowsAreTheJobs(t *testing.T) {
	nethttp, err := frameworks.Load("../frameworks", "nethttp", profile.Names())
	if err != nil {
		t.Fatal(err)
	}
	for _, lite := range []bool{false, true} {
		t.Run(fmt.Sprintf("lite=%v", lite), func(t *testing.T) {
			e := setup(t)
			c, err := ghapi.New(ghapi.Config{BaseURL: e.gh.URL, Token: "t", BotLogin: githubtest.BotLogin, WriteSpacing: -1, MaxRetries: -1, PermissionTTL: -1})
			if err != nil {
				t.Fatal(err)
			}
			e.bot = New(Config{WebhookSecret: []byte(secret), Now: e.clock, Lite: lite}, c, e.q, nil)
			e.comment("bob", "/benchmark -f nethttp -t json,baseline")
			js := e.jobs()
			if len(js) != 1 {
				t.Fatalf("jobs = %+v", js)
			}
			want := selection.Select(selection.Request{Entries: []frameworks.Entry{nethttp}, Tests: []string{"baseline", "json"}, Lite: lite}).Rows
			if !slices.Equal(js[0].Rows, want) {
				t.Errorf("job rows %v, want the selection's %v", js[0].Rows, want)
			}
			body := e.onlyStatus().Body
			for _, test := range []string{"baseline", "json"} {
				line := fmt.Sprintf("| `nethttp` | %s | %s |", test, conns(want, test))
				if !strings.Contains(body, line) {
					t.Errorf("status comment lacks %q:\n%s", line, body)
				}
			}
			if !strings.Contains(body, fmt.Sprintf("**Measurements:** %d,", len(want))) {
				t.Errorf("status comment does not count %d measurements:\n%s", len(want), body)
			}
		})
	}
}

// conns renders the connection counts of test's rows as the status comment's plan does.
func conns(rows []profile.Row, test string) string {
	var s []string
	for _, r := range rows {
		if r.Test == test {
			s = append(s, fmt.Sprint(r.Conns))
		}
	}
	return strings.Join(s, ", ")
}

// TestStatusShowsTheJobsRows: the status comment's plan is the rows the job carries, over
// the payload's plan (they are what the runner measures), and a job without rows shows the
// payload's.
func TestStatusShowsTheJobsRows(t *testing.T) {
	j := queue.Job{ID: "r1", State: queue.Queued, Command: "/benchmark -f gin", Frameworks: []string{"gin"},
		Payload: []byte(`{"plan":{"Targets":[{"Entry":"gin","Tests":["baseline"],"Rows":[{"Test":"baseline","Conns":512},{"Test":"baseline","Conns":4096}]}]}}`)}
	if got := baseStatus(j).Rows; !slices.Equal(got, []profile.Row{{Entry: "gin", Test: "baseline", Conns: 512}, {Entry: "gin", Test: "baseline", Conns: 4096}}) {
		t.Errorf("rows of a job without rows = %v, want the payload's plan", got)
	}
	j.Rows = []profile.Row{{Entry: "gin", Test: "baseline", Conns: 512}}
	if got := baseStatus(j).Rows; !slices.Equal(got, []profile.Row{{Entry: "gin", Test: "baseline", Conns: 512}}) {
		t.Errorf("rows = %v, want the job's", got)
	}
	j.Payload = nil // an operator's job
	if got := baseStatus(j).Rows; len(got) != 1 {
		t.Errorf("rows of a job without payload = %v, want the job's", got)
	}
}
