package report

import (
	"math"

	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/stats"
)

// The arena's fixed-rate 0–100 score (scripts/latency_score.py, after the arena's PR
// #1457): 100 × rate factor × (0.50 CPU + 0.25 p99 + 0.25 mean latency).
const (
	scoreFull      = 0.95 // the rate factor is 1 from 95% of the target rate on
	scoreCPUWeight = 0.50
	scoreP99Weight = 0.25
	scoreAvgWeight = 0.25
	scoreP99Decs   = 3 // p99 scores 0 three decades above the best
	scoreAvgDecs   = 1 // mean latency scores 0 one decade above the best
)

// ScoreBests are the figures a fixed-rate score is measured against: the lowest CPU µs per
// request, p99 and mean latency (µs) among the rows scored.
type ScoreBests struct {
	CPU, P99, Mean float64
	// Committed says that the bests include committed results of the profile, not only the
	// two sides of the row.
	Committed bool
}

// A scorePoint is what the score reads of a run or of a side's means.
type scorePoint struct {
	Rate, CPU, P99, Mean float64 // achieved requests/s; CPU µs per request; latency µs
}

// ArenaScore is the arena's fixed-rate score of a point at target requests/s against
// bests: rateFactor = clamp01(rate / (0.95 × target)); cpuScore = clamp01(best/cpu), 0 for a
// missing CPU; p99Score = clamp01(1 − log10(max(p99, best)/best)/3) and meanScore the same
// over one decade; score = 100 × rateFactor × (0.50 cpuScore + 0.25 p99Score + 0.25
// meanScore).
func ArenaScore(p scorePoint, target float64, best ScoreBests) float64 {
	if !(target > 0) {
		return 0
	}
	rate := clamp01(p.Rate / (scoreFull * target))
	cpu := 0.0
	if p.CPU > 0 && best.CPU > 0 {
		cpu = clamp01(best.CPU / p.CPU)
	}
	return 100 * rate * (scoreCPUWeight*cpu + scoreP99Weight*decades(p.P99, best.P99, scoreP99Decs) + scoreAvgWeight*decades(p.Mean, best.Mean, scoreAvgDecs))
}

// decades is 1 at best, falling linearly in log10 to 0 n decades above it; 0 for a missing
// figure.
func decades(v, best, n float64) float64 {
	if !(v > 0) || !(best > 0) {
		return 0
	}
	return clamp01(1 - math.Log10(math.Max(v, best)/best)/n)
}

func clamp01(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return math.Min(1, math.Max(0, v))
}

// runPoint is what the score reads of one run.
func runPoint(r result.Run) scorePoint {
	cpu, _ := r.Value(result.ValueCPUPerReq)
	return scorePoint{Rate: r.RPS, CPU: cpu, P99: r.LatencyUS.P99, Mean: r.LatencyUS.Mean}
}

// sidePoint is the means of a side's runs: achieved rate, CPU per request, p99 and mean
// latency, each over the runs that have it; a result without runs (the old arena's file)
// gives its summary figures.
func sidePoint(runs []result.Run, summary *result.Result) scorePoint {
	if len(runs) == 0 {
		if summary == nil {
			return scorePoint{}
		}
		return scorePoint{Rate: summary.AchievedRate, CPU: summary.CPUPerRequest, P99: summary.LatencyUS.P99, Mean: summary.LatencyUS.Mean}
	}
	mean := func(f func(result.Run) (float64, bool)) float64 {
		var s stats.Sample
		for _, r := range runs {
			if v, ok := f(r); ok && v > 0 {
				s = append(s, v)
			}
		}
		if len(s) == 0 {
			return 0
		}
		return s.Mean()
	}
	return scorePoint{
		Rate: mean(func(r result.Run) (float64, bool) { return r.RPS, true }),
		CPU:  mean(func(r result.Run) (float64, bool) { return r.Value(result.ValueCPUPerReq) }),
		P99:  mean(func(r result.Run) (float64, bool) { return r.LatencyUS.P99, true }),
		Mean: mean(func(r result.Run) (float64, bool) { return r.LatencyUS.Mean, true }),
	}
}

// lower keeps the smaller positive figure of best and v.
func lower(best *float64, v float64) {
	if v > 0 && (*best <= 0 || v < *best) {
		*best = v
	}
}

// bestsOf are the bests of the committed results of a profile (every entry and connection
// count the report has), then of the given points: the minimum of each figure over all.
func bestsOf(committed []*result.Result, points ...scorePoint) ScoreBests {
	var b ScoreBests
	for _, c := range committed {
		if c == nil {
			continue
		}
		cpu := c.CPUPerRequest
		if cpu <= 0 {
			continue // a result that cannot be scored sets no best
		}
		b.Committed = true
		lower(&b.CPU, cpu)
		lower(&b.P99, c.LatencyUS.P99)
		lower(&b.Mean, c.LatencyUS.Mean)
	}
	for _, p := range points {
		lower(&b.CPU, p.CPU)
		lower(&b.P99, p.P99)
		lower(&b.Mean, p.Mean)
	}
	return b
}

// runScores is the score of each run against fixed bests: a sample Welch's interval can
// compare.
func runScores(runs []result.Run, target float64, best ScoreBests) stats.Sample {
	s := make(stats.Sample, len(runs))
	for i, r := range runs {
		s[i] = ArenaScore(runPoint(r), target, best)
	}
	return s
}
