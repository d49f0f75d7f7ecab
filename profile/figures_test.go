package profile

import (
	"slices"
	"testing"
)

// TestFigures: every fixed-rate profile is judged on CPU per request and scored; the
// bandwidth and WebSocket rows on their own rate; every other row on requests per second;
// and no row's figures repeat.
func TestFigures(t *testing.T) {
	want := map[string]Figures{
		"baseline":    {Primary: FigureRPS, Secondary: []Figure{FigureCPUPerReq, FigureP99}},
		"fortunes":    {Primary: FigureRPS, Secondary: []Figure{FigureCPUPerReq, FigureP99}},
		"latency-10k": {Primary: FigureCPUPerReq, Scored: true, Secondary: []Figure{FigureP99}},
		"8gbit":       {Primary: FigureCPUPerReq, Scored: true, Secondary: []Figure{FigureP99}},
		"download":    {Primary: FigureBandwidth, Secondary: []Figure{FigureCPUPerReq, FigureP99}},
		"echo-ws":     {Primary: FigureEchoes, Secondary: []Figure{FigureCPUPerReq}},
	}
	for _, p := range All {
		f := p.Figures()
		all := f.All()
		sorted := slices.Clone(all)
		slices.Sort(sorted)
		if len(slices.Compact(sorted)) != len(all) {
			t.Errorf("%s: figures %v repeat", p.Name, all)
		}
		if f.Scored != (p.TargetRate > 0) {
			t.Errorf("%s: scored %v, target rate %d", p.Name, f.Scored, p.TargetRate)
		}
		if w, ok := want[p.Name]; ok && (w.Primary != f.Primary || w.Scored != f.Scored || !slices.Equal(w.Secondary, f.Secondary)) {
			t.Errorf("%s: figures %+v, want %+v", p.Name, f, w)
		}
		delete(want, p.Name)
	}
	if len(want) > 0 {
		t.Errorf("profiles not in the table: %v", want)
	}
	if !FigureCPUPerReq.LowerIsBetter() || !FigureP99.LowerIsBetter() || FigureRPS.LowerIsBetter() {
		t.Error("LowerIsBetter: CPU per request and p99 are better lower, RPS higher")
	}
}
