package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"aspnet-minimal + nginx": "aspnet-minimal-nginx", // the reference's own example
		"go-fasthttp":            "go-fasthttp",
		"Go net/http":            "go-net-http",
		"A.B_c":                  "a.b_c",
		"--actix--":              "actix",
		"Été 2":                  "t-2",
		"":                       "unnamed",
		"+++":                    "unnamed",
		"Alpha <fast>":           "alpha-fast",
		// A display name is a PR's text: it never leaves the results directory.
		"../../.github/workflows/x": "..-..-.github-workflows-x",
		"..":                        "..",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
	if got := SitePath("../../x", false); path.Dir(got) != "site/data/results" {
		t.Errorf("SitePath(../../x) = %q, outside site/data/results", got)
	}
	if got := SitePath("Alpha <fast>", false); got != "site/data/results/alpha-fast.json" {
		t.Errorf("SitePath = %q", got)
	}
	if got := SitePath("Alpha <fast>", true); got != "site/data/results/lite/alpha-fast.json" {
		t.Errorf("SitePath lite = %q", got)
	}
}

func TestSplitKey(t *testing.T) {
	for _, tt := range []struct {
		key     string
		profile string
		conns   int
		ok      bool
	}{
		{"baseline-4096", "baseline", 4096, true},
		{"latency-500k-8cpu-1024", "latency-500k-8cpu", 1024, true},
		{"8gbit-512", "8gbit", 512, true},
		{"baseline", "", 0, false},
		{"baseline-x", "", 0, false},
		{"-512", "", 0, false},
		{"baseline-0", "", 0, false},
	} {
		p, c, ok := SplitKey(tt.key)
		if p != tt.profile || c != tt.conns || ok != tt.ok {
			t.Errorf("SplitKey(%q) = %q, %d, %v; want %q, %d, %v", tt.key, p, c, ok, tt.profile, tt.conns, tt.ok)
		}
	}
	if Key("latency-500k-8cpu", 1024) != "latency-500k-8cpu-1024" {
		t.Error("Key does not join at a hyphen")
	}
}

// arenaFile is a results file as the arena writes it: its own fields only, tpl_* among them.
const arenaFile = `{
  "framework": "Alpha <fast>",
  "results": {
    "baseline-4096": {"framework": "Alpha <fast>", "language": "Go", "rps": 900000, "avg_latency": "1.10ms", "p99_latency": "4.90ms", "cpu": "2739.4%", "memory": "76MiB", "connections": 4096, "threads": 64, "duration": "5s", "pipeline": 1, "bandwidth": "351.90MB/s", "reconnects": 0, "status_2xx": 4500000, "status_3xx": 0, "status_4xx": 0, "status_5xx": 0},
    "gateway-64-512": {"framework": "Alpha <fast>", "language": "Go", "rps": 50000, "avg_latency": "3.2ms", "p99_latency": "9ms", "cpu": "900.0%", "memory": "1.2GiB", "connections": 512, "threads": 64, "duration": "5s", "pipeline": 1, "bandwidth": "1.00GB/s", "reconnects": 0, "status_2xx": 250000, "status_3xx": 0, "status_4xx": 0, "status_5xx": 0, "tpl_static": 75000, "tpl_baseline": 50000, "tpl_json": 87500, "tpl_async_db": 37500}
  },
  "note": "kept"
}
`

