package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Today's arena layout (the arena's results move of July 2026): the site reads only these.
//
//   - site/data/results/<slug(display_name)>.json: one file per framework,
//     {"framework": <display_name>, "results": {"<profile>-<conns>": <row>, ...}}, indent 2,
//     keys sorted, a trailing newline. A row is a Result: the arena's fields (on a fixed-rate
//     row cpu_usec, cpu_per_req_us, target_rate, rate_ratio and p99_9_latency too) beside
//     everything this harness adds, so the arena's generator reads the file unchanged and
//     nothing is lost. Entries that share a display name share the file.
//   - site/data/frameworks.json: display name → the primary entry's dir, description, repo,
//     type and engine, plus "variants" when several entries share the name.
//   - site/data/current.json: the benchmark host (HostFacts), written only from it.
//
// Saving merges as the arena does: a row replaces the one under its key, even when slower;
// the file's other keys stay. Rows measured with --lite (no pinning, another machine) go to
// site/data/results/lite/<slug>.json in the same shape: the arena's generator reads only
// site/data/results/*.json, so they never reach the board, and they never replace a row the
// benchmark host measured.
const (
	SiteDataDir    = "site/data"
	SiteResultsDir = SiteDataDir + "/results"
	SiteLiteDir    = SiteResultsDir + "/lite"
	FrameworksPath = SiteDataDir + "/frameworks.json"
	CurrentPath    = SiteDataDir + "/current.json"
)

// Slug is the arena's file name of a display name: every run of characters outside
// [A-Za-z0-9._-] becomes "-", leading and trailing "-" are trimmed, the rest is lower-cased,
// and an empty result is "unnamed" ("aspnet-minimal + nginx" → "aspnet-minimal-nginx").
func Slug(display string) string {
	var sb strings.Builder
	dash := false
	for _, c := range display {
		if c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			sb.WriteRune(c)
			dash = false
			continue
		}
		if !dash {
			sb.WriteByte('-')
			dash = true
		}
	}
	s := strings.ToLower(strings.Trim(sb.String(), "-"))
	if s == "" {
		return "unnamed"
	}
	return s
}

// SitePath is the slash-separated path, from the repository's root, of a display name's
// results file: site/data/results/<slug>.json, or under results/lite for --lite rows.
func SitePath(display string, lite bool) string {
	dir := SiteResultsDir
	if lite {
		dir = SiteLiteDir
	}
	return dir + "/" + Slug(display) + ".json"
}

// Key is a row's key in a results file: "<profile>-<conns>".
func Key(profile string, conns int) string { return profile + "-" + strconv.Itoa(conns) }

// SplitKey splits a row's key at its last "-" (profile names hold hyphens and digits).
func SplitKey(key string) (profile string, conns int, ok bool) {
	i := strings.LastIndexByte(key, '-')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(key[i+1:])
	if err != nil || n <= 0 {
		return "", 0, false
	}
	return key[:i], n, true
}

// A SiteFile is one framework's results file. Rows are kept as they were read, so a save
// rewrites only the rows it replaces: the arena's own rows keep the fields this harness does
// not model (tpl_*, input_bw, cpu_breakdown), and top-level fields other than framework and
// results are kept too.
type SiteFile struct {
	Framework string
	Results   map[string]json.RawMessage
	other     map[string]json.RawMessage
}

// DecodeSite reads a results file.
func DecodeSite(b []byte) (SiteFile, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return SiteFile{}, fmt.Errorf("not a results file (a JSON object with framework and results): %w", err)
	}
	f := SiteFile{Results: map[string]json.RawMessage{}}
	if err := json.Unmarshal(top["framework"], &f.Framework); err != nil || f.Framework == "" {
		return SiteFile{}, errors.New(`"framework" is missing or not a string; it must be the display_name the file belongs to`)
	}
	if raw, ok := top["results"]; ok {
		if err := json.Unmarshal(raw, &f.Results); err != nil || f.Results == nil {
			return SiteFile{}, errors.New(`"results" is not an object of rows keyed "<profile>-<conns>"`)
		}
	}
	for key, row := range f.Results {
		if _, _, ok := SplitKey(key); !ok {
			return SiteFile{}, fmt.Errorf("row key %q is not \"<profile>-<conns>\"", key)
		}
		if t := bytes.TrimSpace(row); len(t) == 0 || t[0] != '{' {
			return SiteFile{}, fmt.Errorf("row %q is not an object", key)
		}
	}
	delete(top, "framework")
	delete(top, "results")
	f.other = top
	return f, nil
}

// Encode writes the file as the arena does: indent 2, every object's keys sorted, HTML
// characters unescaped, a trailing newline.
func (f SiteFile) Encode() ([]byte, error) {
	top := map[string]any{}
	for k, v := range f.other {
		top[k] = v
	}
	top["framework"] = f.Framework
	rows := map[string]json.RawMessage{}
	maps.Copy(rows, f.Results)
	top["results"] = rows
	b, err := json.Marshal(top)
	if err != nil {
		return nil, err
	}
	return Canonical(b)
}

// Put sets r's row (the key of its profile and connection count), replacing the one there.
func (f *SiteFile) Put(r Result) error {
	if r.Profile == "" || r.Connections <= 0 {
		return fmt.Errorf("a result of %s has no profile or connection count (profile %q, connections %d)", f.Framework, r.Profile, r.Connections)
	}
	r.fillFixedRate()
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if f.Results == nil {
		f.Results = map[string]json.RawMessage{}
	}
	f.Results[Key(r.Profile, r.Connections)] = b
	return nil
}

