// Package site rebuilds the arena's aggregated leaderboard files (site/data in the old arena)
// from the result files every entry keeps in frameworks/<name>/results.
//
// The output is the old arena's format, byte for byte stable across runs:
//   - <profile>-<conns>.json: a JSON array of leaderboard rows, indent 2, sorted by lower-cased
//     framework (display name), then by entry directory;
//   - frameworks.json: display name → {dir, description, repo, type, engine} of the primary
//     entry (and mode, completeness, website and tls_check when it has them), plus
//     "variants" when several entries share the display name.
package site

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/result"
)

// FrameworksFile is the name of the file that describes every entry.
const FrameworksFile = "frameworks.json"

// Row is one leaderboard row: exactly the arena's fields, in the arena's names and order.
type Row struct {
	Framework   string `json:"framework"`
	Language    string `json:"language"`
	RPS         int64  `json:"rps"`
	AvgLatency  string `json:"avg_latency"`
	P99Latency  string `json:"p99_latency"`
	CPU         string `json:"cpu"`
	Memory      string `json:"memory"`
	Connections int    `json:"connections"`
	Threads     int    `json:"threads"`
	Duration    string `json:"duration"`
	Pipeline    int    `json:"pipeline"`
	Bandwidth   string `json:"bandwidth"`
	Reconnects  int64  `json:"reconnects"`
	Status2xx   int64  `json:"status_2xx"`
	Status3xx   int64  `json:"status_3xx"`
	Status4xx   int64  `json:"status_4xx"`
	Status5xx   int64  `json:"status_5xx"`
}

// rowOf takes the leaderboard fields of a result. The labels come from the entry's current
// meta.json, so a renamed entry shows under its new name without re-running it.
func rowOf(r result.Result, m frameworks.Meta) Row {
	return Row{
		Framework:   m.DisplayName,
		Language:    m.Language,
		RPS:         r.RPS,
		AvgLatency:  r.AvgLatency,
		P99Latency:  r.P99Latency,
		CPU:         r.CPU,
		Memory:      r.Memory,
		Connections: r.Connections,
		Threads:     r.Threads,
		Duration:    r.Duration,
		Pipeline:    r.Pipeline,
		Bandwidth:   r.Bandwidth,
		Reconnects:  r.Reconnects,
		Status2xx:   r.Status2xx,
		Status3xx:   r.Status3xx,
		Status4xx:   r.Status4xx,
		Status5xx:   r.Status5xx,
	}
}

// Info describes one entry in frameworks.json: the arena's fields (mode and completeness
// only when the entry has them, as the arena writes them), then website and tls_check, which
// the arena's board reads from meta.json itself.
type Info struct {
	Dir         string `json:"dir"`
	Description string `json:"description"`
	Repo        string `json:"repo"`
	// Type is the entry's tier (frameworks.Meta.Tier): April's production and tuned are
	// written as emerging, the league today's board ranks them in.
	Type   string `json:"type"`
	Engine string `json:"engine"`
	// Mode is "standard" or "tuned" when meta.json says so, and "tuned" for April's
	// "type": "tuned"; omitted otherwise (standard).
	Mode string `json:"mode,omitempty"`
	// Completeness is meta.json's, its known axes only; omitted when it has none.
	Completeness *frameworks.Completeness `json:"completeness,omitempty"`
	Website      string                   `json:"website,omitempty"`
	TLSCheck     bool                     `json:"tls_check,omitempty"`
}

// Group is one display name in frameworks.json: its primary entry and, when several entries
// share the display name, all of them as variants (primary included, by directory name).
type Group struct {
	Info
	Variants []Info `json:"variants,omitempty"`
}

func infoOf(e frameworks.Entry) Info {
	m := e.Meta
	mode := m.Mode
	if mode == "" && m.Tuned() {
		mode = "tuned"
	}
	return Info{Dir: e.Name, Description: m.Description, Repo: m.Repo, Type: m.Tier(), Engine: m.Engine,
		Mode: mode, Completeness: m.Completeness, Website: m.Website, TLSCheck: m.TLSCheck}
}

// ranked is a row with the entry it came from, for ordering and de-duplication.
type ranked struct {
	entry string
	row   Row
}

