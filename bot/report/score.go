package report

import (
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/stats"
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
type scorePoint = result.ScorePoint

// ArenaScore is the arena's fixed-rate score of a point at target requests/s against bests
// (result.Score).
func ArenaScore(p scorePoint, target float64, best ScoreBests) float64 {
	return result.Score(p, target, best.result())
}

// result is the bests as the result package keeps them.
func (b ScoreBests) result() result.Bests {
	return result.Bests{CPUPerRequest: b.CPU, P99: b.P99, Mean: b.Mean}
}

// sidePoint is the means of a side's runs (result.MeanPoint); a result without runs (the
// old arena's file) gives its summary figures.
func sidePoint(runs []result.Run, summary *result.Result) scorePoint {
	if len(runs) == 0 {
		if summary == nil {
			return scorePoint{}
		}
		return scorePoint{Rate: summary.AchievedRate, CPU: summary.CPUPerRequest, P99: summary.LatencyUS.P99, Mean: summary.LatencyUS.Mean}
	}
	return result.MeanPoint(runs)
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
	return result.Scores(runs, target, best.result())
}
