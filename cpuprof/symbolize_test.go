package cpuprof

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const spinGo = `package main

import (
	"os"
	"time"
)

//go:noinline
func burnCPUForProfile(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i % 7
	}
	return s
}

func main() {
	d, _ := time.ParseDuration(os.Args[1])
	end := time.Now().Add(d)
	t := 0
	for time.Now().Before(end) {
		t += burnCPUForProfile(1 << 20)
	}
	os.Exit(t & 0)
}
`

const spinC = `#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) long burn_cpu_for_profile(long n) {
	long s = 0;
	for (long i = 0; i < n; i++) s += i * i % 7;
	return s;
}

__attribute__((noinline)) long call_burn(long n) { return burn_cpu_for_profile(n) + 1; }

volatile long sink; /* keeps gcc from dropping calls whose result is unused */

int main(int argc, char **argv) {
	time_t end = time(0) + atoi(argv[1]);
	while (time(0) < end) sink += call_burn(1 << 20);
	return 0;
}
`

// leafShare is the share of the user-space samples of tr whose leaf is named name. The
// kernel's samples (page faults, the scheduler's tick) are left out: on a loaded machine
// they grow, and they say nothing about the naming of the program's own code.
func leafShare(tr *Trace, name string) float64 {
	n, user := 0, 0
	for _, s := range tr.Samples {
		if len(s.Stack) == 0 || s.Stack[0].DSO == KernelDSO {
			continue
		}
		user++
		if s.Stack[0].Symbol == name {
			n++
		}
	}
	return float64(n) / float64(max(user, 1))
}

func TestSymbolizeStrippedGo(t *testing.T) {
	needPerf(t)
	for _, mode := range []string{"exe", "pie"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			writeModule(t, dir, spinGo)
			bin := filepath.Join(dir, "spin")
			run(t, dir, "go", "build", "-buildmode="+mode, "-ldflags=-s -w", "-o", bin, ".")
			tr := profileCommand(t, exec.Command(bin, "5s"), time.Second)
			unresolved := 0
			for _, s := range tr.Samples {
				for _, f := range s.Stack {
					if f.DSO == bin && f.Symbol == "" {
						unresolved++
					}
				}
			}
			if unresolved == 0 {
				t.Fatalf("perf resolved frames of a stripped binary itself; the test proves nothing")
			}
			var sym Symbolizer
			sym.Symbolize(tr)
			if got := leafShare(tr, "main.burnCPUForProfile"); got < 0.5 {
				t.Errorf("share of samples in main.burnCPUForProfile = %.2f, want > 0.5; first stack: %v", got, tr.Samples[0].Stack)
			}
			// The spinning goroutine's callers resolve too, down to the runtime's entry.
			var callers []string
			for _, s := range tr.Samples {
				if len(s.Stack) > 1 && s.Stack[0].Symbol == "main.burnCPUForProfile" {
					for _, f := range s.Stack[1:] {
						callers = append(callers, f.Symbol)
					}
					break
				}
			}
			// A frameless leaf (Go gives small leaf functions no frame) hides its direct
			// caller, main.main, from frame-pointer unwinding; the return addresses above
			// it resolve.
			if got := strings.Join(callers, " "); !strings.Contains(got, "runtime.main") {
				t.Errorf("callers of main.burnCPUForProfile = %q, want runtime.main among them", got)
			}
			for _, s := range tr.Samples {
				for _, f := range s.Stack {
					if f.Symbol == "" {
						t.Fatalf("frame %+v left without a symbol", f)
					}
				}
			}
		})
	}
}

