package cpuprof

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// MinShare is the smallest cumulative share, in percent, of a function a [Summary] keeps.
// [Compare] counts a function missing from one side as 0 there.
const MinShare = 0.1

// A Summary is what a reply says about one profile. Shares are percentages of the CPU
// time sampled (the sum of the samples' periods).
type Summary struct {
	Samples int    `json:"samples"`
	CPUNs   uint64 `json:"cpu_ns"`
	// Kernel is the share of samples whose leaf frame is in the kernel.
	Kernel float64 `json:"kernel_pct"`
	// GC is the share of samples with a garbage collector frame anywhere in the stack
	// (see [IsGC]).
	GC float64 `json:"gc_pct"`
	// Own is the share of samples whose leaf frame is the entry's own code (see
	// [IsOwnCode]).
	Own float64 `json:"own_pct"`
	// Funcs holds every function whose cumulative share is at least MinShare, by
	// cumulative share, then self share, then name.
	Funcs []FuncShare `json:"funcs"`
}

// A FuncShare is one function's part of a profile. Self counts samples where it is the
// leaf; Cum samples where it is anywhere in the stack, once per sample even when it
// recurses.
type FuncShare struct {
	Name string  `json:"name"`
	Self float64 `json:"self_pct"`
	Cum  float64 `json:"cum_pct"`
}

// Summarize computes a profile's summary. Symbolize the samples first: the rules for GC
// and own code go by function name.
func Summarize(samples []Sample) Summary {
	var s Summary
	self := map[string]uint64{}
	cum := map[string]uint64{}
	goDSOs := goDSOs(samples)
	var kernel, gc, own uint64
	seen := map[string]bool{}
	for _, smp := range samples {
		s.Samples++
		s.CPUNs += smp.Period
		if len(smp.Stack) == 0 {
			self[Unknown] += smp.Period
			cum[Unknown] += smp.Period
			continue
		}
		leaf := smp.Stack[0]
		self[leaf.Name()] += smp.Period
		if leaf.Kernel() {
			kernel += smp.Period
		}
		if IsOwnCode(leaf, goDSOs[leaf.DSO]) {
			own += smp.Period
		}
		clear(seen)
		isGC := false
		for _, f := range smp.Stack {
			name := f.Name()
			if !seen[name] {
				seen[name] = true
				cum[name] += smp.Period
			}
			isGC = isGC || IsGC(f)
		}
		if isGC {
			gc += smp.Period
		}
	}
	pct := func(v uint64) float64 {
		if s.CPUNs == 0 {
			return 0
		}
		return 100 * float64(v) / float64(s.CPUNs)
	}
	s.Kernel, s.GC, s.Own = pct(kernel), pct(gc), pct(own)
	for name, c := range cum {
		if p := pct(c); p >= MinShare {
			s.Funcs = append(s.Funcs, FuncShare{Name: name, Self: pct(self[name]), Cum: p})
		}
	}
	slices.SortFunc(s.Funcs, func(a, b FuncShare) int {
		return cmp.Or(cmp.Compare(b.Cum, a.Cum), cmp.Compare(b.Self, a.Self), strings.Compare(a.Name, b.Name))
	})
	return s
}

// TopSelf is the n functions with the largest self share (fewer if the profile has fewer
// with any), ties by name.
func (s Summary) TopSelf(n int) []FuncShare {
	out := slices.DeleteFunc(slices.Clone(s.Funcs), func(f FuncShare) bool { return f.Self == 0 })
	slices.SortStableFunc(out, func(a, b FuncShare) int {
		return cmp.Or(cmp.Compare(b.Self, a.Self), strings.Compare(a.Name, b.Name))
	})
	return out[:min(n, len(out))]
}

// TopCum is the n functions with the largest cumulative share.
func (s Summary) TopCum(n int) []FuncShare {
	return slices.Clone(s.Funcs[:min(n, len(s.Funcs))])
}

// goDSOs are the DSOs holding Go code: those with a runtime. frame.
func goDSOs(samples []Sample) map[string]bool {
	out := map[string]bool{}
	for _, s := range samples {
		for _, f := range s.Stack {
			if strings.HasPrefix(f.Symbol, "runtime.") && !f.Kernel() {
				out[f.DSO] = true
			}
		}
	}
	return out
}

