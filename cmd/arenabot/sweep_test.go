package main

import (
	"bytes"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLoopSweep: `arenabot sweep` plans a sweep of the PR's head from a clone of the arena and
// queues it, approved; the runner measures it (as shares, here one, on its one host) and the
// bot posts its status comment, one results reply with every enabled entry's rows, and one
// results commit on the PR's branch holding them.
func TestLoopSweep(t *testing.T) {
	l := newLoop(t, []string{"nethttp", "fasthttp"}, nil)
	l.startServe()
	l.startWork("--lite")
	env := l.env()
	var out bytes.Buffer
	args := []string{"sweep", "--pr", strconv.Itoa(loopPR), "-t", "baseline", "--repo-dir", l.clone(), "--lite", "--by", "maintainer"}
	if err := run(t.Context(), args, func(k string) string { return env[k] }, &out, &out); err != nil {
		t.Fatalf("arenabot sweep: %v\n%s", err, out.String())
	}
	t.Logf("arenabot sweep: %s", out.String())
	if !strings.Contains(out.String(), "queued sweep") || !strings.Contains(out.String(), "2 entries") {
		t.Errorf("arenabot sweep said %q, want the sweep queued with both entries", out.String())
	}
	final := l.waitComment("arenabot:results", 5*time.Minute)
	time.Sleep(time.Second) // a second reply would come now
	if n := len(l.results()); n != 1 {
		t.Fatalf("%d results comments, want 1:\n%s", n, l.dumpComments())
	}
	t.Logf("results comment:\n%s", final.Body)
	rows := tableRows(final.Body)
	var entries []string
	for k, cells := range rows {
		entries = append(entries, strings.Split(k, "/")[0])
		if strings.HasPrefix(cells[2], "❌") {
			t.Errorf("%s: %v, want measured", k, cells)
		}
	}
	slices.Sort(entries)
	if got := slices.Compact(entries); !slices.Equal(got, []string{"fasthttp", "nethttp"}) {
		t.Errorf("the reply's rows %v, want both entries' baseline", slices.Sorted(maps.Keys(rows)))
	}
	commit := l.resultsCommit(l.head)
	files := l.changedFiles(commit)
	for _, f := range []string{"site/data/results/lite/go-fasthttp.json", "site/data/results/lite/go-nethttp.json"} {
		if _, ok := files[f]; !ok {
			t.Errorf("the results commit lacks %s: it changes %v", f, slices.Sorted(maps.Keys(files)))
		}
	}
}
