package validate

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"testing"
	"time"

	"github.com/arenabot/arenabot/validate/protocol"
)

// TestSlowUploadIsNoStall: a server that reads a large body slowly, for longer than the
// timeout in all, still passes, because the body keeps going out.
func TestSlowUploadIsNoStall(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.(*net.TCPConn).SetReadBuffer(32 << 10)
		br := bufio.NewReader(c)
		tp := textproto.NewReader(br)
		if _, err := tp.ReadLine(); err != nil {
			return
		}
		h, err := tp.ReadMIMEHeader()
		if err != nil {
			return
		}
		n, _ := strconv.ParseInt(h.Get("Content-Length"), 10, 64)
		var got int64
		buf := make([]byte, 32<<10)
		for got < n {
			k, err := io.ReadFull(br, buf[:min(int64(len(buf)), n-got)])
			got += int64(k)
			if err != nil {
				return
			}
			time.Sleep(10 * time.Millisecond) // about 3 MB/s
		}
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%d", len(strconv.FormatInt(got, 10)), got)
	}()
	// A timeout of 1 s rather than less: a loaded machine (the race detector, other packages'
	// tests) can pause the reading goroutine for a few hundred milliseconds.
	e := &env{proto: protocol.H1, addr: ln.Addr().String(), timeout: time.Second, data: newData(t.TempDir())}
	start := time.Now()
	r := uploadCheck(t.Context(), e, "application/octet-stream", make([]byte, 6<<20), false)
	if r.status != Pass {
		t.Errorf("slow but steady upload: %s; got %s", r.status, r.got)
	}
	if took := time.Since(start); took < e.timeout {
		t.Logf("the upload took only %v; the server was not slower than the timeout", took)
	}
}
