package cpuprof

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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
	// The synthetic profile 100 times over: 1,000 samples a side.
	repeat := func(f func() []Sample) []Sample {
		var out []Sample
		for range 100 {
			out = append(out, f()...)
		}
		return out
	}
	base := Summarize(repeat(synthetic))
	// The head allocates more: two of every ten marshal samples now end in mallocgc.
	head := Summarize(repeat(func() []Sample {
		s := synthetic()
		for i := range 2 {
			s[i].Stack = append([]Frame{{Symbol: "runtime.mallocgc", DSO: "/app/server"}}, s[i].Stack...)
		}
		return s
	}))
	d := Compare(base, head, 3)
	if len(d.Self) != 2 || d.Self[0].Name != "runtime.mallocgc" || !near(d.Self[0].Delta, 20) ||
		d.Self[1].Name != "encoding/json.(*encodeState).marshal" || !near(d.Self[1].Delta, -20) {
		t.Fatalf("self changes = %+v, want mallocgc +20 and marshal -20", d.Self)
	}
	// mallocgc: 0% (counted as one sample in 1,000) against 20% of 1,000, the intervals of
	// the 7 functions holding together.
	if m := d.Self[0].Margin; m < 2 || m > 6 {
		t.Errorf("mallocgc's margin %.2f pts; want the few points 1,000 samples a side give", m)
	}
	if got, want := d.Self[0].String(), fmt.Sprintf("+20.0 pts (±%.1f) runtime.mallocgc", d.Self[0].Margin); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if len(d.Cum) != 1 || d.Cum[0].Name != "runtime.mallocgc" || !near(d.Cum[0].Before, 0) || !near(d.Cum[0].After, 20) {
		t.Errorf("cumulative changes = %+v, want only runtime.mallocgc 0 -> 20", d.Cum)
	}
	if !near(d.Kernel, 0) || !near(d.GC, 0) || !near(d.Own, 0) || d.KernelMargin <= 0 {
		t.Errorf("kernel/gc/own moved %.1f/%.1f/%.1f pts (margin %.1f), want 0 with a margin", d.Kernel, d.GC, d.Own, d.KernelMargin)
	}
	if d := Compare(base, base, 5); len(d.Self)+len(d.Cum) != 0 {
		t.Errorf("Compare(s, s) = %+v, want no changes", d)
	}
	// The same change in the 10-sample profile is inside its margin: not listed.
	if d := Compare(Summarize(synthetic()), Summarize(synthetic()[:9]), 5); len(d.Self) != 0 {
		t.Errorf("10 samples a side listed %+v; a change that size is within their sampling error", d.Self)
	}
}

// drawProfile samples n leaf functions from shares (percent, by function) with the seeded
// r, each stack leaf → main.serve → runtime.goexit.
func drawProfile(r *rand.Rand, shares []float64, n int) []Sample {
	out := make([]Sample, n)
	for i := range out {
		x, k := r.Float64()*100, 0
		for ; k < len(shares)-1 && x >= shares[k]; k++ {
			x -= shares[k]
		}
		out[i] = Sample{Period: 1_000_000, Stack: []Frame{
			{Symbol: fmt.Sprintf("main.f%02d", k), DSO: "/app/server"},
			{Symbol: "main.serve", DSO: "/app/server"}, {Symbol: "runtime.goexit", DSO: "/app/server"},
		}}
	}
	return out
}

// TestCompareAA: two profiles of the same server (1,000 samples a side drawn from one
// distribution of 24 functions) list no function in at least 93 of 100 comparisons, where
// per-function 95% intervals would list one in most; a real move of 10 points from one
// function to another (22% to 32%, where the margin is about 6) is listed in at least 90
// of 100.
func TestCompareAA(t *testing.T) {
	shares := []float64{22, 15, 10, 8, 7, 6, 5, 4, 4, 3, 3, 2, 2, 2, 1.5, 1.5, 1, 1, 0.5, 0.5, 0.3, 0.3, 0.2, 0.2}
	r := rand.New(rand.NewPCG(1, 2))
	const trials = 400
	listed, naive := 0, 0
	for range trials {
		a, b := Summarize(drawProfile(r, shares, 1000)), Summarize(drawProfile(r, shares, 1000))
		if d := Compare(a, b, 10); len(d.Self)+len(d.Cum) > 0 {
			listed++
		}
		for _, f := range b.Funcs { // what one 95% interval per function would have listed
			before := 0.0
			for _, g := range a.Funcs {
				if g.Name == f.Name {
					before = g.Self
				}
			}
			if math.Abs(f.Self-before) > Margin(before, a.Samples, f.Self, b.Samples, 1.96) {
				naive++
				break
			}
		}
	}
	if rate := float64(listed) / trials; rate > 0.07 {
		t.Errorf("A/A: %d of %d comparisons listed a change (%.1f%%); want at most 7%%", listed, trials, 100*rate)
	}
	if naive < trials/3 {
		t.Errorf("per-function intervals listed a change in only %d of %d A/A comparisons; the test no longer shows why the intervals hold together", naive, trials)
	}
	moved := slices.Clone(shares)
	moved[0], moved[1] = moved[0]+10, moved[1]-10
	found := 0
	for range trials {
		d := Compare(Summarize(drawProfile(r, shares, 1000)), Summarize(drawProfile(r, moved, 1000)), 10)
		for _, c := range d.Self {
			if c.Name == "main.f00" && c.Delta > 0 {
				found++
				break
			}
		}
	}
	if found < trials*9/10 {
		t.Errorf("a 10-point move was listed in %d of %d comparisons; want at least 90%%", found, trials)
	}
	t.Logf("A/A listed a change in %d of %d comparisons (per-function intervals: %d); a 10-point move was listed in %d", listed, trials, naive, found)
}
