package githubtest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// A Delivery is one webhook delivery the fake made with Deliver, as GitHub lists an App's
// deliveries: what it sent and the status code the receiver answered (0 when it could not
// be reached).
type Delivery struct {
	ID          int64
	GUID        string // the X-GitHub-Delivery header
	Event       string // the X-GitHub-Event header
	Action      string // the payload's "action"
	StatusCode  int
	Status      string // "OK", or why it failed
	DeliveredAt time.Time
	Payload     []byte
}

// Deliver sends a webhook to url as GitHub does (signed with secret, with the event and
// delivery headers) and records the delivery for GET /app/hook/deliveries, whatever the
// outcome: a receiver that is down gives status code 0, as GitHub records a failed
// delivery. It returns the receiver's status code.
func (s *Server) Deliver(url string, secret []byte, event, guid string, payload []byte) (int, error) {
	var action struct {
		Action string `json:"action"`
	}
	_ = json.Unmarshal(payload, &action)
	d := &Delivery{GUID: guid, Event: event, Action: action.Action, Payload: bytes.Clone(payload)}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", guid)
	mac := hmac.New(sha256.New, secret)
	mac.Write(payload)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		d.StatusCode, d.Status = resp.StatusCode, http.StatusText(resp.StatusCode)
	} else {
		d.Status = "failed to connect to host"
	}
	s.mu.Lock()
	s.nextID++
	d.ID, d.DeliveredAt = s.nextID, s.now()
	s.deliveries = append(s.deliveries, d)
	s.mu.Unlock()
	return d.StatusCode, err
}

// Deliveries returns the recorded deliveries, oldest first.
func (s *Server) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Delivery, len(s.deliveries))
	for i, d := range s.deliveries {
		out[i] = *d
	}
	return out
}

// hookDeliveries answers GET /app/hook/deliveries (newest first, paged with per_page and
// an opaque cursor in the Link header's next URL, here the next delivery's ID) and GET
// /app/hook/deliveries/{id} (with the request's headers and payload). Only an App's JWT may
// call them.
func (s *Server) hookDeliveries(req *http.Request, rest []string) *response {
	if !appJWT(req) {
		return answer(http.StatusUnauthorized, map[string]any{"message": "A JSON web token could not be decoded", "documentation_url": docsBase, "status": "401"})
	}
	if req.Method != http.MethodGet {
		return notFound()
	}
	if len(rest) == 1 {
		id, err := strconv.ParseInt(rest[0], 10, 64)
		if err != nil {
			return notFound()
		}
		for _, d := range s.deliveries {
			if d.ID == id {
				j := deliveryJSON(d)
				j["request"] = map[string]any{
					"headers": map[string]string{"X-GitHub-Event": d.Event, "X-GitHub-Delivery": d.GUID, "Content-Type": "application/json"},
					"payload": json.RawMessage(d.Payload),
				}
				return answer(http.StatusOK, j)
			}
		}
		return notFound()
	}
	if len(rest) != 0 {
		return notFound()
	}
	q := req.URL.Query()
	per, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || per <= 0 {
		per = 30
	}
	per = min(per, 100)
	start := len(s.deliveries) - 1 // newest first
	if c := q.Get("cursor"); c != "" {
		id, err := strconv.ParseInt(c, 10, 64)
		if err != nil {
			return answer(http.StatusUnprocessableEntity, errorBody("Invalid cursor", docsBase))
		}
		for start >= 0 && s.deliveries[start].ID > id {
			start--
		}
	}
	var page []map[string]any
	i := start
	for ; i >= 0 && len(page) < per; i-- {
		page = append(page, deliveryJSON(s.deliveries[i]))
	}
	r := answer(http.StatusOK, page)
	if i >= 0 {
		q.Set("cursor", strconv.FormatInt(s.deliveries[i].ID, 10))
		q.Set("per_page", strconv.Itoa(per))
		if r.header == nil {
			r.header = http.Header{}
		}
		r.header.Set("Link", fmt.Sprintf("<%s%s?%s>; rel=%q", strings.TrimSuffix(s.srv.URL, "/"), req.URL.Path, q.Encode(), "next"))
	}
	return r
}

// appJWT reports whether the request carries a bearer JSON web token, as an App
// authenticates (three dot-separated parts), not an installation or user token.
func appJWT(req *http.Request) bool {
	scheme, tok, _ := strings.Cut(req.Header.Get("Authorization"), " ")
	return strings.EqualFold(scheme, "bearer") && strings.Count(tok, ".") == 2
}

func deliveryJSON(d *Delivery) map[string]any {
	return map[string]any{
		"id": d.ID, "guid": d.GUID, "delivered_at": d.DeliveredAt.UTC().Format(time.RFC3339),
		"redelivery": false, "duration": 0.05, "status": d.Status, "status_code": d.StatusCode,
		"event": d.Event, "action": d.Action, "installation_id": nil, "repository_id": nil,
	}
}
