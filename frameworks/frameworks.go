// Package frameworks loads and checks the arena's entries: the directories
// frameworks/<name>/ that hold a meta.json in the arena's existing format, a
// Dockerfile and the entry's source.
//
// A bad meta.json is rejected with a [*MetaError] naming the file, the field
// and the fix. An entry's Go source must sit below its own go.mod, so that
// contributors' code never becomes part of this module.
//
// The package uses the standard library only and imports nothing from this
// module; callers pass the known profile names in.
package frameworks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/arenabot/arenabot/text"
)

// Meta is an entry's meta.json: the arena's April 2026 fields and those it has added since
// (mode, completeness, tls_check, website). docs/meta-json.md says what each does here.
type Meta struct {
	DisplayName string `json:"display_name"`
	Language    string `json:"language"`
	// Type is the league as written: one of Tiers, or April's "production" or "tuned"
	// (AprilTypes); "emerging" when meta.json has none. Tier and Tuned read it.
	Type        string   `json:"type"`
	Engine      string   `json:"engine"`
	Description string   `json:"description"`
	Repo        string   `json:"repo"`
	Enabled     bool     `json:"enabled"`
	Tests       []string `json:"tests"`
	Maintainers []string `json:"maintainers"`

	// Mode is "standard" or "tuned" as written; "" when meta.json has none (standard, or
	// tuned for April's "type": "tuned"; see Tuned).
	Mode string `json:"mode,omitempty"`
	// Completeness is what the entry declares it does of the four axes (routing,
	// middleware, request, response); nil when meta.json has no completeness (unassessed).
	Completeness *Completeness `json:"completeness,omitempty"`
	// TLSCheck opts the entry into the TLS hardening checks: it serves HTTP/1.1 over TLS on
	// :9000 with the pair it reads from /certs-tls (TLSCheckPort, CertsTLSDir).
	TLSCheck bool `json:"tls_check,omitempty"`
	// Website is the project's home page, carried into the site's metadata.
	Website string `json:"website,omitempty"`
}

// Completeness is meta.json's completeness object: the axes the entry declares, each true
// (the framework does it) or false (the entry does it by hand); nil for an axis left out,
// which counts as done. Unknown keys are not kept (Entry.Warnings names them).
type Completeness struct {
	Routing    *bool `json:"routing,omitempty"`
	Middleware *bool `json:"middleware,omitempty"`
	Request    *bool `json:"request,omitempty"`
	Response   *bool `json:"response,omitempty"`
}

// CompletenessAxes are the keys of meta.json's completeness object, in the arena's order.
var CompletenessAxes = []string{"routing", "middleware", "request", "response"}

// axis returns the field of the named axis.
func (c *Completeness) axis(name string) **bool {
	switch name {
	case "routing":
		return &c.Routing
	case "middleware":
		return &c.Middleware
	case "request":
		return &c.Request
	case "response":
		return &c.Response
	}
	return nil
}

// Missing returns the axes declared false, in CompletenessAxes order: the ones the arena's
// board charges 2.5% each for (framework tiers, h1/h2/h3/gateway boards only).
func (c *Completeness) Missing() []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, a := range CompletenessAxes {
		if v := *c.axis(a); v != nil && !*v {
			out = append(out, a)
		}
	}
	return out
}

// Tiers are the leagues meta.json's "type" names today, in the arena's order: three framework
// tiers that share one pool on the board, then engines and infrastructure, each a pool of its
// own. DefaultTier is the one an entry without a type is in.
var Tiers = []string{"flagship", "emerging", "experimental", "engine", "infrastructure"}

// DefaultTier is the tier of an entry whose meta.json has no "type".
const DefaultTier = "emerging"

// AprilTypes are the framework types of the April 2026 arena, still accepted so that its
// entries load unedited: "production" is a framework of the default tier, "tuned" a
// framework of the default tier in tuned mode (Meta.Tier, Meta.Tuned).
var AprilTypes = []string{"production", "tuned"}

// Types are every value meta.json's "type" may take: Tiers, then AprilTypes.
var Types = append(slices.Clone(Tiers), AprilTypes...)

// Modes are the values of meta.json's "mode" (frameworks only); standard is the default.
var Modes = []string{"standard", "tuned"}

