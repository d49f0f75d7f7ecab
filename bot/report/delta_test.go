package report

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/stats"
)

// TestArenaScore: the arena's fixed-rate score (arena-2026 §4.1) against hand-computed
// values, its rate gate and its clamps.
func TestArenaScore(t *testing.T) {
	best := ScoreBests{CPU: 20, P99: 1000, Mean: 200}
	for _, tt := range []struct {
		name   string
		p      scorePoint
		target float64
		want   float64
	}{
		{name: "the best on every term", p: scorePoint{Rate: 10_000, CPU: 20, P99: 1000, Mean: 200}, target: 10_000, want: 100},
		// 0.5 × 20/40 + 0.25 × (1 − log10(10)/3) + 0.25 × (1 − log10(2)) = 0.25 + 0.16667 + 0.17474.
		{name: "twice the CPU, ten times the p99, twice the mean", p: scorePoint{Rate: 10_000, CPU: 40, P99: 10_000, Mean: 400}, target: 10_000,
			want: 100 * (0.25 + 0.25*(1-1.0/3) + 0.25*(1-math.Log10(2)))},
		// 9,000 of 10,000 offered: 9,000 / 9,500 = 0.94737 of the score.
		{name: "rate gate", p: scorePoint{Rate: 9_000, CPU: 20, P99: 1000, Mean: 200}, target: 10_000, want: 100.0 * 9_000 / 9_500},
		{name: "rate above 95% counts in full", p: scorePoint{Rate: 9_600, CPU: 20, P99: 1000, Mean: 200}, target: 10_000, want: 100},
		{name: "better than the best clamps at 1", p: scorePoint{Rate: 10_000, CPU: 10, P99: 500, Mean: 100}, target: 10_000, want: 100},
		// p99 four decades above the best and mean two decades above: both terms 0.
		{name: "latency terms clamp at 0", p: scorePoint{Rate: 10_000, CPU: 20, P99: 1e7, Mean: 20_000}, target: 10_000, want: 50},
		{name: "no CPU figure scores 0 on its term", p: scorePoint{Rate: 10_000, P99: 1000, Mean: 200}, target: 10_000, want: 50},
		{name: "no target", p: scorePoint{Rate: 10_000, CPU: 20, P99: 1000, Mean: 200}, want: 0},
	} {
		if got := ArenaScore(tt.p, tt.target, best); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: score %.6f, want %.6f", tt.name, got, tt.want)
		}
	}
}

// latencyRuns are runs of a fixed-rate row at 10,000 requests/s for 20 s, one per CPU µs per
// request, with the given p99 and a mean latency of a quarter of it.
func latencyRuns(cpu []float64, p99 float64) []result.Run {
	var runs []result.Run
	for i, c := range cpu {
		rps := 9_990.0
		p := p99 * (1 + 0.01*float64(i%3))
		runs = append(runs, result.Run{RPS: rps, Requests: int64(rps * 20), Status2xx: int64(rps * 20), DurationS: 20,
			CPUCores: c * rps / 1e6, MemoryPeak: 10 << 20, LatencyUS: result.Latency{Mean: p / 4, P99: p}})
	}
	return runs
}

func latencyRow(head, base []result.Run) Row {
	r := &result.Result{Entry: "nethttp", Profile: "latency-10k", Connections: 1024, TargetRate: 10_000}
	r.FromRuns(head)
	if base != nil {
		r.Base = &result.Side{Entry: "nethttp", Runs: base}
	}
	return Row{Profile: "latency-10k", Conns: 1024, Result: r}
}

