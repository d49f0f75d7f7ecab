package profile

// A Figure is one number a row is measured by.
type Figure string

// The figures a row can be judged by.
const (
	FigureRPS       Figure = "rps"     // responses per second
	FigureBandwidth Figure = "mb/s"    // response bytes per second, shown as MB/s
	FigureEchoes    Figure = "msg/s"   // WebSocket echoes per second
	FigureCPUPerReq Figure = "cpu/req" // server CPU µs per request (cgroup CPU over the run / 2xx)
	FigureP99       Figure = "p99"     // 99th-percentile latency, µs
)

// Figures say what a profile's rows are judged by: the reply's Δ cells, the adaptive stop
// rule and docs/profiles.md all read them from here.
type Figures struct {
	// Primary is the figure the profile is judged by: the row's first Δ and the figure
	// whose interval the adaptive runs narrow. A fixed-rate row's offered rate is its
	// achieved rate whatever the server does, so its primary figure is CPU per request.
	Primary Figure
	// Scored: the row also shows the arena's 0–100 fixed-rate score for each side (built
	// from CPU per request, p99 and mean latency, with the rate gate).
	Scored bool
	// Secondary are the other figures a row shows a Δ of, in order.
	Secondary []Figure
}

// Figures returns what the profile's rows are judged by, from its kind: fixed rate
// (TargetRate), WebSocket (no latency per request), bandwidth, or requests.
func (p Profile) Figures() Figures {
	switch {
	case p.TargetRate > 0:
		return Figures{Primary: FigureCPUPerReq, Scored: true, Secondary: []Figure{FigureP99}}
	case p.WebSocket:
		return Figures{Primary: FigureEchoes, Secondary: []Figure{FigureCPUPerReq}}
	case p.Bandwidth:
		return Figures{Primary: FigureBandwidth, Secondary: []Figure{FigureCPUPerReq, FigureP99}}
	default:
		return Figures{Primary: FigureRPS, Secondary: []Figure{FigureCPUPerReq, FigureP99}}
	}
}

// All returns the primary figure and then the secondary ones.
func (f Figures) All() []Figure { return append([]Figure{f.Primary}, f.Secondary...) }

// Cells is how many Δ cells a row judged by f shows, each of which may flag a change: its
// figures, Δ memory and, when scored, Δ score. The reply's intervals are at the family level
// of this many (stats.FamilyLevel), and BenchmarkDeltas counts a row as flagged over as many.
func (f Figures) Cells() int {
	k := len(f.All()) + 1
	if f.Scored {
		k++
	}
	return k
}

// LowerIsBetter reports whether a smaller value of the figure is the better one.
func (f Figure) LowerIsBetter() bool { return f == FigureCPUPerReq || f == FigureP99 }
