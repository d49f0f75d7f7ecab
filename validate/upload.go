package validate

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"
)

// uploadSizes are the load's body sizes (arenadata's upload-*.raw).
var uploadSizes = []struct {
	name string
	size int
}{{"500 KB", 512000}, {"2 MB", 2097152}, {"10 MB", 10485760}, {"20 MB", 20971520}}

func uploadChecks(p string) []check {
	ref := func(text string) string {
		return contract(p, "POST /upload → 200 text/plain, the number of body bytes actually read (not an echo of Content-Length)"+text, "")
	}
	refV := func(text string) string {
		return contract(p, "POST /upload → 200 text/plain, the number of body bytes actually read"+text, "")
	}
	checks := []check{
		probeCheck(p, "/baseline11?a=1&b=1"),
		{
			name:     "POST 17-byte text",
			contract: refV(`; "Hello, HttpArena!" → "17"`),
			run: func(ctx context.Context, e *env) result {
				return uploadCheck(ctx, e, "text/plain", []byte("Hello, HttpArena!"), false)
			},
		},
		{
			name:     "POST 48 random bytes",
			contract: refV(`; 48 random bytes → "48"`),
			run: func(ctx context.Context, e *env) result {
				return uploadCheck(ctx, e, "application/octet-stream", randomBytes(e.rand(), 48), false)
			},
		},
	}
	for _, u := range uploadSizes {
		checks = append(checks, check{
			name:     "POST " + u.name,
			contract: ref(fmt.Sprintf(`; %s of random bytes (%d) → "%d"`, u.name, u.size, u.size)),
			run: func(ctx context.Context, e *env) result {
				return uploadCheck(ctx, e, "application/octet-stream", randomBytes(e.rand(), u.size), false)
			},
		})
	}
	return append(checks,
		check{
			name:     "POST chunked",
			contract: contract(p, `POST /upload with a chunked body (the load sends Content-Length) → 200, its decoded length`, "RFC 9112 §7.1"),
			run: func(ctx context.Context, e *env) result {
				rng := e.rand()
				return uploadCheck(ctx, e, "application/octet-stream", randomBytes(rng, 300000+rng.IntN(1000)), true)
			},
		}.advisory(),
		check{
			name:     "Content-Type",
			contract: contract(p, "POST /upload → 200 with Content-Type text/plain (the arena checks only the count)", ""),
			run: func(ctx context.Context, e *env) result {
				body := randomBytes(e.rand(), 1000)
				raw := request("POST", "/upload", []string{"Content-Type: application/octet-stream", "Content-Length: 1000"}, body)
				return expectType(ctx, e, "POST", raw, "text/plain")
			},
		}.advisory(),
	)
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, (n+7)/8*8)
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
	}
	return b[:n]
}

// uploadCheck posts body (with a Content-Length, or chunked in pieces of random sizes) and
// wants its length back. The body is sent while the answer is read: a server that answers
// before reading the whole body fails, whatever number it answers.
func uploadCheck(ctx context.Context, e *env, contentType string, body []byte, useChunked bool) result {
	headers := []string{"Content-Type: " + contentType}
	var payload []byte
	if useChunked {
		headers = append(headers, "Transfer-Encoding: chunked")
		rng := e.rand()
		var sizes []int
		for left := len(body); left > 0; {
			n := min(left, 1+rng.IntN(64<<10))
			sizes = append(sizes, n)
			left -= n
		}
		payload = chunked(body, sizes...)
	} else {
		headers = append(headers, "Content-Length: "+strconv.Itoa(len(body)))
		payload = body
	}
	head := request("POST", "/upload", headers, nil)
	req := show(head)
	switch {
	case useChunked:
		req += fmt.Sprintf("<%d random bytes in chunks of 1 to 65536 bytes>", len(body))
	case len(body) > 64 || contentType != "text/plain":
		req += fmt.Sprintf("<%d random bytes>", len(body))
	default:
		req = show(append(head, body...))
	}
	want := strconv.Itoa(len(body))
	exp := fmt.Sprintf("200 with body %q, sent after the whole body was read", want)

	c, err := dial(ctx, e)
	if err != nil {
		return failed(req, exp, err.Error())
	}
	defer c.close()
	sent := make(chan error, 1)
	var sentAt atomic.Int64 // when the last byte went out, in Unix nanoseconds; 0 before
	go func() {
		err := c.write(head)
		if err == nil {
			err = c.write(payload)
		}
		sentAt.Store(time.Now().UnixNano())
		sent <- err
	}()
	// While the body is still going out, waiting longer than one timeout for the answer is
	// no stall: the server is reading. Once it is out, up to several MB of it can still sit
	// in socket buffers, so the server gets a second per MiB on top of the timeout to read
	// them (a server reading at 1 MiB/s or faster passes).
	grace := time.Duration(len(payload)) * time.Second / (1 << 20)
	busy := func() bool {
		at := sentAt.Load()
		return at == 0 || time.Since(time.Unix(0, at)) < grace
	}
	rerr := c.awaitResponse(busy)
	var r *response
	if rerr == nil {
		r, rerr = c.response("POST")
	}
	if rerr != nil {
		c.close() // unblock the sender
		<-sent
		return failed(req, exp, rerr.Error())
	}
	werr := <-sent // returns within a timeout: every write has a deadline
	if werr != nil {
		return failed(req, exp, fmt.Sprintf("%s, but the body could not be sent completely (%v): the server answered without reading it", describe(r), werr))
	}
	if r.Status != 200 || string(r.Body) != want {
		return failed(req, exp, describe(r))
	}
	return passed(req, exp, describe(r))
}
