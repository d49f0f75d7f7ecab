package site

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

const wantBaseline512 = `[
  {
    "framework": "Alpha <fast>",
    "language": "Go",
    "rps": 3000,
    "avg_latency": "173us",
    "p99_latency": "4.90ms",
    "cpu": "250.0%",
    "memory": "76MiB",
    "connections": 512,
    "threads": 64,
    "duration": "5s",
    "pipeline": 1,
    "bandwidth": "12.34MB/s",
    "reconnects": 3,
    "status_2xx": 15000,
    "status_3xx": 0,
    "status_4xx": 1,
    "status_5xx": 2
  },
  {
    "framework": "Zeta",
    "language": "Go",
    "rps": 1000,
    "avg_latency": "173us",
    "p99_latency": "4.90ms",
    "cpu": "100.0%",
    "memory": "76MiB",
    "connections": 512,
    "threads": 64,
    "duration": "5s",
    "pipeline": 1,
    "bandwidth": "12.34MB/s",
    "reconnects": 3,
    "status_2xx": 5000,
    "status_3xx": 0,
    "status_4xx": 1,
    "status_5xx": 2
  }
]
`

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

func TestSiteBuild(t *testing.T) {
	root := arena(t)
	files, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"baseline-4096.json", "baseline-512.json", "frameworks.json", "pipelined-512.json"}
	if got := Names(files); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("files = %v, want %v", got, want)
	}
	if got := string(files["baseline-512.json"]); got != wantBaseline512 {
		t.Errorf("baseline-512.json =\n%s\nwant\n%s", got, wantBaseline512)
	}
	if got := string(files["frameworks.json"]); got != wantFrameworks {
		t.Errorf("frameworks.json =\n%s\nwant\n%s", got, wantFrameworks)
	}

	// The shared display name keeps the higher rps, whichever entry it comes from.
	var rows []Row
	if err := json.Unmarshal(files["baseline-4096.json"], &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Framework != "Alpha <fast>" || rows[0].RPS != 5000 || rows[0].CPU != "300.0%" {
		t.Errorf("baseline-4096 rows = %+v, want alpha's 5000 rps row only", rows)
	}
	if err := json.Unmarshal(files["pipelined-512.json"], &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Framework != "Zeta" || rows[0].RPS != 9000 {
		t.Errorf("pipelined-512 rows = %+v", rows)
	}

	// Only the arena's fields, nothing this harness adds.
	for _, extra := range []string{"entry", "profile", "runs", "tool", "commit", "latency_us"} {
		if bytes.Contains(files["baseline-512.json"], []byte(`"`+extra+`"`)) {
			t.Errorf("leaderboard holds harness field %q", extra)
		}
	}

	again, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if !bytes.Equal(b, again[name]) {
			t.Errorf("%s differs between two builds", name)
		}
	}
}

func TestSiteBuildSortsCaseInsensitively(t *testing.T) {
	root := t.TempDir()
	writeEntry(t, root, "b", meta("beta", "Go", "b", ""), res("baseline", 512, 1, "1.0%"))
	writeEntry(t, root, "a", meta("Charlie", "Go", "c", ""), res("baseline", 512, 2, "1.0%"))
	writeEntry(t, root, "c", meta("Alpha", "Go", "a", ""), res("baseline", 512, 3, "1.0%"))
	files, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	var rows []Row
	if err := json.Unmarshal(files["baseline-512.json"], &rows); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Framework)
	}
	if strings.Join(got, ",") != "Alpha,beta,Charlie" {
		t.Errorf("order = %v, want Alpha,beta,Charlie", got)
	}
}

func TestSiteBuildPrimaryIsDirNamedLikeDisplay(t *testing.T) {
	root := t.TempDir()
	writeEntry(t, root, "actix", meta("actix", "Rust", "actix", "main"))
	writeEntry(t, root, "actix-h2c", meta("actix", "Rust", "actix", "h2c"))
	writeEntry(t, root, "a-actix", meta("actix", "Rust", "actix", "first by name"))
	files, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]Group
	if err := json.Unmarshal(files["frameworks.json"], &got); err != nil {
		t.Fatal(err)
	}
	g := got["actix"]
	if g.Dir != "actix" || len(g.Variants) != 3 || g.Variants[0].Dir != "a-actix" {
		t.Errorf("actix = %+v, want primary dir actix and 3 variants sorted by dir", g)
	}
}

func TestSiteBuildBadMeta(t *testing.T) {
	root := arena(t)
	writeEntry(t, root, "broken", `{"display_name": "broken",`)
	_, err := Build(root)
	if err == nil {
		t.Fatal("Build with a bad meta.json succeeded")
	}
	if !strings.Contains(err.Error(), "broken") || !strings.Contains(err.Error(), "meta.json") {
		t.Errorf("error %q does not name the entry and its meta.json", err)
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
	files := map[string][]byte{"a-1.json": []byte("[]\n"), "frameworks.json": []byte("{}\n")}
	if err := Write(out, files); err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(stale); err != nil {
		t.Errorf("Write removed a file it did not produce: %v", err)
	}
	des, _ := os.ReadDir(out)
	if len(des) != 3 {
		t.Errorf("out holds %d files, want 3 (no temporary files left)", len(des))
	}
	if err := Write(out, map[string][]byte{"../x.json": nil}); err == nil {
		t.Error("Write accepted a file name outside outDir")
	}
}

func TestSiteBuildLeavesOutLiteResults(t *testing.T) {
	root := t.TempDir()
	lite := res("json", 512, 9, "1.0%")
	lite.Lite = true
	writeEntry(t, root, "a", meta("alpha", "Go", "a", ""), res("baseline", 512, 2, "1.0%"), lite)
	files, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := files["baseline-512.json"]; !ok {
		t.Error("the benchmark host's result is missing from the leaderboard")
	}
	if _, ok := files["json-512.json"]; ok {
		t.Error("a --lite result reached the leaderboard")
	}
}