func row(entry, display, profile string, conns int, rps float64) Result {
	r := Result{Framework: display, Language: "Go", Entry: entry, Profile: profile, Connections: conns, Threads: 1, Duration: "5s", Pipeline: 1,
		Tool: "wrk", ToolVersion: "4.1.0", Commit: "abc", Host: "h", Time: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	r.FromRuns([]Run{{RPS: rps, Requests: int64(rps) * 5, Status2xx: int64(rps) * 5, DurationS: 5, CPUCores: 1, MemoryPeak: 1 << 20, Bytes: 1000,
		LatencyUS: Latency{Mean: 100, P50: 90, P90: 150, P99: 400, P999: 900, Max: 1000}}})
	return r
}

// TestSiteFilesMerge: a new key replaces the old one even when slower, the other keys stay
// exactly as the arena wrote them, the file is indent-2 JSON with sorted keys and a trailing
// newline, and --lite rows go to their own file.
func TestSiteFilesMerge(t *testing.T) {
	repo := map[string][]byte{"site/data/results/alpha-fast.json": []byte(arenaFile)}
	read := func(p string) ([]byte, error) {
		if b, ok := repo[p]; ok {
			return b, nil
		}
		return nil, fmt.Errorf("read %s: %w", p, fs.ErrNotExist)
	}
	lite := row("alpha", "Alpha <fast>", "baseline", 512, 7)
	lite.Lite = true
	rows := []Result{
		row("alpha", "Alpha <fast>", "baseline", 4096, 1000), // slower than the arena's 900000: replaces it anyway
		row("alpha", "Alpha <fast>", "baseline", 512, 2000),
		row("zeta", "Zeta", "json", 4096, 3000),
		lite,
	}
	files, err := SiteFiles(rows, read)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"site/data/results/alpha-fast.json", "site/data/results/lite/alpha-fast.json", "site/data/results/zeta.json"}
	if got := slices.Sorted(maps.Keys(files)); !slices.Equal(got, want) {
		t.Fatalf("files = %v, want %v", got, want)
	}
	b := files["site/data/results/alpha-fast.json"]
	if !strings.HasSuffix(string(b), "}\n") || !strings.HasPrefix(string(b), "{\n  \"framework\": \"Alpha <fast>\",\n  \"note\": \"kept\",\n  \"results\": {\n    \"baseline-4096\": {\n") {
		t.Errorf("file does not start as indent-2 JSON with sorted keys, unescaped:\n%.300s", b)
	}
	canon, err := Canonical(b)
	if err != nil || string(canon) != string(b) {
		t.Errorf("the file is not in canonical form (sorted keys, indent 2): %v", err)
	}
	f, err := DecodeSite(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(f.Results)); !slices.Equal(got, []string{"baseline-4096", "baseline-512", "gateway-64-512"}) {
		t.Errorf("keys = %v", got)
	}
	var kept map[string]any
	if err := json.Unmarshal(f.Results["gateway-64-512"], &kept); err != nil {
		t.Fatal(err)
	}
	if kept["tpl_async_db"] != 37500.0 || kept["rps"] != 50000.0 || len(kept) != 21 {
		t.Errorf("the arena's row was not kept verbatim: %v", kept)
	}
	got, err := f.Rows()
	if err != nil {
		t.Fatal(err)
	}
	if got[0].RPS != 1000 || got[0].Entry != "alpha" || len(got[0].Runs) != 1 || got[2].Profile != "gateway-64" || got[2].Connections != 512 {
		t.Errorf("rows = %+v", got)
	}
	lf, err := DecodeSite(files["site/data/results/lite/alpha-fast.json"])
	if err != nil || len(lf.Results) != 1 || lf.Results["baseline-512"] == nil {
		t.Errorf("lite file = %s (%v)", files["site/data/results/lite/alpha-fast.json"], err)
	}

	// Entries sharing a display name share the file; rows with one key replace each other
	// in order.
	files, err = SiteFiles([]Result{row("a", "A", "json", 512, 1), row("a-tuned", "A", "json", 512, 2)}, read)
	if err != nil {
		t.Fatal(err)
	}
	f, _ = DecodeSite(files["site/data/results/a.json"])
	if rs, _ := f.Rows(); len(rs) != 1 || rs[0].Entry != "a-tuned" {
		t.Errorf("shared display name: rows %+v, want a-tuned's only", rs)
	}
}