func TestSymbolizeNative(t *testing.T) {
	needPerf(t)
	needTool(t, "gcc", "gcc")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "spin.c"), []byte(spinC), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "spin")
	run(t, dir, "gcc", "-O1", "-fno-omit-frame-pointer", "-o", bin, "spin.c")
	tr := profileCommand(t, exec.Command(bin, "5"), time.Second)
	if got := leafShare(tr, "burn_cpu_for_profile"); got < 0.5 {
		t.Fatalf("perf's own share in burn_cpu_for_profile = %.2f, want > 0.5; first stack: %v", got, tr.Samples[0].Stack)
	}
	// perf resolved the binary from its .symtab; forget what it said about every user
	// frame and check the Symbolizer says the same, offset included.
	type want struct {
		sym string
		off uint64
	}
	var wants []want
	for i := range tr.Samples {
		for j := range tr.Samples[i].Stack {
			f := &tr.Samples[i].Stack[j]
			if f.Kernel() || !isFileDSO(f.DSO) || f.Symbol == "" {
				continue
			}
			wants = append(wants, want{f.Symbol, f.Offset})
			f.Symbol, f.Offset = "", 0
		}
	}
	var sym Symbolizer
	sym.Symbolize(tr)
	k := 0
	for _, s := range tr.Samples {
		for _, f := range s.Stack {
			if f.Kernel() || !isFileDSO(f.DSO) || k >= len(wants) {
				continue
			}
			if w := wants[k]; f.Symbol != w.sym || f.Offset != w.off {
				t.Errorf("frame at %#x in %s = %s+%#x, perf said %s+%#x", f.Addr, f.DSO, f.Symbol, f.Offset, w.sym, w.off)
			}
			k++
		}
	}
	if k != len(wants) {
		t.Errorf("compared %d frames, want %d", k, len(wants))
	}
}

func TestPerfMap(t *testing.T) {
	// Frames after the first are return addresses, looked up one byte back.
	// A process on the host (pid 100) and one in a container (host pid 200, pid 7 in its
	// namespace) that wrote its map under its own /tmp.
	root := t.TempDir()
	proc, tmp := filepath.Join(root, "proc"), filepath.Join(root, "tmp")
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(tmp, "perf-100.map"), ""+
		"7f0000001000 40 Interpreter\n"+
		"0x7f0000002000 0x100 LazyCompile:~handle /app/server.js:10\n"+
		"not a line\n"+
		"7f0000003000 20 old\n"+
		"7f0000003000 20 [tier1] Program::Main(string[])\n")
	write(filepath.Join(proc, "200", "status"), "Name:\tdotnet\nPid:\t200\nNSpid:\t200\t7\n")
	write(filepath.Join(proc, "200", "root", "tmp", "perf-7.map"), "7f1000000000 1000 instance void App.Handler::Invoke()[Optimized]\n")

	tr := &Trace{Samples: []Sample{
		{PID: 100, Stack: []Frame{
			{Addr: 0x7f0000002010},
			{Addr: 0x7f0000001001, DSO: "/tmp/perf-100.map"},
			{Addr: 0x7f0000003004, DSO: "//anon"},
			// A caller's return address may be one past its function's end; two past is
			// outside.
			{Addr: 0x7f0000001040},
			{Addr: 0x7f0000001041},
			{Addr: 0xffffffff81000000, DSO: KernelDSO},
		}},
		{PID: 200, Stack: []Frame{
			{Addr: 0x7f1000000fff},
			// .NET's double-mapped JIT code: perf printed the offset in the memfd.
			{Addr: 0x2010, DSO: "/memfd:doublemapper (deleted)"},
		}},
	}, Mappings: []Mapping{{PID: 200, Start: 0x7f1000000000, Len: 0x1000, Pgoff: 0x2000, Path: "/memfd:doublemapper (deleted)"}}}
	s := Symbolizer{ProcDir: proc, TmpDir: tmp}
	s.Symbolize(tr)
	var got []string
	for _, smp := range tr.Samples {
		for _, f := range smp.Stack {
			got = append(got, fmt.Sprintf("%s+%#x", f.Name(), f.Offset))
		}
	}
	want := []string{
		"LazyCompile:~handle /app/server.js:10+0x10",
		"Interpreter+0x1",
		"[tier1] Program::Main(string[])+0x4",
		"Interpreter+0x40",
		"[unknown]+0x0",
		"[unknown] ([kernel.kallsyms])+0x0",
		"instance void App.Handler::Invoke()[Optimized]+0xfff",
		"instance void App.Handler::Invoke()[Optimized]+0x10",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("frames:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