// TestDeltasLowerIsBetter: more CPU per request, a longer p99 and more memory are worse,
// more RPS better; a fixed-rate row's Δ is CPU per request, and its score falls with it.
func TestDeltasLowerIsBetter(t *testing.T) {
	row := latencyRow(latencyRuns([]float64{46, 47, 46.5, 45.8}, 1300), latencyRuns([]float64{40, 40.5, 39.8, 40.2}, 1000))
	d := Deltas(row, stats.DefaultRule)
	if d.Figures.Primary != profile.FigureCPUPerReq || d.K != 4 {
		t.Errorf("latency-10k: primary %q, k %d; want cpu/req and 4 (cpu/req, p99, score, mem)", d.Figures.Primary, d.K)
	}
	for name, cell := range map[string]string{"Δ": d.Primary, "Δ CPU/req": d.CPU, "Δ p99": d.P99} {
		if !strings.HasPrefix(cell, "+") || !strings.HasSuffix(cell, " worse") {
			t.Errorf("%s = %q; want an increase marked worse", name, cell)
		}
	}
	if !strings.HasPrefix(d.DScore, "-") || !strings.HasSuffix(d.DScore, " pts worse") {
		t.Errorf("Δ Score = %q; want a drop in points, worse", d.DScore)
	}
	if d.Primary != d.CPU {
		t.Errorf("a fixed-rate row's Δ %q is not its Δ CPU/req %q", d.Primary, d.CPU)
	}
	// The other way round: less CPU per request is better.
	if d := Deltas(latencyRow(row.Result.Base.Runs, row.Result.Runs), stats.DefaultRule); !strings.HasSuffix(d.Primary, " better") || !strings.HasSuffix(d.DScore, " pts better") {
		t.Errorf("a CPU drop: Δ %q, Δ Score %q; want both better", d.Primary, d.DScore)
	}
	// A closed-loop row whose RPS rose: better, and the CPU per request it saved too.
	up := Deltas(Row{Profile: "baseline", Conns: 512, Result: paired(runsOf(20<<20, 110000, 109000, 111500), runsOf(20<<20, 100000, 101000, 99500))}, stats.DefaultRule)
	if !strings.HasSuffix(up.Primary, " better") || !strings.HasSuffix(up.CPU, " better") || up.Score != "—" {
		t.Errorf("baseline RPS up: Δ %q, Δ CPU/req %q, score %q; want better, better, —", up.Primary, up.CPU, up.Score)
	}
	// WebSocket rows have no p99 Δ.
	ws := Deltas(Row{Profile: "echo-ws", Conns: 512, WebSocket: true, Result: paired(runsOf(20<<20, 1, 2, 3), runsOf(20<<20, 1, 2, 3))}, stats.DefaultRule)
	if ws.P99 != "—" || ws.K != 3 {
		t.Errorf("echo-ws: Δ p99 %q, k %d; want — and 3", ws.P99, ws.K)
	}
}

// TestDeltasBonferroni: each Δ cell's interval is at the family level of the row's k cells,
// wider than 95%: a difference a lone 95% interval would call a change is noise in a row of
// four cells.
func TestDeltasBonferroni(t *testing.T) {
	base := stats.Sample{100000, 101000, 99500, 100500}
	head := stats.Sample{103000, 101800, 104500, 102200}
	lone, _ := stats.Compare(base, head)
	family, _ := stats.CompareAt(base, head, stats.FamilyLevel(4))
	if !lone.ExcludesZero() || family.ExcludesZero() {
		t.Fatalf("the fixture no longer shows the widening: 95%% %+v, family %+v", lone, family)
	}
	d := Deltas(Row{Profile: "baseline", Conns: 512, Result: paired(runsOf(20<<20, head...), runsOf(20<<20, base...))}, stats.DefaultRule)
	if want := stats.DefaultRule.Cell(family); d.Primary != want {
		t.Errorf("Δ = %q, want %q (98.75%%, not the 95%% %q)", d.Primary, want, stats.DefaultRule.Cell(lone)+" better")
	}
}

