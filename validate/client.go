package validate

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/arenabot/arenabot/validate/protocol"
)

// writeChunk is the most a single Write call sends, so a deadline bounds each piece of a
// large upload rather than the whole of it.
const writeChunk = 256 << 10

// fragmentPause is the pause between the pieces of a fragmented request (the arena's
// validate.sh used 30 ms).
const fragmentPause = 30 * time.Millisecond

// A conn is one client connection with a deadline on every read and write. It is closed
// when the check's context ends, which unblocks any read or write in progress.
type conn struct {
	nc      net.Conn
	br      *bufio.Reader
	timeout time.Duration
	stop    func() bool
}

// dial connects to the profile's address in its protocol (validate/protocol): TCP with
// TCP_NODELAY, so each write leaves as its own segment, and for HTTP/1.1 over TLS the
// handshake, offering no ALPN, as wrk.
func dial(ctx context.Context, e *env) (*conn, error) {
	return dialWith(ctx, e, e.proto, protocol.Config{})
}

// dialWith connects to the profile's address with a Stream protocol p and the TLS options
// of cfg (its timeout is the target's).
func dialWith(ctx context.Context, e *env, p protocol.Protocol, cfg protocol.Config) (*conn, error) {
	sp, ok := p.(protocol.Stream)
	if !ok {
		return nil, fmt.Errorf("cannot check: %s carries no raw HTTP/1.1 (a check of the wrong profile)", p.Describe())
	}
	cfg.Timeout = e.timeout
	nc, err := sp.Dial(ctx, e.addr, cfg)
	if err != nil {
		return nil, err
	}
	return newConn(ctx, nc, e.timeout), nil
}

// newConn wraps nc; the connection closes when ctx ends.
func newConn(ctx context.Context, nc net.Conn, timeout time.Duration) *conn {
	c := &conn{nc: nc, timeout: timeout}
	c.br = bufio.NewReaderSize(readerFunc(c.read), 64<<10)
	c.stop = context.AfterFunc(ctx, func() { nc.Close() })
	return c
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

func (c *conn) read(p []byte) (int, error) {
	c.nc.SetReadDeadline(time.Now().Add(c.timeout))
	n, err := c.nc.Read(p)
	return n, timeoutError(err, c.timeout)
}

// write sends b in pieces of at most writeChunk bytes, each under its own deadline.
func (c *conn) write(b []byte) error {
	for len(b) > 0 {
		piece := b[:min(len(b), writeChunk)]
		c.nc.SetWriteDeadline(time.Now().Add(c.timeout))
		n, err := c.nc.Write(piece)
		b = b[n:]
		if err != nil {
			return fmt.Errorf("send: %w", timeoutError(err, c.timeout))
		}
	}
	return nil
}

// writeFragments sends each fragment as its own write, pausing between them.
func (c *conn) writeFragments(ctx context.Context, frags [][]byte) error {
	for i, f := range frags {
		if i > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(fragmentPause):
			}
		}
		if err := c.write(f); err != nil {
			return fmt.Errorf("fragment %d of %d: %w", i+1, len(frags), err)
		}
	}
	return nil
}

// response reads one response to a request with the given method.
func (c *conn) response(method string) (*response, error) {
	r, err := readResponse(c.br, method)
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	return r, nil
}

// awaitResponse waits for the first byte of a response. Each wait is bounded by the
// timeout, but while busy reports true (the request is still being sent, so the server is
// still reading it) it waits again.
func (c *conn) awaitResponse(busy func() bool) error {
	for {
		_, err := c.br.Peek(1)
		switch {
		case err == nil:
			return nil
		case errors.As(err, new(errTimeout)) && busy():
			continue
		case errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
			return fmt.Errorf("read response: %w (%v)", errNoResponse, err)
		}
		return fmt.Errorf("read response: %w", err)
	}
}

// atEOF reports whether the server has closed the connection with nothing more sent,
// waiting at most one timeout; extra is whatever arrived instead.
func (c *conn) atEOF() (closed bool, extra []byte, err error) {
	var buf [512]byte
	n, err := c.br.Read(buf[:])
	if n > 0 {
		return false, buf[:n], nil
	}
	if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
		return true, nil, nil
	}
	return false, nil, err
}

func (c *conn) close() {
	c.stop()
	c.nc.Close()
}

// errTimeout is a read or write that did not complete within the target's timeout.
type errTimeout struct{ d time.Duration }

func (e errTimeout) Error() string { return fmt.Sprintf("no progress within %v", e.d) }

func timeoutError(err error, d time.Duration) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errTimeout{d}
	}
	return err
}

// exchange sends raw on a fresh connection and reads one response. Over h2 and h2c the
// request is sent as that protocol frames it (roundTrip).
func exchange(ctx context.Context, e *env, method string, raw []byte) (*response, error) {
	if hp, ok := e.proto.(protocol.HTTP); ok && !isStream(e.proto) {
		c := hp.Client(protocol.Config{Timeout: e.timeout})
		defer c.CloseIdleConnections()
		return roundTrip(ctx, c, hp, e.addr, raw)
	}
	c, err := dial(ctx, e)
	if err != nil {
		return nil, err
	}
	defer c.close()
	if err := c.write(raw); err != nil {
		return nil, err
	}
	return c.response(method)
}

// request builds a raw HTTP/1.1 request with the arena's Host header.
func request(method, target string, headers []string, body []byte) []byte {
	b := fmt.Appendf(nil, "%s %s HTTP/1.1\r\nHost: localhost:8080\r\n", method, target)
	for _, h := range headers {
		b = append(b, h...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, body...)
}

// chunked encodes body with the given chunk sizes (the rest, if any, in one more chunk) and
// the last chunk.
func chunked(body []byte, sizes ...int) []byte {
	var b []byte
	for _, n := range sizes {
		n = min(n, len(body))
		if n == 0 {
			continue
		}
		b = fmt.Appendf(b, "%x\r\n", n)
		b = append(b, body[:n]...)
		b = append(b, "\r\n"...)
		body = body[n:]
	}
	if len(body) > 0 {
		b = fmt.Appendf(b, "%x\r\n", len(body))
		b = append(b, body...)
		b = append(b, "\r\n"...)
	}
	return append(b, "0\r\n\r\n"...)
}
