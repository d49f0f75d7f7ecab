package runner

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/result"
)

func rowsOf(entries, tests []string, conns ...int) []profile.Row {
	var out []profile.Row
	for _, e := range entries {
		for _, t := range tests {
			for _, c := range conns {
				out = append(out, profile.Row{Entry: e, Test: t, Conns: c})
			}
		}
	}
	return out
}

func shareSizes(s [][]profile.Row) string {
	var parts []string
	for _, rows := range s {
		parts = append(parts, fmt.Sprint(len(rows)))
	}
	return strings.Join(parts, ",")
}

// TestSplitRows: whole entries when there are enough of them (an entry is built on one
// host only), else whole (entry, test) runs, else rows; about the same rows per share;
// nothing to split gives nil.
func TestSplitRows(t *testing.T) {
	tests := []struct {
		name  string
		rows  []profile.Row
		n     int
		sizes string
		whole func(profile.Row) string // rows with the same key share a share
	}{
		{"entries", rowsOf([]string{"a", "b", "c", "d", "e", "f"}, []string{"baseline"}, 512, 4096), 3, "4,4,4", func(r profile.Row) string { return r.Entry }},
		{"tests", rowsOf([]string{"gin"}, []string{"baseline", "json", "upload", "pipelined"}, 512, 4096), 3, "4,2,2", func(r profile.Row) string { return r.Test }},
		{"rows", rowsOf([]string{"gin"}, []string{"baseline"}, 1, 2, 3, 4, 5, 6, 7), 3, "3,2,2", nil},
		{"fewer units than hosts", rowsOf([]string{"gin"}, []string{"baseline", "json"}, 512), 8, "1,1", nil},
		{"one host", rowsOf([]string{"a", "b"}, []string{"baseline"}, 512), 1, "", nil},
		{"one row", rowsOf([]string{"a"}, []string{"baseline"}, 512), 3, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := splitRows(tt.rows, tt.n)
			if s := shareSizes(got); s != tt.sizes {
				t.Fatalf("share sizes %q, want %q", s, tt.sizes)
			}
			seen := map[profile.Row]bool{}
			where := map[string]int{}
			for i, share := range got {
				for _, r := range share {
					if seen[r] {
						t.Fatalf("row %v in two shares", r)
					}
					seen[r] = true
					if tt.whole != nil {
						if k, ok := where[tt.whole(r)]; ok && k != i {
							t.Errorf("%q split over shares %d and %d", tt.whole(r), k, i)
						}
						where[tt.whole(r)] = i
					}
				}
			}
			if got != nil && len(seen) != len(tt.rows) {
				t.Errorf("%d of %d rows dealt", len(seen), len(tt.rows))
			}
		})
	}
}

// TestMergeShares: the job's report from its shares': rows in the job's order, each
// naming its host, the hosts listed; a share lost twice gives its rows as failed with the
// queue's reason; every share without a row measured fails the job.
func TestMergeShares(t *testing.T) {
	job := queue.Job{ID: "j1", SHA: "abc", Rows: rowsOf([]string{"gin"}, []string{"baseline"}, 1, 2, 3, 4)}
	share := func(n int, host string, rows []profile.Row, measured bool) queue.Job {
		s := queue.Job{ID: queue.ShareID("j1", n), Parent: "j1", Rows: rows, State: queue.Done}
		rep := result.Report{Commit: "abc", Host: host, Log: []string{"log of " + host}}
		for _, r := range rows {
			row := result.Row{Entry: r.Entry, Profile: r.Test, Conns: r.Conns, Host: host}
			if measured {
				row.Result = &result.Result{Host: host}
			} else {
				row.Err = "stand-in"
			}
			rep.Rows = append(rep.Rows, row)
		}
		s.Result, _ = json.Marshal(rep)
		return s
	}
	// Shares listed out of the job's order; the second was lost twice.
	lost := queue.Job{ID: queue.ShareID("j1", 2), Parent: "j1", Rows: job.Rows[2:3], State: queue.Failed, Reason: queue.ReasonLost}
	rep, state, reason := mergeShares(job, []queue.Job{share(1, "h1", []profile.Row{job.Rows[3], job.Rows[0]}, true), lost, share(3, "h2", job.Rows[1:2], true)}, 100)
	if state != queue.Done || reason != "1 of 4 rows failed" {
		t.Errorf("state %s %q, want done, one row failed", state, reason)
	}
	var got []string
	for _, r := range rep.Rows {
		got = append(got, fmt.Sprintf("%d@%s", r.Conns, r.Host))
	}
	if s := strings.Join(got, " "); s != "1@h1 2@h2 3@ 4@h1" {
		t.Errorf("rows %s, want the job's order with their hosts", s)
	}
	if r := rep.Rows[2]; r.Result != nil || !strings.Contains(r.Err, queue.ReasonLost) {
		t.Errorf("the lost share's row: %+v, want failed with the queue's reason", r)
	}
	if rep.Host != "h1, h2" || rep.Commit != "abc" || len(rep.Frameworks) != 1 || len(rep.Tests) != 1 {
		t.Errorf("report host %q commit %q frameworks %v tests %v", rep.Host, rep.Commit, rep.Frameworks, rep.Tests)
	}
	if log := strings.Join(rep.Log, "\n"); !strings.Contains(log, "log of h1") || !strings.Contains(log, "log of h2") {
		t.Errorf("log %q lacks a share's", log)
	}

	_, state, reason = mergeShares(job, []queue.Job{lost}, 100)
	if state != queue.Failed || !strings.Contains(reason, queue.ReasonLost) {
		t.Errorf("every share lost: %s %q, want failed with the reason", state, reason)
	}
}
