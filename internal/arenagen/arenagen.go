// Package arenagen reads a site/data directory the way the arena's own generator,
// scripts/gen_leaderboard_data.py, reads it since the arena moved to one results file per
// framework (July 2026), so tests can show that the files this harness writes feed it
// unchanged. It is written from the generator's documented behaviour, not from its code:
//
//   - inputs: every site/data/results/*.json (not below it: the lite/ directory is never read),
//     frameworks.json and current.json;
//   - each results file is {"framework", "results": {"<profile>-<conns>": row}}; a key splits
//     at its last "-" into the profile and the connection count, and the rows of one key, from
//     every file, are sorted case-insensitively by framework;
//   - a board row is fw and lang, then the base fields (rps, avg_latency, p99_latency, cpu,
//     memory, bandwidth, input_bw, status_2xx..status_5xx, reconnects), the tpl_* fields that
//     are truthy, and the fixed-rate fields (cpu_usec, cpu_per_req_us, rate_ratio,
//     target_rate, p99_9_latency) that are not null;
//   - runmeta["<profile>-<conns>"] is {threads, duration, pipeline} of the first row that has
//     them;
//   - meta[display] comes from frameworks.json (type defaults to emerging, mode to standard).
//
// Where the generator would only misrender a value (a number given as a string, a latency
// without a unit), Read reports a problem instead, so a test fails on it.
package arenagen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Board is what the generator builds from site/data (a part of its data.js payload).
type Board struct {
	Current map[string]any            // current.json as read
	Meta    map[string]Meta           // display name → its framework's meta
	Results map[string][]Row          // "<profile>-<conns>" → rows sorted by framework
	RunMeta map[string]map[string]any // "<profile>-<conns>" → threads, duration, pipeline
}

// Meta is meta[display] of the payload, from frameworks.json and the rows.
type Meta struct {
	Type, Mode, Language, Repo, Dir, Engine, Desc string
}

// A Row is one board row: fw, lang and the fields the generator copies, as decoded.
type Row map[string]any

// The fields the generator copies (BASE_FIELDS, EFF_FIELDS).
var (
	BaseFields = []string{"rps", "avg_latency", "p99_latency", "cpu", "memory", "bandwidth", "input_bw",
		"status_2xx", "status_3xx", "status_4xx", "status_5xx", "reconnects"}
	EffFields = []string{"cpu_usec", "cpu_per_req_us", "rate_ratio", "target_rate", "p99_9_latency"}
)

var (
	latencyRE   = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(us|ms|s)$`)
	cpuRE       = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?%$`)
	memoryRE    = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(KiB|MiB|GiB)$`)
	bandwidthRE = regexp.MustCompile(`^(0|[0-9]+(\.[0-9]+)?(B|KB|MB|GB|TB)(/s)?)$`)
	durationRE  = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(ms|s|m)$`)
)

// Read reads dataDir (a site/data directory) as the generator does and returns the board and
// every problem found: a file the generator could not load, a field of the wrong type or
// unit, a row of a key in no results file's shape.
func Read(dataDir string) (Board, []string) {
	b := Board{Meta: map[string]Meta{}, Results: map[string][]Row{}, RunMeta: map[string]map[string]any{}}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	names, _ := filepath.Glob(filepath.Join(dataDir, "results", "*.json"))
	slices.Sort(names)
	langs := map[string]string{}
	for _, name := range names {
		rel := "results/" + filepath.Base(name)
		var file struct {
			Framework any                       `json:"framework"`
			Results   map[string]map[string]any `json:"results"`
		}
		if err := load(name, &file); err != nil {
			bad("%s: %v", rel, err)
			continue
		}
		fw, ok := file.Framework.(string)
		if !ok || fw == "" {
			bad("%s: framework is %v, want the display name", rel, file.Framework)
			continue
		}
		for _, key := range slices.Sorted(maps.Keys(file.Results)) {
			raw := file.Results[key]
			where := rel + " " + key
			i := strings.LastIndexByte(key, '-')
			conns, err := strconv.Atoi(key[i+1:])
			if i <= 0 || err != nil || conns <= 0 {
				bad("%s: key is not <profile>-<conns>", where)
				continue
			}
			if raw["framework"] != nil && raw["framework"] != fw {
				bad("%s: row framework %v differs from the file's %q", where, raw["framework"], fw)
			}
			lang, _ := raw["language"].(string)
			if lang == "" {
				bad("%s: language is %v, want a string", where, raw["language"])
			}
			if langs[fw] == "" {
				langs[fw] = lang
			}
			if c, ok := integer(raw["connections"]); ok && c != int64(conns) {
				bad("%s: connections %d differs from the key's %d", where, c, conns)
			}
			row := Row{"fw": fw, "lang": lang}
			problems = append(problems, baseFields(where, raw, row)...)
			for k, v := range raw {
				if strings.HasPrefix(k, "tpl_") && truthy(v) {
					if _, ok := integer(v); !ok {
						bad("%s: %s = %v, want an integer", where, k, v)
					}
					row[k] = v
				}
			}
			problems = append(problems, effFields(where, raw, row)...)
			b.Results[key] = append(b.Results[key], row)
			if _, ok := b.RunMeta[key]; !ok && raw["threads"] != nil && raw["duration"] != nil && raw["pipeline"] != nil {
				if _, ok := integer(raw["threads"]); !ok {
					bad("%s: threads = %v, want an integer", where, raw["threads"])
				}
				if _, ok := integer(raw["pipeline"]); !ok {
					bad("%s: pipeline = %v, want an integer", where, raw["pipeline"])
				}
				if d, _ := raw["duration"].(string); !durationRE.MatchString(d) {
					bad("%s: duration = %v, want a duration such as 5s", where, raw["duration"])
				}
				b.RunMeta[key] = map[string]any{"threads": raw["threads"], "duration": raw["duration"], "pipeline": raw["pipeline"]}
			}
		}
	}
	for _, rows := range b.Results {
		slices.SortStableFunc(rows, func(x, y Row) int {
			return strings.Compare(strings.ToLower(x["fw"].(string)), strings.ToLower(y["fw"].(string)))
		})
	}

	var fws map[string]map[string]any
	if err := load(filepath.Join(dataDir, "frameworks.json"), &fws); err != nil {
		bad("frameworks.json: %v", err)
	}
	for display, m := range fws {
		str := func(k string) string {
			v, ok := m[k].(string)
			if !ok && m[k] != nil {
				bad("frameworks.json %q: %s = %v, want a string", display, k, m[k])
			}
			return v
		}
		meta := Meta{Type: str("type"), Mode: str("mode"), Repo: str("repo"), Dir: str("dir"), Engine: str("engine"), Desc: str("description"), Language: langs[display]}
		if meta.Dir == "" {
			bad("frameworks.json %q: no dir", display)
		}
		if meta.Type == "" {
			meta.Type = "emerging"
		}
		if meta.Mode == "" {
			meta.Mode = "standard"
		}
		if v, ok := m["variants"]; ok {
			if vs, ok := v.([]any); !ok || len(vs) < 2 {
				bad("frameworks.json %q: variants = %v, want a list of two or more", display, v)
			}
		}
		b.Meta[display] = meta
	}
	for fw := range langs {
		if _, ok := b.Meta[fw]; !ok {
			bad("results of %q: no framework of that display name in frameworks.json (no framework page)", fw)
		}
	}

	if err := load(filepath.Join(dataDir, "current.json"), &b.Current); err != nil && !os.IsNotExist(err) {
		bad("current.json: %v", err)
	}
	for k, v := range b.Current {
		if k == "tcp" {
			tcp, ok := v.(map[string]any)
			if !ok {
				bad("current.json: tcp = %v, want an object", v)
			}
			for tk, tv := range tcp {
				if _, ok := tv.(string); !ok {
					bad("current.json: tcp.%s = %v, want a string", tk, tv)
				}
			}
			continue
		}
		if _, ok := v.(string); !ok {
			bad("current.json: %s = %v, want a string (every value is one)", k, v)
		}
	}
	return b, problems
}