// IsOwnCode reports whether a frame is the entry's own code, not a runtime's, the
// standard library's or the kernel's. In a Go binary (goBinary: the frame's DSO holds
// the Go runtime), a function is the entry's when it is in package main or its package
// path's first element has a dot (github.com/..., the framework included); the standard
// library's paths (net/http, runtime, vendor/golang.org/x/net) have none. Elsewhere a
// frame is the entry's when it is in the main executable: a file that is not a shared
// library (no ".so" in its name); JIT code and interpreters count as runtime.
func IsOwnCode(f Frame, goBinary bool) bool {
	if f.Kernel() || !isFileDSO(f.DSO) {
		return false
	}
	base := baseName(f.DSO)
	if strings.Contains(base, ".so") {
		return false
	}
	if !goBinary {
		return true
	}
	return isOwnGoFunc(f.Symbol)
}

func isOwnGoFunc(name string) bool {
	if strings.HasPrefix(name, "main.") {
		return true
	}
	// Type arguments ("F[go.shape.int,github.com/x.T]") are not part of the path.
	name, _, _ = strings.Cut(name, "[")
	// The package path ends at the first dot after the last slash; its first element is
	// what comes before the first slash.
	slash := strings.LastIndexByte(name, '/')
	dot := strings.IndexByte(name[slash+1:], '.')
	if dot < 0 {
		return false
	}
	first, _, _ := strings.Cut(name[:slash+1+dot], "/")
	return strings.Contains(first, ".")
}

// GC frames of the runtimes we know. The rule is conservative: it counts the
// collector's own work (marking, assists, sweeping in the background, stop-the-world
// phases), not allocation, so runtime.mallocgc counts only through the
// runtime.gcAssistAlloc it calls when it must help.
var (
	goGCPrefixes = []string{
		"runtime.gcBgMarkWorker", "runtime.gcDrain", "runtime.gcAssistAlloc", "runtime.markroot",
		"runtime.scanobject", "runtime.scanblock", "runtime.scanstack", "runtime.scanframeworker",
		"runtime.greyobject", "runtime.gcStart", "runtime.gcMarkDone", "runtime.gcMarkTermination",
		"runtime.bgsweep", "runtime.bgscavenge", "runtime.gcSweep", "runtime.scanSpan",
	}
	// .NET: the workstation and server collectors of coreclr (or the standalone libclrgc).
	dotnetGCPrefixes = []string{"WKS::gc_heap::", "SVR::gc_heap::", "WKS::GCHeap::", "SVR::GCHeap::"}
	// HotSpot: collector classes and threads in libjvm.so.
	jvmGCParts = []string{
		"G1", "GCTaskThread", "ParallelGC", "PSScavenge", "PSParallelCompact", "PSPromotionManager",
		"Shenandoah", "ZMark", "ZHeap", "ZRelocate", "SerialHeap", "DefNewGeneration", "GCTask",
	}
)

