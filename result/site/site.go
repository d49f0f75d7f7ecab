// Package site rebuilds the arena's site data (site/data) in today's layout: one results file
// per framework, site/data/results/<slug(display_name)>.json, and site/data/frameworks.json
// (result's site.go has the formats).
//
// The results files are the source of truth: Build keeps every row they hold, byte for byte
// in meaning, and adds the rows of the April layout (frameworks/<name>/results/<profile>-
// <conns>.json, for an arena that has not moved) under the keys the file lacks; where both
// layouts hold a row, today's wins. frameworks.json is rebuilt from every entry's meta.json.
// The output is byte for byte stable across runs.
package site

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/result"
)

// FrameworksFile is the name of the file that describes every entry, in site/data.
const FrameworksFile = "frameworks.json"

// ResultsDir is the directory of the results files, in site/data.
const ResultsDir = "results"

// Site is what Build makes: files by their path below site/data ("frameworks.json",
// "results/<slug>.json"), and what it found but left alone.
type Site struct {
	Files map[string][]byte
	// Stale are the results files (paths below site/data) whose framework is no entry's
	// display name: the arena's rebuild deletes them; Build keeps them and says so.
	Stale []string
	// Migrated counts the rows taken from the April layout.
	Migrated int
}

// Build reads every entry of root/frameworks, the results files of root/site/data/results and
// the entries' April-layout results, and returns today's site data.
//
// Every entry appears in frameworks.json; a display name gets a results file when it has
// rows. Of the April layout's rows (--lite ones are left out: not the benchmark host's), one
// per key and display name is taken, as the old leaderboard kept one: the higher rps, on a
// tie the alphabetically later entry; its framework and language come from the entry's
// current meta.json. A meta.json that does not load, a results file or April result file
// that does not parse, or two display names with one file name, is an error naming the
// entry or file; all such errors are reported together and nothing is built. The tests list
// of meta.json is not checked against the profiles here (that is validate's job), so an
// entry listing a profile unknown to this build still shows its results.
func Build(root string) (Site, error) {
	fwDir := filepath.Join(root, "frameworks")
	names, err := frameworks.Names(fwDir)
	if err != nil {
		return Site{}, err
	}
	var entries []frameworks.Entry
	var errs []error
	for _, name := range names {
		e, err := frameworks.Load(fwDir, name, ownTests(fwDir, name))
		if err != nil {
			errs = append(errs, fmt.Errorf("entry %s: %w", name, err))
			continue
		}
		entries = append(entries, e)
	}
	if len(errs) > 0 {
		return Site{}, errors.Join(errs...)
	}

	out := Site{Files: map[string][]byte{}}
	displays := map[string][]frameworks.Entry{} // display name → its entries, by directory
	bySlug := map[string]string{}               // slug → display name
	for _, e := range entries {
		d := e.Meta.DisplayName
		if other, ok := bySlug[result.Slug(d)]; ok && other != d {
			errs = append(errs, fmt.Errorf("entries named %q and %q share the results file %s; give one of them a display_name that differs in more than case and punctuation",
				other, d, result.SitePath(d, false)))
			continue
		}
		bySlug[result.Slug(d)] = d
		displays[d] = append(displays[d], e)
	}
	for _, d := range slices.Sorted(maps.Keys(displays)) {
		b, migrated, err := resultsFile(root, d, displays[d])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if b != nil {
			out.Files[ResultsDir+"/"+result.Slug(d)+".json"] = b
		}
		out.Migrated += migrated
	}
	if len(errs) > 0 {
		return Site{}, errors.Join(errs...)
	}
	b, err := result.EncodeJSON(Groups(entries))
	if err != nil {
		return Site{}, fmt.Errorf("%s: %w", FrameworksFile, err)
	}
	out.Files[FrameworksFile] = b
	out.Stale, err = stale(root, displays)
	return out, err
}

// resultsFile is the results file of display name d: its rows in site/data/results, with the
// April layout's rows of its entries under the keys it lacks. nil when neither has a row.
func resultsFile(root, d string, entries []frameworks.Entry) ([]byte, int, error) {
	f, found, err := result.ReadSite(root, d, false)
	if err != nil {
		return nil, 0, err
	}
	if !found {
		f = result.SiteFile{Framework: d}
	}
	if f.Framework != d {
		return nil, 0, fmt.Errorf("%s holds the results of %q, not of %q, whose file it is by name; rename the file or give %q another display_name",
			result.SitePath(d, false), f.Framework, d, d)
	}
	type pick struct {
		entry string
		r     result.Result
	}
	picked := map[string]pick{}
	var errs []error
	for _, e := range entries {
		rs, err := result.ReadAll(e.Dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("entry %s: results: %w", e.Name, err))
			continue
		}
		for _, r := range rs {
			if r.Lite {
				// --lite runs (no pinning, load tools in Docker, a contributor's machine) are
				// not comparable with the benchmark host's, so they stay off the board.
				continue
			}
			if r.Profile == "" || r.Connections <= 0 {
				errs = append(errs, fmt.Errorf("entry %s: a result file has no profile or connection count (profile %q, connections %d); re-run the benchmark with --save",
					e.Name, r.Profile, r.Connections))
				continue
			}
			key := result.Key(r.Profile, r.Connections)
			if _, ok := f.Results[key]; ok {
				continue // today's layout wins
			}
			r.Framework, r.Language = e.Meta.DisplayName, e.Meta.Language
			if r.Entry == "" {
				r.Entry = e.Name
			}
			if cur, ok := picked[key]; !ok || r.RPS > cur.r.RPS || (r.RPS == cur.r.RPS && e.Name > cur.entry) {
				picked[key] = pick{entry: e.Name, r: r}
			}
		}
	}
	if len(errs) > 0 {
		return nil, 0, errors.Join(errs...)
	}
	for _, key := range slices.Sorted(maps.Keys(picked)) {
		if err := f.Put(picked[key].r); err != nil {
			return nil, 0, err
		}
	}
	if len(f.Results) == 0 && !found {
		return nil, 0, nil
	}
	b, err := f.Encode()
	return b, len(picked), err
}

