package frameworks

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/arenabot/arenabot/internal/deptest"

	"github.com/google/go-cmp/cmp"
)

// profiles is the profile table's names in order, hard-coded here because
// this package must not import profile.
var profiles = []string{
	"baseline", "pipelined", "limited-conn", "json", "json-comp", "json-tls", "upload",
	"api-4", "api-16", "static", "static-tls", "async-db", "crud", "fortunes", "baseline-h2", "static-h2",
	"baseline-h2c", "json-h2c", "baseline-h3", "static-h3", "gateway-64", "gateway-h3",
	"production-stack", "unary-grpc", "unary-grpc-tls", "stream-grpc", "stream-grpc-tls",
	"latency-10k", "latency-1m", "latency-500k-8cpu", "8gbit", "async", "download", "static-large",
	"echo-ws", "echo-ws-pipeline", "echo-ws-limited",
}

// arenaMeta is an unmodified meta.json in the arena's format, shaped like its
// go-fasthttp entry: legacy test names and fields this package does not know.
const arenaMeta = `{
  "display_name": "go-fasthttp",
  "language": "Go",
  "type": "production",
  "mode": "standard",
  "completeness": {"routing": false, "middleware": false, "request": true, "response": true},
  "engine": "fasthttp",
  "description": "High-performance Go HTTP server using fasthttp with zero-allocation design and buffer reuse.",
  "repo": "https://github.com/valyala/fasthttp",
  "enabled": true,
  "tests": [
    "baseline",
    "pipelined",
    "limited-conn",
    "noisy",
    "short-lived",
    "mixed",
    "json",
    "json-comp",
    "json-lts",
    "upload",
    "sync-db",
    "tcp-frag",
    "async-db",
    "static"
  ],
  "maintainers": []
}
`

// todayMeta is a meta.json as the arena's documentation has contributors write it today:
// a tier, a mode, completeness, tls_check and website beside April's fields.
const todayMeta = `{
  "display_name": "go-nethttp",
  "language": "Go",
  "type": "flagship",
  "mode": "tuned",
  "engine": "net/http",
  "description": "Go's standard library server.",
  "repo": "https://github.com/golang/go",
  "website": "https://go.dev",
  "enabled": true,
  "completeness": {"routing": true, "middleware": false, "request": true, "response": true},
  "tls_check": true,
  "tests": ["baseline", "json", "json-tls"],
  "maintainers": ["someone"]
}
`

// minimalMeta has only the required fields.
const minimalMeta = `{"display_name":"x","language":"Go","type":"engine","engine":"raw","enabled":false,"tests":["baseline"]}`

// withField returns minimalMeta with field set to the raw JSON value, or
// removed when value is "".
func withField(field, value string) string {
	return withFields(field, value)
}

// withFields is withField for several field, value pairs.
func withFields(pairs ...string) string {
	m := map[string]string{
		"display_name": `"x"`, "language": `"Go"`, "type": `"engine"`,
		"engine": `"raw"`, "enabled": `false`, "tests": `["baseline"]`,
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			delete(m, pairs[i])
		} else {
			m[pairs[i]] = pairs[i+1]
		}
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, `"`+k+`": `+m[k])
	}
	return "{\n  " + strings.Join(parts, ",\n  ") + "\n}\n"
}