// TLSCheckPort is the port a tls_check entry serves HTTP/1.1 over TLS on, and CertsTLSDir
// where it reads its pair from: a private copy of /certs that the TLS checks rotate.
const (
	TLSCheckPort = 9000
	CertsTLSDir  = "/certs-tls"
)

// Tier returns the entry's league today: its type, with April's "production" and "tuned"
// read as DefaultTier (they were framework types; the arena has no tier to map them to
// more exactly).
func (m Meta) Tier() string {
	if slices.Contains(AprilTypes, m.Type) || m.Type == "" {
		return DefaultTier
	}
	return m.Type
}

// Framework reports whether the entry is in one of the framework tiers (flagship, emerging,
// experimental; April's production and tuned), rather than an engine or infrastructure.
func (m Meta) Framework() bool {
	t := m.Tier()
	return t != "engine" && t != "infrastructure"
}

// Tuned reports whether the entry is in tuned mode: "mode": "tuned", or April's
// "type": "tuned", which is what that mode was called then.
func (m Meta) Tuned() bool {
	return m.Mode == "tuned" || (m.Mode == "" && m.Type == "tuned")
}

// Entry is one loaded, checked entry.
type Entry struct {
	Name string // directory name, the identifier used on the CLI and in commands (-f name)
	Dir  string // path of the entry directory as given to Load (joined with the root)
	Meta Meta
	// Warnings are what is odd in meta.json but does not refuse it (an unknown completeness
	// axis, which the arena ignores with a warning; a mode on an engine): validate prints
	// them as WARN and a benchmark reply lists them with the advisory checks.
	Warnings []*MetaError
}

// Retired are legacy test names that real arena entries still list. They are
// accepted in meta.json, so an existing entry loads without edits, but they
// subscribe the entry to nothing.
var Retired = []string{"noisy", "short-lived", "mixed", "sync-db", "tcp-frag", "json-lts"}

// ErrUnknownEntry is wrapped when frameworks/<name>/meta.json does not exist.
var ErrUnknownEntry = errors.New("unknown framework")

// maxMetaSize bounds the meta.json read; real ones are well under 2 KB.
const maxMetaSize = 1 << 20

// Subscribes reports whether the entry runs the profile test: exact
// membership in its tests list. Retired legacy names never match.
func (e Entry) Subscribes(test string) bool {
	return slices.Contains(e.Meta.Tests, test) && !slices.Contains(Retired, test)
}

// A MetaError says what is wrong with one entry's meta.json and how to fix it.
type MetaError struct {
	File  string // "frameworks/gin/meta.json"
	Field string // "tests"; empty when the file as a whole is bad
	Msg   string // what is wrong
	Fix   string // what to do
}

// Error returns one line naming the file, the field, the problem and the fix.
func (e *MetaError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	b.WriteString(": ")
	if e.Field != "" {
		fmt.Fprintf(&b, "field %q: ", e.Field)
	}
	b.WriteString(e.Msg)
	if e.Fix != "" {
		b.WriteString("; fix: ")
		b.WriteString(e.Fix)
	}
	return text.JoinLines(b.String(), " ")
}

// Load reads and checks the entry root/name. root is the frameworks directory
// on disk (e.g. "frameworks"); tests are the known profile names.
func Load(root, name string, tests []string) (Entry, error) {
	return LoadFS(os.DirFS(root), root, name, tests)
}