// Rows decodes every row, in key order. A row without its own profile, connection count or
// framework (the arena's rows have no profile) takes them from its key and the file.
func (f SiteFile) Rows() ([]Result, error) {
	var out []Result
	for _, key := range slices.Sorted(maps.Keys(f.Results)) {
		r, err := Unmarshal(f.Results[key])
		if err != nil {
			return nil, fmt.Errorf("row %q: %w", key, err)
		}
		p, c, _ := SplitKey(key)
		if r.Profile == "" {
			r.Profile = p
		}
		if r.Connections <= 0 {
			r.Connections = c
		}
		if r.Framework == "" {
			r.Framework = f.Framework
		}
		out = append(out, r)
	}
	return out, nil
}

// EntryRows are the rows of entry (a directory): the rows this harness wrote for it, and the
// rows the arena wrote, which name no entry and belong to every entry of the display name.
func (f SiteFile) EntryRows(entry string) ([]Result, error) {
	rows, err := f.Rows()
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(rows, func(r Result) bool { return r.Entry != "" && r.Entry != entry }), nil
}

// Prefer returns newer's rows and those of older whose profile and connection count newer
// has no row for: today's layout wins over the April one where both hold a row.
func Prefer(newer, older []Result) []Result {
	out := slices.Clone(newer)
	for _, o := range older {
		if !slices.ContainsFunc(newer, func(n Result) bool { return n.Profile == o.Profile && n.Connections == o.Connections }) {
			out = append(out, o)
		}
	}
	return out
}

// ReadSite reads the results file of a display name under a repository's root (repoRoot);
// found is false when there is none.
func ReadSite(repoRoot, display string, lite bool) (f SiteFile, found bool, err error) {
	path := filepath.Join(repoRoot, filepath.FromSlash(SitePath(display, lite)))
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return SiteFile{}, false, nil
	}
	if err != nil {
		return SiteFile{}, false, err
	}
	f, err = DecodeSite(b)
	if err != nil {
		return SiteFile{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return f, true, nil
}

// SiteFiles merges rows into their frameworks' results files and returns each file's new
// content by its path from the repository's root. read returns a file's current content, and
// an error wrapping fs.ErrNotExist when there is none yet. Rows with the same key (entries
// that share a display name) replace each other in order, as they do in the arena.
func SiteFiles(rows []Result, read func(path string) ([]byte, error)) (map[string][]byte, error) {
	files := map[string]*SiteFile{}
	var order []string
	for _, r := range rows {
		if r.Framework == "" {
			return nil, fmt.Errorf("a result of %s %s-%d has no framework (display_name); re-run the benchmark", r.Entry, r.Profile, r.Connections)
		}
		path := SitePath(r.Framework, r.Lite)
		f, ok := files[path]
		if !ok {
			b, err := read(path)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				f = &SiteFile{Framework: r.Framework}
			case err != nil:
				return nil, fmt.Errorf("read %s: %w", path, err)
			default:
				old, err := DecodeSite(b)
				if err != nil {
					return nil, fmt.Errorf("%s: %w; fix the file or remove it, then save again", path, err)
				}
				f = &old
			}
			files[path] = f
			order = append(order, path)
		}
		if f.Framework != r.Framework {
			return nil, fmt.Errorf("%s holds the results of %q, and %q has the same file name; give one of them a display_name that differs in more than case and punctuation",
				path, f.Framework, r.Framework)
		}
		if err := f.Put(r); err != nil {
			return nil, err
		}
	}
	out := make(map[string][]byte, len(files))
	for _, path := range order {
		b, err := files[path].Encode()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out[path] = b
	}
	return out, nil
}

// FrameworkInfo is one entry in frameworks.json: the arena's fields (mode and completeness
// only when the entry has them, as the arena writes them), then website and tls_check, which
// the arena's board reads from meta.json itself.
type FrameworkInfo struct {
	Dir         string `json:"dir"`
	Description string `json:"description"`
	Repo        string `json:"repo"`
	// Type is the entry's tier: April's production and tuned are written as emerging, the
	// league today's board ranks them in.
	Type   string `json:"type"`
	Engine string `json:"engine"`
	// Mode is "standard" or "tuned" when meta.json says so, and "tuned" for April's
	// "type": "tuned"; omitted otherwise (standard).
	Mode string `json:"mode,omitempty"`
	// Completeness is meta.json's, its known axes only; omitted when it has none.
	Completeness *Completeness `json:"completeness,omitempty"`
	Website      string        `json:"website,omitempty"`
	TLSCheck     bool          `json:"tls_check,omitempty"`
}

// Completeness is meta.json's completeness in frameworks.json: the four axes the arena knows,
// in its order, each only when the entry sets it.
type Completeness struct {
	Routing    *bool `json:"routing,omitempty"`
	Middleware *bool `json:"middleware,omitempty"`
	Request    *bool `json:"request,omitempty"`
	Response   *bool `json:"response,omitempty"`
}

// FrameworkGroup is one display name in frameworks.json: its primary entry (the one whose
// directory is the display name, else the first by directory) and, when several entries share
// the display name, all of them as variants, primary included, by directory name.
type FrameworkGroup struct {
	FrameworkInfo
	Variants []FrameworkInfo `json:"variants,omitempty"`
}

// EncodeJSON writes a site file other than a results file (frameworks.json, current.json):
// indent 2, struct fields in order and map keys sorted, HTML characters unescaped, a
// trailing newline.
func EncodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Canonical re-encodes a JSON document with every object's keys sorted, indent 2, HTML
// characters unescaped and a trailing newline; numbers keep their text.
func Canonical(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return EncodeJSON(v)
}
