package measure

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
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
	deltaVariants = flag.String("variants", "aa,20,10", "BenchmarkDeltas: aa (an identical copy) and/or the percent by which a spin in the baseline handler slows baseline, each with an optional @N for its own number of comparisons (aa,20,10@10)")
	deltaDuration = flag.Duration("delta-duration", 2*time.Second, "BenchmarkDeltas: the length of one run")
	deltaOut      = flag.String("delta-out", "", "BenchmarkDeltas: also write every comparison's runs (JSON lines) to this file")
	deltaSpinCost = flag.Float64("spin-cpu", 0, "BenchmarkDeltas: the server CPU per baseline request, in µs, that sizes the spins instead of the one measured (a spin of s slows a server whose requests cost c by s/(c+s)): from an earlier run's realized slowdown p with spin s, c = s(1-p)/p")
)

// BenchmarkDeltas is the proof that a Δ means what it says. It measures nethttp (the base)
// against an identical copy of itself (A/A) and against copies whose baseline handler spins
// for a fixed time per request, sized from nethttp's own server CPU per request to slow
// baseline by about 20% and 10%; json is untouched by the spin. Each comparison is one
// Measure of baseline and json at their first connection count, interleaved and adaptive
// as a job measures, on the pinned CPUs. It prints, per variant and test, how many
// comparisons were flagged as a change (and how many as a slowdown), the median interval
// half-width (the smallest change a row could show here) and the median runs a side.
//
//	go test -run '^$' -bench Deltas -benchtime 1x -timeout 4h ./runner/measure -pairs 20
//
// The model s/(c+s) takes the measured CPU per request at its word; on this host a spin
// slowed baseline about twice as much as it predicts (a 5.47 µs spin on 21.9 µs of CPU per
// request: -31.6%, not -20%). -spin-cpu sizes the spins from the cost a calibrating run
// realized instead (c = s(1-p)/p: 11.84 µs there), and the summary's median Δ says what each
// variant realized:
//
//	go test -run '^$' -bench Deltas -benchtime 1x -timeout 4h ./runner/measure -pairs 20 -variants 20,10@10,aa -spin-cpu 11.84
func BenchmarkDeltas(b *testing.B) {
	if *deltaPairs < 1 {
		b.Fatalf("-pairs %d: give at least one comparison", *deltaPairs)
	}
	ctx := context.Background()
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
	var profiles []profile.Profile
	for _, name := range []string{"baseline", "json"} {
		p, _ := profile.Lookup(name)
		p.Conns = p.Conns[:1]
		profiles = append(profiles, p)
	}
	bn := New(eng, Config{DataDir: data, ScratchDir: b.TempDir(), Runs: 3, Duration: *deltaDuration, SkipValidation: true})
	if err := bn.Prepare(ctx, Plan{Targets: []Target{{Entry: base, Profiles: profiles}}}); err != nil {
		b.Fatal(err)
	}

	// nethttp's server CPU per baseline request, measured alone: a spin of s per request
	// on a server that spends c per request slows it by s/(c+s). The image is built first,
	// so the job's wall time below is a job's with its images in the cache, as on a host.
	if _, err := bn.Build(ctx, base); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	alone, err := bn.Measure(ctx, Plan{Targets: []Target{{Entry: base, Profiles: profiles[:1]}}})
	if err != nil || alone[0].Err != nil {
		b.Fatalf("measure nethttp alone: %v %v", err, alone[0].Err)
	}
	wallAlone := time.Since(t0)
	cpuReq := alone[0].Result.CPUPerRequest // µs
	var out *json.Encoder
	if *deltaOut != "" {
		f, err := os.Create(*deltaOut)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		out = json.NewEncoder(f)
	}
	fmt.Printf("nethttp baseline %dc alone: %d rps, %.2f µs server CPU per request; a one-test job without a base took %s (%d runs)\n",
		profiles[0].Conns[0], alone[0].Result.RPS, cpuReq, wallAlone.Round(time.Second), len(alone[0].Result.Runs))
	if *deltaSpinCost > 0 {
		cpuReq = *deltaSpinCost
		fmt.Printf("the spins are sized from -spin-cpu %.2f µs per request\n", cpuReq)
	}

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
			if _, err := fmt.Sscanf(v, "%g", &pct); err != nil || pct <= 0 || pct >= 100 {
				b.Fatalf("-variants %q: want aa or a percentage", v)
			}
			spin = time.Duration(cpuReq * pct / (100 - pct) * float64(time.Microsecond))
			name = fmt.Sprintf("nethttp-spin%s", v)
		}
		head := copyEntry(name)
		if spin > 0 {
			addSpin(b, head.Dir, spin)
		}
		if _, err := bn.Build(ctx, head); err != nil {
			b.Fatal(err)
		}
		if spin == 0 {
			// The wall time of a one-entry, one-test job with its base, beside the one
			// without it above (both images built).
			t0 := time.Now()
			rows, err := bn.Measure(ctx, Plan{Targets: []Target{{Entry: head, Profiles: profiles[:1], Base: &Base{Entry: base}}}})
			if err != nil || rows[0].Err != nil {
				b.Fatalf("measure %s against its base: %v %v", name, err, rows[0].Err)
			}
			fmt.Printf("a one-test job with its base took %s (%d runs a side, %s)\n",
				time.Since(t0).Round(time.Second), len(rows[0].Result.Runs), rows[0].Result.Base.Stop)
		}
		cells, failed := map[string][]pairCell{}, map[string]int{}
		start := time.Now()
		for i := range pairs {
			plan := Plan{Targets: []Target{{Entry: head, Profiles: profiles, Base: &Base{Entry: base}}}}
			rows, err := bn.Measure(ctx, plan)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(os.Stderr, "%s %s comparison %d/%d done\n", time.Now().Format("15:04:05"), name, i+1, pairs)
			for _, r := range rows {
				if r.Err != nil || r.Result.Base == nil || r.Result.Base.Err != "" {
					// A comparison that failed is counted, not a reason to lose the others.
					failed[r.Profile.Name]++
					var side *result.Side
					if r.Result != nil {
						side = r.Result.Base
					}
					fmt.Printf("%s %s comparison %d failed: %v %+v\n", name, r.Profile.Name, i+1, r.Err, side)
					continue
				}
				cells[r.Profile.Name] = append(cells[r.Profile.Name], newPairCell(r.Result, throughput(r.Profile)))
				if out != nil {
					figure := throughput(r.Profile)
					out.Encode(map[string]any{"variant": name, "spin_ns": spin.Nanoseconds(), "test": r.Profile.Name, "conns": r.Conns,
						"order": r.Result.Base.Order, "stop": r.Result.Base.Stop,
						"base": result.Sample(r.Result.Base.Runs, figure), "head": result.Sample(r.Result.Runs, figure)})
				}
			}
		}
		per := time.Since(start) / time.Duration(pairs)
		for _, p := range profiles {
			for _, m := range []struct {
				name string
				diff func(pairCell) (stats.Diff, error)
			}{
				{"welch", func(c pairCell) (stats.Diff, error) { return c.diff, c.err }},
				{"paired", func(c pairCell) (stats.Diff, error) { return c.paired, c.perr }},
			} {
				report := summarize(cells[p.Name], bn.cfg.Rule, m.diff)
				fmt.Printf("%-18s spin %-8s %-8s %-6s %s; %d failed; %s per comparison\n", name, spin.Round(10*time.Nanosecond), p.Name, m.name, report, failed[p.Name], per.Round(time.Second))
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

// A pairCell is one comparison's Δ, by Welch over the two samples and by the ratios of
// adjacent pairs.
type pairCell struct {
	diff, paired stats.Diff
	err, perr    error
	runs         int // per side, the smaller
}

func newPairCell(r *result.Result, figure func(result.Run) float64) pairCell {
	base, head := result.Sample(r.Base.Runs, figure), result.Sample(r.Runs, figure)
	c := pairCell{runs: min(len(r.Runs), len(r.Base.Runs))}
	c.diff, c.err = stats.Compare(base, head)
	c.paired, c.perr = stats.ComparePaired(base, head)
	return c
}

// summarize counts the flagged cells: "flagged 1/20 (slower 1/20), median Δ -0.4%, median
// ±2.1%, median 4 runs a side".
func summarize(cells []pairCell, rule stats.Rule, diff func(pairCell) (stats.Diff, error)) string {
	var flagged, slower int
	var rel, half, runs []float64
	for _, c := range cells {
		d, err := diff(c)
		if err != nil {
			continue
		}
		if rule.Changed(d) {
			flagged++
			if d.Rel < 0 {
				slower++
			}
		}
		rel = append(rel, d.Rel)
		half = append(half, d.Half)
		runs = append(runs, float64(c.runs))
	}
	return fmt.Sprintf("flagged %d/%d (slower %d/%d), median Δ %+.1f%%, median ±%.1f%%, median %.0f runs a side",
		flagged, len(cells), slower, len(cells), median(rel)*100, median(half)*100, median(runs))
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