var rejectTests = []struct {
	name      string
	files     fstest.MapFS // below frameworks/x/
	wantField string
}{
	{"invalid JSON", meta("{\n  \"display_name\": \"x\"\n  \"language\": \"Go\"\n}"), ""},
	{"trailing comma", meta(`{"display_name": "x", "tests": ["baseline",]}`), ""},
	{"empty file", meta(""), ""},
	{"trailing garbage", meta(minimalMeta + "}"), ""},
	{"array", meta(`[{"display_name": "x"}]`), ""},
	{"null", meta(`null`), ""},
	{"string", meta(`"x"`), ""},
	{"byte order mark", meta("\xef\xbb\xbf" + minimalMeta), ""},
	{"too large", meta(minimalMeta + strings.Repeat(" ", maxMetaSize)), ""},

	{"display_name missing", meta(withField("display_name", "")), "display_name"},
	{"display_name null", meta(withField("display_name", "null")), "display_name"},
	{"display_name number", meta(withField("display_name", "1")), "display_name"},
	{"display_name empty", meta(withField("display_name", `"  "`)), "display_name"},
	{"display_name two lines", meta(withField("display_name", `"a\nb"`)), "display_name"},
	{"language missing", meta(withField("language", "")), "language"},
	{"language bool", meta(withField("language", "true")), "language"},
	{"language empty", meta(withField("language", `""`)), "language"},
	{"type unknown", meta(withField("type", `"flagshp"`)), "type"},
	{"type April's default", meta(withField("type", `"realistic"`)), "type"},
	{"type wrong case", meta(withField("type", `"Production"`)), "type"},
	{"type empty", meta(withField("type", `""`)), "type"},
	{"type array", meta(withField("type", `["production"]`)), "type"},
	{"engine missing", meta(withField("engine", "")), "engine"},
	{"engine number", meta(withField("engine", "3")), "engine"},
	{"enabled missing", meta(withField("enabled", "")), "enabled"},
	{"enabled string", meta(withField("enabled", `"true"`)), "enabled"},
	{"tests missing", meta(withField("tests", "")), "tests"},
	{"tests null", meta(withField("tests", "null")), "tests"},
	{"tests string", meta(withField("tests", `"baseline"`)), "tests"},
	{"tests numbers", meta(withField("tests", `[1, 2]`)), "tests"},
	{"tests empty", meta(withField("tests", `[]`)), "tests"},
	{"tests unknown", meta(withField("tests", `["baselin"]`)), "tests"},
	{"tests unknown far", meta(withField("tests", `["baseline", "static-tls", "latency-2m"]`)), "tests"},
	{"tests case", meta(withField("tests", `["Baseline"]`)), "tests"},
	{"tests too many", meta(withField("tests", `[`+strings.Repeat(`"baseline", `, maxTests)+`"json"]`)), "tests"},
	{"tests long name", meta(withField("tests", `["`+strings.Repeat("baseline", 10000)+`"]`)), "tests"},
	{"description number", meta(withField("description", "1")), "description"},
	{"repo array", meta(withField("repo", `["https://example.com"]`)), "repo"},
	{"maintainers string", meta(withField("maintainers", `"someone"`)), "maintainers"},
	{"maintainers numbers", meta(withField("maintainers", `[1]`)), "maintainers"},
	{"mode unknown", meta(withField("mode", `"turbo"`)), "mode"},
	{"mode wrong case", meta(withField("mode", `"Tuned"`)), "mode"},
	{"mode empty", meta(withField("mode", `""`)), "mode"},
	{"mode bool", meta(withField("mode", `true`)), "mode"},
	{"mode contradicts April's tuned type", meta(withFields("type", `"tuned"`, "mode", `"standard"`)), "mode"},
	{"completeness array", meta(withField("completeness", `["routing"]`)), "completeness"},
	{"completeness bool", meta(withField("completeness", `true`)), "completeness"},
	{"completeness axis string", meta(withField("completeness", `{"routing": "yes"}`)), "completeness"},
	{"completeness axis number", meta(withField("completeness", `{"routing": true, "request": 0}`)), "completeness"},
	{"completeness axis null", meta(withField("completeness", `{"response": null}`)), "completeness"},
	{"tls_check string", meta(withField("tls_check", `"true"`)), "tls_check"},
	{"tls_check number", meta(withField("tls_check", `1`)), "tls_check"},
	{"website number", meta(withField("website", `1`)), "website"},
	{"website two lines", meta(withField("website", `"https://a.example\nb"`)), "website"},
	{"case folded key", meta(strings.Replace(minimalMeta, `"display_name"`, `"Display_Name"`, 1)), "display_name"},

	{"go source without go.mod", with(meta(minimalMeta), "main.go", "package main"), "go.mod"},
	{"go source in a subdirectory", with(meta(minimalMeta), "cmd/server/main.go", "package main"), "go.mod"},
	{"go.mod only beside other source", with(with(meta(minimalMeta), "main.go", "package main"),
		"tools/go.mod", "module tools"), "go.mod"},
}

// meta returns a MapFS holding x/meta.json.
func meta(data string) fstest.MapFS {
	return fstest.MapFS{"x/meta.json": {Data: []byte(data)}}
}

// with adds x/<name> to fsys.
func with(fsys fstest.MapFS, name, data string) fstest.MapFS {
	out := fstest.MapFS{}
	for k, v := range fsys {
		out[k] = v
	}
	out["x/"+name] = &fstest.MapFile{Data: []byte(data)}
	return out
}

func TestLoadFSRejects(t *testing.T) {
	for _, tt := range rejectTests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := LoadFS(tt.files, "frameworks", "x", profiles)
			if err == nil {
				t.Fatalf("LoadFS = %+v, nil; want an error for field %q", e, tt.wantField)
			}
			me, ok := errors.AsType[*MetaError](err)
			if !ok {
				t.Fatalf("LoadFS error %q (%T) is not a *MetaError", err, err)
			}
			if me.Field != tt.wantField {
				t.Errorf("LoadFS error field = %q, want %q (error: %v)", me.Field, tt.wantField, err)
			}
			if want := filepath.Join("frameworks", "x", "meta.json"); me.File != want {
				t.Errorf("LoadFS error file = %q, want %q", me.File, want)
			}
			if me.Msg == "" || me.Fix == "" {
				t.Errorf("LoadFS error %+v: want both Msg and Fix", me)
			}
			if s := me.Error(); strings.Contains(s, "\n") || !strings.HasPrefix(s, me.File+": ") {
				t.Errorf("MetaError.Error() = %q, want one line starting with the file", s)
			}
		})
	}
}

