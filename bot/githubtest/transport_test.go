package githubtest

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTransportFaults: SlowNext holds only the calls it matches; ResetNext breaks the
// connection, before the call is carried out or after.
func TestTransportFaults(t *testing.T) {
	s := newRepo(t)
	s.AddPR(repoName, PR{Number: 1, HeadSHA: "a", HeadRef: "b"})
	s.SlowNext("GET", "/repos/*/*/pulls/*", 1, 300*time.Millisecond)
	start := time.Now()
	wantStatus(t, call(t, s, "GET", "repos/octo/arena/issues/1/comments", nil), http.StatusOK)
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("an unmatched call took %v", d)
	}
	start = time.Now()
	wantStatus(t, call(t, s, "GET", "repos/octo/arena/pulls/1", nil), http.StatusOK)
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("the slowed call took %v, want at least 300ms", d)
	}

	post := func() error {
		req, _ := http.NewRequest("POST", s.URL+"repos/octo/arena/issues/1/comments", strings.NewReader(`{"body":"x"}`))
		resp, err := s.Client().Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return err
	}
	s.ResetNext("POST", "/repos/*/*/issues/*/comments", 1, false)
	if err := post(); err == nil {
		t.Fatal("a reset call answered")
	}
	if n := len(s.Comments(repoName, 1)); n != 0 {
		t.Errorf("%d comments after a reset before the call, want 0", n)
	}
	s.ResetNext("POST", "/repos/*/*/issues/*/comments", 1, true)
	if err := post(); err == nil {
		t.Fatal("a reset call answered")
	}
	if n := len(s.Comments(repoName, 1)); n != 1 {
		t.Errorf("%d comments after a reset after the call, want 1", n)
	}
	var statuses []int
	for _, c := range s.CallsTo("POST", "/repos/octo/arena/issues/1/comments") {
		statuses = append(statuses, c.Status)
	}
	if len(statuses) != 2 || statuses[0] != 0 || statuses[1] != http.StatusCreated {
		t.Errorf("recorded statuses %v, want [0 201]", statuses)
	}

	s.SecondaryLimitNext("POST", "", http.StatusTooManyRequests, 2*time.Second)
	r := call(t, s, "POST", "repos/octo/arena/issues/1/comments", map[string]string{"body": "x"})
	wantStatus(t, r, http.StatusTooManyRequests)
	if got := r.header.Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After = %q, want 2", got)
	}
}