// Build reads every entry of root/frameworks and its committed results and returns the
// leaderboard files, file name → content.
//
// Every entry appears in frameworks.json; entries without results add no rows. When two
// entries share a display name and both have a result for the same profile and connection
// count, only the row with the higher rps is kept (the arena's rule: one row per display
// name); on equal rps the alphabetically later entry wins, as the arena's later file does.
//
// A meta.json that does not load, or a result file that does not parse or names no profile,
// is an error naming the entry; all such errors are reported together and nothing is built.
// The tests list of meta.json is not checked against the profiles here (that is validate's
// job), so an entry listing a profile unknown to this build still shows its results.
func Build(root string) (map[string][]byte, error) {
	fwDir := filepath.Join(root, "frameworks")
	names, err := frameworks.Names(fwDir)
	if err != nil {
		return nil, err
	}
	var entries []frameworks.Entry
	var errs []error
	boards := map[string][]ranked{} // file name → rows
	for _, name := range names {
		e, err := frameworks.Load(fwDir, name, ownTests(fwDir, name))
		if err != nil {
			errs = append(errs, fmt.Errorf("entry %s: %w", name, err))
			continue
		}
		entries = append(entries, e)
		results, err := result.ReadAll(e.Dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("entry %s: results: %w", name, err))
			continue
		}
		for _, r := range results {
			if r.Lite {
				// --lite runs (no pinning, load tools in Docker, a contributor's machine) are
				// not comparable with the benchmark host's, so they stay off the leaderboard.
				continue
			}
			if r.Profile == "" || r.Connections <= 0 {
				errs = append(errs, fmt.Errorf("entry %s: a result file has no profile or connection count (profile %q, connections %d); re-run the benchmark with --save",
					name, r.Profile, r.Connections))
				continue
			}
			file := result.FileName(r.Profile, r.Connections)
			boards[file] = append(boards[file], ranked{entry: name, row: rowOf(r, e.Meta)})
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	files := make(map[string][]byte, len(boards)+1)
	for file, rows := range boards {
		b, err := encode(leaderboard(rows))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		files[file] = b
	}
	b, err := encode(groups(entries))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", FrameworksFile, err)
	}
	files[FrameworksFile] = b
	return files, nil
}

// ownTests reads the tests list of an entry's meta.json so that Load checks everything but
// the profile names. A file that does not decode gives nil; Load then reports it in full.
func ownTests(fwDir, name string) []string {
	b, err := os.ReadFile(filepath.Join(fwDir, name, "meta.json"))
	if err != nil {
		return nil
	}
	var m struct {
		Tests []string `json:"tests"`
	}
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m.Tests
}

// leaderboard keeps one row per display name (the higher rps; on a tie the later entry) and
// sorts by lower-cased display name, then display name, then entry.
func leaderboard(rows []ranked) []Row {
	best := map[string]ranked{}
	for _, r := range rows {
		cur, ok := best[r.row.Framework]
		if !ok || r.row.RPS > cur.row.RPS || (r.row.RPS == cur.row.RPS && r.entry > cur.entry) {
			best[r.row.Framework] = r
		}
	}
	kept := make([]ranked, 0, len(best))
	for _, r := range best {
		kept = append(kept, r)
	}
	slices.SortFunc(kept, func(a, b ranked) int {
		if c := strings.Compare(strings.ToLower(a.row.Framework), strings.ToLower(b.row.Framework)); c != 0 {
			return c
		}
		if c := strings.Compare(a.row.Framework, b.row.Framework); c != 0 {
			return c
		}
		return strings.Compare(a.entry, b.entry)
	})
	out := make([]Row, len(kept))
	for i, r := range kept {
		out[i] = r.row
	}
	return out
}

// groups builds frameworks.json. entries are sorted by directory name (frameworks.Names).
func groups(entries []frameworks.Entry) map[string]Group {
	byName := map[string][]frameworks.Entry{}
	for _, e := range entries {
		byName[e.Meta.DisplayName] = append(byName[e.Meta.DisplayName], e)
	}
	out := make(map[string]Group, len(byName))
	for display, es := range byName {
		slices.SortFunc(es, func(a, b frameworks.Entry) int { return strings.Compare(a.Name, b.Name) })
		primary := es[0]
		if i := slices.IndexFunc(es, func(e frameworks.Entry) bool { return e.Name == display }); i >= 0 {
			primary = es[i]
		}
		g := Group{Info: infoOf(primary)}
		if len(es) > 1 {
			for _, e := range es {
				g.Variants = append(g.Variants, infoOf(e))
			}
		}
		out[display] = g
	}
	return out
}

// encode writes v as the arena does: indent 2, a trailing newline, HTML characters unescaped
// (encoding/json sorts map keys, so the output is deterministic).
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write writes files into outDir (created if missing), each atomically: a temporary file in
// outDir renamed over the target. It deletes nothing: files no longer produced, such as the
// leaderboards of retired profiles or the arena's current.json and langcolors.json, stay as
// they are, as they do in the old arena. Files are written in [Names] order.
func Write(outDir string, files map[string][]byte) error {
	names := Names(files)
	for _, name := range names {
		if name == "" || filepath.Base(name) != name || strings.HasPrefix(name, ".") {
			return fmt.Errorf("site: bad file name %q", name)
		}
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	for _, name := range names {
		if err := writeFile(filepath.Join(outDir, name), files[name]); err != nil {
			return err
		}
	}
	return nil
}

// Names returns the file names of files, sorted.
func Names(files map[string][]byte) []string {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func writeFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".site-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