func TestLoadFSReportsEveryBadField(t *testing.T) {
	data := `{"display_name": "", "language": "Go", "type": "fast", "engine": "x", "enabled": true, "tests": ["baselin"]}`
	_, err := LoadFS(meta(data), "frameworks", "x", profiles)
	var got []string
	for _, e := range metaErrors(err) {
		got = append(got, e.Field)
	}
	want := []string{"display_name", "type", "tests"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields of LoadFS error %v (-want +got):\n%s", err, diff)
	}
}

// metaErrors returns the MetaErrors in err, which may be joined.
func metaErrors(err error) []*MetaError {
	if me, ok := err.(*MetaError); ok {
		return []*MetaError{me}
	}
	var out []*MetaError
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, metaErrors(e)...)
		}
	}
	return out
}

func TestLoadFSAccepts(t *testing.T) {
	tests := []struct {
		name  string
		files fstest.MapFS
		want  Meta
	}{
		{"minimal", meta(minimalMeta), Meta{
			DisplayName: "x", Language: "Go", Type: "engine", Engine: "raw", Tests: []string{"baseline"},
		}},
		{"optional fields null", meta(withField("repo", "null")), Meta{
			DisplayName: "x", Language: "Go", Type: "engine", Engine: "raw", Tests: []string{"baseline"},
		}},
		{"empty engine", meta(withField("engine", `""`)), Meta{
			DisplayName: "x", Language: "Go", Type: "engine", Tests: []string{"baseline"},
		}},
		{"only retired tests", meta(withField("tests", `["noisy", "mixed"]`)), Meta{
			DisplayName: "x", Language: "Go", Type: "engine", Engine: "raw", Tests: []string{"noisy", "mixed"},
		}},
		{"go source below go.mod", with(with(meta(minimalMeta), "main.go", "package main"), "go.mod", "module x"), Meta{
			DisplayName: "x", Language: "Go", Type: "engine", Engine: "raw", Tests: []string{"baseline"},
		}},
		{"go source below a nested go.mod", with(with(meta(minimalMeta), "server/internal/h.go", "package h"),
			"server/go.mod", "module x"), Meta{
			DisplayName: "x", Language: "Go", Type: "engine", Engine: "raw", Tests: []string{"baseline"},
		}},
		{"go source the go tool ignores", with(with(meta(minimalMeta), "testdata/a.go", "package a"),
			"_tools/b.go", "package b"), Meta{
			DisplayName: "x", Language: "Go", Type: "engine", Engine: "raw", Tests: []string{"baseline"},
		}},
		{"type missing", meta(withField("type", "")), Meta{
			DisplayName: "x", Language: "Go", Type: "emerging", Engine: "raw", Tests: []string{"baseline"},
		}},
		{"type null", meta(withField("type", "null")), Meta{
			DisplayName: "x", Language: "Go", Type: "emerging", Engine: "raw", Tests: []string{"baseline"},
		}},
		{"April's tuned type", meta(withField("type", `"tuned"`)), Meta{
			DisplayName: "x", Language: "Go", Type: "tuned", Engine: "raw", Tests: []string{"baseline"},
		}},
		{"April's tuned type, mode tuned", meta(withFields("type", `"tuned"`, "mode", `"tuned"`)), Meta{
			DisplayName: "x", Language: "Go", Type: "tuned", Mode: "tuned", Engine: "raw", Tests: []string{"baseline"},
		}},
		{"experimental, standard", meta(withFields("type", `"experimental"`, "mode", `"standard"`)), Meta{
			DisplayName: "x", Language: "Go", Type: "experimental", Mode: "standard", Engine: "raw", Tests: []string{"baseline"},
		}},
		{"completeness partial", meta(withField("completeness", `{"middleware": false}`)), Meta{
			DisplayName: "x", Language: "Go", Type: "engine", Engine: "raw", Tests: []string{"baseline"},
			Completeness: &Completeness{Middleware: new(false)},
		}},
		{"completeness empty", meta(withField("completeness", `{}`)), Meta{
			DisplayName: "x", Language: "Go", Type: "engine", Engine: "raw", Tests: []string{"baseline"},
			Completeness: &Completeness{},
		}},
		{"completeness null", meta(withField("completeness", `null`)), Meta{
			DisplayName: "x", Language: "Go", Type: "engine", Engine: "raw", Tests: []string{"baseline"},
		}},
		{"tls_check false, website empty", meta(withFields("tls_check", `false`, "website", `""`)), Meta{
			DisplayName: "x", Language: "Go", Type: "engine", Engine: "raw", Tests: []string{"baseline"},
		}},
		{"today's entry", meta(todayMeta), Meta{
			DisplayName:  "go-nethttp",
			Language:     "Go",
			Type:         "flagship",
			Mode:         "tuned",
			Engine:       "net/http",
			Description:  "Go's standard library server.",
			Repo:         "https://github.com/golang/go",
			Website:      "https://go.dev",
			Enabled:      true,
			Tests:        []string{"baseline", "json", "json-tls"},
			Maintainers:  []string{"someone"},
			Completeness: &Completeness{Routing: new(true), Middleware: new(false), Request: new(true), Response: new(true)},
			TLSCheck:     true,
		}},
		{"arena entry", meta(arenaMeta), Meta{
			DisplayName:  "go-fasthttp",
			Language:     "Go",
			Type:         "production",
			Mode:         "standard",
			Completeness: &Completeness{Routing: new(false), Middleware: new(false), Request: new(true), Response: new(true)},
			Engine:       "fasthttp",
			Description:  "High-performance Go HTTP server using fasthttp with zero-allocation design and buffer reuse.",
			Repo:         "https://github.com/valyala/fasthttp",
			Enabled:      true,
			Tests: []string{"baseline", "pipelined", "limited-conn", "noisy", "short-lived", "mixed",
				"json", "json-comp", "json-lts", "upload", "sync-db", "tcp-frag", "async-db", "static"},
			Maintainers: []string{},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadFS(tt.files, "frameworks", "x", profiles)
			if err != nil {
				t.Fatalf("LoadFS: %v", err)
			}
			want := Entry{Name: "x", Dir: filepath.Join("frameworks", "x"), Meta: tt.want}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("LoadFS mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSubscribes(t *testing.T) {
	e, err := LoadFS(meta(arenaMeta), "frameworks", "x", profiles)
	if err != nil {
		t.Fatal(err)
	}
	for test, want := range map[string]bool{
		"baseline": true, "json-comp": true, "static": true,
		"baseline-h2": false, "json-tls": false, "": false, "Baseline": false, "basel": false,
		"noisy": false, "short-lived": false, "mixed": false, "sync-db": false, "tcp-frag": false, "json-lts": false,
	} {
		if got := e.Subscribes(test); got != want {
			t.Errorf("Subscribes(%q) = %v, want %v", test, got, want)
		}
	}
}

func TestLoadFSUnknownEntry(t *testing.T) {
	fsys := fstest.MapFS{
		"gin/meta.json":         {Data: []byte(minimalMeta)},
		"fiber/meta.json":       {Data: []byte(minimalMeta)},
		"nethttp/meta.json":     {Data: []byte(minimalMeta)},
		"_shared/authsvc/x.txt": {Data: []byte("x")},
		"empty/README.md":       {Data: []byte("x")},
	}
	tests := []struct {
		name     string
		wantNear string // a name the error must offer; "" for none
	}{
		{"gni", "gin"},
		{"fibre", "fiber"},
		{"net-http", "nethttp"},
		{"_shared", ""},
		{"empty", ""},
		{"", ""},
		{"../gin", ""},
		{"gin/meta.json", ""},
		{".", ""},
		{"zzzzzz", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadFS(fsys, "frameworks", tt.name, profiles)
			if !errors.Is(err, ErrUnknownEntry) {
				t.Fatalf("LoadFS(%q) error = %v, want one wrapping ErrUnknownEntry", tt.name, err)
			}
			if tt.wantNear != "" && !strings.Contains(err.Error(), `"`+tt.wantNear+`"`) {
				t.Errorf("LoadFS(%q) error %q does not offer %q", tt.name, err, tt.wantNear)
			}
		})
	}
}

// TestLoadFSLongValues keeps messages short when meta.json holds huge values.
func TestLoadFSLongValues(t *testing.T) {
	long := strings.Repeat("x", 100000)
	for _, field := range []string{"tests", "type"} {
		value := `"` + long + `"`
		if field == "tests" {
			value = `["` + long + `", "` + long + `y"]`
		}
		_, err := LoadFS(meta(withField(field, value)), "frameworks", "x", profiles)
		if err == nil || len(err.Error()) > 2000 {
			t.Errorf("LoadFS with a long %s: error of %d bytes, want one under 2000", field, len(fmt.Sprint(err)))
		}
	}
}

func TestPosition(t *testing.T) {
	data := []byte("{\n  \"a\": 1\n  \"b\": 2\n}")
	tests := []struct {
		offset         int64
		line, col      int
		prefixOfOffset string
	}{
		{0, 1, 1, ""},
		{1, 1, 1, "{"},
		{2, 2, 1, "{\n"},
		{14, 3, 3, "{\n  \"a\": 1\n  \""},
		{100, 4, 1, ""},
	}
	for _, tt := range tests {
		line, col := position(data, tt.offset)
		if line != tt.line || col != tt.col {
			t.Errorf("position(%d) = %d:%d, want %d:%d", tt.offset, line, col, tt.line, tt.col)
		}
	}
}

// TestSyntaxErrorPosition checks the line the message points at, since
// finding the bad spot is the whole point of the message.
func TestSyntaxErrorPosition(t *testing.T) {
	_, err := LoadFS(meta("{\n  \"display_name\": \"x\"\n  \"language\": \"Go\"\n}"), "frameworks", "x", profiles)
	if err == nil || !strings.Contains(err.Error(), "line 3, column 3") {
		t.Errorf("LoadFS error = %v, want it to point at line 3, column 3", err)
	}
}

func TestMetaErrorError(t *testing.T) {
	tests := []struct {
		err  MetaError
		want string
	}{
		{MetaError{File: "frameworks/gin/meta.json", Field: "tests", Msg: `unknown test "baselin"`, Fix: "use baseline"},
			`frameworks/gin/meta.json: field "tests": unknown test "baselin"; fix: use baseline`},
		{MetaError{File: "frameworks/gin/meta.json", Msg: "invalid JSON", Fix: "correct it"},
			`frameworks/gin/meta.json: invalid JSON; fix: correct it`},
		{MetaError{File: "f", Field: "x", Msg: "two\nlines", Fix: "one\r\nline"},
			`f: field "x": two lines; fix: one line`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// writeEntry writes files below dir/name.
func writeEntry(t *testing.T, dir, name string, files map[string]string) {
	t.Helper()
	for file, data := range files {
		p := filepath.Join(dir, name, filepath.FromSlash(file))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLoadArenaEntry loads an unmodified arena entry from disk.
func TestLoadArenaEntry(t *testing.T) {
	root := filepath.Join(t.TempDir(), "frameworks")
	writeEntry(t, root, "go-fasthttp", map[string]string{
		"meta.json":  arenaMeta,
		"go.mod":     "module go-fasthttp\n\ngo 1.26\n",
		"main.go":    "package main\n\nfunc main() {}\n",
		"Dockerfile": "FROM scratch\n",
		"README.md":  "# go-fasthttp\n",
	})
	e, err := Load(root, "go-fasthttp", profiles)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if e.Name != "go-fasthttp" || e.Dir != filepath.Join(root, "go-fasthttp") || e.Meta.DisplayName != "go-fasthttp" {
		t.Errorf("Load = %+v", e)
	}
	if !e.Subscribes("baseline") || e.Subscribes("noisy") {
		t.Errorf("Subscribes(baseline) = %v, Subscribes(noisy) = %v, want true, false",
			e.Subscribes("baseline"), e.Subscribes("noisy"))
	}
}

func TestNamesAndLoadAll(t *testing.T) {
	root := t.TempDir()
	writeEntry(t, root, "gin", map[string]string{"meta.json": minimalMeta})
	writeEntry(t, root, "actix", map[string]string{"meta.json": arenaMeta})
	writeEntry(t, root, "broken", map[string]string{"meta.json": withField("tests", `["nope"]`)})
	writeEntry(t, root, "no-module", map[string]string{"meta.json": minimalMeta, "main.go": "package main"})
	writeEntry(t, root, "_shared", map[string]string{"authsvc/meta.json": minimalMeta, "meta.json": minimalMeta})
	writeEntry(t, root, ".git", map[string]string{"meta.json": minimalMeta})
	writeEntry(t, root, "testdata", map[string]string{"meta.json": minimalMeta})
	writeEntry(t, root, "wip", map[string]string{"README.md": "soon"})
	writeEntry(t, root, "", map[string]string{"frameworks.go": "package frameworks", "meta.json": minimalMeta})
	if err := os.Symlink(filepath.Join(root, "gin"), filepath.Join(root, "gin-link")); err != nil {
		t.Fatal(err)
	}

	names, err := Names(root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"actix", "broken", "gin", "gin-link", "no-module"}, names); diff != "" {
		t.Errorf("Names mismatch (-want +got):\n%s", diff)
	}

	entries, err := LoadAll(root, profiles)
	var loaded []string
	for _, e := range entries {
		loaded = append(loaded, e.Name)
	}
	if diff := cmp.Diff([]string{"actix", "gin", "gin-link"}, loaded); diff != "" {
		t.Errorf("LoadAll entries mismatch (-want +got):\n%s", diff)
	}
	var bad []string
	for _, me := range metaErrors(err) {
		bad = append(bad, me.File+" "+me.Field)
	}
	want := []string{
		filepath.Join(root, "broken", "meta.json") + " tests",
		filepath.Join(root, "no-module", "meta.json") + " go.mod",
	}
	if diff := cmp.Diff(want, bad); diff != "" {
		t.Errorf("LoadAll errors mismatch (-want +got):\n%s\nerror: %v", diff, err)
	}

	if _, err := Names(filepath.Join(root, "missing")); err == nil {
		t.Error("Names of a missing directory: nil error")
	}
}

// TestEntries loads every entry this repository ships, one subtest each, so a
// bad entry fails with its name and the MetaError says what to fix.
func TestEntries(t *testing.T) {
	names, err := Names(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("no entries found in frameworks/")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			e, err := Load(".", name, profiles)
			if err != nil {
				t.Fatal(err)
			}
			if e.Name != name {
				t.Errorf("Load(%q).Name = %q", name, e.Name)
			}
			if _, err := os.Stat(filepath.Join(name, "Dockerfile")); err != nil {
				t.Errorf("entry has no Dockerfile: %v", err)
			}
		})
	}
}

// TestOldArenaEntry loads the April arena's entry the command's tests build
// (cmd/arenabot/testdata/oldarena), unedited: April's "type": "production" is a framework of
// the default tier.
func TestOldArenaEntry(t *testing.T) {
	e, err := Load(filepath.Join("..", "cmd", "arenabot", "testdata"), "oldarena", profiles)
	if err != nil {
		t.Fatal(err)
	}
	if e.Meta.Type != "production" || e.Meta.Tier() != DefaultTier || e.Meta.Tuned() || len(e.Warnings) != 0 {
		t.Errorf("oldarena: type %q, tier %q, tuned %v, warnings %v; want production, %s, false, none",
			e.Meta.Type, e.Meta.Tier(), e.Meta.Tuned(), e.Warnings, DefaultTier)
	}
}

func TestTouched(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		want  []string
	}{
		{"none", nil, nil},
		{"one file", []string{"frameworks/gin/main.go"}, []string{"gin"}},
		{"deduplicated and sorted", []string{
			"frameworks/gin/main.go", "frameworks/fiber/meta.json", "frameworks/gin/go.sum",
			"frameworks/actix/src/main.rs",
		}, []string{"actix", "fiber", "gin"}},
		{"ignored", []string{
			"frameworks/_shared/authsvc/src/main.rs", "frameworks/frameworks.go", "frameworks/README.md",
			"README.md", "bot/bot.go", "docs/frameworks/gin/x.md", "frameworks", "frameworks/",
			"frameworks/.github/x", "frameworks/testdata/x.json",
		}, nil},
		{"results and deep paths", []string{"frameworks/gin/results/baseline-512.json", "frameworks/nginx/proxy/conf/nginx.conf"},
			[]string{"gin", "nginx"}},
		{"unclean paths", []string{"./frameworks/gin/main.go", "frameworks//fiber/main.go", "/frameworks/nethttp/x"},
			[]string{"fiber", "gin", "nethttp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Touched(tt.paths)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Touched(%q) mismatch (-want +got):\n%s", tt.paths, diff)
			}
		})
	}
}

func TestClosest(t *testing.T) {
	entries := []string{"actix", "fasthttp", "fiber", "gin", "go-fasthttp", "nethttp", "nginx", "aspnet-minimal", "aspnet-minimal-iouring"}
	tests := []struct {
		name  string
		names []string
		n     int
		want  []string
	}{
		{"gni", entries, 3, []string{"gin"}},
		{"GIN", entries, 3, []string{"gin", "nginx"}},
		{"fibre", entries, 3, []string{"fiber"}},
		{"fasthtp", entries, 3, []string{"fasthttp"}},
		{"fast", entries, 3, []string{"fasthttp", "go-fasthttp"}},
		{"aspnet", entries, 3, []string{"aspnet-minimal", "aspnet-minimal-iouring"}},
		{"aspnet", entries, 1, []string{"aspnet-minimal"}},
		{"http", entries, 3, []string{"nethttp", "fasthttp", "go-fasthttp"}},
		{"ginx", entries, 3, []string{"gin", "nginx"}},
		{"zzzzzz", entries, 3, nil},
		{"x", entries, 3, nil},
		{"", entries, 3, nil},
		{"gin", entries, 0, nil},
		{"gin", nil, 3, nil},
		{"baselin", profiles, 3, []string{"baseline", "baseline-h2", "baseline-h3"}},
		{"baselin", profiles, 1, []string{"baseline"}},
		{"json-compressed", profiles, 1, []string{"json-comp"}},
		{"static-tsl", profiles, 3, []string{"static-tls", "static-h2", "static-h3"}},
		{"grpc", profiles, 3, []string{"unary-grpc", "stream-grpc", "unary-grpc-tls"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Closest(tt.name, tt.names, tt.n)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Closest(%q, n=%d) mismatch (-want +got):\n%s", tt.name, tt.n, diff)
			}
		})
	}
}

func FuzzLoadFS(f *testing.F) {
	f.Add([]byte(arenaMeta))
	f.Add([]byte(minimalMeta))
	f.Add([]byte(todayMeta))
	for _, tt := range rejectTests {
		if len(tt.files["x/meta.json"].Data) < 4096 {
			f.Add(tt.files["x/meta.json"].Data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{"x/meta.json": {Data: data}}
		e, err := LoadFS(fsys, "frameworks", "x", profiles) // must not panic
		if err != nil {
			mes := metaErrors(err)
			if len(mes) == 0 {
				t.Fatalf("LoadFS(%q) error %q (%T) holds no *MetaError", data, err, err)
			}
			for _, me := range mes {
				if me.Msg == "" || me.Fix == "" || strings.Contains(me.Error(), "\n") {
					t.Errorf("LoadFS(%q): MetaError %#v lacks Msg or Fix or is not one line", data, me)
				}
			}
			return
		}
		if strings.TrimSpace(e.Meta.DisplayName) == "" {
			t.Errorf("LoadFS(%q) accepted an empty display_name", data)
		}
		if len(e.Meta.Tests) == 0 {
			t.Errorf("LoadFS(%q) accepted no tests", data)
		}
		for _, test := range e.Meta.Tests {
			if !slices.Contains(profiles, test) && !slices.Contains(Retired, test) {
				t.Errorf("LoadFS(%q) accepted unknown test %q", data, test)
			}
		}
		if !slices.Contains(Types, e.Meta.Type) {
			t.Errorf("LoadFS(%q) accepted type %q", data, e.Meta.Type)
		}
		if e.Meta.Mode != "" && !slices.Contains(Modes, e.Meta.Mode) {
			t.Errorf("LoadFS(%q) accepted mode %q", data, e.Meta.Mode)
		}
		for _, w := range e.Warnings {
			if w.Msg == "" || w.Fix == "" || strings.Contains(w.Error(), "\n") {
				t.Errorf("LoadFS(%q): warning %#v lacks Msg or Fix or is not one line", data, w)
			}
		}
	})
}

// TestDeps keeps this package a leaf: the standard library and text only, nothing else from
// this module, no test code in the build.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{Module: []string{"text"}, StdOnly: true})
}

// TestLoadFSWarnings: what the arena warns about and ignores is loaded, with a warning
// that names the field, the problem and the fix.
func TestLoadFSWarnings(t *testing.T) {
	tests := []struct {
		name  string
		data  string
		want  []string // parts of the one warning, in order; nil for none
		field string
	}{
		{"unknown axis", withField("completeness", `{"routng": false, "response": true}`),
			[]string{`unknown axis "routng" is ignored`, `did you mean "routing"?`, "fix: use only the axes routing, middleware, request, response"}, "completeness"},
		{"unknown far axis", withField("completeness", `{"database": false}`),
			[]string{`unknown axis "database" is ignored; fix: use only the axes`}, "completeness"},
		{"mode on an engine", withField("mode", `"tuned"`),
			[]string{`"tuned" is ignored`, `the type is "engine"`, `fix: drop "mode"`}, "mode"},
		{"mode on a framework", withFields("type", `"flagship"`, "mode", `"tuned"`), nil, ""},
		{"known axes only", withField("completeness", `{"routing": false}`), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := LoadFS(meta(tt.data), "frameworks", "x", profiles)
			if err != nil {
				t.Fatalf("LoadFS: %v; want it loaded", err)
			}
			if tt.want == nil {
				if len(e.Warnings) != 0 {
					t.Errorf("Warnings = %v, want none", e.Warnings)
				}
				return
			}
			if len(e.Warnings) != 1 {
				t.Fatalf("Warnings = %v, want one", e.Warnings)
			}
			w := e.Warnings[0]
			if w.Field != tt.field || w.File != filepath.Join("frameworks", "x", "meta.json") || w.Fix == "" {
				t.Errorf("warning %#v: want field %q, the file and a fix", w, tt.field)
			}
			if !containsInOrder(w.Error(), tt.want) {
				t.Errorf("warning %q, want %q in order", w.Error(), tt.want)
			}
		})
	}
	// An unknown axis is ignored: the known ones are kept.
	e, err := LoadFS(meta(withField("completeness", `{"routng": false, "response": false}`)), "frameworks", "x", profiles)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&Completeness{Response: new(false)}, e.Meta.Completeness); diff != "" {
		t.Errorf("Completeness (-want +got):\n%s", diff)
	}
}

