package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/hook"
)

// A forged but well-formed signature: it gets a request past the header checks to the
// body, as an attacker's would.
var forgedSignature = "sha256=" + strings.Repeat("0", 64)

// startRawRequest dials serve at addr and sends the headers of a POST /webhook of event
// whose body is length bytes long (-1: chunked); the caller writes the body.
func startRawRequest(t *testing.T, addr, event, delivery string, length int64) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return nil
	}
	framing := "Transfer-Encoding: chunked"
	if length >= 0 {
		framing = "Content-Length: " + strconv.FormatInt(length, 10)
	}
	_, err = fmt.Fprintf(conn, "POST /webhook HTTP/1.1\r\nHost: arena\r\nContent-Type: application/json\r\n"+
		"%s: %s\r\n%s: %s\r\n%s: %s\r\n%s\r\n\r\n",
		hook.EventHeader, event, hook.DeliveryHeader, delivery, hook.SignatureHeader, forgedSignature, framing)
	if err != nil {
		conn.Close()
		t.Error(err)
		return nil
	}
	return conn
}

// readAnswer reads the answer on conn and reports its status, or 0 when the connection
// ended without one.
func readAnswer(conn net.Conn) int {
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestServeOversizedBody: serve refuses a delivery over hook.MaxBody with 413 without
// reading it all, whether the body declares its length (refused before a byte of it is
// read) or not (an endless chunked body, refused after the limit and its connection
// closed), and answers a delivery of an event the bot ignores with 202 without reading
// its 25 MB.
func TestServeOversizedBody(t *testing.T) {
	base, _ := startServe(t, embeddedServe(t, t.TempDir()), io.Discard)
	addr := strings.TrimPrefix(base, "http://")

	for _, c := range []struct {
		name, event string
		want        int
	}{
		{"declared 25 MB", "issue_comment", http.StatusRequestEntityTooLarge},
		{"ignored event, declared 25 MB", "push", http.StatusAccepted},
	} {
		start := time.Now()
		conn := startRawRequest(t, addr, c.event, "d-big", 25_000_000-1)
		if conn == nil {
			return
		}
		conn.Write([]byte(`{"action":`)) // a few bytes of the body, the rest never comes
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if got := readAnswer(conn); got != c.want {
			t.Errorf("%s: answered %d, want %d at once, without waiting for the body", c.name, got, c.want)
		}
		conn.Close()
		t.Logf("%s: answered in %v", c.name, time.Since(start).Round(time.Millisecond))
	}

	// No Content-Length: the body never ends. serve reads hook.MaxBody+1 bytes, answers
	// 413 and closes the connection, so the sender's writes fail.
	conn := startRawRequest(t, addr, "issue_comment", "d-endless", -1)
	if conn == nil {
		return
	}
	defer conn.Close()
	var written int64
	writeErr := make(chan error, 1)
	go func() {
		chunk := fmt.Appendf(nil, "%x\r\n%s\r\n", 64<<10, bytes.Repeat([]byte(" "), 64<<10))
		for {
			n, err := conn.Write(chunk)
			written += int64(n)
			if err != nil {
				writeErr <- err
				return
			}
		}
	}()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if got := readAnswer(conn); got != http.StatusRequestEntityTooLarge {
		t.Errorf("endless chunked body: answered %d, want 413", got)
	}
	select {
	case <-writeErr:
		t.Logf("endless chunked body: 413, then the connection closed after %d MiB sent (limit %d MiB)", written>>20, hook.MaxBody>>20)
	case <-time.After(10 * time.Second):
		t.Errorf("endless chunked body: serve still reads it 10 s after its 413")
	}
}

// TestServeSlowBodies: the webhook attack of issue 40 against serve's own HTTP server, with
// its limits shortened. 300 clients each send a forged delivery's headers and then one
// byte every 100 ms: a third declare a body of 25 MB (answered 413 at once), the others
// one just under hook.MaxBody (cut off with 408 when the request's read deadline passes).
// Meanwhile a correctly signed pull_request delivery is answered 202 promptly, and serve's
// memory (heap and resident) grows by far less than the bodies declared.
func TestServeSlowBodies(t *testing.T) {
	const (
		clients  = 300
		readTime = time.Second
		trickle  = 100 * time.Millisecond
		maxGrow  = 100 << 20 // bytes; the attack declares 300 × ~10 MB
	)
	limits := serveHTTPLimits
	t.Cleanup(func() { serveHTTPLimits = limits })
	serveHTTPLimits.ReadHeader, serveHTTPLimits.Read = readTime, readTime
	serveHTTPLimits.Write, serveHTTPLimits.Idle = 5*time.Second, 5*time.Second

	base, _ := startServe(t, embeddedServe(t, t.TempDir()), io.Discard)
	addr := strings.TrimPrefix(base, "http://")
	payload, err := os.ReadFile(filepath.Join(repoRoot(t), "bot", "hook", "testdata", "pull_request.synchronize.json"))
	if err != nil {
		t.Fatal(err)
	}
	signed := func(id string) (int, time.Duration) {
		req, _ := http.NewRequest(http.MethodPost, base+"/webhook", bytes.NewReader(payload))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(hook.EventHeader, "pull_request")
		req.Header.Set(hook.DeliveryHeader, id)
		req.Header.Set(hook.SignatureHeader, hook.Sign([]byte("s3cret"), payload))
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("signed delivery %s: %v", id, err)
			return 0, time.Since(start)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(start)
	}
	if code, _ := signed("warm-up"); code != http.StatusAccepted {
		t.Fatalf("signed delivery before the attack answered %d, want 202", code)
	}

	runtime.GC()
	heap0, rss0 := memoryNow()
	if rss0 == 0 {
		t.Log("no VmRSS in /proc/self/status: only the heap is measured")
	}
	var peakHeap, peakRSS uint64
	sampled := make(chan struct{})
	stopSampling := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			h, r := memoryNow()
			peakHeap, peakRSS = max(peakHeap, h), max(peakRSS, r)
			select {
			case <-stopSampling:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()

	type answer struct {
		declared int64
		status   int
		took     time.Duration
	}
	answers := make(chan answer, clients)
	var wg sync.WaitGroup
	for i := range clients {
		declared := int64(hook.MaxBody - 1)
		if i%3 == 0 {
			declared = 25_000_000 - 1
		}
		wg.Go(func() {
			start := time.Now()
			conn := startRawRequest(t, addr, "issue_comment", fmt.Sprintf("slow-%d", i), declared)
			if conn == nil {
				return
			}
			defer conn.Close()
			answered := make(chan struct{})
			defer close(answered)
			go func() {
				tick := time.NewTicker(trickle)
				defer tick.Stop()
				for {
					select {
					case <-answered:
						return
					case <-tick.C:
					}
					if _, err := conn.Write([]byte(" ")); err != nil {
						return
					}
				}
			}()
			conn.SetReadDeadline(time.Now().Add(readTime + 10*time.Second))
			status := readAnswer(conn)
			answers <- answer{declared, status, time.Since(start)}
		})
	}

	// While the clients hold their connections, signed deliveries keep coming.
	time.Sleep(readTime / 4)
	var slowest time.Duration
	for i := range 5 {
		code, took := signed(fmt.Sprintf("signed-%d", i))
		if code != http.StatusAccepted {
			t.Errorf("signed delivery %d under the attack answered %d, want 202", i, code)
		}
		slowest = max(slowest, took)
		time.Sleep(readTime / 8)
	}
	wg.Wait()
	close(stopSampling)
	<-sampled
	close(answers)

	var refused, cut int
	var latestCut time.Duration
	for a := range answers {
		switch {
		case a.declared > hook.MaxBody:
			if a.status != http.StatusRequestEntityTooLarge || a.took > readTime/2 {
				t.Errorf("a client declaring %d bytes was answered %d after %v, want 413 at once", a.declared, a.status, a.took)
			}
			refused++
		default:
			// Cut off by the read deadline, not before it, and not long after.
			if a.status != http.StatusRequestTimeout || a.took < readTime*3/4 || a.took > readTime+3*time.Second {
				t.Errorf("a client trickling a %d-byte body was answered %d after %v, want 408 after the %v read deadline", a.declared, a.status, a.took, readTime)
			}
			cut++
			latestCut = max(latestCut, a.took)
		}
	}
	if refused+cut != clients {
		t.Errorf("%d of %d slow clients got an answer", refused+cut, clients)
	}
	heapGrow, rssGrow := int64(peakHeap)-int64(heap0), int64(peakRSS)-int64(rss0)
	t.Logf("%d slow clients: %d refused with 413, %d cut off with 408 (the last after %v); signed deliveries answered in at most %v; heap %d → %d MiB (+%.1f), resident %d → %d MiB (+%.1f)",
		clients, refused, cut, latestCut.Round(time.Millisecond), slowest.Round(time.Millisecond),
		heap0>>20, peakHeap>>20, float64(heapGrow)/(1<<20), rss0>>20, peakRSS>>20, float64(rssGrow)/(1<<20))
	if slowest > 2*time.Second {
		t.Errorf("a signed delivery took %v under the attack, want under 2s", slowest)
	}
	if heapGrow > maxGrow || rssGrow > maxGrow {
		t.Errorf("under the attack the heap grew by %d MiB and the resident memory by %d MiB, want under %d MiB each", heapGrow>>20, rssGrow>>20, maxGrow>>20)
	}
}

// memoryNow returns the bytes of heap objects (live or not yet swept) and the resident
// memory of this process, in which serve runs; rss is 0 where /proc is not.
func memoryNow() (heap, rss uint64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	b, _ := os.ReadFile("/proc/self/status")
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			rss = kb << 10
		}
	}
	return s[0].Value.Uint64(), rss
}
