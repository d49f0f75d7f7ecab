package report

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/stats"
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

// runsOf is one run per RPS figure, each with the given peak memory.
func runsOf(mem int64, rps ...float64) []result.Run {
	var out []result.Run
	for i, v := range rps {
		out = append(out, result.Run{RPS: v, Requests: int64(v * 5), Status2xx: int64(v * 5), DurationS: 5, Bytes: int64(v * 5 * 1000),
			CPUCores: 0.98, MemoryPeak: mem + int64(i)<<16, LatencyUS: result.Latency{Mean: 800, P99: 2100, P999: 5300}})
	}
	return out
}

// paired is a head result of the given runs measured against a base of the given runs.
func paired(head, base []result.Run) *result.Result {
	r := &result.Result{Entry: "nethttp", Profile: "baseline", Connections: 512}
	r.FromRuns(head)
	r.Base = &result.Side{Entry: "nethttp", Ref: "main", Commit: "0123456789abcdef0123456789abcdef01234567", Runs: base, Order: "BHHBBH"}
	return r
}

func fromRuns(runs []result.Run) *result.Result {
	r := &result.Result{}
	r.FromRuns(runs)
	return r
}

func TestDeltas(t *testing.T) {
	head := runsOf(20<<20, 100000, 101000, 99500)
	slower := paired(head, runsOf(20<<20, 110000, 109000, 111500))
	same := paired(head, runsOf(20<<20, 100500, 99800, 100900))
	failed := paired(head, nil)
	failed.Base.Err = "build of nethttp at 0123456789ab failed: exit status 1"
	oldFormat := &result.Result{RPS: 95000, MemoryPeak: 19 << 20} // the old arena's file: no runs
	wide := stats.Rule{MinEffect: 0.10, Target: 0.02, MinRuns: 3, MaxRuns: 10}
	for _, tt := range []struct {
		name       string
		row        Row
		rule       stats.Rule
		rps, mem   string
		rpsPattern string // when the figure is not worked out by hand: a regexp
	}{
		// -9.08% from the means 100166.7 and 110166.7, ±3.4% (Welch: se 0.72%, 3.5 df, t
		// 4.7 at 98.75%, Bonferroni over the row's 4 cells; t 2.90 at 95% would give ±2.1%):
		// an RPS drop, worse; the memory peaks are alike on both sides.
		{name: "interleaved change", row: Row{Result: slower}, rps: "-9.1% ±3.4% worse", mem: "~0% (±1.1%)"},
		{name: "interleaved no change", row: Row{Result: same}, rps: "~0% (±2.5%)", mem: "~0% (±1.1%)"},
		{name: "under the minimum effect", row: Row{Result: slower}, rule: wide, rps: "~0% (±3.4%)", mem: "~0% (±1.1%)"},
		{name: "base failed", row: Row{Result: failed}, rps: "base failed", mem: "base failed"},
		{name: "base wins over committed", row: Row{Result: slower, Baseline: fromRuns(runsOf(20<<20, 1, 1))}, rps: "-9.1% ±3.4% worse", mem: "~0% (±1.1%)"},
		{name: "one run a side", row: Row{Result: paired(runsOf(20<<20, 105000), runsOf(20<<20, 100000))}, rps: "+5.0% (no interval)", mem: "+0.0% (no interval)"},
		{name: "base of zero", row: Row{Result: paired(head, make([]result.Run, 3))}, rps: "no Δ (base 0)", mem: "no Δ (base 0)"},
		{name: "no memory either side", row: Row{Result: paired([]result.Run{{RPS: 1}, {RPS: 2}}, make([]result.Run, 2))}, rps: "no Δ (base 0)", mem: "—"},
		{name: "base without runs", row: Row{Result: paired(head, []result.Run{})}, rps: "no Δ (no runs)", mem: "no Δ (no runs)"},
		{name: "committed with runs", row: Row{Result: fromRuns(head), Baseline: fromRuns(runsOf(20<<20, 110000, 109000, 111500))}, rps: "-9.1% ±3.4% worse", mem: "~0% (±1.1%)"},
		{name: "committed one run", row: Row{Result: fromRuns(head), Baseline: fromRuns(runsOf(20<<20, 95000))}, rps: "+5.4% (no interval)", mem: "+0.3% (no interval)"},
		{name: "committed old format", row: Row{Result: fromRuns(runsOf(20<<20, 99750)), Baseline: oldFormat}, rps: "+5.0% (no interval)", mem: "+5.3% (no interval)"},
		{name: "same run compare", row: Row{Result: fromRuns(head), Baseline: fromRuns(runsOf(20<<20, 90000, 91000, 89000)), SameRun: true}, rpsPattern: `^\+11\.3% ±\d\.\d% better$`, mem: "~0% (±1.1%)"},
		{name: "new", row: Row{Result: fromRuns(head)}, rps: "NEW", mem: "NEW"},
		{name: "compare does not run it", row: Row{Result: fromRuns(head), NotApplicable: true}, rps: "n/a", mem: "n/a"},
		{name: "bandwidth figure", row: Row{Bandwidth: true, Result: paired(
			[]result.Run{{RPS: 10, Bytes: 500e6, DurationS: 5}, {RPS: 10, Bytes: 510e6, DurationS: 5}, {RPS: 10, Bytes: 490e6, DurationS: 5}},
			[]result.Run{{RPS: 10, Bytes: 600e6, DurationS: 5}, {RPS: 10, Bytes: 610e6, DurationS: 5}, {RPS: 10, Bytes: 590e6, DurationS: 5}})},
			rpsPattern: `^-16\.7% ±\d\.\d% worse$`, mem: "—"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rule := tt.rule
			if rule == (stats.Rule{}) {
				rule = stats.DefaultRule
			}
			d := Deltas(tt.row, rule)
			rps, mem := d.Primary, d.Mem
			if tt.rpsPattern != "" {
				if !regexp.MustCompile(tt.rpsPattern).MatchString(rps) {
					t.Errorf("Δ RPS = %q, want %s", rps, tt.rpsPattern)
				}
			} else if rps != tt.rps {
				t.Errorf("Δ RPS = %q, want %q", rps, tt.rps)
			}
			if mem != tt.mem {
				t.Errorf("Δ Mem = %q, want %q", mem, tt.mem)
			}
		})
	}
}

