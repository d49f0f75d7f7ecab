package runner

import (
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/measure"
)

// ResultRow is a measured row as the arena reports it (result.Row), for bench's tables, the
// job's report and its row events: the entry's and the profile's names, the result, the
// error as its text and its table cell (measure.ShortReason), the advisories as WARN lines.
// The profile's files (Pprof, Flame) stay on the measure.Row: only a --save takes them.
func ResultRow(r measure.Row) result.Row {
	row := result.Row{
		Entry:     r.Entry.Name,
		Display:   r.Entry.Meta.DisplayName,
		Profile:   r.Profile.Name,
		Conns:     r.Conns,
		WebSocket: r.Profile.WebSocket,
		Bandwidth: r.Profile.Bandwidth,
		Result:    r.Result,
	}
	for _, o := range r.Advisories {
		row.Advisories = append(row.Advisories, o.String())
	}
	if r.Err != nil {
		row.Err, row.Short = r.Err.Error(), measure.ShortReason(r.Err)
	}
	return row
}
