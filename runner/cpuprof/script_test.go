package cpuprof

import (
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
