package arenadata_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/arenadata"
)

// TestLargeFiles checks the large/ files: exact sizes, a download that does not compress
// and text that gzip compresses several-fold, with the requests that fetch them.
func TestLargeFiles(t *testing.T) {
	dir := tree(t)
	fi, err := os.Stat(filepath.Join(dir, arenadata.LargeDir, arenadata.DownloadFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 178257920 || arenadata.DownloadSize != 178257920 {
		t.Errorf("download.bin has %d bytes (DownloadSize %d), want 178,257,920", fi.Size(), arenadata.DownloadSize)
	}
	// A sample of the download is incompressible.
	f, err := os.Open(filepath.Join(dir, arenadata.LargeDir, arenadata.DownloadFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sample := make([]byte, 1<<20)
	if _, err := f.ReadAt(sample, 100<<20); err != nil {
		t.Fatal(err)
	}
	if r := gzipRatio(t, sample); r < 0.99 {
		t.Errorf("download.bin compresses to %.1f%%; want incompressible", 100*r)
	}

	for name, size := range map[string]int{arenadata.LargePage: 1 << 20, arenadata.LargeBundle: 2 << 20} {
		b := readFile(t, dir, arenadata.LargeDir+"/"+name)
		if len(b) != size {
			t.Errorf("%s: %d bytes, want exactly %d", name, len(b), size)
		}
		r := gzipRatio(t, b)
		if r > 0.3 {
			t.Errorf("%s: gzip compresses it only to %.1f%%; want several-fold", name, 100*r)
		}
		t.Logf("%s: %d bytes, gzip -6 to %.1f%%", name, len(b), 100*r)
	}
	if got := arenadata.LargeTextFiles(); strings.Join(got, " ") != "bundle-2m.js page-1m.html" {
		t.Errorf("LargeTextFiles() = %q", got)
	}

	for name, want := range map[string]string{
		"async-delay.raw":     "GET /delay/10 HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
		"download.raw":        "GET /large/download.bin HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
		"static-large-1m.raw": "GET /large/page-1m.html HTTP/1.1\r\nHost: localhost:8080\r\nAccept-Encoding: gzip\r\n\r\n",
		"static-large-2m.raw": "GET /large/bundle-2m.js HTTP/1.1\r\nHost: localhost:8080\r\nAccept-Encoding: gzip\r\n\r\n",
	} {
		if got := string(readFile(t, dir, arenadata.RequestsDir+"/"+name)); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	echo := readFile(t, dir, arenadata.RequestsDir+"/"+arenadata.EchoBody)
	if len(echo) != 10240 {
		t.Errorf("echo-10k.bin has %d bytes, want 10,240", len(echo))
	}
	if r := gzipRatio(t, echo); r < 0.99 {
		t.Errorf("echo-10k.bin compresses to %.1f%%; want random bytes", 100*r)
	}
}

func gzipRatio(t *testing.T, b []byte) float64 {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return float64(buf.Len()) / float64(len(b))
}

// TestDownloadStreamed: download.bin is written whole (170 MiB) through a small buffer, never
// held in memory: the bytes allocated while writing it stay a small fraction of its size.
// (How fast it is written is BenchmarkDownload's to say; a timed test on a shared machine
// says only how busy the machine was.)
func TestDownloadStreamed(t *testing.T) {
	h := sha256.New()
	cw := &countWriter{w: h}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := arenadata.WriteFileForTest(cw, arenadata.LargeDir+"/"+arenadata.DownloadFile); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if cw.n != arenadata.DownloadSize {
		t.Errorf("wrote %d bytes, want %d", cw.n, arenadata.DownloadSize)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("writing download.bin allocated %d MiB; want it streamed through a small buffer (under 16 MiB)", alloc>>20)
	}
}

// BenchmarkDownload generates download.bin and hashes it, as TestSHA256SUMS does.
func BenchmarkDownload(b *testing.B) {
	b.SetBytes(arenadata.DownloadSize)
	for b.Loop() {
		if err := arenadata.WriteFileForTest(sha256.New(), arenadata.LargeDir+"/"+arenadata.DownloadFile); err != nil {
			b.Fatal(err)
		}
	}
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.w.Write(p)
}
