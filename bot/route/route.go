// Package route picks the runner pool a request goes to: each row's profile says how many
// CPUs a host needs to run it at full size (profile.HostCPUs), each pool's live hosts say
// what they have (queue.Host), and a row that no live host of any pool can run is refused at
// the ack rather than left waiting.
package route

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/arenabot/arenabot/md"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
)

// A Refusal is a test of the request whose rows will not run, and why.
type Refusal struct {
	Test string
	Need int // the CPUs a host needs for it (profile.HostCPUs)
	Most int // the CPUs of the best pool's smallest live host
}

// A Decision is where a request goes: its pool, and the tests refused there.
type Decision struct {
	Pool    string
	Refused []Refusal // in the order of the rows
	// NoHosts is set when no pool had a live host to decide by: the request goes to the
	// first pool and waits for a runner, as before there were hosts to ask.
	NoHosts bool
}

// Runs reports whether the decision keeps row r.
func (d Decision) Runs(r profile.Row) bool {
	return !slices.ContainsFunc(d.Refused, func(f Refusal) bool { return f.Test == r.Test })
}

// Choose routes rows to one of pools (in preference order; empty: queue.DefaultPool) from
// the live hosts. A host runs a row when it has the CPUs the row's profile needs; a --lite
// host, or one that does not say how many CPUs it has, runs any row. A pool runs a row when
// every live host of it does, since whichever of them is idle claims the job. The rows no
// live pool can run are refused; the rest go to the first pool that runs them all (a pool
// that runs the biggest row runs every smaller one).
func Choose(pools []string, hosts []queue.Host, rows []profile.Row) Decision {
	if len(pools) == 0 {
		pools = []string{queue.DefaultPool}
	}
	has := map[string]int{} // pool -> the CPUs of its smallest live host
	for _, h := range hosts {
		if slices.Contains(pools, h.Pool) {
			if c, ok := has[h.Pool]; ok {
				has[h.Pool] = min(c, cpus(h))
			} else {
				has[h.Pool] = cpus(h)
			}
		}
	}
	most := 0 // what the best pool runs
	for _, c := range has {
		most = max(most, c)
	}
	if len(has) == 0 {
		return Decision{Pool: pools[0], NoHosts: true}
	}
	var d Decision
	biggest := 0 // the most CPUs a row that runs needs
	for _, r := range rows {
		n := need(r)
		switch {
		case n <= most:
			biggest = max(biggest, n)
		case d.Runs(r):
			d.Refused = append(d.Refused, Refusal{Test: r.Test, Need: n, Most: most})
		}
	}
	for _, p := range pools {
		if c, live := has[p]; live && c >= biggest {
			d.Pool = p
			break
		}
	}
	return d
}

// need is the CPUs a host needs for row r; an unknown test needs none (the plan has
// refused it already).
func need(r profile.Row) int {
	p, ok := profile.Lookup(r.Test)
	if !ok {
		return 0
	}
	return p.HostCPUs()
}

// cpus is what a host can run: its online CPUs, or any row for a --lite host or one whose
// CPU count is unknown.
func cpus(h queue.Host) int {
	if h.Lite {
		return math.MaxInt
	}
	n, err := strconv.Atoi(strings.TrimSpace(h.Threads))
	if err != nil || n <= 0 {
		return math.MaxInt
	}
	return n
}

// Reason is the Markdown sentence that says why f's rows do not run.
func (f Refusal) Reason() string {
	return fmt.Sprintf("%s needs a runner host with %d CPUs and no pool has only such hosts (the best has %d)", md.Code(f.Test), f.Need, f.Most)
}

// Reasons is the refused tests' reasons, in Markdown, separated by "; ".
func (d Decision) Reasons() string {
	reasons := make([]string, len(d.Refused))
	for i, f := range d.Refused {
		reasons[i] = f.Reason()
	}
	return strings.Join(reasons, "; ")
}

// Note is the ack's Markdown note on the refused tests; "" when none was refused.
func (d Decision) Note() string {
	if len(d.Refused) == 0 {
		return ""
	}
	return "Not run: " + d.Reasons() + ". The other rows run in pool " + md.Code(d.Pool) + "."
}
