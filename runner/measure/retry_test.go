package measure

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/cgroup"
	"github.com/arenabot/arenabot/runner/loadgen"
	"github.com/arenabot/arenabot/runner/runnertest"
)

// gatedNotes keeps the notes and calls opened after each (the retry's note opens the
// server's gate).
type gatedNotes struct {
	runnertest.Notes
	opened func()
}

func (n *gatedNotes) Note(line string) {
	n.Notes.Note(line)
	n.opened()
}

// TestNoResponseRunsLonger runs the real wrk, natively, against a loopback server that
// holds every answer on the connections opened before the retry's note. The 1 s run brings
// nothing back and no socket error (what a stalled machine does to 4096 connections or to
// 128 large uploads in a short run); it is run once more for 5 s (twice as long, and at
// least 5 s), which gets the answers, and the note says so. A server that never answers
// fails the row after the longer run too. The same holds for a session's write load
// (production-stack's): the reads answered but the writes not is a run of the reads alone,
// run again longer, and a row that fails if they never answer.
func TestNoResponseRunsLonger(t *testing.T) {
	if _, err := exec.LookPath("wrk"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("wrk is not on PATH (CI=%s): install it (Debian: wrk)", os.Getenv("CI"))
		}
		t.Skip("wrk is not on PATH")
	}
	for _, tt := range []struct {
		name   string
		ok     bool // the server answers the second run
		writes bool // a write load beside the reads; only it is held
	}{
		{"answers late", true, false},
		{"never answers", false, false},
		{"writes answer late", true, true},
		{"writes never answer", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The server answers only on connections opened after the retry's note (the
			// note opens the gate): whatever the machine's pace, the first run gets
			// nothing and the second all.
			var gate atomic.Bool
			type opened struct{}
			release := make(chan struct{})
			srv := &http.Server{
				ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
					return context.WithValue(ctx, opened{}, gate.Load())
				},
				Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					held := !tt.ok || !r.Context().Value(opened{}).(bool)
					if held && (!tt.writes || r.URL.Path == "/write") {
						select { // held until the client goes
						case <-release:
						case <-r.Context().Done():
						}
						return
					}
					w.Write([]byte("ok"))
				}),
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go srv.Serve(ln)
			t.Cleanup(func() {
				close(release)
				srv.Close()
			})

			data := t.TempDir()
			if err := os.MkdirAll(filepath.Join(data, "requests"), 0o755); err != nil {
				t.Fatal(err)
			}
			for name, path := range map[string]string{"get.raw": "/held", "write.raw": "/write"} {
				if err := os.WriteFile(filepath.Join(data, "requests", name), []byte("GET "+path+" HTTP/1.1\r\nHost: localhost\r\n\r\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p := profile.Profile{Name: "held", Tool: profile.ToolWrk, Scheme: "http",
				Port: ln.Addr().(*net.TCPAddr).Port, Requests: []string{"get.raw"}}
			progress := &gatedNotes{opened: func() { gate.Store(true) }}
			b := New(nil, Config{ScratchDir: t.TempDir(), DataDir: data, LoadgenCPUs: "0", Progress: progress})
			s := wrkSession(t, p, data)
			tool, spec := loadgen.Wrk(), s.spec
			want := "held 4c: no response came back in the 1s run; running it once more for 5s"
			if tt.writes {
				wspec := spec
				wspec.Profile.Requests = []string{"write.raw"}
				wspec.ScriptDir = t.TempDir()
				if err := tool.WriteFiles(wspec); err != nil {
					t.Fatal(err)
				}
				wargs, err := tool.Args(wspec)
				if err != nil {
					t.Fatal(err)
				}
				s.writes = &session{tool: s.tool, spec: wspec, args: wargs}
				want = "held 4c: its writes got no response in the 1s run; running it once more for 5s"
			}

			run, err := b.tools.measuredRun(context.Background(), s, "held 4c")
			got := progress.Lines
			if len(got) != 1 || !strings.Contains(got[0], want) {
				t.Errorf("notes = %q, want one saying %q", got, want)
			}
			if !tt.ok {
				var ns *NoSuccessError
				if !errors.As(err, &ns) || ns.Run.Requests != 0 || (ns.Part == "writes") != tt.writes {
					t.Fatalf("a server that never answers: run %+v, err %v; want a NoSuccessError with no response (of the writes: %v)", run, err, tt.writes)
				}
				if tt.writes && (ns.Short() != "writes: no response" || !strings.Contains(ns.Error(), "in the run's writes")) {
					t.Errorf("writes never answered: %q / %q; want the cell and the message to name the writes", ns.Short(), ns.Error())
				}
				return
			}
			if err != nil {
				t.Fatalf("the longer run: %v", err)
			}
			if run.Status2xx == 0 || run.DurationS < 4 {
				t.Errorf("the longer run: %d 2xx in %.2f s; want answers, from a run of about 5 s", run.Status2xx, run.DurationS)
			}
			if tt.writes && (len(run.Parts) != 2 || run.Parts[1].Name != "writes" || run.Parts[1].Status2xx == 0 || run.Parts[1].DurationS < 4) {
				t.Errorf("the longer run's parts %+v; want writes answered over about 5 s", run.Parts)
			}
		})
	}
}

