package measure

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/cpuprof"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
)

// TestProfilerCheck: a host without perf, or where perf may not record system-wide, is
// told once, with the fix, and the answer is kept (a job asks once, not per row).
func TestProfilerCheck(t *testing.T) {
	dir := t.TempDir()
	missing := &profiler{perf: filepath.Join(dir, "no-perf")}
	err := missing.check(t.Context(), dir)
	if !errors.Is(err, ErrNoPerf) || !strings.Contains(err.Error(), "linux-perf") {
		t.Errorf("check without perf = %v; want ErrNoPerf naming linux-perf", err)
	}
	refusing := filepath.Join(dir, "perf")
	if err := os.WriteFile(refusing, []byte("#!/bin/sh\necho 'Error: Access to performance monitoring and observability operations is limited.' >&2\nexit 255\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	denied := &profiler{perf: refusing}
	err = denied.check(t.Context(), dir)
	if !errors.Is(err, ErrNoPerf) || !strings.Contains(err.Error(), "kernel.perf_event_paranoid") || !strings.Contains(err.Error(), "Access to performance monitoring") {
		t.Errorf("check with a refusing perf = %v; want ErrNoPerf naming kernel.perf_event_paranoid and perf's reason", err)
	}
	os.Remove(refusing)
	if again := denied.check(t.Context(), dir); again != err {
		t.Errorf("second check = %v; want the first answer kept", again)
	}
}

// TestAttach: a profile goes on its result with the file names, and with a profiled base its
// difference, in points rounded to one decimal, each with its margin.
func TestAttach(t *testing.T) {
	p, _ := profile.Lookup("baseline")
	sum := func(malloc float64) cpuprof.Summary {
		return cpuprof.Summary{Samples: 1000, Kernel: 40, GC: 2, Own: 1, Funcs: []cpuprof.FuncShare{
			{Name: "net/http.(*conn).serve", Self: 1, Cum: 80}, {Name: "runtime.mallocgc", Self: malloc, Cum: malloc + 2}}}
	}
	head := &cpuRun{res: &result.CPUProfile{Samples: 100}, summary: sum(11.26), pprof: []byte("p"), flame: []byte("f")}
	base := &cpuRun{res: &result.CPUProfile{Samples: 90}, summary: sum(3.04)}
	var r result.Result
	head.attach(&r, base, p, 512)
	got := r.CPUProfile
	if got == nil || got.Pprof != "baseline-512.cpu.pb.gz" || got.Flame != "baseline-512.cpu.svg" || got.Base != base.res {
		t.Fatalf("attached %+v; want the files named and the base beside it", got)
	}
	if got.Diff == nil || len(got.Diff.Self) == 0 || !strings.HasPrefix(got.Diff.Self[0].String(), "+8.2 pts (±") ||
		!strings.HasSuffix(got.Diff.Self[0].String(), ") runtime.mallocgc") || got.Diff.Self[0].Margin < 2 || got.Diff.Self[0].Margin > 3 {
		t.Errorf("difference %+v; want +8.2 pts (±2.x) runtime.mallocgc first: 1,000 samples a side", got.Diff)
	}
	failed := &cpuRun{res: &result.CPUProfile{Err: "perf is not installed"}}
	var r2 result.Result
	failed.attach(&r2, base, p, 512)
	if r2.CPUProfile == nil || r2.CPUProfile.Pprof != "" || r2.CPUProfile.Diff != nil {
		t.Errorf("a failed profile attached as %+v; want its reason, no files, no difference", r2.CPUProfile)
	}
	baseFailed := &cpuRun{res: &result.CPUProfile{Err: "the profiled run: no response"}}
	var r3 result.Result
	head2 := &cpuRun{res: &result.CPUProfile{Samples: 100}, summary: sum(11.26), pprof: []byte("p"), flame: []byte("f")}
	head2.attach(&r3, baseFailed, p, 512)
	if got := r3.CPUProfile; got == nil || got.Samples != 100 || got.Diff != nil || got.Base == nil || got.Base.Err != "the profiled run: no response" {
		t.Errorf("a profile whose base failed attached as %+v; want it with the base's reason beside it and no difference", got)
	}
}

// pprofOf is a gzipped pprof profile of a server that spends malloc of every 1,000 samples
// in runtime.mallocgc and the rest in the kernel below net/http's serving path.
func pprofOf(t *testing.T, malloc int) []byte {
	t.Helper()
	serve := cpuprof.Frame{Symbol: "net/http.(*conn).serve", DSO: "/server", Addr: 0x1000}
	var samples []cpuprof.Sample
	for i := range 1000 {
		leaf := cpuprof.Frame{Symbol: "tcp_sendmsg", DSO: cpuprof.KernelDSO, Addr: 0xffffffff81000000}
		if i < malloc {
			leaf = cpuprof.Frame{Symbol: "runtime.mallocgc", DSO: "/server", Addr: 0x2000}
		}
		samples = append(samples, cpuprof.Sample{PID: 1, Comm: "server", Period: 2_000_000, Stack: []cpuprof.Frame{leaf, serve}})
	}
	var buf bytes.Buffer
	if err := cpuprof.WritePprof(&buf, cpuprof.ToPprof(samples, time.Second)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCompareCommitted: a profile is compared with the one committed for its row, and the
// difference says it is against the committed one.
func TestCompareCommitted(t *testing.T) {
	d, err := CompareCommitted(pprofOf(t, 30), pprofOf(t, 110))
	if err != nil {
		t.Fatal(err)
	}
	if !d.Committed || d.Kernel != -8 || d.KernelMargin <= 0 || d.KernelMargin >= 8 || len(d.Self) == 0 ||
		!strings.HasPrefix(d.Self[0].String(), "+8.0 pts (±") || !strings.HasSuffix(d.Self[0].String(), ") runtime.mallocgc") {
		t.Errorf("CompareCommitted = %+v; want committed, kernel -8 pts beyond its margin, +8.0 pts (±x) runtime.mallocgc first", d)
	}
	if _, err := CompareCommitted([]byte("not a profile"), pprofOf(t, 1)); err == nil || !strings.Contains(err.Error(), "committed profile") {
		t.Errorf("a bad committed profile: %v", err)
	}
}
