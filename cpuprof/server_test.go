package cpuprof

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A net/http server like the arena's Go entry: plaintext and a small JSON body.
const serverGo = `package main

import (
	"encoding/json"
	"net/http"
	"os"
)

type item struct {
	ID    int    ` + "`json:\"id\"`" + `
	Name  string ` + "`json:\"name\"`" + `
	Price int    ` + "`json:\"price\"`" + `
}

func handleJSON(w http.ResponseWriter, r *http.Request) {
	items := make([]item, 10)
	for i := range items {
		items[i] = item{ID: i, Name: "item", Price: i * 3}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(items)
}

func main() {
	http.HandleFunc("/json", handleJSON)
	http.ListenAndServe(os.Args[1], nil)
}
`

// TestProfileServer records a stripped net/http server under a short wrk load, end to
// end: record, script, symbolize, summarize, pprof, flame graph.
func TestProfileServer(t *testing.T) {
	needPerf(t)
	needTool(t, "wrk", "wrk")
	wrk, _ := exec.LookPath("wrk")
	dir := t.TempDir()
	writeModule(t, dir, serverGo)
	bin := filepath.Join(dir, "server")
	run(t, dir, "go", "build", "-ldflags=-s -w", "-o", bin, ".")
	addr := freeAddr(t)
	srv := exec.Command(bin, addr)
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
	})
	waitListening(t, addr)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	load := exec.CommandContext(ctx, wrk, "-t1", "-c8", "-d3s", "http://"+addr+"/json")
	var wrkOut bytes.Buffer
	load.Stdout = &wrkOut
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	data := filepath.Join(dir, "perf.data")
	// The way the runner will record: every CPU the server may use, system-wide, then
	// only the server's samples.
	rec := Recording{CPUs: fmt.Sprintf("0-%d", runtime.NumCPU()-1), Duration: 1500 * time.Millisecond, Output: data}
	recErr := rec.Run(ctx)
	if err := load.Wait(); err != nil {
		t.Fatalf("wrk: %v\n%s", err, wrkOut.String())
	}
	if recErr != nil {
		t.Fatal(recErr)
	}
	tr, err := Script(ctx, "", data, srv.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range tr.Samples {
		if s.PID != srv.Process.Pid {
			t.Fatalf("perf script --pid %d gave a sample of pid %d (%s)", srv.Process.Pid, s.PID, s.Comm)
		}
	}
	var sym Symbolizer
	sym.Symbolize(tr)
	s := Summarize(tr.Samples)
	t.Logf("%d samples, %.1f ms CPU; kernel %.1f%%, GC %.1f%%, own %.1f%%", s.Samples, float64(s.CPUNs)/1e6, s.Kernel, s.GC, s.Own)
	for _, f := range s.TopSelf(5) {
		t.Logf("self %5.1f%% cum %5.1f%% %s", f.Self, f.Cum, f.Name)
	}
	if s.Samples < 100 {
		t.Fatalf("%d samples in 1.5 s of load, want at least 100", s.Samples)
	}
	cum := map[string]float64{}
	for _, f := range s.Funcs {
		cum[f.Name] = f.Cum
	}
	if cum["main.handleJSON"] == 0 || cum["net/http.(*conn).serve"] < 10 {
		t.Errorf("cumulative main.handleJSON %.1f%%, net/http.(*conn).serve %.1f%%; want both, the latter > 10%%",
			cum["main.handleJSON"], cum["net/http.(*conn).serve"])
	}
	// A server under load spends much of its time in the kernel's network stack.
	if s.Kernel < 10 {
		t.Errorf("kernel share %.1f%%, want > 10%%", s.Kernel)
	}
	unknown := 0.0
	for _, f := range s.Funcs {
		if strings.HasPrefix(f.Name, Unknown) {
			unknown += f.Self
		}
	}
	if unknown > 5 {
		t.Errorf("%.1f%% of the CPU has an unknown leaf, want < 5%%", unknown)
	}

	out := t.ArtifactDir()
	var pb, svg bytes.Buffer
	if err := WritePprof(&pb, ToPprof(tr.Samples, rec.Duration)); err != nil {
		t.Fatal(err)
	}
	if err := WriteFlameGraph(&svg, tr.Samples, FlameOptions{Title: "net/http /json under wrk"}); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"server.cpu.pb.gz": pb.Bytes(), "server.svg": svg.Bytes()} {
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server at %s never listened: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
