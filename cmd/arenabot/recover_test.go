package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeRecoversMissedComments stops serve, sends comments while it is down (GitHub
// records the failed deliveries and never sends them again by itself), starts it again,
// and every comment is answered once: the recovery reads the App's delivery list at start.
// A comment answered before the stop is not answered again.
func TestServeRecoversMissedComments(t *testing.T) {
	l := newLoop(t, []string{"nethttp"}, nil)
	l.redisURL = "" // the embedded store, kept across the restart in stateDir
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "app.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		t.Fatal(err)
	}
	// ARENA_REPOS unset: serve serves the one repository the App is installed on.
	l.envOver = map[string]string{"ARENA_GITHUB_TOKEN": "", "ARENA_GITHUB_APP_ID": "1234", "ARENA_GITHUB_PRIVATE_KEY_FILE": keyFile, "ARENA_REPOS": ""}
	l.gh.AddInstallation(1, loopRepo)

	l.startServe()
	before := l.deliverComment("maintainer", "/benchmark-help")
	l.waitReplies(map[int64]int{before: 1}, time.Minute)
	down := l.botURL
	l.stopServe()

	var missed []int64
	for range 3 {
		missed = append(missed, l.deliverCommentTo(down, "maintainer", "/benchmark-help"))
	}
	for _, d := range l.gh.Deliveries()[1:] {
		if d.StatusCode != 0 {
			t.Fatalf("delivery %s while serve was down answered %d; want it failed", d.GUID, d.StatusCode)
		}
	}
	l.startServe()
	want := map[int64]int{before: 1}
	for _, id := range missed {
		want[id] = 1
	}
	l.waitReplies(want, time.Minute)
	time.Sleep(time.Second) // a second reply would come now
	l.waitReplies(want, time.Second)
	if !strings.Contains(l.logs.String(), "missed webhook recovered") {
		t.Error("the log does not say which deliveries were recovered")
	}
}

// deliverComment adds a comment on the PR and has the fake GitHub deliver its webhook to
// serve, as for an App installation (installation 77).
func (l *loop) deliverComment(user, body string) int64 {
	return l.deliverCommentTo(l.botURL, user, body)
}

func (l *loop) deliverCommentTo(botURL, user, body string) int64 {
	l.t.Helper()
	id := l.gh.AddComment(loopRepo, loopPR, user, body)
	payload := l.commentPayload(id, user, body, 77)
	l.gh.Deliver(botURL+"/webhook", []byte(loopSecret), "issue_comment", fmt.Sprintf("delivery-%d", id), payload)
	return id
}

// waitReplies waits until each comment in want has exactly that many replies of the bot,
// and fails if one has more.
func (l *loop) waitReplies(want map[int64]int, timeout time.Duration) {
	l.t.Helper()
	l.waitFor("the replies", timeout, func() bool {
		ok := true
		for id, n := range want {
			got := 0
			for _, c := range l.gh.Comments(loopRepo, loopPR) {
				if strings.Contains(c.Body, fmt.Sprintf("<!-- arenabot:reply comment=%d -->", id)) {
					got++
				}
			}
			if got > n {
				l.t.Fatalf("comment %d has %d replies; want %d:\n%s", id, got, n, l.dumpComments())
			}
			ok = ok && got == n
		}
		return ok
	})
}