func containsInOrder(s string, parts []string) bool {
	for _, p := range parts {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}

// TestLoadFSErrorsSayTheFix checks the words of the errors of today's fields: the field, the
// value and the fix.
func TestLoadFSErrorsSayTheFix(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string
	}{
		{"type", withField("type", `"flagshp"`), []string{`field "type": unknown type "flagshp" (did you mean "flagship"?)`,
			`fix: set it to one of "flagship", "emerging", "experimental", "engine" or "infrastructure", or leave it out for "emerging"`}},
		{"mode", withField("mode", `"tunned"`), []string{`field "mode": unknown mode "tunned" (did you mean "tuned"?)`,
			`fix: set it to "standard" or "tuned", or leave it out for "standard"`}},
		{"mode contradiction", withFields("type", `"tuned"`, "mode", `"standard"`), []string{`field "mode": "standard" contradicts "type": "tuned"`,
			`fix: write today's form, "type": "emerging"`, `"mode": "tuned", or drop "mode"`}},
		{"completeness", withField("completeness", `"all"`), []string{`field "completeness": must be an object of the axes routing, middleware, request, response, got a JSON string`,
			`fix: write it as "completeness": {"routing": true`}},
		{"completeness axis", withField("completeness", `{"request": "no"}`), []string{`field "completeness": axis "request" must be true or false, got a JSON string`,
			`fix: write "request": true if the framework does it, false if the entry does it by hand`}},
		{"tls_check", withField("tls_check", `"yes"`), []string{`field "tls_check": must be true or false, got a JSON string`, `fix: write it as "tls_check": true`}},
		{"website", withField("website", `["https://go.dev"]`), []string{`field "website": must be a string, got a JSON array`, `fix: write it as "website": "https://example.com"`}},
		{"unknown test", withField("tests", `["baseline", "fortune"]`), []string{`field "tests": unknown test "fortune"`,
			"no profile of this arena has that name", "fix: remove it, or use the name of a profile this arena knows: " + strings.Join(profiles, ", ")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadFS(meta(tt.data), "frameworks", "x", profiles)
			if err == nil {
				t.Fatal("LoadFS: nil error")
			}
			if !containsInOrder(err.Error(), tt.want) {
				t.Errorf("LoadFS error\n%s\nwant in order %q", err, tt.want)
			}
		})
	}
}

