// Package hook verifies and decodes GitHub webhook deliveries. It does no I/O besides
// reading the request body: the HTTP handler calls [Verifier.Verify], maps an error to a
// status with [Status] (401, 413, 408 or 400, or 202 for an ignored event, with no side
// effect), and hands the [Delivery] to [Decode] for a typed event.
//
// # Verification
//
// Verify checks, in this order, so that an unauthenticated caller learns nothing about
// the rest of its request:
//
//  1. The secret is set (else [ErrNoSecret]; serve refuses to start without one).
//  2. Exactly one X-Hub-Signature-256 header is present and not empty (else
//     [ErrUnsigned]). The sha1 header X-Hub-Signature alone is not accepted: it counts as
//     unsigned.
//  3. Its value is "sha256=" followed by 64 hex digits (else [ErrBadSignature]). The
//     prefix is matched exactly. The hex digits are decoded before comparing, so upper
//     and lower case are both accepted (GitHub sends lower case; go-github's
//     ValidateSignature behaves the same way).
//  4. When [Verifier.Events] is set, the X-GitHub-Event header names one of them (else
//     [ErrIgnored], 202, without reading the body: a delivery of an event the caller does
//     not act on costs no memory, and its sender, GitHub or not, learns only that it is
//     ignored; an unsigned one was refused with 401 above).
//  5. The body is at most MaxBody bytes (else [ErrTooLarge]). A larger Content-Length is
//     refused without reading; otherwise at most MaxBody+1 bytes are read. The buffer
//     grows with the bytes that arrive, never from the declared length, so a client that
//     declares a large body and sends it slowly holds only what it sent. A read that
//     fails on the connection's read deadline is [ErrSlowBody] (408); the caller sets
//     that deadline (serve's http.Server ReadTimeout).
//  6. The HMAC-SHA256 of the exact body bytes, keyed with the secret, equals the
//     signature, compared with [hmac.Equal] (else [ErrBadSignature]).
//  7. X-GitHub-Event and X-GitHub-Delivery are present and not blank, and the
//     Content-Type is application/json or application/x-www-form-urlencoded, with any
//     parameters (else [ErrMalformed]). For the form type the HMAC covers the raw form
//     body and the payload is its single "payload" field.
//
// Verify does not check that the payload is JSON; [Decode] does.
package hook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
)

// MaxBody is the default limit on a delivery's body, 2 MiB. GitHub caps payloads at 25 MB,
// but the events the bot reads are far smaller: a real issue_comment or pull_request
// delivery is 4–40 KB (a pull_request payload's pull request object alone is about
// 30 KB), and their free text is bounded by GitHub's limit of 65,536 characters per body.
// The largest is an edited comment, which carries three bodies (the issue's, the
// comment's and its previous text): even with every character sent as a six-byte \uXXXX
// escape that is 3 × 65,536 × 6 ≈ 1.2 MB, plus the tens of KB around it. The
// deliveries that could be larger (push, installation on thousands of repositories) are
// events the bot ignores. A delivery refused with 413 is listed as failed by GitHub, and
// the recovery of missed deliveries fetches a pull_request or issue_comment one through
// the API instead.
const MaxBody = 2 << 20

// Header names GitHub sends with each delivery.
const (
	SignatureHeader = "X-Hub-Signature-256"
	EventHeader     = "X-GitHub-Event"
	DeliveryHeader  = "X-GitHub-Delivery"
)

// Errors returned by Verify and Decode wrap one of these; check them with errors.Is.
var (
	// ErrNoSecret: the Verifier has no secret. A configuration error, not the caller's.
	ErrNoSecret = errors.New("webhook secret not set")
	// ErrUnsigned: the request carries no X-Hub-Signature-256 header (401).
	ErrUnsigned = errors.New("unsigned delivery")
	// ErrBadSignature: the signature is malformed or does not match the body (401).
	ErrBadSignature = errors.New("bad signature")
	// ErrTooLarge: the body is larger than the limit (413).
	ErrTooLarge = errors.New("delivery too large")
	// ErrMalformed: a header, the content type, the form or the payload is unusable, or
	// the body ended before its Content-Length (400).
	ErrMalformed = errors.New("malformed delivery")
	// ErrSlowBody: the body did not arrive before the connection's read deadline (408).
	ErrSlowBody = errors.New("delivery body too slow")
	// ErrIgnored: the delivery's event is not one of Verifier.Events; its body was not
	// read (202).
	ErrIgnored = errors.New("event ignored")
)

// Status maps an error from Verify or Decode to the HTTP status the webhook answers
// with: 401 for ErrUnsigned and ErrBadSignature, 413 for ErrTooLarge, 408 for
// ErrSlowBody, 400 for ErrMalformed, 202 for ErrIgnored, 200 for nil and 500 for
// anything else (ErrNoSecret included).
func Status(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, ErrIgnored):
		return http.StatusAccepted
	case errors.Is(err, ErrSlowBody):
		return http.StatusRequestTimeout
	case errors.Is(err, ErrUnsigned), errors.Is(err, ErrBadSignature):
		return http.StatusUnauthorized
	case errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrMalformed):
		return http.StatusBadRequest
	default:
		return http.StatusInternalServerError
	}
}

// A Verifier checks deliveries signed with one webhook secret.
type Verifier struct {
	Secret []byte
	// MaxBody limits the body in bytes; zero or negative means the package's MaxBody.
	MaxBody int64
	// Events, when not nil, are the events the caller acts on: a delivery of any other
	// (its X-GitHub-Event not blank and not listed) is refused with ErrIgnored before
	// its body is read.
	Events []string
}

