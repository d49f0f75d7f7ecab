package measure

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/stats"
)

var (
	deltaPairs    = flag.Int("pairs", 20, "BenchmarkDeltas: comparisons of each variant with the base")
	deltaVariants = flag.String("variants", "aa,20", "BenchmarkDeltas: aa (an identical copy) and/or the percent a spin in the baseline handler adds to the server CPU per request of the fixed-rate test, each with an optional @N for its own number of comparisons (aa,20,10@10)")
	deltaTests    = flag.String("delta-tests", "baseline,json,latency-10k", "BenchmarkDeltas: the tests of each comparison, each at its first connection count")
	deltaDuration = flag.Duration("delta-duration", 2*time.Second, "BenchmarkDeltas: the length of one run")
	deltaFixed    = flag.Duration("fixed-duration", 0, "BenchmarkDeltas: the length of one run of a fixed-rate test; 0 means -delta-duration")
	deltaOut      = flag.String("delta-out", "", "BenchmarkDeltas: also write every comparison's runs (JSON lines) to this file")
	deltaIn       = flag.String("delta-in", "", "BenchmarkDeltas: measure nothing; summarize the comparisons an earlier -delta-out wrote")
	deltaSpinCost = flag.Float64("spin-cpu", 0, "BenchmarkDeltas: the server CPU per request of the fixed-rate test, in µs, that sizes the spins instead of the one measured (a spin of s adds s/c to a server whose requests cost c): from an earlier run's realized CPU/req increase q with spin s, c = s/q")
)

