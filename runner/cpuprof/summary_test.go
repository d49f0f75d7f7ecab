package cpuprof

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestSummarize(t *testing.T) {
	s := Summarize(synthetic())
	if s.Samples != 10 || s.CPUNs != 10e6 {
		t.Errorf("Samples %d CPUNs %d, want 10 and 10e6", s.Samples, s.CPUNs)
	}
	// Kernel: 3 leaves in tcp_sendmsg; GC: the one scanobject sample; own: the two
	// samples whose leaf is main.handleJSON.
	if !near(s.Kernel, 30) || !near(s.GC, 10) || !near(s.Own, 20) {
		t.Errorf("kernel %.1f%% gc %.1f%% own %.1f%%, want 30, 10, 20", s.Kernel, s.GC, s.Own)
	}
	self := s.TopSelf(3)
	want := []FuncShare{
		{Name: "encoding/json.(*encodeState).marshal", Self: 40, Cum: 40},
		{Name: "tcp_sendmsg", Self: 30, Cum: 30},
		{Name: "main.handleJSON", Self: 20, Cum: 60},
	}
	if len(self) != len(want) {
		t.Fatalf("TopSelf(3) = %v, want %v", self, want)
	}
	for i := range want {
		if self[i].Name != want[i].Name || !near(self[i].Self, want[i].Self) || !near(self[i].Cum, want[i].Cum) {
			t.Errorf("TopSelf(3)[%d] = %+v, want %+v", i, self[i], want[i])
		}
	}
	cum := s.TopCum(2)
	if len(cum) != 2 || cum[0].Name != "runtime.goexit" || !near(cum[0].Cum, 100) || cum[1].Name != "net/http.(*conn).serve" || !near(cum[1].Cum, 90) {
		t.Errorf("TopCum(2) = %+v, want runtime.goexit 100%%, net/http.(*conn).serve 90%%", cum)
	}
	if got := s.TopSelf(100); len(got) != 4 {
		t.Errorf("TopSelf(100) has %d functions, want the 4 that are ever a leaf: %v", len(got), got)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Errorf("summary does not marshal: %v", err)
	}
}

func TestSummarizeRecursion(t *testing.T) {
	f := func(sym string) Frame { return Frame{Symbol: sym, DSO: "/app/server"} }
	s := Summarize([]Sample{
		{Period: 1, Stack: []Frame{f("main.fib"), f("main.fib"), f("main.fib"), f("main.main")}},
		{Period: 1, Stack: []Frame{f("main.main")}},
	})
	for _, fn := range s.Funcs {
		if fn.Name == "main.fib" && !near(fn.Cum, 50) {
			t.Errorf("main.fib cumulative %.1f%%, want 50 (once per sample)", fn.Cum)
		}
		if fn.Name == "main.main" && !near(fn.Cum, 100) {
			t.Errorf("main.main cumulative %.1f%%, want 100", fn.Cum)
		}
	}
}

func TestIsOwnCode(t *testing.T) {
	tests := []struct {
		f     Frame
		goBin bool
		want  bool
	}{
		{Frame{Symbol: "main.handler", DSO: "/app/server"}, true, true},
		{Frame{Symbol: "github.com/valyala/fasthttp.(*Server).serveConn", DSO: "/app/server"}, true, true},
		{Frame{Symbol: "net/http.(*conn).serve", DSO: "/app/server"}, true, false},
		{Frame{Symbol: "runtime.mallocgc", DSO: "/app/server"}, true, false},
		{Frame{Symbol: "vendor/golang.org/x/net/http2/hpack.(*Decoder).Write", DSO: "/app/server"}, true, false},
		{Frame{Symbol: "sync/atomic.(*Pointer[github.com/x/y.T]).Load", DSO: "/app/server"}, true, false},
		{Frame{Symbol: "github.com/x/y.Map[go.shape.int].Get", DSO: "/app/server"}, true, true},
		{Frame{Symbol: "handle_request", DSO: "/usr/local/bin/h2o"}, false, true},
		{Frame{Symbol: "memcpy", DSO: "/usr/lib/x86_64-linux-gnu/libc.so.6"}, false, false},
		{Frame{Symbol: "tcp_sendmsg", DSO: KernelDSO}, false, false},
		{Frame{Symbol: "LazyCompile:~f", DSO: "/tmp/perf-1.map"}, false, false},
		{Frame{Symbol: "__vdso_clock_gettime", DSO: "[vdso]"}, false, false},
	}
	for _, tt := range tests {
		if got := IsOwnCode(tt.f, tt.goBin); got != tt.want {
			t.Errorf("IsOwnCode(%s in %s, go %v) = %v, want %v", tt.f.Symbol, tt.f.DSO, tt.goBin, got, tt.want)
		}
	}
}

