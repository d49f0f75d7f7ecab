package ghapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/go-github/v60/github"
)

// ErrNoApp is returned by HookDeliveries and HookPayload with token auth: an App's webhook
// deliveries are listed with the App's own JSON web token.
var ErrNoApp = errors.New("listing webhook deliveries needs GitHub App auth (ARENA_GITHUB_APP_ID and ARENA_GITHUB_PRIVATE_KEY_FILE)")

// A HookDelivery is one attempt GitHub made to deliver a webhook to the App.
type HookDelivery struct {
	ID          int64  // the delivery's id in the REST API
	GUID        string // its X-GitHub-Delivery header, the id the webhook handler de-duplicates on
	Event       string // "issue_comment"
	Action      string // "created"
	StatusCode  int    // what the receiver answered; 0 when it could not be reached
	DeliveredAt time.Time
	Redelivery  bool
}

// HookDeliveries lists the App's webhook deliveries delivered at or after since, newest
// first, at most limit of them (GET /app/hook/deliveries, paged by cursor).
func (c *Client) HookDeliveries(ctx context.Context, since time.Time, limit int) ([]HookDelivery, error) {
	gh, err := c.appClient()
	if err != nil {
		return nil, err
	}
	var out []HookDelivery
	opts := &github.ListCursorOptions{PerPage: 100}
	for {
		page, resp, err := gh.Apps.ListHookDeliveries(ctx, opts)
		if err != nil {
			return out, wrap(err, "list webhook deliveries")
		}
		for _, d := range page {
			hd := HookDelivery{
				ID: d.GetID(), GUID: d.GetGUID(), Event: d.GetEvent(), Action: d.GetAction(),
				StatusCode: d.GetStatusCode(), DeliveredAt: d.GetDeliveredAt().Time, Redelivery: d.GetRedelivery(),
			}
			if hd.DeliveredAt.Before(since) || len(out) >= limit {
				return out, nil // newest first: the rest are older still
			}
			out = append(out, hd)
		}
		if resp.Cursor == "" || len(page) == 0 {
			return out, nil
		}
		opts.Cursor = resp.Cursor
	}
}

// HookPayload returns the event name and the JSON payload GitHub sent in one delivery
// (GET /app/hook/deliveries/{id}).
func (c *Client) HookPayload(ctx context.Context, id int64) (event string, payload []byte, err error) {
	gh, err := c.appClient()
	if err != nil {
		return "", nil, err
	}
	d, _, err := gh.Apps.GetHookDelivery(ctx, id)
	if err != nil {
		return "", nil, wrap(err, "get webhook delivery %d", id)
	}
	if d.Request == nil || d.Request.RawPayload == nil {
		return "", nil, fmt.Errorf("webhook delivery %d has no payload", id)
	}
	return d.GetEvent(), []byte(*d.Request.RawPayload), nil
}

// appKey keys the App's own client in Client.clients; installations are positive.
const appKey = -1

// appClient returns the go-github client authenticated as the App itself (its JSON web
// token), with the same retries and pacing as the installations' clients.
func (c *Client) appClient() (*github.Client, error) {
	if c.apps == nil {
		return nil, ErrNoApp
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if g, ok := c.clients[appKey]; ok {
		return g, nil
	}
	g := github.NewClient(&http.Client{Transport: &transport{c: c, next: c.apps, gate: c.gate(appKey)}})
	u := *c.base
	g.BaseURL, g.UploadURL = &u, &u
	c.clients[appKey] = g
	return g, nil
}
