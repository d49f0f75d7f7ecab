package hook

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/arenabot/arenabot/internal/deptest"
)

var testSecret = []byte("It's a Secret to Everybody")

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{StdOnly: true})
}

// newRequest builds a delivery request; an empty sig leaves the signature header out.
func newRequest(body []byte, contentType, event, delivery, sig string) *http.Request {
	req := httptest.NewRequest("POST", "/webhook", bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if event != "" {
		req.Header.Set(EventHeader, event)
	}
	if delivery != "" {
		req.Header.Set(DeliveryHeader, delivery)
	}
	if sig != "" {
		req.Header.Set(SignatureHeader, sig)
	}
	return req
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSign(t *testing.T) {
	// The example from GitHub's docs, "Validating webhook deliveries".
	got := Sign([]byte("It's a Secret to Everybody"), []byte("Hello, World!"))
	const want = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	if got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}

func TestVerify(t *testing.T) {
	body := readTestdata(t, "issue_comment.created.pr.json")
	good := Sign(testSecret, body)
	form := []byte("payload=" + url.QueryEscape(string(body)))
	const jsonType = "application/json"
	tests := []struct {
		name        string
		body        []byte
		contentType string
		event       string
		delivery    string
		sig         string
		headers     map[string][]string // set after the others; overrides them
		want        Delivery
		wantErr     error
	}{
		{name: "correct signature", body: body, contentType: jsonType, event: "issue_comment", delivery: "d-1", sig: good,
			want: Delivery{ID: "d-1", Event: "issue_comment", Payload: body}},
		{name: "upper-case hex", body: body, contentType: jsonType, event: "issue_comment", delivery: "d-1",
			sig:  "sha256=" + strings.ToUpper(strings.TrimPrefix(good, "sha256=")),
			want: Delivery{ID: "d-1", Event: "issue_comment", Payload: body}},
		{name: "json with charset", body: body, contentType: "application/json; charset=utf-8", event: "issue_comment", delivery: "d-1", sig: good,
			want: Delivery{ID: "d-1", Event: "issue_comment", Payload: body}},
		{name: "json media type in capitals", body: body, contentType: "Application/JSON", event: "issue_comment", delivery: "d-1", sig: good,
			want: Delivery{ID: "d-1", Event: "issue_comment", Payload: body}},
		{name: "form encoded", body: form, contentType: "application/x-www-form-urlencoded", event: "issue_comment", delivery: "d-2", sig: Sign(testSecret, form),
			want: Delivery{ID: "d-2", Event: "issue_comment", Payload: body}},
		{name: "empty body", body: []byte{}, contentType: jsonType, event: "ping", delivery: "d-1", sig: Sign(testSecret, nil),
			want: Delivery{ID: "d-1", Event: "ping"}},

		{name: "missing signature", body: body, contentType: jsonType, event: "issue_comment", delivery: "d-1", wantErr: ErrUnsigned},
		{name: "empty signature", body: body, contentType: jsonType, event: "issue_comment", delivery: "d-1",
			headers: map[string][]string{SignatureHeader: {""}}, wantErr: ErrUnsigned},
		{name: "sha1 header only", body: body, contentType: jsonType, event: "issue_comment", delivery: "d-1",
			headers: map[string][]string{"X-Hub-Signature": {"sha1=0123456789abcdef0123456789abcdef01234567"}}, wantErr: ErrUnsigned},
		{name: "unsigned and no headers", body: body, wantErr: ErrUnsigned},

		{name: "wrong signature", body: body, contentType: jsonType, event: "issue_comment", delivery: "d-1",
			sig: Sign([]byte("another secret"), body), wantErr: ErrBadSignature},
		{name: "signature over a different body", body: body, contentType: jsonType, event: "issue_comment", delivery: "d-1",
			sig: Sign(testSecret, append(bytes.Clone(body), ' ')), wantErr: ErrBadSignature},
		{name: "form signed over the payload, not the raw body", body: form, contentType: "application/x-www-form-urlencoded", event: "issue_comment", delivery: "d-1",
			sig: good, wantErr: ErrBadSignature},
		{name: "truncated hex", body: body, contentType: jsonType, event: "issue_comment", delivery: "d-1", sig: good[:len(good)-2], wantErr: ErrBadSignature},
		{name: "odd hex", body: body, contentType: jsonType, event: "issue_comment", delivery: "d-1", sig: good[:len(good)-1], wantErr: ErrBadSignature},
		{name: "hex too long", body: body, contentType: jsonType, event: "issue_comment", delivery: "d-1", sig: good + "00", wantErr: ErrBadSignature},
		{name: "not hex", body: body, contentType: jsonType, event: "issue_comment", delivery: "d-1", sig: "sha256=" + strings.Repeat("zz", 32), wantErr: ErrBadSignature},
		{name: "sha1= only", body: body, contentType: jsonType, event: "issue_comment", delivery: "d-1", sig: "sha1=", wantErr: ErrBadSignature},
		{name: "sha1 value in the sha256 header", body: body, contentType: jsonType, event: "issue_comment", delivery: "d-1",
			sig: "sha1=" + strings.TrimPrefix(good, "sha256="), wantErr: ErrBadSignature},
		{name: "prefix in capitals", body: body, contentType: jsonType, event: "issue_comment", delivery: "d-1",
			sig: "SHA256=" + strings.TrimPrefix(good, "sha256="), wantErr: ErrBadSignature},
		{name: "no prefix", body: body, contentType: jsonType, event: "issue_comment", delivery: "d-1", sig: strings.TrimPrefix(good, "sha256="), wantErr: ErrBadSignature},
		{name: "two signature headers", body: body, contentType: jsonType, event: "issue_comment", delivery: "d-1",
			headers: map[string][]string{SignatureHeader: {good, good}}, wantErr: ErrBadSignature},
		{name: "bad signature beats missing headers", body: body, sig: Sign([]byte("x"), body), wantErr: ErrBadSignature},

		{name: "missing event", body: body, contentType: jsonType, delivery: "d-1", sig: good, wantErr: ErrMalformed},
		{name: "blank event", body: body, contentType: jsonType, delivery: "d-1", sig: good,
			headers: map[string][]string{EventHeader: {"  "}}, wantErr: ErrMalformed},
		{name: "missing delivery", body: body, contentType: jsonType, event: "issue_comment", sig: good, wantErr: ErrMalformed},
		{name: "missing content type", body: body, event: "issue_comment", delivery: "d-1", sig: good, wantErr: ErrMalformed},
		{name: "other content type", body: body, contentType: "text/plain", event: "issue_comment", delivery: "d-1", sig: good, wantErr: ErrMalformed},
		{name: "unparsable content type", body: body, contentType: "application/json; charset", event: "issue_comment", delivery: "d-1", sig: good, wantErr: ErrMalformed},
		{name: "form without payload", body: []byte("x=1"), contentType: "application/x-www-form-urlencoded", event: "ping", delivery: "d-1",
			sig: Sign(testSecret, []byte("x=1")), wantErr: ErrMalformed},
		{name: "form with two payloads", body: []byte("payload=1&payload=2"), contentType: "application/x-www-form-urlencoded", event: "ping", delivery: "d-1",
			sig: Sign(testSecret, []byte("payload=1&payload=2")), wantErr: ErrMalformed},
		{name: "form with a bad escape", body: []byte("payload=%zz"), contentType: "application/x-www-form-urlencoded", event: "ping", delivery: "d-1",
			sig: Sign(testSecret, []byte("payload=%zz")), wantErr: ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := newRequest(tt.body, tt.contentType, tt.event, tt.delivery, tt.sig)
			for k, vs := range tt.headers {
				req.Header[http.CanonicalHeaderKey(k)] = vs
			}
			got, err := Verifier{Secret: testSecret}.Verify(req)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("Verify: err = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Verify delivery mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVerifyNoSecret(t *testing.T) {
	body := []byte(`{"zen":"x"}`)
	for _, secret := range [][]byte{nil, {}} {
		req := newRequest(body, "application/json", "ping", "d-1", Sign(secret, body))
		if _, err := (Verifier{Secret: secret}).Verify(req); !errors.Is(err, ErrNoSecret) {
			t.Errorf("Verify with secret %q: err = %v, want ErrNoSecret", secret, err)
		}
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func TestVerifyTooLarge(t *testing.T) {
	const limit = 1 << 10
	v := Verifier{Secret: testSecret, MaxBody: limit}
	tests := []struct {
		name          string
		size          int64
		contentLength int64 // -1: unknown, as with chunked encoding
		wantErr       error
		maxRead       int64
	}{
		{name: "at the limit", size: limit, contentLength: limit, maxRead: limit},
		{name: "at the limit, length unknown", size: limit, contentLength: -1, maxRead: limit},
		{name: "Content-Length over the limit", size: 100 * limit, contentLength: 100 * limit, wantErr: ErrTooLarge, maxRead: 0},
		{name: "length unknown, body over the limit", size: 100 * limit, contentLength: -1, wantErr: ErrTooLarge, maxRead: limit + 1},
		{name: "Content-Length lies low", size: 100 * limit, contentLength: 10, wantErr: ErrTooLarge, maxRead: limit + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := bytes.Repeat([]byte{' '}, int(tt.size))
			cr := &countingReader{r: bytes.NewReader(body)}
			req := newRequest(nil, "application/json", "ping", "d-1", Sign(testSecret, body))
			req.Body = io.NopCloser(cr)
			req.ContentLength = tt.contentLength
			_, err := v.Verify(req)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("Verify: err = %v, want %v", err, tt.wantErr)
			}
			if cr.n > tt.maxRead {
				t.Errorf("Verify read %d bytes, want at most %d", cr.n, tt.maxRead)
			}
		})
	}
}

func TestVerifyDefaultLimit(t *testing.T) {
	req := newRequest(nil, "application/json", "ping", "d-1", Sign(testSecret, nil))
	req.ContentLength = MaxBody + 1
	req.Body = io.NopCloser(strings.NewReader("")) // never read
	if _, err := (Verifier{Secret: testSecret}).Verify(req); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Verify with Content-Length MaxBody+1: err = %v, want ErrTooLarge", err)
	}
}

// A pausedReader returns its bytes, then err, as a connection's body does whose sender
// stops sending.
type pausedReader struct {
	data []byte
	err  error
}

func (p *pausedReader) Read(b []byte) (int, error) {
	if len(p.data) == 0 {
		return 0, p.err
	}
	n := copy(b, p.data)
	p.data = p.data[n:]
	return n, nil
}

// TestVerifyGrowsWithTheBytes: a body that declares the whole limit and sends 100 bytes
// costs about what arrived, not the declared length (hook.go grew its buffer to the
// Content-Length before reading a byte: 200 clients declaring 25 MB took serve to 5 GB).
// A read that fails on the connection's deadline is ErrSlowBody (408); one that fails
// otherwise, a body cut short, is ErrMalformed (400).
func TestVerifyGrowsWithTheBytes(t *testing.T) {
	const limit = 64 << 20
	v := Verifier{Secret: testSecret, MaxBody: limit}
	deadline := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	for _, tt := range []struct {
		readErr error
		want    error
		status  int
	}{
		{deadline, ErrSlowBody, http.StatusRequestTimeout},
		{io.ErrUnexpectedEOF, ErrMalformed, http.StatusBadRequest},
	} {
		req := newRequest(nil, "application/json", "issue_comment", "d-1", Sign(testSecret, nil))
		req.Body = io.NopCloser(&pausedReader{data: bytes.Repeat([]byte(" "), 100), err: tt.readErr})
		req.ContentLength = limit
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := v.Verify(req)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, tt.want) || Status(err) != tt.status {
			t.Errorf("read error %v: Verify = %v (status %d), want %v (%d)", tt.readErr, err, Status(err), tt.want, tt.status)
		}
		if !strings.Contains(fmt.Sprint(err), "100 of 67108864 bytes") {
			t.Errorf("read error %v: Verify = %v, want it to say how much of the body arrived", tt.readErr, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("Verify of a body declaring %d bytes and sending 100 allocated %d bytes, want under 1 MiB", limit, grew)
		}
	}
}

// TestVerifyIgnoredEvent: with Verifier.Events set, a signed-looking delivery of another
// event is ErrIgnored (202) with its body unread; an unsigned one is still refused, and a
// blank event is verified as before (and then refused as malformed).
func TestVerifyIgnoredEvent(t *testing.T) {
	v := Verifier{Secret: testSecret, Events: []string{"issue_comment", "ping"}}
	body := []byte(`{"ref":"refs/heads/main"}`)
	for _, tt := range []struct {
		name, event, sig string
		want             error
		read             bool
	}{
		{"ignored", "push", Sign(testSecret, body), ErrIgnored, false},
		{"ignored, forged", "push", "sha256=" + strings.Repeat("0", 64), ErrIgnored, false},
		{"ignored, unsigned", "push", "", ErrUnsigned, false},
		{"listed", "ping", Sign(testSecret, body), nil, true},
		{"blank event", " ", Sign(testSecret, body), ErrMalformed, true},
	} {
		cr := &countingReader{r: bytes.NewReader(body)}
		req := newRequest(nil, "application/json", tt.event, "d-1", tt.sig)
		req.Body = io.NopCloser(cr)
		req.ContentLength = 25_000_000
		if tt.read {
			req.ContentLength = int64(len(body))
		}
		_, err := v.Verify(req)
		if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
			t.Errorf("%s: Verify = %v, want %v", tt.name, err, tt.want)
		}
		if read := cr.n > 0; read != tt.read {
			t.Errorf("%s: read %d bytes of the body, want read=%v", tt.name, cr.n, tt.read)
		}
	}
}

func TestStatus(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, 200},
		{ErrUnsigned, 401},
		{ErrBadSignature, 401},
		{ErrTooLarge, 413},
		{ErrMalformed, 400},
		{ErrSlowBody, 408},
		{ErrIgnored, 202},
		{ErrNoSecret, 500},
		{errors.New("read body: connection reset"), 500},
	}
	for _, tt := range tests {
		if got := Status(tt.err); got != tt.want {
			t.Errorf("Status(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// TestStatusOfVerify checks the mapping through real Verify errors, which wrap the
// sentinels.
func TestStatusOfVerify(t *testing.T) {
	body := []byte(`{}`)
	v := Verifier{Secret: testSecret, MaxBody: 1}
	tests := []struct {
		name string
		req  *http.Request
		want int
	}{
		{"unsigned", newRequest(body, "application/json", "ping", "d-1", ""), 401},
		{"bad signature", newRequest(body, "application/json", "ping", "d-1", "sha256=00"), 401},
		{"too large", newRequest(body, "application/json", "ping", "d-1", Sign(testSecret, body)), 413},
		{"malformed", newRequest([]byte("{"), "application/json", "", "d-1", Sign(testSecret, []byte("{"))), 400},
	}
	for _, tt := range tests {
		_, err := v.Verify(tt.req)
		if got := Status(err); got != tt.want {
			t.Errorf("%s: Status(%v) = %d, want %d", tt.name, err, got, tt.want)
		}
	}
}
