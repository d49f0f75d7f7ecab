package result

import (
	"io/fs"
	"strings"
	"testing"
)

func TestReportCommittedAndSaved(t *testing.T) {
	base := Result{Entry: "gin", Profile: "baseline", Connections: 512, RPS: 1000}
	r := Report{
		Rows: []Row{
			{Entry: "gin", Profile: "baseline", Conns: 512, Result: &Result{Framework: "gin", Entry: "gin", Profile: "baseline", Connections: 512, RPS: 1100}},
			{Entry: "gin", Profile: "json", Conns: 4096, Err: "build failed"},
		},
		Baselines: []Baseline{
			{Entry: "gin", Present: true, Tests: []string{"baseline", "json"}, Results: []Result{base}},
			{Entry: "fiber", Present: false},
		},
	}
	if got, runs := r.Committed("gin", "baseline", 512); got == nil || got.RPS != 1000 || !runs {
		t.Errorf("gin baseline 512 = %v, %v; want the committed result", got, runs)
	}
	if got, runs := r.Committed("gin", "json", 4096); got != nil || !runs {
		t.Errorf("gin json = %v, %v; want none but subscribed", got, runs)
	}
	if got, runs := r.Committed("gin", "static", 512); got != nil || runs {
		t.Errorf("gin static = %v, %v; want not run", got, runs)
	}
	for _, e := range []string{"fiber", "unknown"} {
		if got, runs := r.Committed(e, "baseline", 512); got != nil || runs {
			t.Errorf("%s = %v, %v; want absent", e, got, runs)
		}
	}
	if r.Failed() != 1 {
		t.Errorf("Failed = %d, want 1", r.Failed())
	}
	files, err := r.Saved("frameworks", func(string) ([]byte, error) { return nil, fs.ErrNotExist })
	if err != nil {
		t.Fatal(err)
	}
	b, ok := files["site/data/results/gin.json"]
	if len(files) != 1 || !ok {
		t.Fatalf("saved files = %v, want only the measured framework's results file", files)
	}
	f, err := DecodeSite(b)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Unmarshal(f.Results["baseline-512"]); err != nil || got.RPS != 1100 || len(f.Results) != 1 || !strings.HasSuffix(string(b), "}\n") {
		t.Errorf("saved file = %s (%v)", b, err)
	}
}