// BenchmarkDeltas is the proof that a Δ means what it says. It measures nethttp (the base)
// against an identical copy of itself (A/A) and against copies whose baseline handler spins
// for a fixed time per request, sized from nethttp's own server CPU per request on the
// fixed-rate test (latency-10k, 10,000 requests/s) to add a known share to it (20: about
// +20%); latency-10k's requests go to the same handler as baseline's, json is untouched by
// the spin. Each comparison is one Measure of the tests at their first connection count,
// interleaved and adaptive as a job measures (stopping on each profile's primary figure),
// on the pinned CPUs.
//
// For every Δ cell the reply shows of a row (profile.Figures.Cells: the figures a test is
// judged by, Δ memory and, on the fixed-rate row, Δ score against the bests of the row's two
// sides, as the reply scores a row with no committed results) it prints, per variant, how
// many comparisons flagged a change (the false-flag rate on A/A) and how many flagged the
// cell worse (the detection rate of a spin), the median Δ and the median interval
// half-width (the smallest change the cell can show), each by Welch's interval over the two
// sides and by the ratios of adjacent pairs. A row's cells are controlled as a family: each
// interval is at stats.FamilyLevel(k) for the row's k cells, and the row line counts the
// comparisons in which any cell flagged. The row line also says the median runs a side, why
// the rows stopped and their median wall time. -delta-out keeps every comparison's runs;
// -delta-in summarizes such a file again without measuring.
//
//	go test -run '^$' -bench Deltas -benchtime 1x -timeout 12h ./runner/measure -pairs 20
//
// The spin's cost is the measured CPU per request at its word; the summary's median Δ
// CPU/req on latency-10k says what each variant realized, and -spin-cpu sizes the spins from
// it (c = s/q for a spin s that realized an increase q):
//
//	go test -run '^$' -bench Deltas -benchtime 1x -timeout 12h ./runner/measure -pairs 20 -variants aa,20 -spin-cpu 120
//
// The cost moves with the host: a 7.08 µs spin realized +5% on one day's machine and about
// +18% on another's. docs/testing.md has the 20-comparison results and the commands that
// made them; their runs are in testdata/deltas for -delta-in.
func BenchmarkDeltas(b *testing.B) {
	if *deltaIn != "" {
		cs, err := readComparisons(*deltaIn)
		if err != nil {
			b.Fatal(err)
		}
		summarizeAll(cs, stats.DefaultRule)
		return
	}
	if *deltaPairs < 1 {
		b.Fatalf("-pairs %d: give at least one comparison", *deltaPairs)
	}
	ctx := context.Background()
	var profiles []profile.Profile
	for _, name := range strings.Split(*deltaTests, ",") {
		p, ok := profile.Lookup(name)
		if !ok || !p.Runnable() || len(p.Conns) == 0 {
			b.Fatalf("-delta-tests %q: %q is not a test this harness measures", *deltaTests, name)
		}
		p.Conns = p.Conns[:1]
		p.Duration = *deltaDuration
		if p.TargetRate > 0 && *deltaFixed > 0 {
			p.Duration = *deltaFixed
		}
		profiles = append(profiles, p)
	}
	eng, data := benchEngine(b)
	unlock, err := host.LockHost(ctx, func(holder string) { b.Logf("waiting for the host lock (%s)", holder) })
	if err != nil {
		b.Fatal(err)
	}
	defer unlock()
	root := b.TempDir()
	src, _ := filepath.Abs("../../frameworks/nethttp")
	copyEntry := func(name string) frameworks.Entry {
		dir := filepath.Join(root, name)
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(filepath.Join(dir, "results"))
		e, err := frameworks.Load(root, name, profile.Names())
		if err != nil {
			b.Fatal(err)
		}
		return e
	}
	base := copyEntry("nethttp")
	// Each row's wall time, from its start to its result.
	var rowStart time.Time
	walls := map[string]time.Duration{}
	bn := New(eng, Config{DataDir: data, ScratchDir: b.TempDir(), Runs: 3, SkipValidation: true,
		OnRowStart: func(result.Row) { rowStart = time.Now() },
		OnRow:      func(r result.Row) { walls[r.Profile] = time.Since(rowStart) }})
	if err := bn.Prepare(ctx, Plan{Targets: []Target{{Entry: base, Profiles: profiles}}}); err != nil {
		b.Fatal(err)
	}

	// nethttp's server CPU per request on each test, measured alone: a spin of s per
	// request on a server that spends c per request adds s/c to it. The image is built
	// first, so the job's wall time below is a job's with its images in the cache.
	if _, err := bn.Build(ctx, base); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	alone, err := bn.Measure(ctx, Plan{Targets: []Target{{Entry: base, Profiles: profiles}}})
	if err != nil {
		b.Fatalf("measure nethttp alone: %v", err)
	}
	cpuReq := 0.0 // µs, of the fixed-rate test, or else the first
	for i, r := range alone {
		p := profiles[slices.IndexFunc(profiles, func(p profile.Profile) bool { return p.Name == r.Profile })]
		if r.Err != "" {
			b.Fatalf("measure nethttp %s alone: %v", r.Profile, r.Err)
		}
		c := stats.Sample(result.Values(r.Result.Runs, result.ValueCPUPerReq)).Mean()
		if i == 0 || p.TargetRate > 0 {
			cpuReq = c
		}
		fmt.Printf("nethttp %s %dc alone: %.0f rps, %.2f µs server CPU per request, p99 %.0f µs (%d runs of %s)\n", r.Profile, r.Conns,
			stats.Sample(result.Values(r.Result.Runs, result.ValueRPS)).Mean(), c,
			stats.Sample(result.Values(r.Result.Runs, result.ValueP99)).Mean(), len(r.Result.Runs), p.Duration)
	}
	fmt.Printf("a job of these tests without a base took %s\n", time.Since(t0).Round(time.Second))
	if *deltaSpinCost > 0 {
		cpuReq = *deltaSpinCost
		fmt.Printf("the spins are sized from -spin-cpu %.2f µs per request\n", cpuReq)
	}
	if !(cpuReq > 0) {
		b.Fatalf("no server CPU per request measured to size the spins from; give -spin-cpu")
	}
	var out *json.Encoder
	if *deltaOut != "" {
		f, err := os.Create(*deltaOut)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		out = json.NewEncoder(f)
	}

	var all []comparison
	for _, v := range strings.Split(*deltaVariants, ",") {
		pairs := *deltaPairs
		if at := strings.Index(v, "@"); at >= 0 {
			if _, err := fmt.Sscanf(v[at+1:], "%d", &pairs); err != nil || pairs < 1 {
				b.Fatalf("-variants %q: want @N with N at least 1", v)
			}
			v = v[:at]
		}
		name, spin := "nethttp-aa", time.Duration(0)
		if v != "aa" {
			var pct float64
			if _, err := fmt.Sscanf(v, "%g", &pct); err != nil || pct <= 0 {
				b.Fatalf("-variants %q: want aa or a percentage", v)
			}
			spin = time.Duration(cpuReq * pct / 100 * float64(time.Microsecond))
			name = fmt.Sprintf("nethttp-spin%s", v)
		}
		head := copyEntry(name)
		if spin > 0 {
			addSpin(b, head.Dir, spin)
		}
		if _, err := bn.Build(ctx, head); err != nil {
			b.Fatal(err)
		}
		for i := range pairs {
			plan := Plan{Targets: []Target{{Entry: head, Profiles: profiles, Base: &Base{Entry: base}}}}
			rows, err := bn.Measure(ctx, plan)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(os.Stderr, "%s %s comparison %d/%d done\n", time.Now().Format("15:04:05"), name, i+1, pairs)
			for _, r := range rows {
				c := comparison{Variant: name, SpinNS: spin.Nanoseconds(), Pair: i + 1, Test: r.Profile, Conns: r.Conns,
					WallS: walls[r.Profile].Seconds()}
				switch {
				case r.Err != "":
					c.Error = r.Err
				case r.Result.Base == nil:
					c.Error = "no base side"
				case r.Result.Base.Err != "":
					c.Error = "base: " + r.Result.Base.Err
				default:
					c.Order, c.Stop = r.Result.Base.Order, r.Result.Base.Stop
					c.BaseRuns, c.HeadRuns = r.Result.Base.Runs, r.Result.Runs
				}
				if c.Error != "" {
					// A comparison that failed is counted, not a reason to lose the others.
					fmt.Printf("%s %s comparison %d failed: %s\n", name, r.Profile, i+1, c.Error)
				}
				all = append(all, c)
				if out != nil {
					if err := out.Encode(c); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	}
	summarizeAll(all, bn.cfg.Rule)
}

// A comparison is one row of one comparison of a variant with the base: what -delta-out
// writes, a JSON line each, and -delta-in reads back.
type comparison struct {
	Variant  string       `json:"variant"`
	SpinNS   int64        `json:"spin_ns"`
	Pair     int          `json:"pair"`
	Test     string       `json:"test"`
	Conns    int          `json:"conns"`
	Order    string       `json:"order,omitempty"`
	Stop     string       `json:"stop,omitempty"`
	WallS    float64      `json:"wall_s"`
	Error    string       `json:"error,omitempty"`
	BaseRuns []result.Run `json:"base_runs"`
	HeadRuns []result.Run `json:"head_runs"`
}

// readComparisons reads the JSON lines -delta-out wrote.
func readComparisons(path string) ([]comparison, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cs []comparison
	dec := json.NewDecoder(f)
	for {
		var c comparison
		if err := dec.Decode(&c); err == io.EOF {
			return cs, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: comparison %d: %w", path, len(cs)+1, err)
		}
		cs = append(cs, c)
	}
}

// summarizeAll prints, per variant and test in the order they were measured, the row line
// and each cell's line by Welch's interval and by the paired one.
func summarizeAll(all []comparison, rule stats.Rule) {
	type key struct{ variant, test string }
	var keys []key
	groups := map[key][]comparison{}
	for _, c := range all {
		k := key{c.Variant, c.Test}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], c)
	}
	for _, k := range keys {
		p, ok := profile.Lookup(k.test)
		if !ok {
			fmt.Printf("%s %s: not a test of the profile table\n", k.variant, k.test)
			continue
		}
		var cells []rowCell
		var wall []float64
		failed := 0
		spin := time.Duration(0)
		for _, c := range groups[k] {
			spin = time.Duration(c.SpinNS)
			if c.Error != "" {
				failed++
				continue
			}
			cells = append(cells, newRowCell(c, p))
			wall = append(wall, c.WallS)
		}
		label := fmt.Sprintf("%-18s spin %-8s %-12s", k.variant, spin.Round(10*time.Nanosecond), k.test)
		fmt.Printf("%s %s; %d failed; median %s a row\n", label, summarizeRow(cells, rule), failed, seconds(median(wall)))
		for i, name := range cellNames(p) {
			for _, m := range []struct {
				name string
				diff func(figureCell) (stats.Diff, error)
			}{
				{"welch", func(c figureCell) (stats.Diff, error) { return c.diff, c.err }},
				{"paired", func(c figureCell) (stats.Diff, error) { return c.paired, c.perr }},
			} {
				var fc []figureCell
				for _, c := range cells {
					fc = append(fc, c.figures[i])
				}
				fmt.Printf("%s %-8s %-6s %s\n", label, name, m.name, summarize(fc, rule, name, m.diff))
			}
		}
	}
}

// addSpin makes an entry's baseline handler spin for d per request.
func addSpin(b *testing.B, dir string, d time.Duration) {
	b.Helper()
	main := filepath.Join(dir, "main.go")
	src, err := os.ReadFile(main)
	if err != nil {
		b.Fatal(err)
	}
	const at = "func baseline(w http.ResponseWriter, r *http.Request) {\n"
	if !strings.Contains(string(src), at) {
		b.Fatalf("%s has no %q to add the spin to", main, strings.TrimSpace(at))
	}
	os.WriteFile(main, []byte(strings.Replace(string(src), at, at+"\tspin()\n", 1)), 0o644)
	spin := fmt.Sprintf("package main\n\nimport \"time\"\n\n// spin is BenchmarkDeltas's known slowdown.\nfunc spin() {\n\tfor t0 := time.Now(); time.Since(t0) < %d; {\n\t}\n}\n", d.Nanoseconds())
	if err := os.WriteFile(filepath.Join(dir, "spin.go"), []byte(spin), 0o644); err != nil {
		b.Fatal(err)
	}
}

// A figureCell is one comparison's Δ of one of a row's cells, by Welch over the two samples
// and by the ratios of adjacent pairs, each at its row's family level.
type figureCell struct {
	diff, paired stats.Diff
	err, perr    error
}

// A rowCell is one comparison of a row: the Δ of each of its cells in the order of
// cellNames, the runs a side (the smaller) and why it stopped.
type rowCell struct {
	figures []figureCell
	runs    int
	stop    string
}

// The cells a row shows beside its profile's figures: Δ memory, and Δ score on a scored
// row (profile.Figures.Cells).
const (
	cellMem   = result.ValueMem
	cellScore = "score"
)

// cellNames are a row's Δ cells as the reply shows them: its figures, then Δ memory and,
// when scored, Δ score.
func cellNames(p profile.Profile) []string {
	figs := p.Figures()
	var names []string
	for _, f := range figs.All() {
		names = append(names, string(f))
	}
	names = append(names, cellMem)
	if figs.Scored {
		names = append(names, cellScore)
	}
	return names
}

// cellValues are each run's value of a cell (0 where a run has none); a score is against
// the bests of both sides' means, as the reply scores a row with no committed results.
func cellValues(name string, runs []result.Run, target float64, bests result.Bests) (v []float64, ok []bool) {
	for _, r := range runs {
		var x float64
		var has bool
		if name == cellScore {
			x, has = result.Score(r.Point(), target, bests), true
		} else {
			x, has = r.Value(name)
		}
		v, ok = append(v, x), append(ok, has)
	}
	return v, ok
}

func newRowCell(c comparison, p profile.Profile) rowCell {
	names := cellNames(p)
	level := stats.FamilyLevel(p.Figures().Cells())
	var bests result.Bests
	bests.LowerPoint(result.MeanPoint(c.BaseRuns))
	bests.LowerPoint(result.MeanPoint(c.HeadRuns))
	rc := rowCell{runs: min(len(c.HeadRuns), len(c.BaseRuns)), stop: c.Stop}
	for _, name := range names {
		bv, bok := cellValues(name, c.BaseRuns, float64(p.TargetRate), bests)
		hv, hok := cellValues(name, c.HeadRuns, float64(p.TargetRate), bests)
		var bs, hs, bp, hp stats.Sample
		for i := range bv {
			if bok[i] {
				bs = append(bs, bv[i])
			}
		}
		for i := range hv {
			if hok[i] {
				hs = append(hs, hv[i])
			}
		}
		// Pairs are base run i and head run i, both with the figure.
		for i := range min(len(bv), len(hv)) {
			if bok[i] && hok[i] {
				bp, hp = append(bp, bv[i]), append(hp, hv[i])
			}
		}
		var fc figureCell
		fc.diff, fc.err = stats.CompareAt(bs, hs, level)
		if fc.paired, fc.perr = stats.ComparePaired(bp, hp); fc.perr == nil {
			fc.paired = atLevel(fc.paired, level)
		}
		rc.figures = append(rc.figures, fc)
	}
	return rc
}

// atLevel widens a t interval at stats.Level to the given confidence, on the same degrees
// of freedom.
func atLevel(d stats.Diff, level float64) stats.Diff {
	if d.Half > 0 {
		d.Half *= stats.TQuantile(1-(1-level)/2, d.DF) / stats.TQuantile(1-(1-stats.Level)/2, d.DF)
	}
	return d
}

// worse reports whether a Δ of a cell is for the worse: less of a rate or a score, more CPU
// per request, latency or memory.
func worse(cell string, rel float64) bool {
	if cell == cellMem || profile.Figure(cell).LowerIsBetter() {
		return rel > 0
	}
	return rel < 0
}

// summarize counts one figure's flagged cells: "flagged 1/20 (worse 1/20), median Δ
// -0.4%, median ±2.1%".
func summarize(cells []figureCell, rule stats.Rule, f string, diff func(figureCell) (stats.Diff, error)) string {
	var flagged, bad, none int
	var rel, half []float64
	for _, c := range cells {
		d, err := diff(c)
		if err != nil {
			none++
			continue
		}
		if rule.Changed(d) {
			flagged++
			if worse(f, d.Rel) {
				bad++
			}
		}
		rel = append(rel, d.Rel)
		half = append(half, d.Half)
	}
	s := fmt.Sprintf("flagged %d/%d (worse %d/%d), median Δ %+.1f%%, median ±%.1f%%",
		flagged, len(cells), bad, len(cells), median(rel)*100, median(half)*100)
	if none > 0 {
		s += fmt.Sprintf(", %d without an interval", none)
	}
	return s
}

// summarizeRow counts the comparisons in which any figure of the row flagged, by each
// method: "3 figures at 98.3%: any flagged 1/20 by welch, 2/20 paired; median 4 runs a side;
// stopped: interval narrow enough (rps) 12, run limit reached 8".
func summarizeRow(cells []rowCell, rule stats.Rule) string {
	var welch, paired int
	var runs []float64
	stops := map[string]int{}
	k := 0
	for _, c := range cells {
		k = len(c.figures)
		var w, p bool
		for _, f := range c.figures {
			w = w || f.err == nil && rule.Changed(f.diff)
			p = p || f.perr == nil && rule.Changed(f.paired)
		}
		if w {
			welch++
		}
		if p {
			paired++
		}
		runs = append(runs, float64(c.runs))
		stops[c.stop]++
	}
	why := make([]string, 0, len(stops))
	for s, n := range stops {
		why = append(why, fmt.Sprintf("%s %d", s, n))
	}
	slices.Sort(why)
	return fmt.Sprintf("%d figures at %.1f%%: any flagged %d/%d by welch, %d/%d paired; median %.0f runs a side; stopped: %s",
		k, stats.FamilyLevel(k)*100, welch, len(cells), paired, len(cells), median(runs), strings.Join(why, ", "))
}

// seconds renders a number of seconds as a duration: "1m4s", "-" for none.
func seconds(s float64) string {
	if math.IsNaN(s) {
		return "-"
	}
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
