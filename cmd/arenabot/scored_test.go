package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/arenabot/arenabot/result"
)

// TestScored: bench scores a fixed-rate row against every entry's committed results of its
// profile in the working tree, every connection count, and nothing of other profiles.
func TestScored(t *testing.T) {
	root := t.TempDir()
	for _, r := range []result.Result{
		{Entry: "a", Profile: "latency-10k", Connections: 1024, CPUPerRequest: 21},
		{Entry: "b", Profile: "latency-10k", Connections: 512, CPUPerRequest: 30},
		{Entry: "b", Profile: "latency-1m", Connections: 1024, CPUPerRequest: 5},
	} {
		r.Framework, r.Tool, r.Time = r.Entry, "arenaload", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		if _, err := result.Write(filepath.Join(root, r.Entry), r); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "a", result.Dir, "latency-10k-64.json"), []byte("{broken"), 0o644)
	got := scored(root)("latency-10k")
	if len(got) != 2 || got[0].CPUPerRequest != 21 || got[1].CPUPerRequest != 30 {
		t.Errorf("scored(latency-10k) = %+v, want a's and b's two results", got)
	}
}
