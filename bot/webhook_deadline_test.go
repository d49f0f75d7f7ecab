package bot

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/hook"
	"github.com/arenabot/arenabot/queue"
)

// slowSeen is a queue whose SeenDelivery takes delay, and fails if its context ends
// meanwhile, as a call to a slow Redis does.
type slowSeen struct {
	queue.Queue
	delay time.Duration
}

func (q slowSeen) SeenDelivery(ctx context.Context, id string, ttl time.Duration) (bool, error) {
	select {
	case <-ctx.Done():
		return false, context.Cause(ctx)
	case <-time.After(q.delay):
	}
	return q.Queue.SeenDelivery(ctx, id, ttl)
}

// TestWebhookStoresPastTheReadDeadline: behind a server whose ReadTimeout bounds the
// body (serve's does), a delivery whose recording outlasts that deadline is still
// accepted: net/http clears the read deadline once the body has been read to its end,
// and nothing in the webhook sets one again. A read deadline still pending while the
// delivery is recorded would fail the server's background read and cancel the request's
// context on the way (503: found by setting one after Verify).
func TestWebhookStoresPastTheReadDeadline(t *testing.T) {
	e := setup(t)
	const readTimeout = 200 * time.Millisecond
	e.bot = New(Config{WebhookSecret: []byte(secret), Now: e.clock}, e.bot.Intake.gh, slowSeen{e.q, 3 * readTimeout}, nil)
	srv := httptest.NewUnstartedServer(e.bot.Webhook())
	srv.Config.ReadTimeout = readTimeout
	srv.Start()
	defer srv.Close()

	id := e.gh.AddComment(repo, prNum, "bob", secCommand)
	payload := secComment(t, "created", prNum, true, id, "bob", "User", secCommand)
	req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(payload))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(hook.EventHeader, "issue_comment")
	req.Header.Set(hook.DeliveryHeader, "d-slow-store")
	req.Header.Set(hook.SignatureHeader, hook.Sign([]byte(secret), payload))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("a delivery recorded %v after its body, past the %v read deadline, answered %d, want 202", 3*readTimeout, readTimeout, resp.StatusCode)
	}
}
