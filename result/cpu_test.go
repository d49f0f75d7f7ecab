package result

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSavedProfileFiles(t *testing.T) {
	prof := &CPUProfile{Samples: 10, Pprof: PprofFileName("baseline", 512), Flame: FlameFileName("baseline", 512)}
	r := Report{Rows: []Row{
		{Entry: "gin", Profile: "baseline", Conns: 512, Result: &Result{Framework: "Gin", Entry: "gin", Profile: "baseline", Connections: 512, CPUProfile: prof},
			Pprof: []byte("pprof"), Flame: []byte("<svg/>")},
		// A profile that failed names no files.
		{Entry: "gin", Profile: "json", Conns: 512, Result: &Result{Framework: "Gin", Entry: "gin", Profile: "json", Connections: 512, CPUProfile: &CPUProfile{Err: "perf is not installed"}}},
	}}
	files, err := r.Saved("frameworks", func(string) ([]byte, error) { return nil, fs.ErrNotExist })
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(func(yield func(string) bool) {
		for k := range files {
			if !yield(k) {
				return
			}
		}
	})
	want := []string{
		"frameworks/gin/results/baseline-512.cpu.pb.gz",
		"frameworks/gin/results/baseline-512.cpu.svg",
		"site/data/results/gin.json",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Saved files (-want +got):\n%s", diff)
	}
	if string(files["frameworks/gin/results/baseline-512.cpu.svg"]) != "<svg/>" {
		t.Errorf("flame graph = %q", files["frameworks/gin/results/baseline-512.cpu.svg"])
	}
}

// TestCPUProfileRoundTrip: a profile survives the file format, and a file without one (every
// file written before rows were profiled) reads with none.
func TestCPUProfileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	r := Result{Entry: "gin", Profile: "baseline", Connections: 512, CPUProfile: &CPUProfile{
		Samples: 100, CPUNs: 1e9, Kernel: 40.5, GC: 3, Own: 1.5,
		TopSelf: []FuncShare{{Name: "runtime.mallocgc", Self: 5, Cum: 7}},
		Base:    &CPUProfile{Samples: 90},
		Diff:    &CPUDiff{Kernel: 1.5, Self: []CPUChange{{Name: "runtime.mallocgc", Before: 2, After: 5, Delta: 3}}},
	}}
	if _, err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir, "baseline", 512)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r.CPUProfile, got.CPUProfile); diff != "" {
		t.Errorf("profile after a round trip (-want +got):\n%s", diff)
	}
	old := []byte(`{"framework":"gin","rps":1000,"connections":512,"profile":"baseline"}`)
	if err := os.WriteFile(filepath.Join(dir, Dir, "baseline-512.json"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Read(dir, "baseline", 512); err != nil || got.CPUProfile != nil {
		t.Errorf("old file: profile %v, err %v; want none", got.CPUProfile, err)
	}
	if s := (CPUChange{Name: "runtime.mallocgc", Delta: 8.24}).String(); s != "+8.2 pts runtime.mallocgc" {
		t.Errorf("CPUChange.String of a change recorded without its margin = %q", s)
	}
	if s := (CPUChange{Name: "runtime.mallocgc", Delta: 8.24, Margin: 1.26}).String(); s != "+8.2 pts (±1.3) runtime.mallocgc" {
		t.Errorf("CPUChange.String = %q", s)
	}
}
