package bot

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/bot/githubtest"
)

// appClient is a ghapi client of the fake with App auth, which listing deliveries needs.
func appClient(t *testing.T, e *env) *ghapi.Client {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	c, err := ghapi.New(ghapi.Config{BaseURL: e.gh.URL, AppID: 1234, PrivateKey: pemKey, BotLogin: githubtest.BotLogin, WriteSpacing: -1, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRecoverMissedDeliveries: comments GitHub could not deliver while the bot was down are
// taken from the App's delivery list, each once: one delivered while the bot was up and one
// failed delivery that was redelivered with success are not taken again; one older than
// the window is left; a second pass finds nothing; the requests are made as from the webhook.
func TestRecoverMissedDeliveries(t *testing.T) {
	e := setup(t)
	e.gh.SetClock(e.clock)
	e.run()
	live := httptest.NewServer(e.hook)
	t.Cleanup(live.Close)
	const down = "http://127.0.0.1:1/webhook" // nothing listens there
	send := func(url, guid, user string) int64 {
		body := "/benchmark -f nethttp -t baseline"
		id := e.gh.AddComment(repo, prNum, user, body)
		e.gh.Deliver(url, []byte(secret), "issue_comment", guid, commentPayload(t, id, user, "User", body))
		return id
	}
	old := send(down, "g-old", "bob")
	e.advance(2 * time.Hour)
	up := send(live.URL, "g-up", "bob")
	e.wait()
	var missed []int64
	for i := range 3 {
		missed = append(missed, send(down, fmt.Sprintf("g-missed-%d", i), "bob"))
		e.advance(time.Second)
	}
	retried := send(down, "g-retried", "bob") // failed, then delivered again with success
	e.gh.Deliver(live.URL, []byte(secret), "issue_comment", "g-retried", commentPayload(t, retried, "bob", "User", "/benchmark -f nethttp -t baseline"))
	e.wait()
	e.gh.Deliver(down, []byte(secret), "check_run", "g-other", []byte(`{"action":"completed"}`)) // not an event the bot acts on

	gh := appClient(t, e)
	n, err := NewRecovery(e.bot.Intake, gh).Recover(t.Context(), time.Hour)
	if err != nil || n != len(missed) {
		t.Fatalf("Recover = %d, %v; want the %d missed comments", n, err, len(missed))
	}
	e.wait()
	ids := map[string]int{}
	for _, j := range e.records() {
		ids[j.ID]++
	}
	for _, id := range append(slices.Clone(missed), up, retried) {
		if ids[requestID(id)] != 1 {
			t.Errorf("comment %d: %d requests; want one", id, ids[requestID(id)])
		}
	}
	if ids[requestID(old)] != 0 {
		t.Errorf("the comment older than the window was taken: %v", ids)
	}
	if n, err := NewRecovery(e.bot.Intake, gh).Recover(t.Context(), time.Hour); err != nil || n != 0 {
		t.Errorf("second pass = %d, %v; want nothing left", n, err)
	}
	if len(e.records()) != len(missed)+2 {
		t.Errorf("%d records; want %d", len(e.records()), len(missed)+2)
	}
}

// TestRecoverNeedsAnApp: with token auth the deliveries cannot be listed, and Recover says
// how to fix it.
func TestRecoverNeedsAnApp(t *testing.T) {
	e := setup(t)
	c, _ := ghapi.New(ghapi.Config{BaseURL: e.gh.URL, Token: "t", BotLogin: githubtest.BotLogin})
	if _, err := NewRecovery(e.bot.Intake, c).Recover(t.Context(), time.Hour); err == nil || !errors.Is(err, ghapi.ErrNoApp) {
		t.Errorf("Recover with a token: %v; want ErrNoApp", err)
	}
}