// stale lists the results files in root/site/data/results whose framework is none of the
// display names.
func stale(root string, displays map[string][]frameworks.Entry) ([]string, error) {
	dir := filepath.Join(root, filepath.FromSlash(result.SiteResultsDir))
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, de := range des {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			return nil, err
		}
		f, err := result.DecodeSite(b)
		if _, ok := displays[f.Framework]; err != nil || !ok {
			out = append(out, ResultsDir+"/"+de.Name())
		}
	}
	return out, nil
}

// Save writes results into the site data under repoRoot as a save does (today's layout): each
// into its framework's results file (site/data/results/<slug>.json, --lite rows under
// results/lite), merged as the arena merges (a row replaces its key, the file's other keys
// stay), and site/data/frameworks.json rebuilt from every entry of repoRoot/frameworks that
// loads (skipped are those that do not). It returns the paths written. It never writes
// site/data/current.json: only the benchmark host's runner does, and a local run may be any
// machine (the arena's own trap: a contributor's laptop once published as its host).
func Save(repoRoot string, results []result.Result) (written []string, skipped []error, err error) {
	if len(results) == 0 {
		return nil, nil, nil
	}
	files, err := result.SiteFiles(results, func(p string) ([]byte, error) {
		return os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(p)))
	})
	if err != nil {
		return nil, nil, err
	}
	groups, skipped := Frameworks(filepath.Join(repoRoot, "frameworks"))
	if files[result.FrameworksPath], err = result.EncodeJSON(groups); err != nil {
		return nil, skipped, err
	}
	for _, p := range Names(files) {
		path := filepath.Join(repoRoot, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return written, skipped, err
		}
		if err := WriteFile(path, files[p]); err != nil {
			return written, skipped, err
		}
		written = append(written, path)
	}
	return written, skipped, nil
}

// Frameworks is frameworks.json as the entries of fwDir make it. An entry whose meta.json
// does not load is left out, with its error among errs, as the arena's rebuild skips it with a
// warning: a save goes on.
func Frameworks(fwDir string) (groups map[string]result.FrameworkGroup, errs []error) {
	names, err := frameworks.Names(fwDir)
	if err != nil {
		return nil, []error{err}
	}
	var entries []frameworks.Entry
	for _, name := range names {
		e, err := frameworks.Load(fwDir, name, ownTests(fwDir, name))
		if err != nil {
			errs = append(errs, fmt.Errorf("entry %s: %w", name, err))
			continue
		}
		entries = append(entries, e)
	}
	return Groups(entries), errs
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

func infoOf(e frameworks.Entry) result.FrameworkInfo {
	m := e.Meta
	mode := m.Mode
	if mode == "" && m.Tuned() {
		mode = "tuned"
	}
	var c *result.Completeness
	if m.Completeness != nil {
		c = &result.Completeness{Routing: m.Completeness.Routing, Middleware: m.Completeness.Middleware,
			Request: m.Completeness.Request, Response: m.Completeness.Response}
	}
	return result.FrameworkInfo{Dir: e.Name, Description: m.Description, Repo: m.Repo, Type: m.Tier(), Engine: m.Engine,
		Mode: mode, Completeness: c, Website: m.Website, TLSCheck: m.TLSCheck}
}

// Groups builds frameworks.json from entries: display name → the primary entry (the one
// whose directory is the display name, else the first by directory) and, when several share
// the display name, all of them as variants by directory.
func Groups(entries []frameworks.Entry) map[string]result.FrameworkGroup {
	byName := map[string][]frameworks.Entry{}
	for _, e := range entries {
		byName[e.Meta.DisplayName] = append(byName[e.Meta.DisplayName], e)
	}
	out := make(map[string]result.FrameworkGroup, len(byName))
	for display, es := range byName {
		slices.SortFunc(es, func(a, b frameworks.Entry) int { return strings.Compare(a.Name, b.Name) })
		primary := es[0]
		if i := slices.IndexFunc(es, func(e frameworks.Entry) bool { return e.Name == display }); i >= 0 {
			primary = es[i]
		}
		g := result.FrameworkGroup{FrameworkInfo: infoOf(primary)}
		if len(es) > 1 {
			for _, e := range es {
				g.Variants = append(g.Variants, infoOf(e))
			}
		}
		out[display] = g
	}
	return out
}

// Write writes files (paths below outDir, slash-separated) into outDir, each atomically: a
// temporary file in its directory renamed over the target. It deletes nothing: files no
// longer produced, such as the April layout's leaderboards (<profile>-<conns>.json), stale
// results files or the arena's current.json and langcolors.json, stay as they are. Files
// are written in [Names] order.
func Write(outDir string, files map[string][]byte) error {
	names := Names(files)
	for _, name := range names {
		if name == "" || name == "." || path.IsAbs(name) || path.Clean(name) != name || strings.HasPrefix(name, "../") || name == ".." ||
			strings.Count(name, "/") > 1 || strings.Contains(name, "\\") {
			return fmt.Errorf("site: bad file name %q", name)
		}
	}
	for _, name := range names {
		p := filepath.Join(outDir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := WriteFile(p, files[name]); err != nil {
			return err
		}
	}
	return nil
}

// Names returns the file names of files, sorted.
func Names(files map[string][]byte) []string {
	return slices.Sorted(maps.Keys(files))
}

// WriteFile writes b to path atomically: a temporary file in its directory renamed over it.
func WriteFile(path string, b []byte) error {
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