// LoadFS is Load over fsys, which is rooted at the frameworks directory. root
// is only used to name the entry's Dir and the files in errors.
func LoadFS(fsys fs.FS, root, name string, tests []string) (Entry, error) {
	file := filepath.Join(root, name, "meta.json")
	if !validName(name) {
		return Entry{}, unknownEntry(fsys, root, name, short(name)+" is not an entry directory name")
	}
	data, err := readMeta(fsys, path.Join(name, "meta.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return Entry{}, unknownEntry(fsys, root, name, fmt.Sprintf("%s does not exist", file))
	}
	if err != nil {
		return Entry{}, fmt.Errorf("read %s: %w", file, err)
	}
	m, warnings, err := parseMeta(file, data, tests)
	if err != nil {
		return Entry{}, err
	}
	if err := checkModule(fsys, root, name); err != nil {
		return Entry{}, err
	}
	return Entry{Name: name, Dir: filepath.Join(root, name), Meta: m, Warnings: warnings}, nil
}

// validName reports whether name is one directory name an entry may have.
func validName(name string) bool {
	return name != "" && fs.ValidPath(name) && !strings.Contains(name, "/") &&
		!strings.Contains(name, `\`) && !skipDir(name)
}

// skipDir reports whether a directory name is ignored as an entry (and by the
// go tool): names starting with "_" or "." and testdata.
func skipDir(name string) bool {
	return strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") || name == "testdata"
}

func unknownEntry(fsys fs.FS, root, name, why string) error {
	hint := ""
	names, _ := namesFS(fsys)
	if near := Closest(name, names, 3); len(near) > 0 {
		hint = "; did you mean " + quoteList(near, "or") + "?"
	} else if len(names) > 0 {
		hint = fmt.Sprintf("; the known frameworks are the directories of %s that hold a meta.json", root)
	}
	return fmt.Errorf("%w %s: %s%s", ErrUnknownEntry, short(name), why, hint)
}

func readMeta(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxMetaSize+1))
}

// rawMeta is meta.json decoded one level deep. Keys match exactly, as they do
// for the arena's Python scripts (encoding/json alone would fold case).
type rawMeta map[string]json.RawMessage

// parseMeta decodes and checks one meta.json, and returns what is odd in it but does not
// refuse it as warnings. file names it in errors.
func parseMeta(file string, data []byte, tests []string) (Meta, []*MetaError, error) {
	whole := func(msg, fix string) error { return &MetaError{File: file, Msg: msg, Fix: fix} }
	if len(data) > maxMetaSize {
		return Meta{}, nil, whole(fmt.Sprintf("file is larger than %d bytes", maxMetaSize), "keep meta.json to the arena's fields")
	}
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return Meta{}, nil, whole("file starts with a UTF-8 byte order mark", "save meta.json as UTF-8 without a BOM")
	}
	var raw rawMeta
	if err := json.Unmarshal(data, &raw); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			line, col := position(data, syn.Offset)
			return Meta{}, nil, whole(fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, syn.Error()),
				"correct the JSON syntax there (a missing comma or quote, or a trailing comma)")
		case errors.As(err, &typ):
			return Meta{}, nil, whole(fmt.Sprintf("the file holds a JSON %s, not an object", typ.Value),
				`make meta.json one JSON object: {"display_name": ..., "tests": [...], ...}`)
		default:
			return Meta{}, nil, whole(fmt.Sprintf("invalid JSON: %v", err), "correct the JSON syntax")
		}
	}
	if raw == nil { // the file is the JSON literal null
		return Meta{}, nil, whole("the file holds JSON null, not an object",
			`make meta.json one JSON object: {"display_name": ..., "tests": [...], ...}`)
	}

	var m Meta
	var errs []error
	add := func(field, msg, fix string) {
		errs = append(errs, &MetaError{File: file, Field: field, Msg: msg, Fix: fix})
	}
	// decode fills dst from raw[field]; it reports whether the field was
	// present with a value of the right JSON type.
	decode := func(field string, dst any, required bool, kind, example string) bool {
		v, ok := raw[field]
		if !ok || isNull(v) {
			if required {
				what := "is missing"
				if ok {
					what = "is null"
				}
				add(field, what+"; it is required", fmt.Sprintf("add %q: %s", field, example))
			}
			return false
		}
		if err := json.Unmarshal(v, dst); err != nil {
			got := "a value of another type"
			var typ *json.UnmarshalTypeError
			if errors.As(err, &typ) {
				got = "a JSON " + typ.Value
			}
			add(field, fmt.Sprintf("must be %s, got %s", kind, got), fmt.Sprintf("write it as %q: %s", field, example))
			return false
		}
		return true
	}
	if decode("display_name", &m.DisplayName, true, "a string", `"my-framework"`) {
		checkName(add, "display_name", m.DisplayName, `"my-framework"`)
	}
	if decode("language", &m.Language, true, "a string", `"Go"`) {
		checkName(add, "language", m.Language, `"Go"`)
	}
	m.Type = DefaultTier
	if decode("type", &m.Type, false, "a string", `"emerging"`) && !slices.Contains(Types, m.Type) {
		msg := "unknown type " + short(m.Type)
		if near := Closest(m.Type, Types, 1); len(near) > 0 {
			msg += fmt.Sprintf(" (did you mean %q?)", near[0])
		}
		add("type", msg, "set it to one of "+quoteList(Tiers, "or")+", or leave it out for "+strconv.Quote(DefaultTier))
	}
	decode("engine", &m.Engine, true, "a string", `"net/http"`)
	decode("enabled", &m.Enabled, true, "true or false", "true")
	if decode("tests", &m.Tests, true, "an array of strings", `["baseline", "pipelined"]`) {
		checkTests(add, m.Tests, tests)
	}
	decode("description", &m.Description, false, "a string", `"A short description."`)
	decode("repo", &m.Repo, false, "a string", `"https://github.com/owner/project"`)
	decode("maintainers", &m.Maintainers, false, "an array of strings", `["github-login"]`)

	var warnings []*MetaError
	warn := func(field, msg, fix string) {
		warnings = append(warnings, &MetaError{File: file, Field: field, Msg: msg, Fix: fix})
	}
	if decode("mode", &m.Mode, false, "a string", `"standard"`) {
		checkMode(add, warn, m)
	}
	if v, ok := raw["completeness"]; ok && !isNull(v) {
		m.Completeness = decodeCompleteness(add, warn, v)
	}
	decode("tls_check", &m.TLSCheck, false, "true or false", "true")
	if decode("website", &m.Website, false, "a string", `"https://example.com"`) && m.Website != "" {
		checkName(add, "website", m.Website, `"https://example.com"`)
	}
	switch len(errs) {
	case 0:
		return m, warnings, nil
	case 1:
		return Meta{}, nil, errs[0]
	default:
		return Meta{}, nil, errors.Join(errs...)
	}
}

// checkMode checks meta.json's mode: standard or tuned; not "standard" beside April's
// "type": "tuned", which says the opposite; and (a warning) only on a framework tier.
func checkMode(add, warn func(field, msg, fix string), m Meta) {
	switch {
	case !slices.Contains(Modes, m.Mode):
		msg := "unknown mode " + short(m.Mode)
		if near := Closest(m.Mode, Modes, 1); len(near) > 0 {
			msg += fmt.Sprintf(" (did you mean %q?)", near[0])
		}
		add("mode", msg, `set it to "standard" or "tuned", or leave it out for "standard"`)
	case m.Type == "tuned" && m.Mode != "tuned":
		add("mode", fmt.Sprintf("%q contradicts \"type\": \"tuned\", the April arena's way of saying tuned mode", m.Mode),
			`write today's form, "type": "emerging" (or another framework tier) and "mode": "tuned", or drop "mode"`)
	case !m.Framework():
		warn("mode", fmt.Sprintf("%q is ignored: the mode applies to the framework tiers only, and the type is %q", m.Mode, m.Type),
			`drop "mode", or set "type" to a framework tier (flagship, emerging or experimental)`)
	}
}

// decodeCompleteness decodes meta.json's completeness: an object whose known axes must be
// true or false. An unknown key is a warning (the arena ignores it with one).
func decodeCompleteness(add, warn func(field, msg, fix string), v json.RawMessage) *Completeness {
	const example = `{"routing": true, "middleware": true, "request": true, "response": false}`
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(v, &obj); err != nil {
		add("completeness", "must be an object of the axes "+strings.Join(CompletenessAxes, ", ")+", got "+jsonKind(v),
			`write it as "completeness": `+example+", or leave it out (unassessed)")
		return nil
	}
	c := &Completeness{}
	var unknown []string
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		field := c.axis(k)
		if field == nil {
			unknown = append(unknown, k)
			continue
		}
		var b bool
		if isNull(obj[k]) || json.Unmarshal(obj[k], &b) != nil {
			add("completeness", fmt.Sprintf("axis %s must be true or false, got %s", short(k), jsonKind(obj[k])),
				fmt.Sprintf("write %q: true if the framework does it, false if the entry does it by hand, or leave the axis out (done)", k))
			continue
		}
		*field = &b
	}
	for _, k := range unknown {
		msg := "unknown axis " + short(k) + " is ignored"
		if near := Closest(k, CompletenessAxes, 1); len(near) > 0 {
			msg += fmt.Sprintf(" (did you mean %q?)", near[0])
		}
		warn("completeness", msg, "use only the axes "+strings.Join(CompletenessAxes, ", "))
	}
	return c
}

