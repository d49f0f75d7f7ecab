package report

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arenabot/arenabot/runner/result"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from current output")

// checkGolden compares got with the golden file, rewriting the file first under -update.
func checkGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("mismatch with %s (-want +got):\n%s\nIf intended, rerun with -update.", golden, diff)
	}
}

func res(rps float64, mem int64, spreadPct float64) *result.Result {
	r := &result.Result{}
	r.FromRuns([]result.Run{{
		RPS: rps, Requests: int64(rps * 5), Status2xx: int64(rps * 5), DurationS: 5,
		CPUCores: 0.98, MemoryPeak: mem, LatencyUS: result.Latency{Mean: 800, P99: 2100, P999: 5300},
	}})
	r.SpreadPct = spreadPct
	return r
}

func TestDelta(t *testing.T) {
	for _, tt := range []struct {
		new, old, band float64
		want           string
	}{
		{112.3, 100, 0.01, "+12.3%"},
		{96, 100, 0.01, "-4.0%"},
		{102, 100, 0.03, "~0%"}, // inside the runs' spread
		{100.05, 100, 0, "~0%"}, // under the 0.1% floor
		{100, 0, 0, "NEW"},
		{50, 100, 0.6, "~0%"},
	} {
		if got := Delta(tt.new, tt.old, tt.band); got != tt.want {
			t.Errorf("Delta(%v, %v, %v) = %q, want %q", tt.new, tt.old, tt.band, got, tt.want)
		}
	}
}

func TestRenderGolden(t *testing.T) {
	committed := map[string]*result.Result{
		"nethttp/baseline/512":  res(100000, 20<<20, 1),
		"nethttp/json/512":      res(50000, 30<<20, 5),
		"fasthttp/baseline/512": res(150000, 10<<20, 1),
	}
	subscribes := map[string]bool{"nethttp/baseline": true, "nethttp/json": true, "fasthttp/baseline": true, "fasthttp/json": true}
	lookup := func(entry, profile string, conns int) (*result.Result, bool) {
		return committed[entry+"/"+profile+"/"+itoa(conns)], subscribes[entry+"/"+profile]
	}
	cases := []struct {
		name string
		rows []Measured
		base Baseline
	}{
		{
			name: "single",
			rows: []Measured{
				{Entry: "nethttp", Display: "go-nethttp", Profile: "baseline", Conns: 512, Result: res(112300, 22<<20, 1)},
				{Entry: "nethttp", Display: "go-nethttp", Profile: "json", Conns: 512, Result: res(51000, 30<<20, 2)},
				{Entry: "nethttp", Display: "go-nethttp", Profile: "upload", Conns: 128, Result: res(900, 80<<20, 2)},
			},
			base: Baseline{Source: "main", Committed: lookup},
		},
		{
			name: "compare",
			rows: []Measured{
				{Entry: "gin", Display: "gin", Profile: "baseline", Conns: 512, Result: res(90000, 25<<20, 1)},
				{Entry: "gin", Display: "gin", Profile: "json", Conns: 512, Result: res(40000, 25<<20, 1)},
				{Entry: "gin", Display: "gin", Profile: "static", Conns: 512, Result: res(30000, 25<<20, 1)},
			},
			base: Baseline{Compare: "fasthttp", Source: "main", Committed: lookup},
		},
		{
			name: "failures",
			rows: []Measured{
				{Entry: "nethttp", Display: "go-nethttp", Profile: "baseline", Conns: 512, Result: res(100000, 20<<20, 1)},
				{Entry: "bad_entry", Display: "bad | *entry* @someone", Profile: "baseline", Conns: 512, Err: "build of bad_entry failed: RUN go build: exit 1\nsecond line"},
			},
			base: Baseline{Source: "main", Committed: lookup},
		},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got := Render(Summary{Title: "Benchmark Results", Header: []string{"**Frameworks:** test"}, Tables: Tables(tt.rows, tt.base), Baseline: tt.base})
			checkGolden(t, filepath.Join("testdata", tt.name+".golden"), got)
		})
	}
}

func TestTablesSameRunCompare(t *testing.T) {
	rows := []Measured{
		{Entry: "a", Profile: "baseline", Conns: 512, Result: res(200, 1<<20, 0)},
		{Entry: "b", Profile: "baseline", Conns: 512, Result: res(100, 1<<20, 0)},
	}
	tables := Tables(rows, Baseline{Compare: "b", Source: "main"})
	if len(tables) != 2 {
		t.Fatalf("got %d tables, want one per entry", len(tables))
	}
	if got := tables[0].Rows[0].Baseline; got == nil || got.RPS != 100 {
		t.Errorf("a's baseline = %+v, want b's row from the same run", got)
	}
}

func TestUntrustedTextIsEscaped(t *testing.T) {
	out := RenderTable(Table{Entry: "x", Display: "<script> | @alice [link](http://e)", Rows: []Row{{Profile: "baseline", Conns: 1, Err: "`code` | **bold**"}}})
	for _, bad := range []string{"<script>", "@alice", " [link](", "| **bold**"} {
		if strings.Contains(out, bad) {
			t.Errorf("rendered table contains %q unescaped:\n%s", bad, out)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