// IsGC reports whether a frame is garbage collector work of a runtime this package
// knows: Go (runtime.gcBgMarkWorker, runtime.gcDrain*, runtime.gcAssistAlloc*, the scan
// and mark functions, background sweeping and scavenging), .NET (WKS::gc_heap::* and
// SVR::gc_heap::* in coreclr) and the JVM (libjvm.so frames of G1, Parallel, Serial,
// Shenandoah and Z collectors, GC task threads).
func IsGC(f Frame) bool {
	name := f.Symbol
	if name == "" || name == Unknown {
		return false
	}
	if strings.HasPrefix(name, "runtime.") {
		for _, p := range goGCPrefixes {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return false
	}
	for _, p := range dotnetGCPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	if strings.Contains(baseName(f.DSO), "libjvm.so") {
		for _, p := range jvmGCParts {
			if strings.Contains(name, p) {
				return true
			}
		}
	}
	return false
}

// A Diff is how a profile moved from a base to a head, in percentage points, each change
// with the half-width of its 95% interval (Margin).
type Diff struct {
	Kernel, KernelMargin float64
	GC, GCMargin         float64
	Own, OwnMargin       float64
	// Self and Cum are the functions whose self (cumulative) share moved by more than its
	// margin, largest absolute change first (growth before shrinkage, then by name, on
	// ties). A move within its margin is what two profiles of the same code show.
	Self []Change
	Cum  []Change
}

// A Change is one function's share in the base and in the head, in percent, and the
// half-width of the 95% interval of their difference, in points.
type Change struct {
	Name   string
	Before float64
	After  float64
	Delta  float64
	Margin float64
}

// String is how a reply shows the change: "+8.2 pts (±1.3) runtime.mallocgc".
func (c Change) String() string {
	return fmt.Sprintf("%+.1f pts (±%.1f) %s", c.Delta, c.Margin, c.Name)
}

// Margin is the half-width, in percentage points, of the interval of the difference
// between a share of before (percent of nBefore samples) and one of after (of nAfter), at
// z standard errors: the normal approximation of two binomial proportions, each share
// counted as at least one sample so that a function absent from one side still has its
// sampling error.
func Margin(before float64, nBefore int, after float64, nAfter int, z float64) float64 {
	if nBefore <= 0 || nAfter <= 0 {
		return math.Inf(1)
	}
	v := func(pct float64, n int) float64 {
		p := math.Max(pct/100, 1/float64(n))
		p = math.Min(p, 1-1/float64(n))
		return p * (1 - p) / float64(n)
	}
	return 100 * z * math.Sqrt(v(before, nBefore)+v(after, nAfter))
}

// zFor is the number of standard errors that makes m intervals hold together with 95%
// confidence (Bonferroni: each at 1 − 0.05/m, two-sided): 1.96 for one, 3.2 for 30. Two
// profiles of the same code then list no function at all in 19 of 20 comparisons, where
// m separate 95% intervals would list one in most of them.
func zFor(m int) float64 {
	return math.Sqrt2 * math.Erfinv(1-0.05/float64(max(m, 1)))
}

// Compare lists the n largest changes from base to head, of self and of cumulative
// share, among those larger than their margin (the functions' intervals holding together
// at 95%); smaller ones are left out. The kernel, GC and own-code changes have margins of
// their own, the three holding together.
func Compare(base, head Summary, n int) Diff {
	z := zFor(3)
	m := func(b, h float64) float64 { return Margin(b, base.Samples, h, head.Samples, z) }
	d := Diff{
		Kernel: head.Kernel - base.Kernel, KernelMargin: m(base.Kernel, head.Kernel),
		GC: head.GC - base.GC, GCMargin: m(base.GC, head.GC),
		Own: head.Own - base.Own, OwnMargin: m(base.Own, head.Own),
	}
	d.Self = changes(base, head, n, func(f FuncShare) float64 { return f.Self })
	d.Cum = changes(base, head, n, func(f FuncShare) float64 { return f.Cum })
	return d
}

func changes(base, head Summary, n int, share func(FuncShare) float64) []Change {
	byName := map[string]*Change{}
	for _, f := range base.Funcs {
		byName[f.Name] = &Change{Name: f.Name, Before: share(f)}
	}
	for _, f := range head.Funcs {
		c := byName[f.Name]
		if c == nil {
			c = &Change{Name: f.Name}
			byName[f.Name] = c
		}
		c.After = share(f)
	}
	var out []Change
	z := zFor(len(byName))
	for _, c := range byName {
		c.Delta = c.After - c.Before
		c.Margin = Margin(c.Before, base.Samples, c.After, head.Samples, z)
		if math.Abs(c.Delta) > c.Margin && math.Abs(c.Delta) >= 0.05 {
			out = append(out, *c)
		}
	}
	slices.SortFunc(out, func(a, b Change) int {
		return cmp.Or(cmp.Compare(math.Abs(b.Delta), math.Abs(a.Delta)), cmp.Compare(b.Delta, a.Delta), strings.Compare(a.Name, b.Name))
	})
	return out[:min(n, len(out))]
}
