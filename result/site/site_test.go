package site

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/internal/arenagen"
	"github.com/arenabot/arenabot/result"
)

// writeEntry creates root/frameworks/<name> with a meta.json and the given results.
func writeEntry(t *testing.T, root, name, meta string, results ...result.Result) {
	t.Helper()
	dir := filepath.Join(root, "frameworks", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		r.Entry = name
		if _, err := result.Write(dir, r); err != nil {
			t.Fatal(err)
		}
	}
}

func meta(display, lang, engine, desc string) string {
	return metaWith(display, lang, engine, desc, nil)
}

// metaWith is meta with fields set (a nil value removes the field).
func metaWith(display, lang, engine, desc string, fields map[string]any) string {
	m := map[string]any{
		"display_name": display, "language": lang, "type": "production", "engine": engine,
		"description": desc, "repo": "https://example.com/" + engine, "enabled": true,
		"tests": []string{"baseline", "pipelined", "some-future-profile"}, "maintainers": []string{},
	}
	for k, v := range fields {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func res(profile string, conns int, rps int64, cpu string) result.Result {
	return result.Result{
		Framework: "stale-name", Language: "Stale", RPS: rps, AvgLatency: "173us", P99Latency: "4.90ms",
		CPU: cpu, Memory: "76MiB", Connections: conns, Threads: 64, Duration: "5s", Pipeline: 1,
		Bandwidth: "12.34MB/s", Reconnects: 3, Status2xx: rps * 5, Status3xx: 0, Status4xx: 1, Status5xx: 2,
		Profile: profile, Tool: "gcannon", ToolVersion: "1.0", Commit: "abc", Host: "h",
		Time: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Runs: []result.Run{{RPS: float64(rps)}},
	}
}

// arena builds a temporary arena: Zeta (net/http, with today's fields), and two entries
// named "Alpha <fast>" (alpha and alpha-tuned, April's production and tuned), plus beta
// without results (and without a type).
func arena(t *testing.T) string {
	root := t.TempDir()
	zeta := metaWith("Zeta", "Go", "net/http", "plain", map[string]any{
		"type": "flagship", "mode": "standard", "website": "https://zeta.example", "tls_check": true,
		"completeness": map[string]any{"routing": true, "middleware": false, "responses": false},
	})
	writeEntry(t, root, "zeta", zeta,
		res("baseline", 512, 1000, "100.0%"), res("pipelined", 512, 9000, "400.0%"))
	writeEntry(t, root, "alpha", meta("Alpha <fast>", "Go", "fasthttp", "the primary"),
		res("baseline", 512, 2000, "200.0%"), res("baseline", 4096, 5000, "300.0%"))
	writeEntry(t, root, "alpha-tuned", metaWith("Alpha <fast>", "Go", "fasthttp-tuned", "tuned variant", map[string]any{"type": "tuned"}),
		res("baseline", 512, 3000, "250.0%"), res("baseline", 4096, 4000, "350.0%"))
	writeEntry(t, root, "beta", metaWith("beta", "Rust", "hyper", "no results yet", map[string]any{"type": nil}))
	return root
}

const wantFrameworks = `{
  "Alpha <fast>": {
    "dir": "alpha",
    "description": "the primary",
    "repo": "https://example.com/fasthttp",
    "type": "emerging",
    "engine": "fasthttp",
    "variants": [
      {
        "dir": "alpha",
        "description": "the primary",
        "repo": "https://example.com/fasthttp",
        "type": "emerging",
        "engine": "fasthttp"
      },
      {
        "dir": "alpha-tuned",
        "description": "tuned variant",
        "repo": "https://example.com/fasthttp-tuned",
        "type": "emerging",
        "engine": "fasthttp-tuned",
        "mode": "tuned"
      }
    ]
  },
  "Zeta": {
    "dir": "zeta",
    "description": "plain",
    "repo": "https://example.com/net/http",
    "type": "flagship",
    "engine": "net/http",
    "mode": "standard",
    "completeness": {
      "routing": true,
      "middleware": false
    },
    "website": "https://zeta.example",
    "tls_check": true
  },
  "beta": {
    "dir": "beta",
    "description": "no results yet",
    "repo": "https://example.com/hyper",
    "type": "emerging",
    "engine": "hyper"
  }
}
`

// TestSiteBuild: an arena that has not moved (results only in the April layout) gets today's
// layout: one file per display name with every row and what this harness adds, the shared
// display name keeping the higher rps of each key, and frameworks.json; the arena's
// generator reads it without a problem.
func TestSiteBuild(t *testing.T) {
	root := arena(t)
	s, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"frameworks.json", "results/alpha-fast.json", "results/zeta.json"}
	if got := Names(s.Files); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("files = %v, want %v", got, want)
	}
	if s.Migrated != 4 || len(s.Stale) != 0 {
		t.Errorf("migrated %d rows, stale %v; want 4 and none", s.Migrated, s.Stale)
	}
	if got := string(s.Files["frameworks.json"]); got != wantFrameworks {
		t.Errorf("frameworks.json =\n%s\nwant\n%s", got, wantFrameworks)
	}
	f, err := result.DecodeSite(s.Files["results/alpha-fast.json"])
	if err != nil {
		t.Fatal(err)
	}
	rows, err := f.Rows()
	if err != nil {
		t.Fatal(err)
	}
	if f.Framework != "Alpha <fast>" || len(rows) != 2 ||
		rows[0].Profile != "baseline" || rows[0].Connections != 4096 || rows[0].RPS != 5000 || rows[0].Entry != "alpha" ||
		rows[1].Connections != 512 || rows[1].RPS != 3000 || rows[1].Entry != "alpha-tuned" {
		t.Errorf("Alpha <fast> rows = %+v, want alpha's 4096 and alpha-tuned's 512 (the higher rps of each key)", rows)
	}
	if rows[0].Framework != "Alpha <fast>" || rows[0].Language != "Go" || rows[0].Tool != "gcannon" || len(rows[0].Runs) != 1 {
		t.Errorf("row = %+v, want the current meta's labels and every field of the result", rows[0])
	}

	dir := filepath.Join(root, "site", "data")
	if err := Write(dir, s.Files); err != nil {
		t.Fatal(err)
	}
	board, problems := arenagen.Read(dir)
	if len(problems) > 0 {
		t.Fatalf("the arena's generator would misread:\n%s", strings.Join(problems, "\n"))
	}
	if got := board.Results["baseline-512"]; len(got) != 2 || got[0]["fw"] != "Alpha <fast>" || got[1]["fw"] != "Zeta" || got[1]["rps"] != json.Number("1000") {
		t.Errorf("the board's baseline-512 = %v", got)
	}
	if m := board.Meta["Alpha <fast>"]; m.Dir != "alpha" || m.Language != "Go" {
		t.Errorf("the board's meta = %+v", m)
	}

	again, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range s.Files {
		if !bytes.Equal(b, again.Files[name]) {
			t.Errorf("%s differs between two builds", name)
		}
	}
}

