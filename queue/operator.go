package queue

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/arenabot/arenabot/text"
)

// WriteOperatorPage writes what an operator of the service looks at (serve's GET /): every
// pool's line as WriteStatus writes it, the requests awaiting approval (repository and
// pull request, requester, age, when they expire), per pool when its runner was last
// seen, and the live runner hosts (Hosts) with their machines and jobs. A pool with jobs
// in its line whose runner was not seen for more than twice leaseTTL is marked "no live
// runner": nothing will run them until one comes back. now is the time ages are measured
// from.
func WriteOperatorPage(ctx context.Context, w io.Writer, q Reader, now time.Time, leaseTTL time.Duration) error {
	lines, err := q.Status(ctx)
	if err != nil {
		return err
	}
	pending, err := q.List(ctx, Filter{States: []State{AwaitingApproval}})
	if err != nil {
		return err
	}
	runners, err := q.Runners(ctx)
	if err != nil {
		return err
	}
	hosts, err := q.Hosts(ctx)
	if err != nil {
		return err
	}
	if err := WriteStatus(ctx, w, q); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)

	slices.SortStableFunc(pending, func(a, b Job) int { return a.Created.Compare(b.Created) })
	fmt.Fprintf(tw, "\nawaiting approval: %d %s\n", len(pending), plural(len(pending), "request", "requests"))
	if len(pending) > 0 {
		fmt.Fprintln(tw, "JOB\tPR\tREQUESTER\tCOMMAND\tAGE\tEXPIRES")
		for _, j := range pending {
			expires := "never"
			if !j.Expires.IsZero() {
				expires = "in " + roundDuration(max(j.Expires.Sub(now), 0)) + " (" + j.Expires.UTC().Format(time.RFC3339) + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n",
				j.ID, prName(j), text.Or(j.Requester, "-"), text.Or(j.Command, "-"), age(now, j.Created), expires)
		}
	}

	if leaseTTL <= 0 {
		leaseTTL = Options{}.withDefaults().LeaseTTL
	}
	pools := poolRunners(lines, runners, now, leaseTTL)
	fmt.Fprintf(tw, "\nrunners (live: seen in the last %s):\n", roundDuration(2*leaseTTL))
	if len(pools) == 0 {
		fmt.Fprintln(tw, "none seen yet")
	} else {
		fmt.Fprintln(tw, "POOL\tLAST SEEN\tJOBS IN LINE\tSTATE")
	}
	for _, p := range pools {
		seen := "never"
		if !p.Seen.IsZero() {
			seen = age(now, p.Seen) + " ago (" + p.Seen.UTC().Format(time.RFC3339) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", p.Pool, seen, p.Jobs, p.State)
	}

	writeHosts(tw, hosts, now)
	return tw.Flush()
}

// writeHosts writes the live runner hosts, by pool, then name: each one's machine, the
// CPU split of its measurements and the job it runs.
func writeHosts(w io.Writer, hosts []Host, now time.Time) {
	fmt.Fprintf(w, "\nhosts: %d live\n", len(hosts))
	if len(hosts) == 0 {
		fmt.Fprintln(w, "none announced")
		return
	}
	fmt.Fprintln(w, "POOL\tHOST\tCPU\tCORES/THREADS\tKERNEL\tDOCKER\tSERVER CPUS\tLOAD CPUS\tJOB\tLAST SEEN")
	cell := func(s string) string { return text.Or(text.OneLine(s), "-") }
	for _, h := range hosts {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s/%s\t%s\t%s\t%s\t%s\t%s\t%s ago\n",
			cell(h.Pool), cell(h.Name), cell(h.CPU), cell(h.Cores), cell(h.Threads), cell(h.Kernel), cell(h.Docker),
			cell(h.ServerCPUs), cell(h.LoadgenCPUs), text.Or(text.OneLine(h.Job), "idle"), age(now, h.Seen))
	}
}

// A poolRunner is what the operator page says of a pool's runner.
type poolRunner struct {
	Pool  string
	Seen  time.Time // when a runner of the pool was last seen; zero: never
	Jobs  int       // jobs in the pool's line, running or waiting
	State string    // "live", "no live runner" or "idle"
}

// Runner states on the operator page.
const (
	runnerLive = "live"           // seen within twice the lease TTL
	runnerNone = "no live runner" // not seen for longer, and jobs wait in the pool's line
	runnerIdle = "idle"           // not seen for longer, and nothing waits
)

// poolRunners joins the pools' lines and what the queue knows of their runners, pools
// sorted by name: every pool that has a line or was ever served by a runner.
func poolRunners(lines []Line, runners []Runner, now time.Time, leaseTTL time.Duration) []poolRunner {
	byPool := map[string]*poolRunner{}
	get := func(pool string) *poolRunner {
		if p, ok := byPool[pool]; ok {
			return p
		}
		p := &poolRunner{Pool: pool}
		byPool[pool] = p
		return p
	}
	for _, l := range lines {
		get(l.Pool).Jobs = len(l.Places)
	}
	for _, r := range runners {
		get(r.Pool).Seen = r.Seen
	}
	out := make([]poolRunner, 0, len(byPool))
	for _, p := range byPool {
		switch {
		case !p.Seen.IsZero() && now.Sub(p.Seen) <= 2*leaseTTL:
			p.State = runnerLive
		case p.Jobs > 0:
			p.State = runnerNone
		default:
			p.State = runnerIdle
		}
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b poolRunner) int { return cmp.Compare(a.Pool, b.Pool) })
	return out
}

// age is how long ago t was, rounded to the second; "-" for the zero time.
func age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return roundDuration(max(now.Sub(t), 0))
}
