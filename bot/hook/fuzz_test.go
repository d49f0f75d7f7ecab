package hook

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzVerifyDecode feeds Verify arbitrary bodies, signatures and content types. Properties:
// Verify never panics; it never accepts a signature other than Sign(secret, body) (up to
// the case of the hex digits); a correctly signed body is accepted unless its headers or
// form are malformed; and Decode never panics on an accepted payload, and returns one of
// the five event types or an error.
func FuzzVerifyDecode(f *testing.F) {
	for _, tt := range testdataEvents {
		body := readTestdata(f, tt.file)
		f.Add(tt.event, body, Sign(testSecret, body), false)
		f.Add(tt.event, body, Sign([]byte("wrong"), body), false)
		form := []byte("payload=" + strings.ReplaceAll(string(body), "&", "%26"))
		f.Add(tt.event, form, Sign(testSecret, form), true)
	}
	f.Add("ping", []byte(`{"zen":"x","hook_id":1}`), "sha256=", false)
	f.Add("push", []byte(`{}`), "", false)

	v := Verifier{Secret: testSecret, MaxBody: 1 << 20}
	f.Fuzz(func(t *testing.T, event string, body []byte, sig string, form bool) {
		contentType := "application/json"
		if form {
			contentType = "application/x-www-form-urlencoded"
		}
		check := func(sig string) {
			req := newRequest(body, contentType, "", "d-1", sig)
			req.Header.Set(EventHeader, event)
			d, err := v.Verify(req)
			if err != nil {
				return
			}
			if want := Sign(testSecret, body); !strings.EqualFold(sig, want) {
				t.Fatalf("Verify accepted signature %q for a body whose signature is %q", sig, want)
			}
			if !form && !bytes.Equal(d.Payload, body) {
				t.Fatalf("Verify returned payload %q, want the body %q", d.Payload, body)
			}
			decoded, err := Decode(d)
			if err != nil {
				return
			}
			switch decoded.(type) {
			case Comment, PullRequest, Ping, Installation:
				if !json.Valid(d.Payload) {
					t.Fatalf("Decode(%s, %q) accepted invalid JSON", d.Event, d.Payload)
				}
			case Other:
			default:
				t.Fatalf("Decode returned %T", decoded)
			}
		}
		check(sig)

		good := Sign(testSecret, body)
		check(good)
		if !form && strings.TrimSpace(event) != "" && int64(len(body)) <= v.MaxBody {
			req := newRequest(body, contentType, "", "d-1", good)
			req.Header.Set(EventHeader, event)
			if _, err := v.Verify(req); err != nil {
				t.Fatalf("Verify rejected a correctly signed JSON delivery of event %q: %v", event, err)
			}
		}
	})
}

// BenchmarkVerify measures verifying and decoding a signed 8 KB issue_comment delivery.
func BenchmarkVerify(b *testing.B) {
	base := readTestdata(b, "issue_comment.created.pr.json")
	// Pad the comment body so that the whole payload is 8 KB.
	pad := 8<<10 - len(base)
	body := bytes.Replace(base, []byte(`"/benchmark -f gin -t baseline"`),
		[]byte(`"/benchmark -f gin -t baseline`+strings.Repeat(`\r\nx`, pad/5)+strings.Repeat("y", pad%5)+`"`), 1)
	if len(body) != 8<<10 {
		b.Fatalf("padded body is %d bytes, want %d", len(body), 8<<10)
	}
	v := Verifier{Secret: testSecret}
	sig := Sign(testSecret, body)
	rd := bytes.NewReader(body)
	req := newRequest(nil, "application/json", "issue_comment", "72d3162e-cc78-11e3-81ab-4c9367dc0958", sig)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(body)
		req.Body = readCloser{rd}
		req.ContentLength = int64(len(body))
		d, err := v.Verify(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Decode(d); err != nil {
			b.Fatal(err)
		}
	}
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }
