package measure

import (
	"errors"
	"fmt"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/validate"
)

// newRow is the row of e × p × conns as the arena reports it (result.Row), not measured
// yet: the entry's and the profile's names, and the advisories (validate outcomes, WARN)
// as their lines.
func newRow(e frameworks.Entry, p profile.Profile, conns int, advisories []validate.Outcome) result.Row {
	row := result.Row{
		Entry:     e.Name,
		Display:   e.Meta.DisplayName,
		Profile:   p.Name,
		Conns:     conns,
		WebSocket: p.WebSocket,
		Bandwidth: p.Bandwidth,
	}
	for _, o := range advisories {
		row.Advisories = append(row.Advisories, o.String())
	}
	return row
}

// failRow says on row why it has no result: err's text and its table cell (ShortReason),
// and for a failed build the tail of its log (BuildLog). With logGoes (the build log's file
// goes with the run's workspace) a failed build's text points at that tail, below the
// table, instead of the file.
func failRow(row *result.Row, err error, logGoes bool) {
	if err == nil {
		return
	}
	row.Err, row.Short = err.Error(), ShortReason(err)
	bf, ok := errors.AsType[*build.BuildFailure](err)
	if !ok {
		return
	}
	row.BuildLog = bf.Tail()
	if logGoes {
		row.Err = fmt.Sprintf("build failed: %s; fix the Dockerfile or the source (the build log's tail is below the table)", bf.Err.Msg)
		if bf.Limit > 0 {
			row.Err = fmt.Sprintf("%s (the runner's build limit, ARENA_BUILD_TIMEOUT); make it build faster (the build log's tail is below the table)", bf.Err.Msg)
		}
	}
}

// FailedRow is the row of e × p × conns that was never measured, for err: an entry that
// does not load, a test it cannot run. A Bencher's rows (Measure) are made the same way.
func FailedRow(e frameworks.Entry, p profile.Profile, conns int, err error) result.Row {
	row := newRow(e, p, conns, nil)
	failRow(&row, err, false)
	return row
}
