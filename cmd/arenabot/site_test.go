package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/internal/arenagen"
	"github.com/arenabot/arenabot/result"
)

func siteEntry(t *testing.T, root, name, display string, rs ...result.Result) {
	t.Helper()
	dir := filepath.Join(root, "frameworks", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := `{"display_name": "` + display + `", "language": "Go", "type": "production", "engine": "net/http",
  "enabled": true, "tests": ["baseline"], "description": "d", "repo": "https://example.com"}`
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if _, err := result.Write(dir, r); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSiteCommand runs `arenabot site` through run(): it writes today's layout under
// <root>/site/data (a results file per display name, frameworks.json), prints each file, says
// how many rows it took from the April layout, and the arena's generator reads the files; a
// bad meta.json fails naming the entry.
func TestSiteCommand(t *testing.T) {
	root := t.TempDir()
	r := result.Result{Framework: "gin", Language: "Go", Profile: "baseline", Connections: 512, Entry: "gin", Threads: 1, Duration: "5s", Pipeline: 1}
	r.FromRuns([]result.Run{{RPS: 100, Requests: 500, Status2xx: 500, DurationS: 5, Bytes: 5000, CPUCores: 0.5, MemoryPeak: 8 << 20, LatencyUS: result.Latency{Mean: 80, P99: 300}}})
	siteEntry(t, root, "gin", "gin", r)
	siteEntry(t, root, "nethttp", "net/http")
	getenv := func(string) string { return "" }
	var out, errb bytes.Buffer
	if err := run(t.Context(), []string{"site", "--root", root}, getenv, &out, &errb); err != nil {
		t.Fatalf("site: %v\n%s", err, errb.String())
	}
	dataDir := filepath.Join(root, "site", "data")
	want := filepath.Join(dataDir, "frameworks.json") + "\n" + filepath.Join(dataDir, "results", "gin.json") + "\n"
	if out.String() != want {
		t.Errorf("output =\n%s\nwant\n%s", out.String(), want)
	}
	if !strings.Contains(errb.String(), "1 rows taken from frameworks/<name>/results/") {
		t.Errorf("stderr = %q, want the count of rows taken from the April layout", errb.String())
	}
	board, problems := arenagen.Read(dataDir)
	if len(problems) > 0 {
		t.Fatalf("the arena's generator would misread:\n%s", strings.Join(problems, "\n"))
	}
	if rows := board.Results["baseline-512"]; len(rows) != 1 || rows[0]["fw"] != "gin" || rows[0]["rps"] != json.Number("100") {
		t.Errorf("the board's baseline-512 = %v", rows)
	}
	if _, ok := board.Meta["net/http"]; !ok {
		t.Errorf("the board's meta = %v, want net/http listed", board.Meta)
	}

	other := filepath.Join(t.TempDir(), "out")
	out.Reset()
	if err := run(t.Context(), []string{"site", "--root", root, "--out", other}, getenv, &out, &errb); err != nil {
		t.Fatalf("site --out: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other, "frameworks.json")); err != nil {
		t.Errorf("--out: %v", err)
	}

	if err := os.WriteFile(filepath.Join(root, "frameworks", "gin", "meta.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(t.Context(), []string{"site", "--root", root}, getenv, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "gin") {
		t.Errorf("site with a bad meta.json = %v, want an error naming gin", err)
	}
	if err := run(t.Context(), []string{"site", "extra"}, getenv, &out, &errb); err == nil {
		t.Error("site accepted a stray argument")
	}
}
