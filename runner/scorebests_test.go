package runner

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/measure"
)

// TestScoreBests: the bests of a scored profile are the lowest figures among every entry's
// committed results of it at the base commit, every connection count; other profiles' files,
// results that cannot be scored and files that do not parse set none.
func TestScoreBests(t *testing.T) {
	a := newArenaRemote(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	write := func(entry string, r result.Result) {
		t.Helper()
		r.Entry, r.Framework, r.Tool, r.Time = entry, entry, "arenaload", at
		if _, err := result.Write(filepath.Join(a.work, "frameworks", entry), r); err != nil {
			t.Fatal(err)
		}
	}
	// Two entries, two connection counts; each holds one of the three bests.
	write("fast", result.Result{Profile: "latency-10k", Connections: 1024, CPUPerRequest: 21, LatencyUS: result.Latency{P99: 900, Mean: 300}})
	write("fast", result.Result{Profile: "latency-10k", Connections: 512, CPUPerRequest: 30, LatencyUS: result.Latency{P99: 700, Mean: 350}})
	write("other", result.Result{Profile: "latency-10k", Connections: 1024, CPUPerRequest: 40, LatencyUS: result.Latency{P99: 800, Mean: 250}})
	write("other", result.Result{Profile: "latency-1m", Connections: 1024, CPUPerRequest: 5, LatencyUS: result.Latency{P99: 100, Mean: 50}})
	write("nocpu", result.Result{Profile: "latency-10k", Connections: 1024, LatencyUS: result.Latency{P99: 1, Mean: 1}})
	write("other", result.Result{Profile: "baseline", Connections: 512, CPUPerRequest: 1, LatencyUS: result.Latency{P99: 1, Mean: 1}})
	os.MkdirAll(filepath.Join(a.work, "frameworks", "junk", "results"), 0o755)
	os.WriteFile(filepath.Join(a.work, "frameworks", "junk", "results", "latency-10k-64.json"), []byte("{not json"), 0o644)
	gitT(t, a.work, "add", "-A")
	gitT(t, a.work, "commit", "-q", "-m", "results")
	base := gitT(t, a.work, "rev-parse", "HEAD")
	gitT(t, a.work, "push", "-q", a.URL, "HEAD:refs/heads/main")

	r := repo{dir: a.clone(t), remote: "origin"}
	got := r.scoreBests(t.Context(), base, []string{"latency-10k"}, filepath.Join(t.TempDir(), "scored"), slog.New(slog.DiscardHandler))
	want := result.Bests{CPUPerRequest: 21, P99: 700, Mean: 250, Results: 3}
	if len(got) != 1 || got["latency-10k"] != want {
		t.Errorf("scoreBests = %+v, want only latency-10k: %+v", got, want)
	}
	if got := r.scoreBests(t.Context(), base, nil, t.TempDir(), slog.New(slog.DiscardHandler)); got != nil {
		t.Errorf("scoreBests of no profile = %+v, want nil", got)
	}
}

// TestScoredProfiles: the plan's fixed-rate profiles, each once, in plan order.
func TestScoredProfiles(t *testing.T) {
	p := func(name string) profile.Profile {
		pr, ok := profile.Lookup(name)
		if !ok {
			t.Fatalf("no profile %s", name)
		}
		return pr
	}
	plan := measure.Plan{Targets: []measure.Target{
		{Profiles: []profile.Profile{p("baseline"), p("latency-10k")}},
		{Profiles: []profile.Profile{p("latency-10k"), p("8gbit")}},
	}}
	if got := scoredProfiles(plan); len(got) != 2 || got[0] != "latency-10k" || got[1] != "8gbit" {
		t.Errorf("scoredProfiles = %v, want [latency-10k 8gbit]", got)
	}
}

// TestScoreBestsReadTodaysLayout: the rows of today's results files count, the arena's own
// among them (its figures as strings), an April file of an entry and key today's file holds
// does not count twice, and the lite directory never counts.
func TestScoreBestsReadTodaysLayout(t *testing.T) {
	a := newArenaRemote(t)
	f := result.SiteFile{Framework: "fast"}
	if err := f.Put(result.Result{Framework: "fast", Entry: "fast", Profile: "latency-10k", Connections: 1024, CPUPerRequest: 30, LatencyUS: result.Latency{P99: 900, Mean: 300}}); err != nil {
		t.Fatal(err)
	}
	f.Results["latency-10k-512"] = []byte(`{"framework": "fast", "rps": 10000, "avg_latency": "200.0us", "p99_latency": "950.0us", "cpu_per_req_us": 25.5, "target_rate": 10000}`)
	b, err := f.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// April's file of the same entry and key, lower on every figure: today's row stands for it.
	old := result.Result{Framework: "fast", Entry: "fast", Profile: "latency-10k", Connections: 1024, CPUPerRequest: 1, LatencyUS: result.Latency{P99: 1, Mean: 1}}
	oldB, _ := result.Marshal(old)
	base := a.commitSite(t, map[string]string{
		"site/data/results/fast.json":                   string(b),
		"site/data/results/lite/fast.json":              `{"framework": "fast", "results": {"latency-10k-256": {"cpu_per_req_us": 0.5, "p99_latency": "1us", "avg_latency": "1us"}}}`,
		"site/data/results/broken.json":                 `{"framework": `,
		"frameworks/fast/results/latency-10k-1024.json": string(oldB),
	})
	r := repo{dir: a.clone(t), remote: "origin"}
	got := r.scoreBests(t.Context(), base, []string{"latency-10k"}, filepath.Join(t.TempDir(), "scored"), slog.New(slog.DiscardHandler))
	want := result.Bests{CPUPerRequest: 25.5, P99: 900, Mean: 200, Results: 2}
	if got["latency-10k"] != want {
		t.Errorf("scoreBests = %+v, want %+v", got["latency-10k"], want)
	}
}
