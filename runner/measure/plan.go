package measure

import (
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/stats"
)

// A Target is one entry and the profiles selected for it, in profile order.
type Target struct {
	Entry frameworks.Entry
	// Profiles are the entry's selected profiles. Each one's ConnCounts(Plan.Lite) are the
	// connection counts the plan measures: the selection's rows (a queued job's rows, which
	// may have been planned for the other mode), not necessarily the table's.
	Profiles []profile.Profile
	// Skipped are subscribed profiles that were not selected because the harness cannot run
	// them (in this mode), each with the reason.
	Skipped []string
	// Base, when set, is measured beside every row, interleaved with it (measurePair).
	Base *Base
}

// A Plan is what one bench or job measures.
type Plan struct {
	Targets []Target
	Lite    bool
	// CPUProfile says which rows get a profiling run after their measured runs
	// (profile.CPUProfileFirst, profile.CPUProfileAll); "" means none.
	CPUProfile string
}

// Rows is the number of measurements (entry × profile × connection count) in the plan.
func (p Plan) Rows() int {
	n := 0
	for _, t := range p.Targets {
		n += t.rows(p.Lite)
	}
	return n
}

// rows is the number of the target's measurements.
func (t Target) rows(lite bool) int {
	n := 0
	for _, pr := range t.Profiles {
		n += len(pr.ConnCounts(lite))
	}
	return n
}

// Runs is the number of load-tool runs the plan makes at least: runs per row, and the
// rule's minimum on both sides of an interleaved row.
func (p Plan) Runs(runs int, rule stats.Rule) int {
	n := 0
	for _, t := range p.Targets {
		per := runs
		if t.Base != nil {
			per = 2 * rule.MinRuns
		}
		n += t.rows(p.Lite) * per
	}
	return n
}

// A Base is what a target's rows are measured against in the same run, interleaved run by
// run with them (base, head, head, base, …): the target's own entry built at the PR's base,
// or the --compare entry.
type Base struct {
	// Entry is the entry measured as the base; its Dir holds the base's source.
	Entry frameworks.Entry
	// Ref is the base branch whose merge base Commit is; "" for --compare.
	Ref string
	// Commit is the commit Entry.Dir was taken from. With Ref set, the base's image is
	// tagged by it and kept for the next job that needs the same base.
	Commit string
	// Err, when set, says why there is no base to build (it does not load at Commit): the
	// rows are measured alone and say so.
	Err error
}