// baseFields copies BASE_FIELDS into row, checking each one's type and unit.
func baseFields(where string, raw map[string]any, row Row) []string {
	var problems []string
	check := func(k string, ok bool, want string) {
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: %s = %#v, want %s", where, k, raw[k], want))
		}
	}
	for _, k := range BaseFields {
		v, present := raw[k]
		if !present {
			if k != "input_bw" {
				problems = append(problems, fmt.Sprintf("%s: no %s", where, k))
			}
			continue
		}
		row[k] = v
		s, _ := v.(string)
		switch k {
		case "rps", "status_2xx", "status_3xx", "status_4xx", "status_5xx", "reconnects":
			_, ok := integer(v)
			check(k, ok, "an integer")
		case "avg_latency", "p99_latency":
			check(k, latencyRE.MatchString(s), "a latency in us, ms or s")
		case "cpu":
			check(k, cpuRE.MatchString(s), `a percentage such as "2739.4%"`)
		case "memory":
			check(k, memoryRE.MatchString(s), `a size such as "76MiB" or "2.4GiB"`)
		case "bandwidth", "input_bw":
			check(k, bandwidthRE.MatchString(s), `a rate such as "351.90MB/s"`)
		}
	}
	return problems
}

// effFields copies the EFF_FIELDS that are not null into row, checking each.
func effFields(where string, raw map[string]any, row Row) []string {
	var problems []string
	for _, k := range EffFields {
		v := raw[k]
		if v == nil {
			continue
		}
		row[k] = v
		ok := false
		switch k {
		case "cpu_usec", "target_rate":
			_, ok = integer(v)
		case "cpu_per_req_us", "rate_ratio":
			_, ok = v.(json.Number)
		case "p99_9_latency":
			s, _ := v.(string)
			ok = latencyRE.MatchString(s)
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: %s = %#v, not the arena's type", where, k, v))
		}
	}
	if _, fixed := raw["target_rate"]; fixed {
		for _, k := range EffFields {
			if _, present := raw[k]; !present && k != "cpu_usec" && k != "cpu_per_req_us" {
				problems = append(problems, fmt.Sprintf("%s: a fixed-rate row without %s", where, k))
			}
		}
	}
	return problems
}

// load decodes a JSON file as Python's json.load would accept it, numbers kept as written.
func load(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("extra data after the JSON value")
	}
	return nil
}

// integer reports whether v is a JSON number without a fraction (a Python int).
func integer(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok || strings.ContainsAny(string(n), ".eE") {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

// truthy is Python's truth of a decoded JSON value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case json.Number:
		f, err := x.Float64()
		return err == nil && f != 0 && !math.IsNaN(f)
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// LatencyUS reads a latency string of the board ("112.0us", "4.90ms", "1.07s") in µs.
func LatencyUS(s string) (float64, error) {
	m := latencyRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("latency %q: no us, ms or s unit", s)
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, m[2]), 64)
	if err != nil {
		return 0, err
	}
	return v * map[string]float64{"us": 1, "ms": 1e3, "s": 1e6}[m[2]], nil
}
