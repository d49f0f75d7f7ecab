package hook

import (
	"errors"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testdataEvents names each testdata payload's X-GitHub-Event.
var testdataEvents = []struct {
	file, event string
}{
	{"issue_comment.created.pr.json", "issue_comment"},
	{"issue_comment.created.issue.json", "issue_comment"},
	{"issue_comment.edited.pr.json", "issue_comment"},
	{"issue_comment.created.bot.json", "issue_comment"},
	{"issue_comment.created.crlf.json", "issue_comment"},
	{"pull_request.synchronize.json", "pull_request"},
	{"ping.json", "ping"},
	{"installation.created.json", "installation"},
}

func TestDecodeTestdata(t *testing.T) {
	want := map[string]any{
		"issue_comment.created.pr.json": Comment{
			Action: "created", Repo: "octo-org/arena", Number: 42, IsPR: true, CommentID: 7000001,
			Body: "/benchmark -f gin -t baseline", Author: "alice", AuthorType: "User",
			AuthorAssociation: "CONTRIBUTOR", Installation: 3000001,
			HTMLURL: "https://github.com/octo-org/arena/pull/42#issuecomment-7000001",
		},
		"issue_comment.created.issue.json": Comment{
			Action: "created", Repo: "octo-org/arena", Number: 17, IsPR: false, CommentID: 7000002,
			Body: "/benchmark -f gin", Author: "bob", AuthorType: "User",
			AuthorAssociation: "NONE", Installation: 3000001,
			HTMLURL: "https://github.com/octo-org/arena/issues/17#issuecomment-7000002",
		},
		"issue_comment.edited.pr.json": Comment{
			Action: "edited", Repo: "octo-org/arena", Number: 42, IsPR: true, CommentID: 7000003,
			Body: "/benchmark -f gin --save", Author: "alice", AuthorType: "User",
			AuthorAssociation: "CONTRIBUTOR", Installation: 3000001,
			HTMLURL: "https://github.com/octo-org/arena/pull/42#issuecomment-7000003",
		},
		"issue_comment.created.bot.json": Comment{
			Action: "created", Repo: "octo-org/arena", Number: 42, IsPR: true, CommentID: 7000004,
			Body: "<!-- arenabot:status job=j-1 -->\n👀 Queued: gin × baseline", Author: "arenabot[bot]", AuthorType: "Bot",
			AuthorAssociation: "NONE", Installation: 3000001,
			HTMLURL: "https://github.com/octo-org/arena/pull/42#issuecomment-7000004",
		},
		"issue_comment.created.crlf.json": Comment{
			Action: "created", Repo: "octo-org/arena", Number: 42, IsPR: true, CommentID: 7000005,
			Body: "Thanks, let's measure it.\r\n\r\n/benchmark-multiple -f gin,echo\r\n", Author: "alice", AuthorType: "User",
			AuthorAssociation: "MEMBER", Installation: 3000001,
			HTMLURL: "https://github.com/octo-org/arena/pull/42#issuecomment-7000005",
		},
		"pull_request.synchronize.json": PullRequest{
			Action: "synchronize", Repo: "octo-org/arena", Number: 42,
			Before:  "1111111111111111111111111111111111111111",
			After:   "2222222222222222222222222222222222222222",
			HeadSHA: "2222222222222222222222222222222222222222", Installation: 3000001,
		},
		"ping.json": Ping{Zen: "Design for failure.", HookID: 9000001},
		"installation.created.json": Installation{
			Action: "created", ID: 3000001, Account: "octo-org",
			Repos: []string{"octo-org/arena", "octo-org/arena-results"},
		},
	}
	wantBot := map[string]bool{"issue_comment.created.bot.json": true}
	for _, tt := range testdataEvents {
		t.Run(tt.file, func(t *testing.T) {
			got, err := Decode(Delivery{ID: "d-1", Event: tt.event, Payload: readTestdata(t, tt.file)})
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(want[tt.file], got); diff != "" {
				t.Errorf("Decode mismatch (-want +got):\n%s", diff)
			}
			if c, ok := got.(Comment); ok && c.FromBot() != wantBot[tt.file] {
				t.Errorf("FromBot() = %v, want %v", c.FromBot(), wantBot[tt.file])
			}
		})
	}
}

// TestDecodeForm checks that a form delivery decodes like the JSON one.
func TestDecodeForm(t *testing.T) {
	body := readTestdata(t, "issue_comment.created.crlf.json")
	form := []byte("payload=" + url.QueryEscape(string(body)))
	d, err := Verifier{Secret: testSecret}.Verify(newRequest(form, "application/x-www-form-urlencoded", "issue_comment", "d-1", Sign(testSecret, form)))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	got, err := Decode(d)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	want, _ := Decode(Delivery{ID: "d-1", Event: "issue_comment", Payload: body})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("form delivery decodes differently (-json +form):\n%s", diff)
	}
}