func TestIsGC(t *testing.T) {
	tests := []struct {
		f    Frame
		want bool
	}{
		{Frame{Symbol: "runtime.gcBgMarkWorker"}, true},
		{Frame{Symbol: "runtime.gcDrainMarkWorkerDedicated"}, true},
		{Frame{Symbol: "runtime.gcAssistAlloc1"}, true},
		{Frame{Symbol: "runtime.mallocgc"}, false},
		{Frame{Symbol: "runtime.memclrNoHeapPointers"}, false},
		{Frame{Symbol: "WKS::gc_heap::mark_object_simple(unsigned char**)", DSO: "/usr/share/dotnet/shared/Microsoft.NETCore.App/8.0.0/libcoreclr.so"}, true},
		{Frame{Symbol: "SVR::gc_heap::plan_phase(int)", DSO: "/usr/share/dotnet/shared/Microsoft.NETCore.App/8.0.0/libcoreclr.so"}, true},
		{Frame{Symbol: "G1ParScanThreadState::trim_queue_partially()", DSO: "/opt/java/lib/server/libjvm.so"}, true},
		{Frame{Symbol: "PSScavenge::invoke()", DSO: "/opt/java/lib/server/libjvm.so"}, true},
		{Frame{Symbol: "JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)", DSO: "/opt/java/lib/server/libjvm.so"}, false},
		{Frame{Symbol: "G1Thing", DSO: "/app/not-a-jvm"}, false},
		{Frame{Symbol: Unknown}, false},
	}
	for _, tt := range tests {
		if got := IsGC(tt.f); got != tt.want {
			t.Errorf("IsGC(%s in %q) = %v, want %v", tt.f.Symbol, tt.f.DSO, got, tt.want)
		}
	}
}

func TestCompare(t *testing.T) {
	base := Summarize(synthetic())
	// The head allocates more: two of the marshal samples now end in mallocgc.
	head := synthetic()
	for i := range 2 {
		head[i].Stack = append([]Frame{{Symbol: "runtime.mallocgc", DSO: "/app/server"}}, head[i].Stack...)
	}
	d := Compare(base, Summarize(head), 3)
	var got []string
	for _, c := range d.Self {
		got = append(got, c.String())
	}
	want := "+20.0 pts runtime.mallocgc, -20.0 pts encoding/json.(*encodeState).marshal"
	if strings.Join(got, ", ") != want {
		t.Errorf("self changes = %s, want %s", strings.Join(got, ", "), want)
	}
	if len(d.Cum) != 1 || d.Cum[0].Name != "runtime.mallocgc" || !near(d.Cum[0].Before, 0) || !near(d.Cum[0].After, 20) {
		t.Errorf("cumulative changes = %+v, want only runtime.mallocgc 0 -> 20", d.Cum)
	}
	if !near(d.Kernel, 0) || !near(d.GC, 0) || !near(d.Own, 0) {
		t.Errorf("kernel/gc/own moved %.1f/%.1f/%.1f pts, want 0", d.Kernel, d.GC, d.Own)
	}
	if d := Compare(base, base, 5); len(d.Self)+len(d.Cum) != 0 {
		t.Errorf("Compare(s, s) = %+v, want no changes", d)
	}
}