// TestDeltasAARows: rows whose two sides are drawn from one distribution (5 runs a side,
// seeded) flag a change in any of their k cells in at most 5% of rows (Bonferroni: about
// 1−(1−0.05/4)^4 = 4.9% for independent cells, fewer when they move together, as the score
// and CPU/req do); with each cell at 95% they would flag in about 1−0.95^4 = 18.5%.
func TestDeltasAARows(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 1))
	anyRule := stats.Rule{MinEffect: 0, Target: 0.02, MinRuns: 3, MaxRuns: 10} // the interval alone decides
	draw := func(n int, fixed bool) []result.Run {
		runs := make([]result.Run, n)
		for i := range runs {
			rps := 100_000 * (1 + 0.03*rng.NormFloat64())
			if fixed {
				rps = 9_990 * (1 + 0.0005*rng.NormFloat64())
			}
			cpu := 40 * (1 + 0.05*rng.NormFloat64()) // µs per request
			p99 := 1000 * (1 + 0.10*rng.NormFloat64())
			runs[i] = result.Run{RPS: rps, Status2xx: int64(rps * 5), Requests: int64(rps * 5), DurationS: 5,
				CPUCores: cpu * rps / 1e6, MemoryPeak: int64(20e6 * (1 + 0.02*rng.NormFloat64())),
				LatencyUS: result.Latency{Mean: p99 / 4 * (1 + 0.05*rng.NormFloat64()), P99: p99}}
		}
		return runs
	}
	for _, kind := range []struct {
		profile string
		k       int
	}{{"baseline", 4}, {"latency-10k", 4}} {
		const rows = 1500
		flagged, loose := 0, 0
		for range rows {
			fixed := kind.profile == "latency-10k"
			r := &result.Result{Profile: kind.profile, TargetRate: 0}
			if fixed {
				r.TargetRate = 10_000
			}
			r.FromRuns(draw(5, fixed))
			r.Base = &result.Side{Runs: draw(5, fixed)}
			d := Deltas(Row{Profile: kind.profile, Conns: 512, Result: r}, anyRule)
			if d.K != kind.k {
				t.Fatalf("%s: k %d, want %d", kind.profile, d.K, kind.k)
			}
			if all := strings.Join([]string{d.Primary, d.CPU, d.P99, d.Mem, d.DScore}, "|"); strings.Contains(all, "better") || strings.Contains(all, "worse") {
				flagged++
			}
			// The same row with each cell at 95%: what the family level guards against.
			figs := []string{result.ValueCPUPerReq, result.ValueP99}
			if !fixed {
				figs = append(figs, result.ValueRPS)
			}
			any := false
			for _, f := range figs {
				if c, err := stats.Compare(result.Values(r.Base.Runs, f), result.Values(r.Runs, f)); err == nil && c.ExcludesZero() {
					any = true
				}
			}
			if c, err := stats.Compare(memSample(r.Base.Runs, nil), memSample(r.Runs, nil)); err == nil && c.ExcludesZero() {
				any = true
			}
			if any {
				loose++
			}
		}
		t.Logf("%s: %d of %d A/A rows flagged (%d at 95%% a cell)", kind.profile, flagged, rows, loose)
		if flagged > rows*5/100 {
			t.Errorf("%s: %d of %d A/A rows flagged a change, more than 5%%", kind.profile, flagged, rows)
		}
		if loose <= rows*8/100 {
			t.Errorf("%s: at 95%% a cell only %d of %d rows flag: the fixture no longer shows why the family level is needed", kind.profile, loose, rows)
		}
	}
}

// TestFigureNamesAreValues: every figure a profile is judged by is a figure result.Run.Value
// reads from a run that measured everything.
func TestFigureNamesAreValues(t *testing.T) {
	run := result.Run{RPS: 1000, Requests: 5000, Status2xx: 5000, DurationS: 5, Bytes: 5e6, CPUCores: 0.5,
		LatencyUS: result.Latency{Mean: 200, P99: 900}}
	seen := map[profile.Figure]bool{}
	for _, p := range profile.All {
		for _, f := range p.Figures().All() {
			seen[f] = true
		}
	}
	for _, f := range []profile.Figure{profile.FigureRPS, profile.FigureBandwidth, profile.FigureEchoes, profile.FigureCPUPerReq, profile.FigureP99} {
		seen[f] = true
	}
	for f := range seen {
		if v, ok := run.Value(string(f)); !ok || !(v > 0) {
			t.Errorf("figure %q: result.Run.Value gives %v, %v; want a positive value", f, v, ok)
		}
	}
}

