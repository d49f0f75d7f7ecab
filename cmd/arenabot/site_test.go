package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// TestSiteCommand runs `arenabot site` through run(): it writes the leaderboard files under
// <root>/site/data and prints each; a bad meta.json fails naming the entry.
func TestSiteCommand(t *testing.T) {
	root := t.TempDir()
	siteEntry(t, root, "gin", "gin", result.Result{Profile: "baseline", Connections: 512, RPS: 100, Entry: "gin"})
	siteEntry(t, root, "nethttp", "net/http")
	getenv := func(string) string { return "" }
	var out, errb bytes.Buffer
	if err := run(t.Context(), []string{"site", "--root", root}, getenv, &out, &errb); err != nil {
		t.Fatalf("site: %v\n%s", err, errb.String())
	}
	dataDir := filepath.Join(root, "site", "data")
	want := filepath.Join(dataDir, "baseline-512.json") + "\n" + filepath.Join(dataDir, "frameworks.json") + "\n"
	if out.String() != want {
		t.Errorf("output =\n%s\nwant\n%s", out.String(), want)
	}
	b, err := os.ReadFile(filepath.Join(dataDir, "baseline-512.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(b, &rows); err != nil || len(rows) != 1 || rows[0]["framework"] != "gin" || rows[0]["rps"] != 100.0 {
		t.Errorf("baseline-512.json = %s (%v)", b, err)
	}
	b, err = os.ReadFile(filepath.Join(dataDir, "frameworks.json"))
	if err != nil || !strings.Contains(string(b), `"net/http": {`) {
		t.Errorf("frameworks.json = %s (%v), want net/http listed", b, err)
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
	err = run(t.Context(), []string{"site", "--root", root}, getenv, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "gin") {
		t.Errorf("site with a bad meta.json = %v, want an error naming gin", err)
	}
	if err := run(t.Context(), []string{"site", "extra"}, getenv, &out, &errb); err == nil {
		t.Error("site accepted a stray argument")
	}
}