// A Delivery is one verified webhook delivery.
type Delivery struct {
	ID      string // X-GitHub-Delivery, a GUID; the key for de-duplication
	Event   string // X-GitHub-Event, e.g. "issue_comment"
	Payload []byte // the JSON payload (for a form delivery, its "payload" field)
}

// Sign computes the X-Hub-Signature-256 header value for a body: "sha256=" and the
// lower-case hex HMAC-SHA256 of body keyed with secret.
func Sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify reads r's body, checks its signature and headers, and returns the delivery.
// The package documentation lists the checks. Verify does not close r.Body.
func (v Verifier) Verify(r *http.Request) (Delivery, error) {
	if len(v.Secret) == 0 {
		return Delivery{}, ErrNoSecret
	}
	want, err := parseSignature(r.Header.Values(SignatureHeader))
	if err != nil {
		return Delivery{}, err
	}
	if ev := strings.TrimSpace(r.Header.Get(EventHeader)); v.Events != nil && ev != "" && !slices.Contains(v.Events, ev) {
		return Delivery{}, fmt.Errorf("verify delivery: %w: %s %q, body not read", ErrIgnored, EventHeader, ev)
	}
	body, err := v.read(r)
	if err != nil {
		return Delivery{}, err
	}
	mac := hmac.New(sha256.New, v.Secret)
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil), want) {
		return Delivery{}, fmt.Errorf("verify delivery: %w: HMAC does not match the body", ErrBadSignature)
	}

	d := Delivery{
		ID:    strings.TrimSpace(r.Header.Get(DeliveryHeader)),
		Event: strings.TrimSpace(r.Header.Get(EventHeader)),
	}
	if d.Event == "" {
		return Delivery{}, fmt.Errorf("verify delivery: %w: no %s header", ErrMalformed, EventHeader)
	}
	if d.ID == "" {
		return Delivery{}, fmt.Errorf("verify delivery: %w: no %s header", ErrMalformed, DeliveryHeader)
	}
	d.Payload, err = payload(r.Header.Get("Content-Type"), body)
	if err != nil {
		return Delivery{}, fmt.Errorf("verify delivery %s: %w", d.ID, err)
	}
	return d, nil
}

// parseSignature returns the MAC a signature header claims.
func parseSignature(values []string) ([]byte, error) {
	switch {
	case len(values) == 0 || len(values) == 1 && values[0] == "":
		return nil, fmt.Errorf("verify delivery: %w: no %s header", ErrUnsigned, SignatureHeader)
	case len(values) > 1:
		return nil, fmt.Errorf("verify delivery: %w: %d %s headers", ErrBadSignature, len(values), SignatureHeader)
	}
	digits, ok := strings.CutPrefix(values[0], "sha256=")
	if !ok {
		return nil, fmt.Errorf("verify delivery: %w: %s does not start with sha256=", ErrBadSignature, SignatureHeader)
	}
	mac, err := hex.DecodeString(digits)
	if err != nil || len(mac) != sha256.Size {
		return nil, fmt.Errorf("verify delivery: %w: %s is not %d hex digits", ErrBadSignature, SignatureHeader, 2*sha256.Size)
	}
	return mac, nil
}

// read reads the body, refusing more than the limit. Its buffer grows as bytes arrive
// (io.ReadAll), never from the declared Content-Length, which the client chose.
func (v Verifier) read(r *http.Request) ([]byte, error) {
	limit := v.MaxBody
	if limit <= 0 {
		limit = MaxBody
	}
	if r.ContentLength > limit {
		return nil, fmt.Errorf("verify delivery: %w: Content-Length %d is over the limit of %d bytes", ErrTooLarge, r.ContentLength, limit)
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, fmt.Errorf("verify delivery: %w: %d of %s bytes arrived before the read deadline", ErrSlowBody, len(body), declared(r.ContentLength))
	case err != nil:
		return nil, fmt.Errorf("verify delivery: %w: read body after %d of %s bytes: %v", ErrMalformed, len(body), declared(r.ContentLength), err)
	case int64(len(body)) > limit:
		return nil, fmt.Errorf("verify delivery: %w: body is over the limit of %d bytes", ErrTooLarge, limit)
	}
	return body, nil
}

// declared describes a request's Content-Length for an error.
func declared(n int64) string {
	if n < 0 {
		return "an unknown number of"
	}
	return strconv.FormatInt(n, 10)
}

// payload extracts the JSON payload from a body of the given content type.
func payload(contentType string, body []byte) ([]byte, error) {
	if contentType == "" {
		return nil, fmt.Errorf("%w: no Content-Type", ErrMalformed)
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, fmt.Errorf("%w: Content-Type %q: %v", ErrMalformed, contentType, err)
	}
	switch mt {
	case "application/json":
		return body, nil
	case "application/x-www-form-urlencoded":
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, fmt.Errorf("%w: form body: %v", ErrMalformed, err)
		}
		p := form["payload"]
		if len(p) != 1 {
			return nil, fmt.Errorf("%w: form body has %d payload fields, want 1", ErrMalformed, len(p))
		}
		return []byte(p[0]), nil
	default:
		return nil, fmt.Errorf("%w: Content-Type %q is neither application/json nor application/x-www-form-urlencoded", ErrMalformed, mt)
	}
}