// jsonKind names the JSON type of v for a message: "a JSON string", "a JSON number", ….
func jsonKind(v json.RawMessage) string {
	t := bytes.TrimSpace(v)
	switch {
	case len(t) == 0:
		return "nothing"
	case t[0] == '"':
		return "a JSON string"
	case t[0] == '{':
		return "a JSON object"
	case t[0] == '[':
		return "a JSON array"
	case t[0] == 't' || t[0] == 'f':
		return "a JSON boolean"
	case t[0] == 'n':
		return "JSON null"
	}
	return "a JSON number"
}

func isNull(v json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// checkName checks a label shown on the leaderboard: one line, not blank.
func checkName(add func(field, msg, fix string), field, v, example string) {
	switch {
	case strings.TrimSpace(v) == "":
		add(field, "is empty", fmt.Sprintf("set it, e.g. %q: %s", field, example))
	case strings.IndexFunc(v, unicode.IsControl) >= 0 || !utf8.ValidString(v):
		add(field, short(v)+" holds control characters or invalid UTF-8", "make it one line of plain text")
	}
}

// maxTests bounds the tests list; the arena has 26 profiles.
const maxTests = 100

// checkTests reports unknown names in an entry's tests list, as the arena does today (in
// April it skipped them); the fix lists known, the profiles of this arena's table.
func checkTests(add func(field, msg, fix string), got, known []string) {
	switch {
	case len(got) == 0:
		add("tests", "is empty, so the entry runs nothing",
			fmt.Sprintf("list the profiles the entry implements, e.g. [%q]", firstOr(known, "baseline")))
		return
	case len(got) > maxTests:
		add("tests", fmt.Sprintf("lists %d names, more than there are profiles", len(got)),
			"list each profile the entry implements once")
		return
	}
	var unknown, hints []string
	for _, t := range got {
		if slices.Contains(known, t) || slices.Contains(Retired, t) || slices.Contains(unknown, t) {
			continue
		}
		unknown = append(unknown, t)
		if near := Closest(t, known, 1); len(near) > 0 {
			hints = append(hints, fmt.Sprintf("%s for %s", short(near[0]), short(t)))
		}
	}
	if len(unknown) == 0 {
		return
	}
	msg := "unknown test " + quoteList(unknown, "and")
	if len(unknown) > 1 {
		msg = "unknown tests " + quoteList(unknown, "and")
	}
	if len(unknown) == 1 && len(hints) == 1 {
		msg += fmt.Sprintf(" (did you mean %s?)", short(Closest(unknown[0], known, 1)[0]))
	} else if len(hints) > 0 {
		msg += " (did you mean " + strings.Join(hints, ", ") + "?)"
	}
	if len(unknown) == 1 {
		msg += ": no profile of this arena has that name"
	} else {
		msg += ": no profile of this arena has these names"
	}
	fix := "remove it, or use the name of a profile this arena knows"
	if len(known) > 0 {
		fix += ": " + strings.Join(known, ", ")
	}
	add("tests", msg, fix)
}

// short quotes a value from meta.json for a message, cut to a sensible length.
func short(s string) string {
	const maxRunes = 60
	if utf8.RuneCountInString(s) <= maxRunes {
		return strconv.Quote(s)
	}
	return strconv.Quote(string([]rune(s)[:maxRunes])) + "…"
}

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}