// TestDeltasScoreCells: a fixed-rate row without a base shows its own score and NEW; with
// committed results of the profile its bests come from them, else from its two sides, and
// the note under the table says which.
func TestDeltasScoreCells(t *testing.T) {
	head := latencyRuns([]float64{40, 40, 40}, 1000)
	d := Deltas(latencyRow(head, nil), stats.DefaultRule)
	if d.Score != "—" || d.DScore != CellNew || d.Primary != CellNew {
		t.Errorf("new fixed-rate row: score %q, Δ score %q, Δ %q; want — (nothing to score it against), NEW, NEW", d.Score, d.DScore, d.Primary)
	}
	committed := &result.Result{Profile: "latency-10k", CPUPerRequest: 20, LatencyUS: result.Latency{P99: 1010, Mean: 252.5}}
	row := latencyRow(head, nil)
	row.Scored = []*result.Result{committed}
	// A new row against the committed 20 µs: 100 × (0.5 × 20/40 + 0.25 + 0.25): the
	// committed p99 and mean equal the head's means (1,010 and 252.5 µs), so both latency
	// terms are 1.
	if d := Deltas(row, stats.DefaultRule); d.Score != "75.0" || !d.Bests.Committed || d.Bests.CPU != 20 {
		t.Errorf("against committed bests: score %q, bests %+v; want 75.0 from the committed 20 µs", d.Score, d.Bests)
	}
	tbl := Table{Entry: "nethttp", Rows: []Row{row, latencyRow(head, latencyRuns([]float64{41, 40, 42}, 1000))}}
	note := tbl.ScoreNote("`main`")
	for _, want := range []string{"For latency-10k 1024 the bests are the lowest CPU/req, p99 and mean latency among the committed results of the profile on `main`",
		"For latency-10k 1024 there is no committed result of the profile: the bests are the better of the row's two sides."} {
		if !strings.Contains(note, want) {
			t.Errorf("score note lacks %q:\n%s", want, note)
		}
	}
	for _, cell := range []struct {
		row  Row
		want string
	}{{Row{Profile: "latency-10k", Conns: 1024, NotApplicable: true, Result: latencyRow(head, nil).Result}, CellNA}} {
		if d := Deltas(cell.row, stats.DefaultRule); d.DScore != cell.want || d.CPU != cell.want {
			t.Errorf("Δ Score %q, Δ CPU/req %q; want %q", d.DScore, d.CPU, cell.want)
		}
	}
}

// TestCommittedOfScoreBests: the bests the runner read of every entry's committed results
// (Report.ScoreBests) count among a profile's committed results, so a row's score is
// measured against them, and the bests say they include committed results.
func TestCommittedOfScoreBests(t *testing.T) {
	rep := result.Report{ScoreBests: map[string]result.Bests{"latency-10k": {CPUPerRequest: 20, P99: 500, Mean: 200, Results: 7}}}
	got := committedOf(rep, "latency-10k")
	if len(got) != 1 || got[0].CPUPerRequest != 20 || got[0].LatencyUS.P99 != 500 || got[0].LatencyUS.Mean != 200 {
		t.Fatalf("committedOf = %+v, want the runner's bests", got)
	}
	b := bestsOf(got, scorePoint{CPU: 30, P99: 400, Mean: 250})
	if !b.Committed || b.CPU != 20 || b.P99 != 400 || b.Mean != 200 {
		t.Errorf("bestsOf = %+v, want CPU 20 and mean 200 from the committed bests, p99 400 from the row", b)
	}
	if got := committedOf(rep, "latency-1m"); len(got) != 0 {
		t.Errorf("committedOf(latency-1m) = %+v, want none", got)
	}
}

// TestDeltaTableSameAsDelta: a fixed-rate row's second-table Δ CPU/req reads SameAsDelta
// when the row was compared (its first table's Δ is that figure), and the row's own cell
// (NEW) when there was nothing to compare with.
func TestDeltaTableSameAsDelta(t *testing.T) {
	compared := latencyRow(latencyRuns([]float64{46, 47, 46.5, 45.8}, 1300), latencyRuns([]float64{40, 40.5, 39.8, 40.2}, 1000))
	alone := latencyRow(latencyRuns([]float64{46, 47, 46.5, 45.8}, 1300), nil)
	for _, c := range []struct {
		row  Row
		want string
	}{{compared, "| latency-10k | 1024 | " + SameAsDelta + " | +"}, {alone, "| latency-10k | 1024 | " + CellNew + " | " + CellNew + " |"}} {
		if got := RenderDeltaTable(Table{Entry: "nethttp", Rows: []Row{c.row}}); !strings.Contains(got, c.want) {
			t.Errorf("second table:\n%s\nwant a row starting %q", got, c.want)
		}
	}
}
