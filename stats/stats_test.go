package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTQuantile against the printed table of Student's t (two-sided 95%: the 0.975 quantile).
func TestTQuantile(t *testing.T) {
	for _, c := range []struct{ df, want float64 }{
		{1, 12.706}, {2, 4.303}, {4, 2.776}, {5, 2.571}, {10, 2.228}, {18, 2.101}, {30, 2.042}, {1e6, 1.960},
	} {
		if got := TQuantile(0.975, c.df); math.Abs(got-c.want) > 0.001 {
			t.Errorf("t(0.975, %v) = %.4f, want %.3f", c.df, got, c.want)
		}
	}
}

// TestCompareByHand: a difference worked out on paper.
func TestCompareByHand(t *testing.T) {
	base := Sample{100, 102, 98}  // mean 100, variance 4
	head := Sample{110, 111, 109} // mean 110, variance 1
	d, err := Compare(base, head)
	if err != nil {
		t.Fatal(err)
	}
	// a = 1/3/100² = 3.3333e-5, b = 110²·4/3/100⁴ = 1.6133e-4; se = sqrt(a+b) = 0.013952;
	// df = (a+b)²/(a²/2+b²/2) = 2.7926; t(0.975, 2.7926) = 3.3204; half = 0.04633.
	if math.Abs(d.Rel-0.10) > 1e-12 || math.Abs(d.DF-2.7926) > 1e-3 || math.Abs(d.Half-0.04633) > 2e-4 {
		t.Errorf("Compare = %+v, want rel 0.10, df 2.7926, half 0.0463", d)
	}
	if !d.ExcludesZero() || !DefaultRule.Changed(d) || DefaultRule.Cell(d) != "+10.0% ±4.6%" {
		t.Errorf("a 10%% change: excludes zero %v, changed %v, cell %q", d.ExcludesZero(), DefaultRule.Changed(d), DefaultRule.Cell(d))
	}
	same, _ := Compare(Sample{5, 5, 5}, Sample{5, 5, 5})
	if same.Rel != 0 || same.Half != 0 || DefaultRule.Changed(same) || DefaultRule.Cell(same) != "~0% (±0.0%)" {
		t.Errorf("identical runs: %+v, cell %q", same, DefaultRule.Cell(same))
	}
	for _, bad := range [][2]Sample{{{1}, {1, 2}}, {{1, 2}, {3}}, {{0, 0}, {1, 2}}} {
		if _, err := Compare(bad[0], bad[1]); err == nil {
			t.Errorf("Compare(%v, %v) gave no error", bad[0], bad[1])
		}
	}
}

// normalRuns returns a seeded source of samples: n runs, each normal around mean with a
// standard deviation of 5% of it.
func normalRuns(seed uint64) func(n int, mean float64) Sample {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	return func(n int, mean float64) Sample {
		s := make(Sample, n)
		for i := range s {
			s[i] = mean * (1 + 0.05*rng.NormFloat64())
		}
		return s
	}
}

// TestCoverage draws both sides from normal distributions of known means (a spread of 5% of
// the mean, as runs on a quiet host have) and counts how often the 95% interval holds the
// true relative difference: close to 95% for every size a row may have, for no change and
// for a 10% one. Seeded, so it is the same every run.
func TestCoverage(t *testing.T) {
	draw := normalRuns(1)
	const trials = 4000
	for _, n := range []int{3, 5, 10} {
		for _, delta := range []float64{0, 0.10} {
			held := 0
			for range trials {
				d, err := Compare(draw(n, 1000), draw(n, 1000*(1+delta)))
				if err != nil {
					t.Fatal(err)
				}
				if d.Lo() <= delta && delta <= d.Hi() {
					held++
				}
			}
			if cov := float64(held) / trials; cov < 0.93 || cov > 0.975 {
				t.Errorf("n=%d, true change %.0f%%: coverage %.3f, want about 0.95", n, delta*100, cov)
			} else {
				t.Logf("n=%d, true change %.0f%%: coverage %.3f", n, delta*100, cov)
			}
		}
	}
}

// TestRuleOnAA: under no change the rule flags at most 5% of rows (the interval's 5% misses,
// fewer still once the minimum effect applies); a 20% change with 3 runs a side at a 5%
// spread is flagged, negative, nearly always.
func TestRuleOnAA(t *testing.T) {
	draw := normalRuns(3)
	const trials = 2000
	flagged, caught := 0, 0
	for range trials {
		if d, _ := Compare(draw(3, 1000), draw(3, 1000)); DefaultRule.Changed(d) {
			flagged++
		}
		if d, _ := Compare(draw(3, 1000), draw(3, 800)); DefaultRule.Changed(d) && d.Rel < 0 {
			caught++
		}
	}
	if r := float64(flagged) / trials; r > 0.05 {
		t.Errorf("A/A: %d of %d flagged (%.3f), want at most 5%%", flagged, trials, r)
	}
	if r := float64(caught) / trials; r < 0.95 {
		t.Errorf("a 20%% regression: caught in %d of %d (%.3f), want at least 95%%", caught, trials, r)
	}
	t.Logf("A/A flagged %d of %d; -20%% caught %d of %d", flagged, trials, caught, trials)
}