// TestSiteBuildPrefersToday: the rows of today's layout stay exactly as they are, April's fill
// only the keys they lack, a file whose framework is no entry's display name is reported, not
// removed, and the lite directory is not touched.
func TestSiteBuildPrefersToday(t *testing.T) {
	root := arena(t)
	results := filepath.Join(root, "site", "data", "results")
	if err := os.MkdirAll(filepath.Join(results, "lite"), 0o755); err != nil {
		t.Fatal(err)
	}
	today := `{"framework": "Zeta", "results": {"baseline-512": {"framework": "Zeta", "language": "Go", "rps": 77, "tpl_static": 3}}}`
	for name, body := range map[string]string{"zeta.json": today, "gone.json": `{"framework": "Gone", "results": {}}`, "lite/zeta.json": "{}"} {
		if err := os.WriteFile(filepath.Join(results, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	f, err := result.DecodeSite(s.Files["results/zeta.json"])
	if err != nil {
		t.Fatal(err)
	}
	var kept map[string]any
	if err := json.Unmarshal(f.Results["baseline-512"], &kept); err != nil {
		t.Fatal(err)
	}
	if len(kept) != 4 || kept["rps"] != 77.0 || kept["tpl_static"] != 3.0 {
		t.Errorf("today's row = %v, want it unchanged", kept)
	}
	if _, ok := f.Results["pipelined-512"]; !ok || len(f.Results) != 2 {
		t.Errorf("keys = %v, want April's pipelined-512 added", slices.Collect(maps.Keys(f.Results)))
	}
	if s.Migrated != 3 {
		t.Errorf("migrated = %d, want 3 (alpha's two keys, zeta's pipelined)", s.Migrated)
	}
	if len(s.Stale) != 1 || s.Stale[0] != "results/gone.json" {
		t.Errorf("stale = %v, want results/gone.json", s.Stale)
	}
	if _, ok := s.Files["results/lite/zeta.json"]; ok {
		t.Error("Build rewrote a lite file")
	}

	if err := os.WriteFile(filepath.Join(results, "zeta.json"), []byte(`{"framework": "zeta!", "results": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(root); err == nil || !strings.Contains(err.Error(), "zeta.json") || !strings.Contains(err.Error(), "zeta!") {
		t.Errorf("a file of another display name under Zeta's name: %v, want an error naming both", err)
	}
}

func TestSiteBuildPrimaryIsDirNamedLikeDisplay(t *testing.T) {
	root := t.TempDir()
	writeEntry(t, root, "actix", meta("actix", "Rust", "actix", "main"))
	writeEntry(t, root, "actix-h2c", meta("actix", "Rust", "actix", "h2c"))
	writeEntry(t, root, "a-actix", meta("actix", "Rust", "actix", "first by name"))
	s, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]result.FrameworkGroup
	if err := json.Unmarshal(s.Files["frameworks.json"], &got); err != nil {
		t.Fatal(err)
	}
	g := got["actix"]
	if g.Dir != "actix" || len(g.Variants) != 3 || g.Variants[0].Dir != "a-actix" {
		t.Errorf("actix = %+v, want primary dir actix and 3 variants sorted by dir", g)
	}
}

func TestSiteBuildBadInput(t *testing.T) {
	root := arena(t)
	writeEntry(t, root, "broken", `{"display_name": "broken",`)
	_, err := Build(root)
	if err == nil || !strings.Contains(err.Error(), "broken") || !strings.Contains(err.Error(), "meta.json") {
		t.Errorf("a bad meta.json: %v, want an error naming the entry and its meta.json", err)
	}

	root = arena(t)
	writeEntry(t, root, "zeta2", meta("ZETA", "Go", "z", ""))
	_, err = Build(root)
	if err == nil || !strings.Contains(err.Error(), "site/data/results/zeta.json") || !strings.Contains(err.Error(), "display_name") {
		t.Errorf("two display names with one file: %v, want an error naming the file and the fix", err)
	}

	// Lenient for a save: the entry that does not load is left out, and said.
	root = arena(t)
	writeEntry(t, root, "broken", `{"display_name": "broken",`)
	groups, errs := Frameworks(filepath.Join(root, "frameworks"))
	if len(groups) != 3 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "broken") {
		t.Errorf("Frameworks = %v, %v; want the three that load and broken's error", groups, errs)
	}
}

func TestSiteWrite(t *testing.T) {
	out := filepath.Join(t.TempDir(), "site", "data")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(out, "mixed-4096.json")
	if err := os.WriteFile(stale, []byte("[]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"results/a.json": []byte("{}\n"), "results/.net-core.json": []byte("{}\n"), "frameworks.json": []byte("{}\n")}
	if err := Write(out, files); err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(stale); err != nil {
		t.Errorf("Write removed a file it did not produce: %v", err)
	}
	des, _ := os.ReadDir(filepath.Join(out, "results"))
	if len(des) != 2 {
		t.Errorf("results holds %d files, want 2 (no temporary files left)", len(des))
	}
	for _, bad := range []string{"../x.json", "/x.json", "results/../../x.json", "a/b/c.json", ".", ""} {
		if err := Write(out, map[string][]byte{bad: nil}); err == nil {
			t.Errorf("Write accepted the file name %q", bad)
		}
	}
}

func TestSiteBuildLeavesOutLiteResults(t *testing.T) {
	root := t.TempDir()
	lite := res("json", 512, 9, "1.0%")
	lite.Lite = true
	writeEntry(t, root, "a", meta("alpha", "Go", "a", ""), res("baseline", 512, 2, "1.0%"), lite)
	s, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	f, err := result.DecodeSite(s.Files["results/alpha.json"])
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Results["baseline-512"]; !ok {
		t.Error("the benchmark host's result is missing")
	}
	if _, ok := f.Results["json-512"]; ok {
		t.Error("a --lite result reached the board")
	}
}

// TestSave: a save merges its rows into the frameworks' results files (the file's other keys
// kept), rebuilds frameworks.json leaving out the entry that does not load, writes no
// current.json, and the arena's generator reads the result.
func TestSave(t *testing.T) {
	root := arena(t)
	writeEntry(t, root, "broken", `{"display_name": "broken",`)
	results := filepath.Join(root, "site", "data", "results")
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	kept := `{"framework": "Zeta", "language": "Go", "rps": 77, "avg_latency": "1ms", "p99_latency": "2ms", "cpu": "1.0%", "memory": "1MiB", "connections": 16384, "threads": 1, "duration": "5s", "pipeline": 1, "bandwidth": "1KB/s", "reconnects": 0, "status_2xx": 1, "status_3xx": 0, "status_4xx": 0, "status_5xx": 0}`
	if err := os.WriteFile(filepath.Join(results, "zeta.json"), []byte(`{"framework": "Zeta", "results": {"baseline-16384": `+kept+`}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := res("baseline", 512, 4242, "10.0%")
	r.Framework, r.Entry = "Zeta", "zeta"
	lite := res("json", 512, 1, "1.0%")
	lite.Framework, lite.Entry, lite.Lite = "Zeta", "zeta", true
	written, skipped, err := Save(root, []result.Result{r, lite})
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(root, "site", "data")
	want := []string{filepath.Join(data, "frameworks.json"), filepath.Join(results, "lite", "zeta.json"), filepath.Join(results, "zeta.json")}
	if !slices.Equal(written, want) {
		t.Errorf("written %v, want %v", written, want)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0].Error(), "broken") {
		t.Errorf("skipped %v, want broken's error", skipped)
	}
	if _, err := os.Stat(filepath.Join(data, "current.json")); err == nil {
		t.Error("a save wrote current.json")
	}
	board, problems := arenagen.Read(data)
	if len(problems) > 0 {
		t.Fatalf("the arena's generator would misread:\n%s", strings.Join(problems, "\n"))
	}
	if got := board.Results["baseline-16384"]; len(got) != 1 || got[0]["rps"] != json.Number("77") {
		t.Errorf("the file's other key = %v, want it kept", got)
	}
	if got := board.Results["baseline-512"]; len(got) != 1 || got[0]["rps"] != json.Number("4242") {
		t.Errorf("the saved row = %v", got)
	}
	if _, ok := board.Results["json-512"]; ok {
		t.Error("the --lite row reached the board")
	}
	if _, ok := board.Meta["broken"]; ok || len(board.Meta) != 3 {
		t.Errorf("frameworks.json = %v, want the three entries that load", board.Meta)
	}
}
