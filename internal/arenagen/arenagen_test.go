package arenagen

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// arenaFiles are site/data files as the arena itself writes them (shapes and values from its
// documentation: actix's keys, a zrk row, a gateway row with tpl_* fields).
var arenaFiles = map[string]string{
	"results/actix.json": `{"framework": "actix", "results": {
  "baseline-4096": {"framework": "actix", "language": "Rust", "rps": 2500000, "avg_latency": "1.20ms", "p99_latency": "5.10ms", "cpu": "6636.6%", "memory": "76MiB", "connections": 4096, "threads": 64, "duration": "5s", "pipeline": 1, "bandwidth": "351.90MB/s", "reconnects": 0, "status_2xx": 12500000, "status_3xx": 0, "status_4xx": 0, "status_5xx": 0},
  "latency-10k-1024": {"framework": "actix", "language": "Rust", "rps": 10000, "avg_latency": "112.0us", "p99_latency": "450.0us", "cpu": "12.0%", "memory": "20MiB", "connections": 1024, "threads": 64, "duration": "20s", "pipeline": 1, "bandwidth": "1.20MB/s", "reconnects": 0, "status_2xx": 200000, "status_3xx": 0, "status_4xx": 0, "status_5xx": 0, "cpu_usec": 2400000, "cpu_per_req_us": 12.0, "target_rate": 10000, "rate_ratio": 1.0, "p99_9_latency": "9300.0us"},
  "gateway-64-512": {"framework": "actix", "language": "Rust", "rps": 50000, "avg_latency": "3.2ms", "p99_latency": "9ms", "cpu": "900.0%", "memory": "1.2GiB", "connections": 512, "threads": 64, "duration": "5s", "pipeline": 1, "bandwidth": "3.93GB", "reconnects": 0, "status_2xx": 250000, "status_3xx": 0, "status_4xx": 0, "status_5xx": 0, "tpl_static": 75000, "tpl_baseline": 0}
}}
`,
	"results/Zed.json":        `{"framework": "Zed", "results": {"baseline-4096": {"framework": "Zed", "language": "Go", "rps": 1, "avg_latency": "1s", "p99_latency": "1s", "cpu": "1.0%", "memory": "1MiB", "connections": 4096, "threads": 64, "duration": "5s", "pipeline": 1, "bandwidth": "0", "reconnects": 0, "status_2xx": 5, "status_3xx": 0, "status_4xx": 0, "status_5xx": 0, "cpu_usec": null}}}`,
	"results/lite/actix.json": `not even JSON: never read`,
	"frameworks.json": `{"actix": {"dir": "actix", "description": "d", "repo": "r", "type": "flagship", "engine": "actix-web", "variants": [{"dir": "actix"}, {"dir": "actix-h2c"}]},
  "Zed": {"dir": "zed", "description": "", "repo": "", "engine": ""}}`,
	"current.json": `{"cpu": "AMD Ryzen Threadripper PRO 3995WX 64-Cores", "cores": "64", "threads": "128", "tcp": {"lo_mtu": "1500"}}`,
}

func TestReadArenaFiles(t *testing.T) {
	b, problems := Read(writeFiles(t, arenaFiles))
	if len(problems) > 0 {
		t.Fatalf("the arena's own files have problems:\n%s", strings.Join(problems, "\n"))
	}
	rows := b.Results["baseline-4096"]
	if len(rows) != 2 || rows[0]["fw"] != "actix" || rows[1]["fw"] != "Zed" {
		t.Errorf("baseline-4096 = %v, want actix then Zed (case-insensitive order)", rows)
	}
	if _, ok := rows[1]["cpu_usec"]; ok {
		t.Error("a null fixed-rate field reached the board")
	}
	lat := b.Results["latency-10k-1024"][0]
	for _, k := range EffFields {
		if lat[k] == nil {
			t.Errorf("latency-10k row lacks %s", k)
		}
	}
	gw := b.Results["gateway-64-512"][0]
	if gw["tpl_static"] == nil || gw["tpl_baseline"] != nil {
		t.Errorf("tpl fields = %v, want only the truthy one", gw)
	}
	if b.RunMeta["latency-10k-1024"]["duration"] != "20s" {
		t.Errorf("runmeta = %v", b.RunMeta)
	}
	if m := b.Meta["Zed"]; m.Type != "emerging" || m.Mode != "standard" || m.Language != "Go" {
		t.Errorf("Zed meta = %+v, want the defaults and the rows' language", m)
	}
	if b.Current["cores"] != "64" {
		t.Errorf("current = %v", b.Current)
	}
	if v, err := LatencyUS("9300.0us"); err != nil || v != 9300 {
		t.Errorf("LatencyUS = %v, %v", v, err)
	}
	if v, err := LatencyUS("4.90ms"); err != nil || v != 4900 {
		t.Errorf("LatencyUS = %v, %v", v, err)
	}
}

// TestReadFindsProblems: what the generator would misread is reported, each naming the file,
// the key and the field.
func TestReadFindsProblems(t *testing.T) {
	files := map[string]string{
		"results/a.json": `{"framework": "A", "results": {
  "baseline": {"framework": "A", "language": "Go"},
  "json-512": {"framework": "B", "language": "Go", "rps": 1.5, "avg_latency": "173", "p99_latency": "1ms", "cpu": "12", "memory": "76MB", "connections": 256, "bandwidth": "", "reconnects": 0, "status_2xx": "5", "status_3xx": 0, "status_4xx": 0, "status_5xx": 0, "target_rate": 10.5, "p99_9_latency": 9}
}}`,
		"results/b.json":  `[]`,
		"frameworks.json": `{"A": {"type": 3}}`,
		"current.json":    `{"cores": 64}`,
	}
	_, problems := Read(writeFiles(t, files))
	for _, want := range []string{
		"results/a.json baseline: key is not <profile>-<conns>",
		"results/a.json json-512: row framework B differs",
		"json-512: rps = ",
		"json-512: avg_latency = ",
		"json-512: cpu = ",
		"json-512: memory = ",
		"json-512: bandwidth = ",
		"json-512: status_2xx = ",
		"json-512: connections 256 differs from the key's 512",
		"json-512: target_rate = ",
		"json-512: p99_9_latency = ",
		"json-512: a fixed-rate row without rate_ratio",
		"results/b.json: ",
		`frameworks.json "A": type = 3`,
		`frameworks.json "A": no dir`,
		"current.json: cores = 64",
	} {
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, want) }) {
			t.Errorf("no problem %q among:\n%s", want, strings.Join(problems, "\n"))
		}
	}
}
