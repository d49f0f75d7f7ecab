package result

import "math"

// The arena's fixed-rate 0–100 score (its scripts/latency_score.py): 100 × rate factor ×
// (0.50 CPU + 0.25 p99 + 0.25 mean latency).
const (
	scoreFull      = 0.95 // the rate factor is 1 from 95% of the target rate on
	scoreCPUWeight = 0.50
	scoreP99Weight = 0.25
	scoreAvgWeight = 0.25
	scoreP99Decs   = 3 // p99 scores 0 three decades above the best
	scoreAvgDecs   = 1 // mean latency scores 0 one decade above the best
)

// A ScorePoint is what the score reads of a run or of a side's means.
type ScorePoint struct {
	Rate, CPU, P99, Mean float64 // achieved requests/s; CPU µs per request; latency µs
}

// Score is the arena's fixed-rate score of a point at target requests/s against bests:
// rateFactor = clamp01(rate / (0.95 × target)); cpuScore = clamp01(best/cpu), 0 for a
// missing CPU; p99Score = clamp01(1 − log10(max(p99, best)/best)/3) and meanScore the same
// over one decade; score = 100 × rateFactor × (0.50 cpuScore + 0.25 p99Score + 0.25
// meanScore).
func Score(p ScorePoint, target float64, best Bests) float64 {
	if !(target > 0) {
		return 0
	}
	rate := clamp01(p.Rate / (scoreFull * target))
	cpu := 0.0
	if p.CPU > 0 && best.CPUPerRequest > 0 {
		cpu = clamp01(best.CPUPerRequest / p.CPU)
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

// Point is what the score reads of one run.
func (r Run) Point() ScorePoint {
	cpu, _ := r.Value(ValueCPUPerReq)
	return ScorePoint{Rate: r.RPS, CPU: cpu, P99: r.LatencyUS.P99, Mean: r.LatencyUS.Mean}
}

// MeanPoint is the means of runs' score figures (achieved rate, CPU per request, p99 and
// mean latency), each over the runs where it is above 0; a figure no run has is 0.
func MeanPoint(runs []Run) ScorePoint {
	var sum, n [4]float64
	for _, r := range runs {
		p := r.Point()
		for i, v := range [4]float64{p.Rate, p.CPU, p.P99, p.Mean} {
			if v > 0 {
				sum[i] += v
				n[i]++
			}
		}
	}
	var m [4]float64
	for i := range m {
		if n[i] > 0 {
			m[i] = sum[i] / n[i]
		}
	}
	return ScorePoint{Rate: m[0], CPU: m[1], P99: m[2], Mean: m[3]}
}

// Scores is the score of each run against fixed bests: a sample Welch's interval can
// compare.
func Scores(runs []Run, target float64, best Bests) []float64 {
	s := make([]float64, len(runs))
	for i, r := range runs {
		s[i] = Score(r.Point(), target, best)
	}
	return s
}
