package cpuprof

import (
	"bytes"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// synthetic is a small profile of a Go server: 10 samples, 6 in handler code, 3 in the
// kernel below a write, 1 in the collector.
func synthetic() []Sample {
	const exe = "/app/server"
	fr := func(sym string, addr uint64) Frame { return Frame{Addr: addr, Symbol: sym, DSO: exe} }
	kern := func(sym string, addr uint64) Frame { return Frame{Addr: addr, Symbol: sym, DSO: KernelDSO} }
	serve := []Frame{fr("net/http.(*conn).serve", 0x1000), fr("runtime.goexit", 0x10)}
	handler := append([]Frame{fr("main.handleJSON", 0x2000), fr("net/http.HandlerFunc.ServeHTTP", 0x1800)}, serve...)
	var out []Sample
	add := func(n int, stack ...Frame) {
		for range n {
			out = append(out, Sample{PID: 42, TID: 43, Comm: "server", Period: 1_000_000, Stack: stack})
		}
	}
	add(4, append([]Frame{fr("encoding/json.(*encodeState).marshal", 0x3000)}, handler...)...)
	add(2, handler...)
	add(3, append([]Frame{kern("tcp_sendmsg", 0xffffffff81001000), kern("entry_SYSCALL_64", 0xffffffff81000100),
		fr("syscall.Syscall", 0x500), fr("net.(*conn).Write", 0x900)}, serve...)...)
	add(1, fr("runtime.scanobject", 0x700), fr("runtime.gcDrain", 0x710), fr("runtime.gcBgMarkWorker", 0x720), fr("runtime.goexit", 0x10))
	return out
}

func TestPprofRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	// The kernel's samples first, so the kernel's mapping is seen first.
	all := synthetic()
	samples := slices.Concat(all[6:9], all[:6], all[9:])
	if err := WritePprof(&buf, ToPprof(samples, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte{0x1f, 0x8b}) {
		t.Fatalf("WritePprof wrote %x..., want gzip", buf.Bytes()[:4])
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.SampleType; len(got) != 2 || got[0].Type != "samples" || got[0].Unit != "count" || got[1].Type != "cpu" || got[1].Unit != "nanoseconds" {
		t.Errorf("sample types = %v, want samples/count, cpu/nanoseconds", got)
	}
	if p.DurationNanos != 5e9 || p.Period != 1e6 {
		t.Errorf("duration %d period %d, want 5e9 and 1e6", p.DurationNanos, p.Period)
	}
	var count, cpu, inMarshal int64
	for _, s := range p.Sample {
		count += s.Value[0]
		cpu += s.Value[1]
		if s.Location[0].Line[0].Function.Name == "encoding/json.(*encodeState).marshal" {
			inMarshal += s.Value[0]
		}
		if s.Label["comm"][0] != "server" || s.NumLabel["pid"][0] != 42 {
			t.Errorf("sample labels %v %v, want comm server, pid 42", s.Label, s.NumLabel)
		}
	}
	if count != 10 || cpu != 10e6 || inMarshal != 4 {
		t.Errorf("totals: %d samples, %d ns, %d with marshal as leaf; want 10, 10e6, 4", count, cpu, inMarshal)
	}
	if p.Mapping[0].File != "/app/server" {
		t.Errorf("first mapping %s, want the executable /app/server", p.Mapping[0].File)
	}
	files := map[string]bool{}
	for _, m := range p.Mapping {
		files[m.File] = true
	}
	if !files["/app/server"] || !files[KernelDSO] || len(files) != 2 {
		t.Errorf("mappings %v, want /app/server and %s", files, KernelDSO)
	}
}

// TestFromPprof: a profile written and read back summarizes as its samples did, so a
// committed .cpu.pb.gz can be compared with a new profile.
func TestFromPprof(t *testing.T) {
	samples := synthetic()
	samples = append(samples, Sample{PID: 42, Comm: "server", Period: 1_000_000, Stack: []Frame{{Addr: 0x99, Symbol: Unknown, DSO: "/lib/x.so"}}})
	var buf bytes.Buffer
	if err := WritePprof(&buf, ToPprof(samples, time.Second)); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromPprof(p)
	if err != nil {
		t.Fatal(err)
	}
	want, got := Summarize(samples), Summarize(back)
	if !reflect.DeepEqual(want, got) {
		t.Errorf("summary after a round trip through pprof:\n got %+v\nwant %+v", got, want)
	}
	if d := Compare(want, got, 5); len(d.Self)+len(d.Cum) != 0 {
		t.Errorf("a profile compared with itself read back: %+v", d)
	}
	if _, err := FromPprof(&profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}}); err == nil {
		t.Error("FromPprof of a profile without cpu values: no error")
	}
}