// TestUnknownTestListsTheTable: the profiles the error offers are the ones passed in (the
// profile table's names), whatever they are.
func TestUnknownTestListsTheTable(t *testing.T) {
	table := append(slices.Clone(profiles), "fortunes")
	_, err := LoadFS(meta(withField("tests", `["fortune"]`)), "frameworks", "x", table)
	if err == nil || !strings.Contains(err.Error(), `(did you mean "fortunes"?)`) || !strings.HasSuffix(err.Error(), ", echo-ws-limited, fortunes") {
		t.Errorf("LoadFS error %v; want the closest name and the table's names, fortunes last", err)
	}
	if _, err := LoadFS(meta(withField("tests", `["fortunes"]`)), "frameworks", "x", table); err != nil {
		t.Errorf("LoadFS with fortunes in the table: %v", err)
	}
}

func TestTierAndMode(t *testing.T) {
	tests := []struct {
		typ, mode string
		tier      string
		framework bool
		tuned     bool
	}{
		{"flagship", "", "flagship", true, false},
		{"emerging", "tuned", "emerging", true, true},
		{"experimental", "standard", "experimental", true, false},
		{"engine", "", "engine", false, false},
		{"infrastructure", "", "infrastructure", false, false},
		{"production", "", "emerging", true, false},
		{"production", "tuned", "emerging", true, true},
		{"tuned", "", "emerging", true, true},
		{"tuned", "tuned", "emerging", true, true},
		{"", "", "emerging", true, false},
	}
	for _, tt := range tests {
		m := Meta{Type: tt.typ, Mode: tt.mode}
		if got := m.Tier(); got != tt.tier {
			t.Errorf("Meta{Type: %q}.Tier() = %q, want %q", tt.typ, got, tt.tier)
		}
		if got := m.Framework(); got != tt.framework {
			t.Errorf("Meta{Type: %q}.Framework() = %v, want %v", tt.typ, got, tt.framework)
		}
		if got := m.Tuned(); got != tt.tuned {
			t.Errorf("Meta{Type: %q, Mode: %q}.Tuned() = %v, want %v", tt.typ, tt.mode, got, tt.tuned)
		}
	}
	for _, tier := range Tiers {
		if !slices.Contains(Types, tier) {
			t.Errorf("Types lacks the tier %q", tier)
		}
	}
	if !slices.Contains(Tiers, DefaultTier) {
		t.Errorf("DefaultTier %q is not a tier", DefaultTier)
	}
}

func TestCompletenessMissing(t *testing.T) {
	if got := (*Completeness)(nil).Missing(); got != nil {
		t.Errorf("nil.Missing() = %q", got)
	}
	c := &Completeness{Routing: new(false), Middleware: new(true), Response: new(false)}
	if diff := cmp.Diff([]string{"routing", "response"}, c.Missing()); diff != "" {
		t.Errorf("Missing (-want +got):\n%s", diff)
	}
}
