// Package stats compares two samples of runs, a base and a head measured interleaved in one
// job: the relative difference of their means with a 95% confidence interval, the rule that
// says whether the difference is a change or noise, and the rule that says when a row has
// been measured enough.
//
// The interval is Welch's: the two samples may have different variances and sizes, and the
// relative difference (head−base)/base is linearised around the means (the delta method),
// its degrees of freedom from the Welch–Satterthwaite equation on the same two variance
// terms. With the 3 to 10 runs a side a row gets, that is the interval that holds its
// coverage; a bootstrap over so few runs is too narrow.
package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Method names the interval in replies.
const Method = "Welch 95% interval of the relative difference of the means"

// Level is the interval's confidence.
const Level = 0.95

// A Sample is one side's runs (RPS, a latency percentile, …).
type Sample []float64

// Mean is the arithmetic mean; NaN for an empty sample.
func (s Sample) Mean() float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, v := range s {
		sum += v
	}
	return sum / float64(len(s))
}

// Var is the unbiased sample variance; NaN below two runs.
func (s Sample) Var() float64 {
	if len(s) < 2 {
		return math.NaN()
	}
	m := s.Mean()
	var ss float64
	for _, v := range s {
		ss += (v - m) * (v - m)
	}
	return ss / float64(len(s)-1)
}

// A Diff is head against base: Rel = mean(head)/mean(base) − 1, and the interval
// [Rel−Half, Rel+Half] at Level.
type Diff struct {
	Rel  float64 // relative difference of the means (−0.061 is −6.1%)
	Half float64 // half-width of the interval, relative (0.018 is ±1.8%)
	DF   float64 // Welch–Satterthwaite degrees of freedom
	N    [2]int  // runs of base, head
}

// Lo and Hi are the interval's ends.
func (d Diff) Lo() float64 { return d.Rel - d.Half }
func (d Diff) Hi() float64 { return d.Rel + d.Half }

// ExcludesZero reports whether the interval lies wholly on one side of no change.
func (d Diff) ExcludesZero() bool { return d.Lo() > 0 || d.Hi() < 0 }

// Compare returns head against base with an interval at Level. Each side needs at least
// two runs and base a positive mean; otherwise it returns an error that says which.
func Compare(base, head Sample) (Diff, error) { return CompareAt(base, head, Level) }

// FamilyLevel is the confidence each of k intervals needs so that, together, they are
// wrong at most 1−Level of the time (Bonferroni): a row that shows k Δ cells flags one by
// luck in at most 5% of A/A rows, not 5% of cells. k below 2 gives Level.
func FamilyLevel(k int) float64 {
	if k < 2 {
		return Level
	}
	return 1 - (1-Level)/float64(k)
}

// CompareAt is Compare with an interval at the given confidence (FamilyLevel for one of
// several figures of a row).
func CompareAt(base, head Sample, level float64) (Diff, error) {
	if len(base) < 2 || len(head) < 2 {
		return Diff{}, fmt.Errorf("an interval needs two runs a side at least (base %d, head %d)", len(base), len(head))
	}
	mb, mh := base.Mean(), head.Mean()
	if !(mb > 0) {
		return Diff{}, fmt.Errorf("the base's mean is %v: no relative difference", mb)
	}
	nb, nh := float64(len(base)), float64(len(head))
	// Var(mh/mb) ≈ Var(mh)/mb² + mh²·Var(mb)/mb⁴, the two terms Welch's df weighs.
	a := head.Var() / nh / (mb * mb)
	b := mh * mh * base.Var() / nb / (mb * mb * mb * mb)
	d := Diff{Rel: mh/mb - 1, N: [2]int{len(base), len(head)}}
	se := math.Sqrt(a + b)
	if se == 0 { // identical runs on both sides: no spread to widen the interval
		d.DF = nb + nh - 2
		return d, nil
	}
	d.DF = (a + b) * (a + b) / (a*a/(nh-1) + b*b/(nb-1))
	d.Half = TQuantile(1-(1-level)/2, d.DF) * se
	return d, nil
}

// PairedMethod names ComparePaired's interval in replies.
const PairedMethod = "95% t interval of the mean ratio of adjacent interleaved runs"

// ComparePaired returns head against base from runs taken in adjacent pairs (base[i] and
// head[i] one after the other, as interleaving runs them): Rel is the mean of the pairs'
// ratios head[i]/base[i] − 1 and Half its t interval over the pairs. Drift that moves both
// runs of a pair alike cancels in each ratio, which Welch's interval over the two samples
// counts as noise. It needs two pairs at least and positive base runs; extra runs of the
// longer side are left out.
func ComparePaired(base, head Sample) (Diff, error) {
	n := min(len(base), len(head))
	if n < 2 {
		return Diff{}, fmt.Errorf("an interval needs two pairs at least (base %d, head %d)", len(base), len(head))
	}
	ratios := make(Sample, n)
	for i := range n {
		if !(base[i] > 0) {
			return Diff{}, fmt.Errorf("base run %d is %v: no ratio", i+1, base[i])
		}
		ratios[i] = head[i]/base[i] - 1
	}
	d := Diff{Rel: ratios.Mean(), DF: float64(n - 1), N: [2]int{n, n}}
	if v := ratios.Var(); v > 0 {
		d.Half = TQuantile(1-(1-Level)/2, d.DF) * math.Sqrt(v/float64(n))
	}
	return d, nil
}

// TQuantile is the p quantile of Student's t distribution with df degrees of freedom.
func TQuantile(p, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// Rule decides what a Diff says and when a row has been measured enough.
type Rule struct {
	// MinEffect is the smallest relative change called a change (0.02: 2%); a smaller one,
	// even when the interval excludes zero, is shown as no change.
	MinEffect float64
	// Target is the half-width at which a row stops measuring (0.02: ±2%).
	Target float64
	// MinRuns and MaxRuns bound the runs per side.
	MinRuns, MaxRuns int
}

// DefaultRule is the rule replies use unless told otherwise: 2%, ±2%, 3 to 10 runs a side.
var DefaultRule = Rule{MinEffect: 0.02, Target: 0.02, MinRuns: 3, MaxRuns: 10}

// Changed reports whether d is a change under the rule: its interval excludes zero and its
// size reaches the minimum effect.
func (r Rule) Changed(d Diff) bool { return d.ExcludesZero() && math.Abs(d.Rel) >= r.MinEffect }

// Why a row stopped measuring.
const (
	StopNarrow  = "interval narrow enough"
	StopMaxRuns = "run limit reached"
	StopBudget  = "job time budget reached"
)

// Enough says whether a row whose sides have the given runs may stop, and why; "" means
// measure another pair. overBudget is the job's time budget being spent.
func (r Rule) Enough(base, head Sample, overBudget bool) string {
	n := min(len(base), len(head))
	if n < r.MinRuns {
		return ""
	}
	if d, err := Compare(base, head); err == nil && d.Half < r.Target {
		return StopNarrow
	}
	if n >= r.MaxRuns {
		return StopMaxRuns
	}
	if overBudget {
		return StopBudget
	}
	return ""
}

// Cell renders d as a table cell: "-6.1% ±1.8%" for a change, "~0% (±2.4%)" otherwise, so
// the reader sees the smallest change the row could have shown.
func (r Rule) Cell(d Diff) string {
	if r.Changed(d) {
		return fmt.Sprintf("%+.1f%% ±%.1f%%", d.Rel*100, d.Half*100)
	}
	return fmt.Sprintf("~0%% (±%.1f%%)", d.Half*100)
}