// quoteList renders ["a", "b", "c"] as `"a", "b" or "c"`.
func quoteList(s []string, conj string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = short(v)
	}
	if len(q) <= 1 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " " + conj + " " + q[len(q)-1]
}

// position turns a byte offset into a 1-based line and column (in runes).
func position(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	if offset < 0 {
		offset = 0
	}
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:])
	if col == 0 {
		col = 1
	}
	return line, col
}

// checkModule rejects an entry whose .go files are not below a directory
// holding a go.mod, so they would become part of the arenabot module.
// Directories the go tool ignores (_*, .*, testdata) are skipped.
func checkModule(fsys fs.FS, root, name string) error {
	modDirs := map[string]bool{}
	var stray string
	err := fs.WalkDir(fsys, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != name && skipDir(d.Name()) {
				return fs.SkipDir
			}
			if _, err := fs.Stat(fsys, path.Join(p, "go.mod")); err == nil {
				modDirs[p] = true
			}
			return nil
		}
		if stray == "" && strings.HasSuffix(p, ".go") && !belowModule(p, name, modDirs) {
			stray = p
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("walk %s: %w", filepath.Join(root, name), err)
	}
	if stray == "" {
		return nil
	}
	return &MetaError{
		File:  filepath.Join(root, name, "meta.json"),
		Field: "go.mod",
		Msg: fmt.Sprintf("Go source %s is not below a go.mod, so it would become part of the arenabot module",
			filepath.Join(root, filepath.FromSlash(stray))),
		Fix: fmt.Sprintf("add %s so the entry is its own module", filepath.Join(root, name, "go.mod")),
	}
}