func TestSiteFilesErrors(t *testing.T) {
	notFound := func(string) ([]byte, error) { return nil, fs.ErrNotExist }
	if _, err := SiteFiles([]Result{row("a", "Foo Bar", "json", 512, 1), row("b", "foo-bar", "json", 512, 1)}, notFound); err == nil ||
		!strings.Contains(err.Error(), "same file name") || !strings.Contains(err.Error(), "display_name") {
		t.Errorf("two display names with one slug: %v, want an error naming the clash and the fix", err)
	}
	broken := func(string) ([]byte, error) { return []byte(`{"results": []}`), nil }
	if _, err := SiteFiles([]Result{row("a", "A", "json", 512, 1)}, broken); err == nil || !strings.Contains(err.Error(), "site/data/results/a.json") || !strings.Contains(err.Error(), "fix") {
		t.Errorf("a broken file: %v, want an error naming it and the fix", err)
	}
	boom := errors.New("boom")
	if _, err := SiteFiles([]Result{row("a", "A", "json", 512, 1)}, func(string) ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("a read failure = %v, want it passed on (a save must not overwrite what it could not read)", err)
	}
	if _, err := SiteFiles([]Result{{Framework: "A", Profile: "json"}}, notFound); err == nil {
		t.Error("a row without a connection count was saved")
	}
	for _, bad := range []string{`[]`, `{"framework": 1}`, `{"framework": "A", "results": {"json": {}}}`, `{"framework": "A", "results": {"json-512": 5}}`} {
		if _, err := DecodeSite([]byte(bad)); err == nil {
			t.Errorf("DecodeSite(%s) succeeded", bad)
		}
	}
}

// TestFixedRateFields: a fixed-rate row carries the arena's cpu_usec, cpu_per_req_us,
// target_rate, rate_ratio and p99_9_latency; no other row does.
func TestFixedRateFields(t *testing.T) {
	r := Result{Profile: "latency-10k", Connections: 1024, TargetRate: 10000}
	r.FromRuns([]Run{{RPS: 9990, Status2xx: 199800, DurationS: 20, CPUCores: 0.123456, LatencyUS: Latency{Mean: 112, P99: 450, P999: 9300}}})
	var m map[string]any
	b, _ := json.Marshal(r)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"cpu_usec": 2469120.0, "cpu_per_req_us": 12.3580, "target_rate": 10000.0, "rate_ratio": 0.999, "p99_9_latency": "9.30ms"}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	plain := row("a", "A", "baseline", 512, 100)
	b, _ = json.Marshal(plain)
	for k := range want {
		if strings.Contains(string(b), `"`+k+`"`) {
			t.Errorf("a row that is not fixed-rate has %s", k)
		}
	}

	// A fixed-rate row read from a file written before the fields existed gets them when it
	// is saved again; target_rps, their old name for the target, is read.
	old := []byte(`{"framework": "A", "profile": "latency-10k", "connections": 1024, "target_rps": 10000, "best_run": 0,
		"runs": [{"rps": 10000, "status_2xx": 200000, "duration_s": 20, "cpu_cores": 0.5, "latency_us": {"p99_9": 800}}]}`)
	got, err := Unmarshal(old)
	if err != nil || got.TargetRate != 10000 {
		t.Fatalf("Unmarshal of target_rps: %d, %v", got.TargetRate, err)
	}
	var f SiteFile
	f.Framework = "A"
	if err := f.Put(got); err != nil {
		t.Fatal(err)
	}
	rows, _ := f.Rows()
	if rows[0].CPUUsec == nil || *rows[0].CPUUsec != 10_000_000 || *rows[0].CPUPerReqUS != 50 || rows[0].P999Latency != "800us" {
		t.Errorf("old fixed-rate row saved again: cpu_usec %v, cpu_per_req_us %v, p99_9 %q", rows[0].CPUUsec, rows[0].CPUPerReqUS, rows[0].P999Latency)
	}
}

// TestReportSaved: a results commit holds the merged results files, frameworks.json and,
// from the benchmark host, current.json.
func TestReportSaved(t *testing.T) {
	r1 := row("alpha", "Alpha", "baseline", 512, 10)
	facts := &HostFacts{CPU: "AMD EPYC", Cores: "64", Threads: "128", ThreadsPerCore: "2", RAM: "251Gi", OS: "Debian", Kernel: "6.1", Docker: "29.3.0", DockerRuntime: "runc", Governor: "performance"}
	rep := Report{
		Rows:           []Row{{Entry: "alpha", Profile: "baseline", Conns: 512, Result: &r1}, {Entry: "alpha", Profile: "json", Conns: 512, Err: "build failed"}},
		FrameworksFile: map[string]FrameworkGroup{"Alpha": {FrameworkInfo: FrameworkInfo{Dir: "alpha", Type: "flagship"}}},
		Current:        facts,
	}
	files, err := rep.Saved("frameworks", func(string) ([]byte, error) { return nil, fs.ErrNotExist })
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(files)); !slices.Equal(got, []string{CurrentPath, FrameworksPath, "site/data/results/alpha.json"}) {
		t.Fatalf("files = %v", got)
	}
	var cur HostFacts
	if err := json.Unmarshal(files[CurrentPath], &cur); err != nil || cur != *facts {
		t.Errorf("current.json = %s (%v)", files[CurrentPath], err)
	}
	if !strings.Contains(string(files[FrameworksPath]), "\"Alpha\": {\n    \"dir\": \"alpha\",") {
		t.Errorf("frameworks.json = %s", files[FrameworksPath])
	}
	rep.Current, rep.FrameworksFile = nil, nil
	files, _ = rep.Saved("frameworks", func(string) ([]byte, error) { return nil, fs.ErrNotExist })
	if _, ok := files[CurrentPath]; ok {
		t.Error("current.json written by a report that has no host facts for it")
	}
}