// TestDeltaCellsAreTheInterval: an interleaved row's cell is stats.Compare of every run of
// both sides, as rule.Cell renders it: a reader can recompute it from the result file.
func TestDeltaCellsAreTheInterval(t *testing.T) {
	r := paired(runsOf(20<<20, 100000, 101000, 99500), runsOf(20<<20, 110000, 109000, 111500))
	d, err := stats.CompareAt(stats.Sample{110000, 109000, 111500}, stats.Sample{100000, 101000, 99500}, stats.FamilyLevel(4))
	if err != nil {
		t.Fatal(err)
	}
	if rps := Deltas(Row{Result: r}, stats.DefaultRule).Primary; rps != stats.DefaultRule.Cell(d)+" worse" || !stats.DefaultRule.Changed(d) {
		t.Errorf("Δ RPS = %q, want %q (a change, a drop of RPS)", rps, stats.DefaultRule.Cell(d)+" worse")
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
		rows []result.Row
		base Baseline
	}{
		{
			name: "single",
			rows: []result.Row{
				{Entry: "nethttp", Display: "go-nethttp", Profile: "baseline", Conns: 512, Result: res(112300, 22<<20, 1)},
				{Entry: "nethttp", Display: "go-nethttp", Profile: "json", Conns: 512, Result: res(51000, 30<<20, 2)},
				{Entry: "nethttp", Display: "go-nethttp", Profile: "upload", Conns: 128, Result: res(900, 80<<20, 2)},
			},
			base: Baseline{Source: "main", Committed: lookup},
		},
		{
			name: "compare",
			rows: []result.Row{
				{Entry: "gin", Display: "gin", Profile: "baseline", Conns: 512, Result: res(90000, 25<<20, 1)},
				{Entry: "gin", Display: "gin", Profile: "json", Conns: 512, Result: res(40000, 25<<20, 1)},
				{Entry: "gin", Display: "gin", Profile: "static", Conns: 512, Result: res(30000, 25<<20, 1)},
			},
			base: Baseline{Compare: "fasthttp", Source: "main", Committed: lookup},
		},
		{
			// arenabot bench with the base measured beside the head: a change, no change, a
			// base that failed, an entry without a base.
			name: "interleaved",
			rows: []result.Row{
				{Entry: "nethttp", Display: "go-nethttp", Profile: "baseline", Conns: 512,
					Result: paired(runsOf(20<<20, 100000, 101000, 99500), runsOf(20<<20, 110000, 109000, 111500))},
				{Entry: "nethttp", Display: "go-nethttp", Profile: "json", Conns: 512,
					Result: paired(runsOf(30<<20, 51000, 50600, 51300, 50900), runsOf(30<<20, 50800, 51200, 50700, 51100))},
				{Entry: "nethttp", Display: "go-nethttp", Profile: "upload", Conns: 128, Result: func() *result.Result {
					r := paired(runsOf(80<<20, 900, 910, 905), nil)
					r.Base.Err = "the base at 0123456789ab failed validation: upload: POST /upload: got 404"
					return r
				}()},
				{Entry: "fasthttp", Profile: "baseline", Conns: 512, Result: res(150000, 10<<20, 1)},
			},
			base: Baseline{Source: "the working tree", Ref: "main", MergeBase: "0123456789abcdef0123456789abcdef01234567", Committed: func(string, string, int) (*result.Result, bool) { return nil, true }},
		},
		{
			name: "failures",
			rows: []result.Row{
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

// TestNote: the header line names the base and how the Δ were obtained, from the rows.
func TestNote(t *testing.T) {
	head := runsOf(20<<20, 100000, 101000, 99500)
	self := paired(head, runsOf(20<<20, 110000, 109000, 111500))
	five := paired(runsOf(20<<20, 1, 2, 3, 4, 5), runsOf(20<<20, 1, 2, 3, 4, 5))
	failed := paired(head, nil)
	failed.Base.Err = "build failed"
	vs := paired(head, head)
	vs.Base.Entry, vs.Base.Ref, vs.Base.Commit = "fiber", "", ""
	committedRow := result.Row{Entry: "gin", Profile: "baseline", Conns: 512, Result: fromRuns(head)}
	lookup := func(string, string, int) (*result.Result, bool) { return fromRuns(head), true }
	m := func(r *result.Result) result.Row {
		return result.Row{Entry: "nethttp", Profile: "baseline", Conns: 512, Result: r}
	}
	five5 := stats.Rule{MinEffect: 0.05, Target: 0.01, MinRuns: 5, MaxRuns: 20}
	for _, tt := range []struct {
		name      string
		rows      []result.Row
		base      Baseline
		want, not []string
	}{
		{name: "merge base", rows: []result.Row{m(self), m(five)}, base: Baseline{Source: "`main`", Ref: "main", MergeBase: "0123456789abcdef"},
			want: []string{"Δ of each changed entry against itself at `0123456789ab` (merge base with `main`), measured in this job, interleaved run by run (base, head, head, base, …), 3–5 runs each (median 4); Δ is each row's primary figure (RPS), the one its runs were measured until its interval was narrow enough; each of a row's 4 Δ cells has a Welch interval of the relative difference of the means at 98.75%, not 95% (Bonferroni over the row's cells)"},
			not:  []string{"unchanged from its base"}},
		{name: "commit from the rows", rows: []result.Row{m(five)}, base: Baseline{Source: "`main`"},
			want: []string{"against itself at `0123456789ab` (merge base with `main`)", ", 5 runs each; "}},
		{name: "rule of the report", rows: []result.Row{m(self)}, base: Baseline{Rule: &five5},
			want: []string{"a change is at least 5% with an interval that excludes zero"}},
		{name: "unchanged entries", rows: []result.Row{m(self), committedRow}, base: Baseline{Source: "`main` at `abc`", Committed: lookup},
			want: []string{"3 runs each; ", "An entry unchanged from its base was measured once: its Δ is against its committed results on `main` at `abc`, measured at another time"}},
		{name: "every base failed", rows: []result.Row{m(failed)}, base: Baseline{Ref: "main", MergeBase: "0123456789abcdef"},
			want: []string{"against itself at `0123456789ab` (merge base with `main`), measured in this job, interleaved run by run (base, head, head, base, …); the base failed on every row"},
			not:  []string{"runs each", "Bonferroni"}},
		{name: "compare", rows: []result.Row{m(vs)}, base: Baseline{Compare: "fiber"},
			want: []string{"Δ against `fiber`, measured in this job, interleaved run by run", "3 runs each"}, not: []string{"merge base"}},
		{name: "compare from the rows", rows: []result.Row{m(vs)}, want: []string{"Δ against `fiber`, measured in this job"}},
		{name: "committed", rows: []result.Row{committedRow}, base: Baseline{Source: "`main`", Committed: lookup},
			want: []string{"Δ against each framework's committed results on `main`, measured at another time, not in this job; Δ is each row's primary figure (RPS); with two runs a side or more, each of a row's 4 Δ cells has a Welch interval"},
			not:  []string{"interleaved", "--baseline"}},
		{name: "asked committed", rows: []result.Row{m(self)}, base: Baseline{Source: "`main`", OnlyCommitted: true},
			want: []string{"measured at another time, not in this job (`--baseline committed`)"}, not: []string{"interleaved"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.base.Note(Tables(tt.rows, tt.base))
			holds(t, "Note", got, tt.want, tt.not)
			if strings.Contains(got, "\n") {
				t.Errorf("Note spans lines: %q", got)
			}
		})
	}
}

// TestTableNote: only rows not compared with a base measured beside them are labelled,
// under their table.
func TestTableNote(t *testing.T) {
	head := runsOf(20<<20, 100000, 101000, 99500)
	committed := func(string, string, int) (*result.Result, bool) { return fromRuns(head), true }
	rows := []result.Row{
		{Entry: "nethttp", Profile: "baseline", Conns: 512, Result: paired(head, head)},
		{Entry: "nethttp", Profile: "json", Conns: 512, Result: fromRuns(head)},
		{Entry: "gin", Profile: "baseline", Conns: 512, Result: fromRuns(head)},
	}
	tables := Tables(rows, Baseline{Source: "`main`", Committed: committed})
	if got, want := tables[0].Note, "Δ of `nethttp` json 512 is against its committed results on `main`, measured at another time, not in this job: it is unchanged from its base, so it was measured once."; got != want {
		t.Errorf("nethttp's note = %q, want %q", got, want)
	}
	if got, want := tables[1].Note, "Δ of `gin` is against its committed results on `main`, measured at another time, not in this job: it is unchanged from its base, so it was measured once."; got != want {
		t.Errorf("gin's note = %q, want %q", got, want)
	}
	paired := Tables(rows[:1], Baseline{Source: "`main`", Committed: committed})
	if paired[0].Note != "" {
		t.Errorf("a table of rows measured against their base has the note %q", paired[0].Note)
	}
	same := Tables([]result.Row{
		{Entry: "a", Profile: "baseline", Conns: 512, Result: fromRuns(head)},
		{Entry: "b", Profile: "baseline", Conns: 512, Result: fromRuns(head)},
	}, Baseline{Compare: "b", Source: "`main`"})
	if got, want := same[0].Note, "Δ of `a` is against `b`'s rows of this run, measured one after the other, not interleaved."; got != want {
		t.Errorf("a's note = %q, want %q", got, want)
	}
}

func TestRunCounts(t *testing.T) {
	for _, tt := range []struct {
		sides []int
		want  string
	}{
		{[]int{3, 3}, "3 runs each"},
		{[]int{1, 1}, "1 run each"},
		{[]int{3, 3, 10, 10, 4, 4}, "3–10 runs each (median 4)"},
		{[]int{3, 4}, "3–4 runs each (median 3.5)"},
		{[]int{10, 3, 5}, "3–10 runs each (median 5)"},
	} {
		if got := runCounts(tt.sides); got != tt.want {
			t.Errorf("runCounts(%v) = %q, want %q", tt.sides, got, tt.want)
		}
	}
}

func TestTablesSameRunCompare(t *testing.T) {
	rows := []result.Row{
		{Entry: "a", Profile: "baseline", Conns: 512, Result: res(200, 1<<20, 0)},
		{Entry: "b", Profile: "baseline", Conns: 512, Result: res(100, 1<<20, 0)},
	}
	tables := Tables(rows, Baseline{Compare: "b", Source: "main"})
	if len(tables) != 2 {
		t.Fatalf("got %d tables, want one per entry", len(tables))
	}
	if got := tables[0].Rows[0]; got.Baseline == nil || got.Baseline.RPS != 100 || !got.SameRun {
		t.Errorf("a's baseline = %+v (same run %v), want b's row from the same run", got.Baseline, got.SameRun)
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

// holds checks that text (what, for the messages) contains every string of want and none of
// not.
func holds(t *testing.T, what, text string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
	for _, n := range not {
		if strings.Contains(text, n) {
			t.Errorf("%s holds %q:\n%s", what, n, text)
		}
	}
}
