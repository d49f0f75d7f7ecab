package queue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/arenabot/arenabot/text"
)

// The operator's view of the queue, behind `arenabot queue status|list|
// cancel <id>|drain <pool>`. The output is the same for every implementation.

// WriteStatus writes every pool's line: the running job, then the waiting
// ones with their position and expected wait. Requests awaiting approval are
// in no line: WriteList lists them.
func WriteStatus(ctx context.Context, w io.Writer, q Reader) error {
	lines, err := q.Status(ctx)
	if err != nil {
		return err
	}
	if len(lines) == 0 {
		_, err := fmt.Fprintln(w, "no pools: nothing was ever queued")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for i, l := range lines {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		running := len(l.Running())
		fmt.Fprintf(tw, "pool %s: %d running, %d waiting\n", l.Pool, running, len(l.Places)-running)
		if len(l.Places) == 0 {
			continue
		}
		fmt.Fprintln(tw, "POS\tJOB\tSTATE\tPR\tKIND\tFRAMEWORKS\tTESTS\tREQUESTER\tATTEMPT\tWHEN")
		for _, p := range l.Places {
			j := p.Job
			when := "next"
			if p.ETA > 0 {
				when = "starts in ~" + roundDuration(p.ETA)
			}
			state := string(j.State)
			if j.State == Running {
				when = "started " + j.Started.UTC().Format(time.RFC3339)
				if j.CancelRequested {
					state += " (cancel requested)"
				}
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n",
				p.Position, j.ID, state, prName(j), j.Kind, orAll(j.Frameworks), orAll(j.Tests), j.Requester, j.Attempt, when)
		}
	}
	return tw.Flush()
}

// WriteList writes every job that has not ended, in line order, then the
// requests awaiting approval, then the recent ended ones, the latest first,
// each with how it ended (or what is pending for it).
func WriteList(ctx context.Context, w io.Writer, q Reader) error {
	jobs, err := q.List(ctx, Filter{})
	if err != nil {
		return err
	}
	if len(jobs) == 0 {
		_, err := fmt.Fprintln(w, "no jobs")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tSTATE\tPOOL\tPR\tKIND\tREQUESTER\tQUEUED\tREASON")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			j.ID, j.State, j.Pool, prName(j), j.Kind, j.Requester, timeOrDash(j.Queued), text.Or(ending(j), "-"))
	}
	return tw.Flush()
}

// ending says how a job ended, from its structured fields, or what is
// pending for it; else its reason.
func ending(j Job) string {
	switch {
	case j.State == Superseded && j.SupersededBy != "":
		return "superseded by " + j.SupersededBy
	case j.State == Cancelled && j.CancelledBy != "":
		return "cancelled by " + j.CancelledBy
	case j.State == Rejected && j.RejectedBy != "":
		return "rejected by " + j.RejectedBy
	case j.State == Running && j.CancelRequested:
		if j.CancelledBy != "" {
			return "cancel requested by " + j.CancelledBy
		}
		return "cancel requested"
	case j.State == Queued && j.Approver != "" && j.Reason == "":
		return "approved by " + j.Approver
	case j.State == AwaitingApproval && !j.Expires.IsZero():
		return "expires " + j.Expires.UTC().Format(time.RFC3339)
	}
	return j.Reason
}

// CancelJob cancels job id for by and says what happened.
func CancelJob(ctx context.Context, w io.Writer, q Pools, id, by string) error {
	j, err := q.Cancel(ctx, id, by)
	switch {
	case errors.Is(err, ErrFinished):
		return fmt.Errorf("job %s (%s) already ended as %s", id, prName(j), j.State)
	case err != nil:
		return err
	case j.State == Running:
		_, err = fmt.Fprintf(w, "job %s (%s) is running: cancel requested; its runner stops within a heartbeat\n", j.ID, prName(j))
	case j.Queued.IsZero():
		_, err = fmt.Fprintf(w, "job %s (%s) cancelled; it was awaiting approval\n", j.ID, prName(j))
	default:
		_, err = fmt.Fprintf(w, "job %s (%s) cancelled; it was waiting in pool %s\n", j.ID, prName(j), j.Pool)
	}
	return err
}

// DrainPool cancels every waiting job of pool for by and lists them. The
// running job is left to finish.
func DrainPool(ctx context.Context, w io.Writer, q Pools, pool, by string) error {
	jobs, err := q.Drain(ctx, pool, by)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "pool %s drained: %d waiting %s cancelled\n", pool, len(jobs), plural(len(jobs), "job", "jobs"))
	for _, j := range jobs {
		fmt.Fprintf(w, "  %s (%s, requested by %s)\n", j.ID, prName(j), j.Requester)
	}
	return nil
}

func prName(j Job) string {
	if j.Repo == "" {
		return "-"
	}
	return fmt.Sprintf("%s#%d", j.Repo, j.PR)
}

func timeOrDash(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func orAll(s []string) string {
	if len(s) == 0 {
		return "all"
	}
	return strings.Join(s, ",")
}

func roundDuration(d time.Duration) string {
	return d.Round(time.Second).String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
