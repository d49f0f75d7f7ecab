package ws

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// startEchoProcess runs the gorilla echo server in a child process (this test binary under
// serverEnv), so that the generator's CPU time (the whole process's) is its own. It returns
// the server's address and a function reading its counts once its handlers are done.
func startEchoProcess(b *testing.B) (addr string, counts func() (upgrades, echoes int64)) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = stdin.Close() // the server exits when its stdin closes
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("echo server process: %v", err)
	}
	addr = line[:len(line)-1]
	counts = func() (int64, int64) {
		deadline := time.Now().Add(5 * time.Second)
		for {
			resp, err := http.Get("http://" + addr + "/stats")
			if err != nil {
				b.Fatal(err)
			}
			var s map[string]int64
			err = json.NewDecoder(resp.Body).Decode(&s)
			_ = resp.Body.Close()
			if err != nil {
				b.Fatal(err)
			}
			if s["active"] == 0 {
				return s["upgrades"], s["echoes"]
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d server handlers still running 5 s after the run", s["active"])
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return addr, counts
}

// BenchmarkEcho runs the generator for 1 s per iteration (one with the default benchtime)
// against the gorilla echo server in another process, P=1 and P=16, and reports echoes per
// second, the generator's CPU per echo and its fidelity: the echoes it counted against
// those the server sent.
func BenchmarkEcho(b *testing.B) {
	for _, tc := range []struct{ c, p, r int }{{16, 1, 0}, {16, 16, 0}, {16, 1, 10}} {
		name := "c=" + strconv.Itoa(tc.c) + "/p=" + strconv.Itoa(tc.p) + "/r=" + strconv.Itoa(tc.r)
		b.Run(name, func(b *testing.B) {
			addr, counts := startEchoProcess(b)
			var ok, srvEchoes, upgrades, srvUpgrades int64
			var rate, cpu, allocs float64
			for range b.N {
				u0, e0 := counts()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				st, err := Run(context.Background(), Config{
					URL: "ws://" + addr + "/ws", Connections: tc.c, Pipeline: tc.p, Reconnect: tc.r,
					Duration: time.Second, Timeout: 2 * time.Second, Message: DefaultMessage,
				})
				if err != nil {
					b.Fatal(err)
				}
				runtime.ReadMemStats(&m1)
				u1, e1 := counts()
				allocs += float64(m1.Mallocs-m0.Mallocs) / float64(max(st.Result.Requests, 1))
				r := st.Result
				if r.Errors.Total() != 0 {
					b.Errorf("errors %+v", r.Errors)
				}
				ok += r.OK
				srvEchoes += e1 - e0
				upgrades += st.Upgrades
				srvUpgrades += u1 - u0
				rate += r.AchievedRate
				cpu += r.CPUPerRequest
				if r.Limit != "" {
					b.Logf("limit: %s", r.Limit)
				}
				b.Logf("ok %d, server echoes %d; upgrades %d, server %d; %.0f echoes/s, %.2f µs CPU per echo, latency %+v",
					r.OK, e1-e0, st.Upgrades, u1-u0, r.AchievedRate, r.CPUPerRequest, r.Latency)
			}
			n := float64(b.N)
			b.ReportMetric(rate/n, "echoes/s")
			b.ReportMetric(cpu/n, "cpu-µs/echo")
			b.ReportMetric(allocs/n, "allocs/echo")
			b.ReportMetric(float64(ok)/n, "gen-echoes")
			b.ReportMetric(float64(srvEchoes)/n, "server-echoes")
			b.ReportMetric(float64(ok)/float64(srvEchoes), "fidelity")
			if tc.r > 0 {
				b.ReportMetric(float64(upgrades)/n, "gen-upgrades")
				b.ReportMetric(float64(srvUpgrades)/n, "server-upgrades")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}