func TestEnough(t *testing.T) {
	r := DefaultRule
	tight := Sample{1000, 1001, 999}
	wide := Sample{800, 1000, 1200}
	for _, c := range []struct {
		name       string
		base, head Sample
		budget     bool
		want       string
	}{
		{"below the minimum runs", Sample{1000, 1000}, Sample{1000, 1000}, true, ""},
		{"narrow", tight, tight, false, StopNarrow},
		{"wide, runs left", wide, wide, false, ""},
		{"wide, budget spent", wide, wide, true, StopBudget},
		{"wide, ten a side", append(append(append(Sample{}, wide...), wide...), append(wide, 1000)...), append(append(append(Sample{}, wide...), wide...), append(wide, 1000)...), false, StopMaxRuns},
	} {
		if got := r.Enough(c.base, c.head, c.budget); got != c.want {
			t.Errorf("%s: Enough = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestCell(t *testing.T) {
	r := DefaultRule
	for _, c := range []struct {
		d    Diff
		want string
	}{
		{Diff{Rel: -0.061, Half: 0.018}, "-6.1% ±1.8%"},
		{Diff{Rel: 0.015, Half: 0.005}, "~0% (±0.5%)"}, // excludes zero but under the minimum effect
		{Diff{Rel: 0.03, Half: 0.04}, "~0% (±4.0%)"},   // includes zero
		{Diff{Rel: 0.25, Half: 0.1}, "+25.0% ±10.0%"},
	} {
		if got := r.Cell(c.d); got != c.want {
			t.Errorf("Cell(%+v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// TestPairedUnderDrift: when the machine drifts between pairs (each pair's two runs share a
// factor that varies by 15% from pair to pair, plus 3% of noise per run, as interleaved runs
// on a busy host see), the paired interval keeps its coverage and is several times narrower
// than Welch's, which counts the drift as noise. Without drift it still covers. Seeded.
func TestPairedUnderDrift(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	pairs := func(n int, delta, drift float64) (Sample, Sample) {
		var base, head Sample
		for range n {
			f := 1 + drift*rng.NormFloat64()
			base = append(base, 1000*f*(1+0.03*rng.NormFloat64()))
			head = append(head, 1000*(1+delta)*f*(1+0.03*rng.NormFloat64()))
		}
		return base, head
	}
	const trials = 3000
	for _, drift := range []float64{0, 0.15} {
		for _, delta := range []float64{0, -0.10} {
			held := 0
			var paired, welch float64
			for range trials {
				b, h := pairs(5, delta, drift)
				d, err := ComparePaired(b, h)
				if err != nil {
					t.Fatal(err)
				}
				w, _ := Compare(b, h)
				paired += d.Half
				welch += w.Half
				if d.Lo() <= delta && delta <= d.Hi() {
					held++
				}
			}
			cov := float64(held) / trials
			if cov < 0.93 || cov > 0.975 {
				t.Errorf("drift %.0f%%, change %.0f%%: paired coverage %.3f, want about 0.95", drift*100, delta*100, cov)
			}
			if drift > 0 && paired*3 > welch {
				t.Errorf("drift %.0f%%: paired half-width %.3f not a third of Welch's %.3f", drift*100, paired/trials, welch/trials)
			}
			t.Logf("drift %.0f%%, change %.0f%%: paired coverage %.3f, mean half-width paired ±%.1f%%, Welch ±%.1f%%",
				drift*100, delta*100, cov, paired/trials*100, welch/trials*100)
		}
	}
	if _, err := ComparePaired(Sample{1}, Sample{1, 2}); err == nil {
		t.Error("one pair gave an interval")
	}
	if _, err := ComparePaired(Sample{0, 1}, Sample{1, 2}); err == nil {
		t.Error("a base run of 0 gave a ratio")
	}
}

// TestFamilyLevel: k intervals at FamilyLevel(k) are each wider than one at Level, and
// their misses add up to at most 1−Level.
func TestFamilyLevel(t *testing.T) {
	if FamilyLevel(1) != Level || FamilyLevel(0) != Level {
		t.Errorf("FamilyLevel(1) = %v, want %v", FamilyLevel(1), Level)
	}
	if got := FamilyLevel(4); math.Abs(got-0.9875) > 1e-12 {
		t.Errorf("FamilyLevel(4) = %v, want 0.9875", got)
	}
	base, head := Sample{100, 103, 98, 101}, Sample{104, 107, 102, 103}
	one, _ := Compare(base, head)
	four, _ := CompareAt(base, head, FamilyLevel(4))
	if !(four.Half > one.Half) || four.Rel != one.Rel {
		t.Errorf("at FamilyLevel(4) %+v, at Level %+v: want the same Rel and a wider interval", four, one)
	}
}