func TestFromBot(t *testing.T) {
	tests := []struct {
		author, typ string
		want        bool
	}{
		{"alice", "User", false},
		{"arenabot[bot]", "Bot", true},
		{"arenabot[bot]", "User", true},
		{"dependabot", "Bot", true},
		{"bot", "User", false},
		{"robot[bot", "User", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got := (Comment{Author: tt.author, AuthorType: tt.typ}).FromBot(); got != tt.want {
			t.Errorf("Comment{Author: %q, AuthorType: %q}.FromBot() = %v, want %v", tt.author, tt.typ, got, tt.want)
		}
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name, event, payload string
		want                 any
		wantErr              error
	}{
		{name: "other event", event: "check_suite", payload: `{"action":"requested"}`, want: Other{Event: "check_suite"}},
		{name: "installation_repositories is other", event: "installation_repositories", payload: `{"action":"added"}`,
			want: Other{Event: "installation_repositories"}},
		{name: "pull_request null is a plain issue", event: "issue_comment",
			payload: `{"action":"created","issue":{"number":1,"pull_request":null},"comment":{"id":2},"repository":{"full_name":"o/r"}}`,
			want:    Comment{Action: "created", Repo: "o/r", Number: 1, CommentID: 2}},
		{name: "pull_request empty object is a PR", event: "issue_comment",
			payload: `{"action":"created","issue":{"number":1,"pull_request":{}},"comment":{"id":2},"repository":{"full_name":"o/r"}}`,
			want:    Comment{Action: "created", Repo: "o/r", Number: 1, IsPR: true, CommentID: 2}},
		{name: "no installation on a repository hook", event: "pull_request",
			payload: `{"action":"opened","number":3,"pull_request":{"number":3,"head":{"sha":"abc"}},"repository":{"full_name":"o/r"}}`,
			want:    PullRequest{Action: "opened", Repo: "o/r", Number: 3, HeadSHA: "abc"}},
		{name: "pull request number from the object", event: "pull_request",
			payload: `{"action":"opened","pull_request":{"number":3},"repository":{"full_name":"o/r"}}`,
			want:    PullRequest{Action: "opened", Repo: "o/r", Number: 3}},
		{name: "installation without repositories", event: "installation",
			payload: `{"action":"deleted","installation":{"id":5,"account":{"login":"o"}}}`,
			want:    Installation{Action: "deleted", ID: 5, Account: "o"}},

		{name: "not JSON", event: "issue_comment", payload: `{`, wantErr: ErrMalformed},
		{name: "empty", event: "ping", payload: ``, wantErr: ErrMalformed},
		{name: "array", event: "issue_comment", payload: `[]`, wantErr: ErrMalformed},
		{name: "wrong type", event: "issue_comment",
			payload: `{"action":"created","issue":{"number":"1"},"comment":{"id":2},"repository":{"full_name":"o/r"}}`, wantErr: ErrMalformed},
		{name: "null comment", event: "issue_comment", payload: `null`, wantErr: ErrMalformed},
		{name: "comment without id", event: "issue_comment",
			payload: `{"action":"created","issue":{"number":1},"comment":{},"repository":{"full_name":"o/r"}}`, wantErr: ErrMalformed},
		{name: "comment without repository", event: "issue_comment",
			payload: `{"action":"created","issue":{"number":1},"comment":{"id":2}}`, wantErr: ErrMalformed},
		{name: "comment without action", event: "issue_comment",
			payload: `{"issue":{"number":1},"comment":{"id":2},"repository":{"full_name":"o/r"}}`, wantErr: ErrMalformed},
		{name: "pull request without number", event: "pull_request",
			payload: `{"action":"opened","repository":{"full_name":"o/r"}}`, wantErr: ErrMalformed},
		{name: "installation without id", event: "installation", payload: `{"action":"created"}`, wantErr: ErrMalformed},
		{name: "other event, not JSON", event: "push", payload: `nope`, wantErr: ErrMalformed},
		{name: "trailing garbage", event: "ping", payload: `{"zen":"x"} x`, wantErr: ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode(Delivery{ID: "d-1", Event: tt.event, Payload: []byte(tt.payload)})
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("Decode: err = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decode mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