// belowModule reports whether file p lies in a directory (up to the entry's
// own) that holds a go.mod. WalkDir visits directories before their files, so
// modDirs already knows every ancestor.
func belowModule(p, entry string, modDirs map[string]bool) bool {
	for dir := path.Dir(p); ; dir = path.Dir(dir) {
		if modDirs[dir] {
			return true
		}
		if dir == entry || dir == "." || dir == "/" {
			return false
		}
	}
}

// Names lists the entry directories of root (those holding a meta.json),
// sorted. Names starting with "_" or "." and testdata are skipped.
func Names(root string) ([]string, error) {
	names, err := namesFS(os.DirFS(root))
	if err != nil {
		return nil, fmt.Errorf("list entries in %s: %w", root, err)
	}
	return names, nil
}

func namesFS(fsys fs.FS) ([]string, error) {
	des, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, de := range des {
		name := de.Name()
		if skipDir(name) {
			continue
		}
		if de.Type()&fs.ModeSymlink != 0 {
			if fi, err := fs.Stat(fsys, name); err != nil || !fi.IsDir() {
				continue // a dangling link or a link to a file
			}
		} else if !de.IsDir() {
			continue
		}
		fi, err := fs.Stat(fsys, path.Join(name, "meta.json"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if fi.Mode().IsRegular() {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// LoadAll loads every entry of root. It returns the entries that loaded and,
// joined with errors.Join, the errors of all that did not.
func LoadAll(root string, tests []string) ([]Entry, error) {
	names, err := Names(root)
	if err != nil {
		return nil, err
	}
	var entries []Entry
	var errs []error
	for _, name := range names {
		e, err := Load(root, name, tests)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		entries = append(entries, e)
	}
	return entries, errors.Join(errs...)
}

// Closest returns up to n of names closest to name, nearest first: those
// within a small edit distance (Levenshtein, ignoring case), then those that
// start with, contain or are contained in name. Far names are left out.
func Closest(name string, names []string, n int) []string {
	if n <= 0 || name == "" {
		return nil
	}
	lname := strings.ToLower(name)
	limit := max(2, utf8.RuneCountInString(lname)/3)
	type cand struct {
		name       string
		rank, dist int
	}
	var cands []cand
	for _, c := range names {
		if c == "" || slices.ContainsFunc(cands, func(x cand) bool { return x.name == c }) {
			continue
		}
		lc := strings.ToLower(c)
		// The distance is at least the difference in length, and exactly that
		// when one name contains the other, so the quadratic computation is
		// only needed for names of about the same length.
		d := abs(utf8.RuneCountInString(lname) - utf8.RuneCountInString(lc))
		if d <= limit {
			d = text.Distance(lname, lc)
		}
		switch {
		case d <= limit && d < max(utf8.RuneCountInString(lname), utf8.RuneCountInString(lc)):
			cands = append(cands, cand{c, 0, d})
		case len(lname) >= 2 && strings.HasPrefix(lc, lname):
			cands = append(cands, cand{c, 1, d})
		case len(lname) >= 3 && strings.Contains(lc, lname):
			cands = append(cands, cand{c, 2, d})
		case len(lc) >= 3 && strings.Contains(lname, lc):
			cands = append(cands, cand{c, 3, d})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for _, c := range cands[:min(n, len(cands))] {
		out = append(out, c.name)
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
