package cpuprof

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseScriptFrames(t *testing.T) {
	const text = `swapper     0/0         0.000000: PERF_RECORD_MMAP -1/0: [0xffffffff81000000(0x1276988) @ 0xffffffff81000000]: x [kernel.kallsyms]_text
srv     0/0         0.000000: PERF_RECORD_MMAP2 2697/2697: [0x55937e260000(0x9f000) @ 0x1000 fe:00 10264646 0]: r-xp /tmp/cps/srv
C2 CompilerThre  2697/2701    884.623866:    2004008 cpu-clock:pppH: 
	ffffffff81000e46 asm_sysvec_reschedule_ipi+0x16 ([kernel.kallsyms])
	           9e870 [unknown] (/tmp/cps/srv)
	    7f5c1f000010 [unknown] ([unknown])
	    7f5c1f000020 LazyCompile:~handle /app/a.js:1 (/tmp/perf-2697.map)
	           2724a std::vector<int, std::allocator<int> >::push_back(int const&)+0x7a (/usr/lib/libfoo.so (deleted))
	           11d9 operator()+0x26 (/x/y)

srv  2697/2697    884.783476:    1000000 cpu-clock:pppH: 
	           81103 main.(*T).serve+0x1c (/tmp/cps/srv)
`
	tr, err := ParseScript(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Samples) != 2 {
		t.Fatalf("got %d samples, want 2", len(tr.Samples))
	}
	s := tr.Samples[0]
	if s.Comm != "C2 CompilerThre" || s.PID != 2697 || s.TID != 2701 || s.Period != 2004008 {
		t.Errorf("header = %q %d/%d period %d, want \"C2 CompilerThre\" 2697/2701 period 2004008", s.Comm, s.PID, s.TID, s.Period)
	}
	want := []Frame{
		{Addr: 0xffffffff81000e46, Symbol: "asm_sysvec_reschedule_ipi", Offset: 0x16, DSO: KernelDSO},
		{Addr: 0x9e870, DSO: "/tmp/cps/srv"},
		{Addr: 0x7f5c1f000010},
		{Addr: 0x7f5c1f000020, Symbol: "LazyCompile:~handle /app/a.js:1", DSO: "/tmp/perf-2697.map"},
		{Addr: 0x2724a, Symbol: "std::vector<int, std::allocator<int> >::push_back(int const&)", Offset: 0x7a, DSO: "/usr/lib/libfoo.so (deleted)"},
		{Addr: 0x11d9, Symbol: "operator()", Offset: 0x26, DSO: "/x/y"},
	}
	if len(s.Stack) != len(want) {
		t.Fatalf("stack has %d frames, want %d: %+v", len(s.Stack), len(want), s.Stack)
	}
	for i := range want {
		if s.Stack[i] != want[i] {
			t.Errorf("frame %d = %+v, want %+v", i, s.Stack[i], want[i])
		}
	}
	if got := tr.Samples[1].Stack[0].Symbol; got != "main.(*T).serve" {
		t.Errorf("second sample's leaf = %q, want main.(*T).serve", got)
	}
	wantMaps := []Mapping{
		{PID: -1, Start: 0xffffffff81000000, Len: 0x1276988, Pgoff: 0xffffffff81000000, Prot: "x", Path: "[kernel.kallsyms]_text", Synthesized: true, Kernel: true},
		{PID: 2697, Start: 0x55937e260000, Len: 0x9f000, Pgoff: 0x1000, Prot: "r-xp", Path: "/tmp/cps/srv", Synthesized: true},
	}
	if len(tr.Mappings) != len(wantMaps) {
		t.Fatalf("mappings = %+v, want %+v", tr.Mappings, wantMaps)
	}
	for i := range wantMaps {
		if tr.Mappings[i] != wantMaps[i] {
			t.Errorf("mapping %d = %+v, want %+v", i, tr.Mappings[i], wantMaps[i])
		}
	}
}