// TestCommittedRows: an entry's committed rows are its own and the arena's (which name no
// entry), and today's layout wins over the April one.
func TestCommittedRows(t *testing.T) {
	root := t.TempDir()
	arenaRow := `{"framework": "A", "rps": 5, "connections": 4096}`
	file := `{"framework": "A", "results": {"baseline-4096": ` + arenaRow + `}}`
	f, err := DecodeSite([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Put(row("a-tuned", "A", "json", 512, 9)); err != nil {
		t.Fatal(err)
	}
	if err := f.Put(row("a", "A", "baseline", 512, 7)); err != nil {
		t.Fatal(err)
	}
	b, _ := f.Encode()
	path := filepath.Join(root, filepath.FromSlash(SitePath("A", false)))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, found, err := ReadSite(root, "A", false)
	if err != nil || !found {
		t.Fatalf("ReadSite: %v, found %v", err, found)
	}
	mine, err := got.EntryRows("a")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range mine {
		keys = append(keys, Key(r.Profile, r.Connections)+"/"+r.Entry)
	}
	if diff := cmp.Diff([]string{"baseline-4096/", "baseline-512/a"}, keys); diff != "" {
		t.Errorf("a's rows (-want +got):\n%s", diff)
	}
	older := []Result{{Profile: "baseline", Connections: 512, RPS: 1}, {Profile: "pipelined", Connections: 512, RPS: 2}}
	all := Prefer(mine, older)
	if len(all) != 3 || all[1].RPS != 7 || all[2].Profile != "pipelined" {
		t.Errorf("Prefer = %+v, want today's baseline-512 and April's pipelined-512", all)
	}
	if _, found, err := ReadSite(root, "B", false); found || err != nil {
		t.Errorf("ReadSite of a framework without a file: found %v, %v", found, err)
	}
}

// TestArenaRowsReadWithTheirFigures: a row the arena wrote (its figures as strings, its own
// names) reads with the figures Δ and the score compare.
func TestArenaRowsReadWithTheirFigures(t *testing.T) {
	r, err := Unmarshal([]byte(`{"framework": "actix", "rps": 10000, "avg_latency": "112.0us", "p99_latency": "4.90ms", "p99_9_latency": "1.5s",
		"cpu": "2739.4%", "memory": "76MiB", "connections": 1024, "cpu_usec": 2400000, "cpu_per_req_us": 12.0, "target_rate": 10000, "rate_ratio": 1.0}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Latency{Mean: 112, P99: 4900, P999: 1.5e6}
	if r.LatencyUS != want || r.CPUPerRequest != 12 || math.Abs(r.CPUCores-27.394) > 1e-9 || r.MemoryPeak != 76<<20 || r.AchievedRate != 10000 || r.TargetRate != 10000 {
		t.Errorf("arena row read as %+v", r)
	}
	var b Bests
	b.Lower(r)
	if b.Results != 1 || b.CPUPerRequest != 12 || b.P99 != 4900 || b.Mean != 112 {
		t.Errorf("bests of an arena row = %+v", b)
	}
	for _, bad := range []string{"", "12", "xms", "-1us", "NaNus"} {
		if _, err := ParseLatency(bad); err == nil {
			t.Errorf("ParseLatency(%q) succeeded", bad)
		}
	}
}