// TestOverrunRunsAgain: a load tool that hangs past its run's duration and grace (h2load
// under .ci/flaky's load once stopped its clients and never exited) is killed, and the run
// is run once more, saying so; a tool that hangs both times fails the row with the kill's
// error. The tool is the real wrk, natively, behind a wrapper first on PATH that hangs
// instead of running it on the calls its mode names; the grace is 1 s.
func TestOverrunRunsAgain(t *testing.T) {
	real, err := exec.LookPath("wrk")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("wrk is not on PATH (CI=%s): install it (Debian: wrk)", os.Getenv("CI"))
		}
		t.Skip("wrk is not on PATH")
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	data := t.TempDir()
	if err := os.MkdirAll(filepath.Join(data, "requests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "requests", "get.raw"), []byte("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		hangs int // how many calls hang
	}{{"hangs once", 1}, {"hangs twice", 2}} {
		t.Run(tt.name, func(t *testing.T) {
			bin := t.TempDir()
			calls := filepath.Join(bin, "calls")
			script := "#!/bin/sh\necho x >>" + calls + "\n" +
				"if [ \"$(wc -l <" + calls + ")\" -le " + strconv.Itoa(tt.hangs) + " ]; then echo 'Stopped all clients'; exec sleep 60; fi\n" +
				"exec " + real + " \"$@\"\n"
			if err := os.WriteFile(filepath.Join(bin, "wrk"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			p := profile.Profile{Name: "hung", Tool: profile.ToolWrk, Scheme: "http",
				Port: ln.Addr().(*net.TCPAddr).Port, Requests: []string{"get.raw"}}
			progress := &runnertest.Notes{}
			b := New(nil, Config{ScratchDir: t.TempDir(), DataDir: data, Progress: progress})
			b.tools.grace = time.Second
			s := wrkSession(t, p, data)
			run, err := b.tools.measuredRun(context.Background(), s, "hung 4c")
			got := progress.Lines
			want := "hung 4c: wrk did not finish within 2s (its last output: Stopped all clients); running it once more"
			if len(got) != 1 || got[0] != want {
				t.Errorf("notes = %q, want one: %q", got, want)
			}
			if tt.hangs == 2 {
				if _, ok := errors.AsType[*overrunError](err); !ok || !strings.Contains(err.Error(), "did not finish within 2s") {
					t.Fatalf("a tool that hangs twice: run %+v, err %v; want the kill's error", run, err)
				}
				return
			}
			if err != nil || run.Status2xx == 0 {
				t.Fatalf("the second run: %+v, %v; want answers", run, err)
			}
		})
	}
}

// wrkSession is a session of the real wrk, natively, 4 connections for 1 s on profile p,
// in the test's own cgroup.
func wrkSession(t *testing.T, p profile.Profile, data string) *session {
	t.Helper()
	tool := loadgen.Wrk()
	spec := loadgen.Spec{Profile: p, Host: "127.0.0.1", Conns: 4, Threads: 1, Duration: time.Second,
		DataDir: data, ScriptDir: t.TempDir()}
	if err := tool.WriteFiles(spec); err != nil {
		t.Fatal(err)
	}
	args, err := tool.Args(spec)
	if err != nil {
		t.Fatal(err)
	}
	group, err := cgroup.ForPID(cgroup.Root, os.Getpid())
	if err != nil {
		t.Fatalf("the test's own cgroup: %v", err)
	}
	return &session{entry: p.Name, tool: toolCheck{tool: tool}, spec: spec, args: args, group: group}
}