func TestParseScriptBadFrame(t *testing.T) {
	const text = "srv  1/1    1.000000:    1000 cpu-clock:pppH: \n\tzz main.f (/x)\n"
	if _, err := ParseScript(strings.NewReader(text)); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("ParseScript(bad frame) error = %v, want one naming line 2", err)
	}
}

func TestKeepPIDs(t *testing.T) {
	tr := &Trace{Samples: []Sample{{PID: 1}, {PID: 2}, {PID: 3}, {PID: 2}}}
	tr.KeepPIDs(2, 3)
	var got []int
	for _, s := range tr.Samples {
		got = append(got, s.PID)
	}
	if len(got) != 3 || got[0] != 2 || got[1] != 3 || got[2] != 2 {
		t.Errorf("KeepPIDs(2, 3) left pids %v, want [2 3 2]", got)
	}
}

// The testdata files are perf script output captured on the development VM (perf 6.1):
// go-server.script from a net/http server built with -ldflags=-s -w under wrk
// (perf -F 499 -g -p, 0.6 s), c-spin.script from a gcc -O1 -fno-omit-frame-pointer
// program spinning in spin_here.
func readScript(t *testing.T, name string) *Trace {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := ParseScript(f)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestParseScriptGoServer(t *testing.T) {
	tr := readScript(t, "go-server.script")
	const bin = "/tmp/cps/srv/server-stripped"
	if len(tr.Samples) != 198 {
		t.Errorf("%d samples, want 198", len(tr.Samples))
	}
	if len(tr.Mappings) != 6 || tr.Mappings[1].Path != bin || tr.Mappings[1].Start != 0x400000 || !tr.Mappings[0].Kernel {
		t.Errorf("mappings = %+v, want the kernel's, then the server's at 0x400000, ...", tr.Mappings)
	}
	pid := tr.Mappings[1].PID
	frames := map[string]int{}
	for _, s := range tr.Samples {
		if s.PID != pid || s.Comm != "server-stripped" || s.Period == 0 || len(s.Stack) == 0 {
			t.Fatalf("sample %+v, want pid %d, comm server-stripped, a period and a stack", s, pid)
		}
		for _, f := range s.Stack {
			switch {
			case f.DSO == bin && f.Symbol == "" && f.Addr < 0x29e000:
				frames["exe"]++ // unresolved, at an offset inside the file
			case f.DSO == KernelDSO && f.Symbol != "" && f.Kernel():
				frames["kernel"]++
			case f.DSO == "[vdso]":
				frames["vdso"]++
			default:
				t.Errorf("unexpected frame %+v", f)
			}
		}
	}
	if frames["exe"] != 1889 || frames["kernel"] != 1082 || frames["vdso"] != 4 {
		t.Errorf("frames by kind %v, want exe 1889, kernel 1082, vdso 4", frames)
	}
}

func TestParseScriptNative(t *testing.T) {
	tr := readScript(t, "c-spin.script")
	if len(tr.Samples) != 90 {
		t.Errorf("%d samples, want 90", len(tr.Samples))
	}
	leaves := 0
	for _, s := range tr.Samples {
		if f := s.Stack[0]; f.Symbol == "spin_here" && f.DSO == "/tmp/cps/spinc" && f.Offset > 0 && f.Offset < 0x100 {
			leaves++
		}
	}
	if leaves < 45 {
		t.Errorf("%d samples with spin_here+0x.. as leaf, want most of 90", leaves)
	}
}

func FuzzParseScript(f *testing.F) {
	for _, name := range []string{"go-server.script", "c-spin.script"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 4096)])
	}
	f.Add([]byte("x  1/1  1.0:  5 cpu-clock:\n\t1 (\n\t2 ) (\n\t3 a+0x (b)\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ParseScript(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, s := range tr.Samples {
			for _, fr := range s.Stack {
				_ = fr.Name()
			}
		}
	})
}
