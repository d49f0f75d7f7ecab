package plan

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arenabot/arenabot/bot/command"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/md/mdtest"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/profile/selection"
)

// fakeSource is a PR head held in memory. errs injects errors by operation:
// "changed", "dir:<path>", "file:<path>".
type fakeSource struct {
	changed []string
	files   map[string]string
	errs    map[string]error
}

func (s *fakeSource) ChangedFiles(ctx context.Context) ([]string, error) {
	if err := s.errs["changed"]; err != nil {
		return nil, err
	}
	return s.changed, nil
}

func (s *fakeSource) Dir(ctx context.Context, dir string) ([]string, error) {
	if err := s.errs["dir:"+dir]; err != nil {
		return nil, err
	}
	var out []string
	for p := range s.files {
		rest, ok := strings.CutPrefix(p, dir+"/")
		if !ok {
			continue
		}
		if first, _, isDir := strings.Cut(rest, "/"); isDir {
			rest = first + "/"
		}
		if !slices.Contains(out, rest) {
			out = append(out, rest)
		}
	}
	if out == nil {
		return nil, fmt.Errorf("dir %s: %w", dir, fs.ErrNotExist)
	}
	slices.Sort(out)
	return out, nil
}

func (s *fakeSource) File(ctx context.Context, p string) ([]byte, error) {
	if err := s.errs["file:"+p]; err != nil {
		return nil, err
	}
	data, ok := s.files[p]
	if !ok {
		return nil, fmt.Errorf("file %s: %w", p, fs.ErrNotExist)
	}
	return []byte(data), nil
}

// never is a test the harness cannot run yet: the first such profile of the table. When
// every profile runs, the tests make gateway-h3 one that cannot, as a new row would be.
var never = func() string {
	for _, p := range profile.All {
		if !p.Runnable() {
			return p.Name
		}
	}
	i := profile.Index("gateway-h3")
	profile.All[i].Unsupported = "not yet supported: the tests' stand-in reason"
	return profile.All[i].Name
}()

// firstRunnable is the start of the list of runnable tests a reply offers: the first n in
// the table's order, each in a code span.
func firstRunnable(n int) string {
	var names []string
	for _, p := range profile.All {
		if p.Runnable() && len(names) < n {
			names = append(names, "`"+p.Name+"`")
		}
	}
	return strings.Join(names, ", ")
}

func meta(display string, enabled bool, tests ...string) string {
	return fmt.Sprintf(`{"display_name": %q, "language": "Go", "type": "production", "engine": "net/http",
		"enabled": %t, "tests": ["%s"]}`, display, enabled, strings.Join(tests, `", "`))
}

// head is the repository at the PR head the tests resolve against.
func head() map[string]string {
	return map[string]string{
		"README.md": "arena",
		// gin subscribes to runnable tests and to never, which cannot run yet.
		"frameworks/gin/meta.json":       meta("Gin", true, "baseline", "pipelined", "json", never, "upload"),
		"frameworks/gin/go.mod":          "module gin",
		"frameworks/gin/main.go":         "package main",
		"frameworks/fiber/meta.json":     meta("Fiber", true, "json", "baseline"),
		"frameworks/fiber/go.mod":        "module fiber",
		"frameworks/fiber/cmd/x/main.go": "package main",
		"frameworks/fasthttp/meta.json":  meta("fasthttp", false, "baseline"),
		"frameworks/fasthttp/go.mod":     "module fasthttp",
		"frameworks/nethttp/meta.json":   meta("net/http", true, never, "noisy"),
		"frameworks/broken/meta.json":    `{"display_name": "broken",`,
		"frameworks/stray/meta.json":     meta("stray", true, "baseline"),
		"frameworks/stray/main.go":       "package main",
		"frameworks/rusty/meta.json":     meta("rusty", true, "baseline"),
		"frameworks/rusty/Cargo.toml":    "[package]",
		"frameworks/notes/README.md":     "not an entry",
		// deep's Go source is below cmd/ without a go.mod: over a Source the go.mod check
		// sees only the entry's top level, so it passes here (the runner's full check
		// catches it).
		"frameworks/deep/meta.json":       meta("deep", true, "json"),
		"frameworks/deep/cmd/main.go":     "package main",
		"frameworks/_shared/helper.go":    "package shared",
		"frameworks/_shared/meta.json":    meta("shared", true, "baseline"),
		"frameworks/frameworks_readme.md": "x",
	}
}

func mustParse(t *testing.T, line string) command.Command {
	t.Helper()
	c, found, err := command.Parse(line)
	if err != nil || !found {
		t.Fatalf("Parse(%q) = %v, %v", line, found, err)
	}
	return c
}

var (
	ginAll = Target{Entry: "gin", Display: "Gin", Tests: []string{"baseline", "pipelined", "json", "upload"},
		Rows: rows("gin", "baseline", 512, "baseline", 4096, "pipelined", 512, "pipelined", 4096, "json", 4096, "upload", 32, "upload", 256)}
	fiberAll = Target{Entry: "fiber", Display: "Fiber", Tests: []string{"baseline", "json"},
		Rows: rows("fiber", "baseline", 512, "baseline", 4096, "json", 4096)}
	ginBaseline   = Target{Entry: "gin", Display: "Gin", Tests: []string{"baseline"}, Rows: rows("gin", "baseline", 512, "baseline", 4096)}
	fiberBaseline = Target{Entry: "fiber", Display: "Fiber", Tests: []string{"baseline"}, Rows: rows("fiber", "baseline", 512, "baseline", 4096)}
	rustyBaseline = Target{Entry: "rusty", Display: "rusty", Tests: []string{"baseline"}, Rows: rows("rusty", "baseline", 512, "baseline", 4096)}
)

func TestResolve(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		changed []string
		want    Plan // Estimate is checked separately
		// On error: substrings of Problem and Fix.
		problem, fix string
		meta         bool // the error wraps a *frameworks.MetaError
	}{
		// /benchmark with -f.
		{name: "named, every runnable test", line: "/benchmark -f gin",
			want: Plan{Kind: command.KindBenchmark, Targets: []Target{ginAll}}},
		{name: "named, tests in profile order", line: "/benchmark -f gin -t json,baseline --save",
			want: Plan{Kind: command.KindBenchmark, Save: true, Targets: []Target{{Entry: "gin", Display: "Gin",
				Tests: []string{"baseline", "json"}, Rows: rows("gin", "baseline", 512, "baseline", 4096, "json", 4096)}}}},
		{name: "disabled entry may be named", line: "/benchmark -f fasthttp",
			want: Plan{Kind: command.KindBenchmark, Targets: []Target{{Entry: "fasthttp", Display: "fasthttp",
				Tests: []string{"baseline"}, Rows: rows("fasthttp", "baseline", 512, "baseline", 4096)}}}},
		{name: "entry without Go source needs no go.mod", line: "/benchmark -f rusty", want: Plan{Kind: command.KindBenchmark, Targets: []Target{rustyBaseline}}},
		{name: "go.mod check is shallow", line: "/benchmark -f deep",
			want: Plan{Kind: command.KindBenchmark, Targets: []Target{{Entry: "deep", Display: "deep", Tests: []string{"json"}, Rows: rows("deep", "json", 4096)}}}},
		{name: "unknown framework", line: "/benchmark -f gni -t baseline",
			problem: "unknown framework `gni`", fix: "did you mean `gin`? type `/benchmark -f gin -t baseline`"},
		{name: "directory without meta.json is unknown", line: "/benchmark -f notes", problem: "unknown framework `notes`", fix: "the frameworks are: `broken`, `deep`"},
		{name: "bad meta.json", line: "/benchmark -f broken", meta: true,
			problem: "frameworks/broken/meta.json: invalid JSON", fix: "push the correction and comment `/benchmark -f broken` again"},
		{name: "Go source outside a go.mod", line: "/benchmark -f stray", meta: true,
			problem: "frameworks/stray/main.go is not below a go.mod", fix: "comment `/benchmark -f stray` again"},
		{name: "unknown test", line: "/benchmark -f gin -t jsn", problem: "unknown test `jsn`", fix: "did you mean `json`? choose a runnable test of `gin`: `baseline`, `pipelined`, `json`, `upload`"},
		{name: "retired test", line: "/benchmark -f gin -t noisy", problem: "test `noisy` is retired", fix: "runnable test of `gin`: `baseline`, `pipelined`, `json`, `upload`"},
		{name: "test not subscribed", line: "/benchmark -f fiber -t pipelined",
			problem: "`fiber` does not subscribe to test `pipelined`", fix: "choose a runnable test of `fiber`: `baseline`, `json`"},
		{name: "test not runnable", line: "/benchmark -f gin -t " + never,
			problem: "test `" + never + "` cannot run here yet: ", fix: "runnable test of `gin`: `baseline`, `pipelined`, `json`, `upload`"},
		{name: "no runnable test", line: "/benchmark -f nethttp",
			problem: "`nethttp` subscribes to no test this harness can run yet (its tests: `" + never + "`)", fix: "runnable tests are: `baseline`"},

		// /benchmark without -f.
		{name: "the one touched framework", line: "/benchmark --save",
			changed: []string{"README.md", "frameworks/gin/main.go", "frameworks/_shared/helper.go", "frameworks/gone/main.go", "frameworks/notes/README.md"},
			want:    Plan{Kind: command.KindBenchmark, Save: true, Targets: []Target{ginAll}}},
		{name: "touched framework, with test", line: "/benchmark -t baseline", changed: []string{"frameworks/gin/meta.json"},
			want: Plan{Kind: command.KindBenchmark, Targets: []Target{ginBaseline}}},
		{name: "none touched", line: "/benchmark", changed: []string{"README.md", "frameworks/gone/main.go", "frameworks/_shared/helper.go"},
			problem: "couldn't tell which framework to benchmark: this PR changes no `frameworks/<name>/`",
			fix:     "type `/benchmark -f <name>` (frameworks: `broken`, `deep`, `fasthttp`, `fiber`, `gin`, `nethttp`, `rusty`, `stray`)"},
		{name: "several touched", line: "/benchmark", changed: []string{"frameworks/gin/main.go", "frameworks/fiber/go.mod"},
			problem: "this PR changes several frameworks: `fiber`, `gin`", fix: "`/benchmark -f fiber` to run one, or `/benchmark-multiple`"},
		{name: "touched framework with bad meta.json", line: "/benchmark", changed: []string{"frameworks/broken/meta.json"}, meta: true,
			problem: "frameworks/broken/meta.json", fix: "comment `/benchmark` again"},

		// --compare.
		{name: "compare target need not subscribe", line: "/benchmark -f gin -t json --compare fasthttp",
			want: Plan{Kind: command.KindBenchmark, Compare: "fasthttp", Targets: []Target{{Entry: "gin", Display: "Gin",
				Tests: []string{"json"}, Rows: rows("gin", "json", 4096)}}}},
		{name: "unknown compare target", line: "/benchmark -f gin --compare fibr",
			problem: "unknown framework `fibr`", fix: "did you mean `fiber`? type `--compare fiber`"},
		{name: "compare with the touched framework", line: "/benchmark --compare gin", changed: []string{"frameworks/gin/main.go"},
			problem: "`--compare gin` names the framework being benchmarked", fix: "compare with another framework"},

		// /benchmark-multiple.
		{name: "multiple, in the order named", line: "/benchmark-multiple -f gin,fiber -t baseline",
			want: Plan{Kind: command.KindMultiple, Targets: []Target{ginBaseline, fiberBaseline}}},
		{name: "multiple, every touched, sorted", line: "/benchmark-multiple",
			changed: []string{"frameworks/gin/main.go", "frameworks/fiber/go.mod", "frameworks/gone/x"},
			want:    Plan{Kind: command.KindMultiple, Targets: []Target{fiberAll, ginAll}}},
		{name: "multiple, none touched", line: "/benchmark-multiple", changed: []string{"go.mod"},
			problem: "couldn't tell which frameworks to benchmark", fix: "type `/benchmark-multiple -f <a>,<b>`"},
		{name: "multiple, unknown framework", line: "/benchmark-multiple -f gin,fibre",
			problem: "unknown framework `fibre`", fix: "type `/benchmark-multiple -f gin,fiber`"},
		{name: "multiple, test one does not subscribe to", line: "/benchmark-multiple -f gin,fiber -t pipelined",
			problem: "`fiber` does not subscribe to test `pipelined`", fix: "runnable test of `fiber`: `baseline`, `json`"},

		// /benchmark-test.
		{name: "test across enabled subscribers", line: "/benchmark-test -t baseline --save",
			want: Plan{Kind: command.KindTest, Save: true, Targets: []Target{fiberBaseline, ginBaseline, rustyBaseline},
				Skipped: []string{
					"frameworks/broken/meta.json: invalid JSON at line 1, column 26: unexpected end of JSON input; fix: correct the JSON syntax there (a missing comma or quote, or a trailing comma)",
					`frameworks/stray/meta.json: field "go.mod": Go source frameworks/stray/main.go is not below a go.mod, so it would become part of the arenabot module; fix: add frameworks/stray/go.mod so the entry is its own module`,
				}}},
		{name: "test nobody subscribes to", line: "/benchmark-test -t static",
			problem: "no enabled framework subscribes to test `static`", fix: "fix the `meta.json` of `broken` (it is not valid)"},
		{name: "test unknown", line: "/benchmark-test -t basline", problem: "unknown test `basline`", fix: "did you mean `baseline`"},
		{name: "test not runnable", line: "/benchmark-test -t " + never,
			problem: "test `" + never + "` cannot run here yet", fix: "choose a runnable test: " + firstRunnable(3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeSource{changed: tt.changed, files: head()}
			got, err := Resolve(context.Background(), src, mustParse(t, tt.line))
			if tt.problem != "" {
				t.Logf("%s: %v", tt.line, err)
				var re *ResolveError
				if !errors.As(err, &re) {
					t.Fatalf("Resolve(%q) = %+v, %v; want a *ResolveError", tt.line, got, err)
				}
				if !errors.Is(err, ErrResolve) {
					t.Errorf("error %v does not wrap ErrResolve", err)
				}
				if !strings.Contains(re.Problem, tt.problem) {
					t.Errorf("Problem = %q, want it to contain %q", re.Problem, tt.problem)
				}
				if !strings.Contains(re.Fix, tt.fix) {
					t.Errorf("Fix = %q, want it to contain %q", re.Fix, tt.fix)
				}
				if strings.ContainsAny(err.Error(), "\r\n") {
					t.Errorf("error is not one line: %q", err)
				}
				checkMarkdown(t, re)
				var me *frameworks.MetaError
				if errors.As(err, &me) != tt.meta {
					t.Errorf("errors.As(*MetaError) = %v, want %v", !tt.meta, tt.meta)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.line, err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.FilterPath(func(p cmp.Path) bool {
				return p.String() == "Estimate" || p.String() == "Paired" || p.String() == "CPUProfile"
			}, cmp.Ignore())); diff != "" {
				t.Errorf("Resolve(%q) mismatch (-want +got):\n%s", tt.line, diff)
			}
			if got.Estimate != estimate(got.Targets, got.Paired, got.CPUProfile) {
				t.Errorf("Estimate = %v, want %v", got.Estimate, estimate(got.Targets, got.Paired, got.CPUProfile))
			}
		})
	}
}

// TestProfileModeAndEstimate: the plan resolves --profile once (a /benchmark of one
// framework is profiled at each test's first connection count; /benchmark-multiple only when
// asked), and each profiled row adds its profiling run to the estimate.
func TestProfileModeAndEstimate(t *testing.T) {
	src := &fakeSource{files: head()}
	plain, err := Resolve(context.Background(), src, mustParse(t, "/benchmark -f gin -t baseline,json --profile=none"))
	if err != nil {
		t.Fatal(err)
	}
	if plain.CPUProfile != profile.CPUProfileNone {
		t.Errorf("--profile=none: mode %q", plain.CPUProfile)
	}
	firsts := 0 // rows at their test's first connection count
	seen := map[string]bool{}
	for _, r := range plain.Targets[0].Rows {
		if !seen[r.Test] {
			seen[r.Test], firsts = true, firsts+1
		}
	}
	for _, tt := range []struct {
		line, mode string
		extra      time.Duration
	}{
		{"/benchmark -f gin -t baseline,json", profile.CPUProfileFirst, time.Duration(firsts) * (5*time.Second + ProfileAllowance)},
		{"/benchmark -f gin -t baseline,json --profile=all", profile.CPUProfileAll, time.Duration(plain.Rows()) * (5*time.Second + ProfileAllowance)},
		{"/benchmark-multiple -f gin -t baseline,json", profile.CPUProfileNone, 0},
		{"/benchmark-multiple -f gin -t baseline,json --profile", profile.CPUProfileFirst, time.Duration(firsts) * (5*time.Second + ProfileAllowance)},
	} {
		got, err := Resolve(context.Background(), src, mustParse(t, tt.line))
		if err != nil {
			t.Fatal(err)
		}
		if got.CPUProfile != tt.mode || got.Estimate != plain.Estimate+tt.extra {
			t.Errorf("%s: mode %q, estimate %v; want %q, %v", tt.line, got.CPUProfile, got.Estimate, tt.mode, plain.Estimate+tt.extra)
		}
	}
}

func TestEstimate(t *testing.T) {
	src := &fakeSource{files: head()}
	got, err := Resolve(context.Background(), src, mustParse(t, "/benchmark-multiple -f gin,fiber -t baseline,json"))
	if err != nil {
		t.Fatal(err)
	}
	// Two frameworks × (60 s build + 10 s validation) + 3 rows each × (3 × 5 s + 2 s).
	want := 2*(60+10)*time.Second + 6*(3*5+2)*time.Second
	if got.Estimate != want || got.Rows() != 6 {
		t.Errorf("Estimate = %v, Rows = %d; want %v, 6", got.Estimate, got.Rows(), want)
	}
	if d := rowTime(profile.Profile{Duration: 15 * time.Second}); d != 47*time.Second {
		t.Errorf("rowTime(15 s profile) = %v, want 47s", d)
	}

	// The PR changes gin: it is measured against its merge base, twice the builds, and
	// each row 4 runs a side on fresh servers; fiber, unchanged, once.
	src.changed = []string{"frameworks/gin/main.go"}
	got, err = Resolve(context.Background(), src, mustParse(t, "/benchmark-multiple -f gin,fiber -t baseline,json"))
	if err != nil {
		t.Fatal(err)
	}
	want = 3*(60+10)*time.Second + 3*(3*5+2)*time.Second + 3*2*4*(5+1+2)*time.Second
	if !slices.Equal(got.Paired, []string{"gin"}) || got.Estimate != want {
		t.Errorf("Paired %v, Estimate %v; want [gin], %v", got.Paired, got.Estimate, want)
	}
	// --compare: every other target against it; --baseline committed: none.
	for line, paired := range map[string][]string{
		"/benchmark -f gin -t baseline --compare fiber":      {"gin"},
		"/benchmark -f gin -t baseline --baseline committed": nil,
		"/benchmark-multiple -f fiber -t baseline":           nil,
	} {
		got, err := Resolve(context.Background(), src, mustParse(t, line))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Paired, paired) {
			t.Errorf("%s: Paired %v, want %v", line, got.Paired, paired)
		}
	}
}

func TestSourceErrors(t *testing.T) {
	boom := errors.New("boom: API rate limited")
	tests := []struct {
		line    string
		changed []string
		inject  string
	}{
		{"/benchmark", nil, "changed"},
		{"/benchmark-multiple", []string{"frameworks/gin/x"}, "file:frameworks/gin/meta.json"},
		{"/benchmark", []string{"README.md"}, "dir:frameworks"},
		{"/benchmark -f gin", nil, "file:frameworks/gin/meta.json"},
		{"/benchmark -f gin", nil, "dir:frameworks/gin"},
		{"/benchmark -f gni", nil, "dir:frameworks"},
		{"/benchmark -f gin --compare fiber", nil, "file:frameworks/fiber/meta.json"},
		{"/benchmark-test -t baseline", nil, "dir:frameworks"},
		{"/benchmark-test -t baseline", nil, "file:frameworks/rusty/meta.json"},
		{"/benchmark-test -t baseline", nil, "dir:frameworks/rusty"},
	}
	for _, tt := range tests {
		t.Run(tt.line+" "+tt.inject, func(t *testing.T) {
			src := &fakeSource{changed: tt.changed, files: head(), errs: map[string]error{tt.inject: boom}}
			_, err := Resolve(context.Background(), src, mustParse(t, tt.line))
			if !errors.Is(err, boom) {
				t.Fatalf("Resolve = %v, want it to wrap %v", err, boom)
			}
			if errors.Is(err, ErrResolve) {
				t.Errorf("a Source error wraps ErrResolve: %v", err)
			}
			if err.Error() == boom.Error() {
				t.Errorf("error %q is not wrapped with context", err)
			}
		})
	}
}

func TestNotABenchmarkCommand(t *testing.T) {
	_, err := Resolve(context.Background(), &fakeSource{files: head()}, command.Command{Kind: command.KindCancel})
	if err == nil || errors.Is(err, ErrResolve) {
		t.Fatalf("Resolve(cancel) = %v, want a non-resolve error", err)
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Resolve(ctx, &fakeSource{files: head()}, mustParse(t, "/benchmark-test -t baseline"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Resolve = %v, want context.Canceled", err)
	}
}

// checkMarkdown checks that a ResolveError renders as it reads: placeholders, names and
// commands in code spans (no live "<"), and nothing that mentions, references or injects.
func checkMarkdown(t *testing.T, re *ResolveError) {
	t.Helper()
	for name, text := range map[string]string{"Problem": re.Problem, "Fix": re.Fix} {
		live := mdtest.Live(text)
		if strings.ContainsAny(live, "<`") {
			t.Errorf("%s %q: a placeholder or code span is not closed: live %q", name, text, live)
		}
		if abuse := mdtest.Abuse(text); len(abuse) > 0 {
			t.Errorf("%s %q: %v", name, text, abuse)
		}
	}
}

// adapterSource lists every name under Root as a directory, files too, as the bot's GitHub
// adapter does (the contents API's listing loses the type on the way).
type adapterSource struct{ fakeSource }

func (s *adapterSource) Dir(ctx context.Context, dir string) ([]string, error) {
	names, err := s.fakeSource.Dir(ctx, dir)
	if dir != Root {
		return names, err
	}
	for i, n := range names {
		if !strings.HasSuffix(n, "/") {
			names[i] = n + "/"
		}
	}
	return names, err
}

// arenaHead is the repository's own layout: four entries and the Go files of the frameworks
// package beside them.
func arenaHead() map[string]string {
	files := map[string]string{
		"frameworks/frameworks.go":      "package frameworks",
		"frameworks/frameworks_test.go": "package frameworks",
		"frameworks/touched.go":         "package frameworks",
	}
	for _, e := range []string{"fasthttp", "fiber", "gin", "nethttp"} {
		files["frameworks/"+e+"/meta.json"] = meta(e, true, "baseline", "json")
		files["frameworks/"+e+"/go.mod"] = "module " + e
	}
	return files
}

func resolveError(t *testing.T, src Source, line string) *ResolveError {
	t.Helper()
	_, err := Resolve(context.Background(), src, mustParse(t, line))
	re, ok := errors.AsType[*ResolveError](err)
	if !ok {
		t.Fatalf("Resolve(%q) = %v, want a *ResolveError", line, err)
	}
	checkMarkdown(t, re)
	return re
}

// TestOffersEntriesOnly: the frameworks an error offers are directories holding a
// meta.json, never the files beside them, and none is hidden behind "…" when they fit.
func TestOffersEntriesOnly(t *testing.T) {
	src := &adapterSource{fakeSource{files: arenaHead(), changed: []string{"README.md"}}}
	for _, line := range []string{"/benchmark", "/benchmark-multiple", "/benchmark -f frameworks", "/benchmark -f zzz"} {
		re := resolveError(t, src, line)
		for _, bad := range []string{"frameworks.go", "touched.go", "frameworks_test.go", "…"} {
			if strings.Contains(re.Fix, bad) {
				t.Errorf("%s: Fix %q offers %q", line, re.Fix, bad)
			}
		}
		if line != "/benchmark -f frameworks" && !strings.Contains(re.Fix, "`fasthttp`, `fiber`, `gin`, `nethttp`") {
			t.Errorf("%s: Fix %q does not offer the four entries", line, re.Fix)
		}
	}
}

// TestOffersClosestFirst: an unknown framework is answered with every close entry, the
// closest first, however many there are.
func TestOffersClosestFirst(t *testing.T) {
	files := arenaHead()
	var gins []string
	for c := 'a'; c <= 'o'; c++ {
		name := "gin-" + string(c)
		gins = append(gins, "`"+name+"`")
		files["frameworks/"+name+"/meta.json"] = meta(name, true, "baseline")
	}
	for i := range 30 {
		files[fmt.Sprintf("frameworks/other%02d/meta.json", i)] = meta("other", true, "baseline")
	}
	src := &adapterSource{fakeSource{files: files}}

	re := resolveError(t, src, "/benchmark -f nethtp")
	if !strings.HasPrefix(re.Fix, "did you mean `nethttp`") {
		t.Errorf("Fix %q does not start with the closest name", re.Fix)
	}
	re = resolveError(t, src, "/benchmark -f gin-")
	for _, g := range gins {
		if !strings.Contains(re.Fix, g) {
			t.Errorf("Fix %q leaves out the close entry %s", re.Fix, g)
		}
	}
	if !strings.HasPrefix(re.Fix, "did you mean `gin`, `gin-a`") || strings.Contains(re.Fix, "…") {
		t.Errorf("Fix %q: want every close entry, the closest first, and no ellipsis", re.Fix)
	}
}

// TestOffersOnlyRunnableSubscribedTests: the tests an error offers for a framework are the
// ones it subscribes to that this harness can run.
func TestOffersOnlyRunnableSubscribedTests(t *testing.T) {
	src := &fakeSource{files: head()}
	// gin subscribes to baseline, pipelined, json, never (not runnable) and upload.
	ginOffers := []string{"baseline", "pipelined", "json", "upload"}
	for _, tt := range []struct {
		line  string
		offer []string
	}{
		{"/benchmark -f gin -t jsn", ginOffers},
		{"/benchmark -f gin -t " + never[:len(never)-1], ginOffers},
		{"/benchmark -f gin -t noisy", ginOffers},
		{"/benchmark -f gin -t " + never, ginOffers},
		{"/benchmark -f gin -t static", ginOffers},
		{"/benchmark -f fiber -t pipelined", []string{"baseline", "json"}},
		{"/benchmark-multiple -f gin,fiber -t upload", []string{"baseline", "json"}},
		{"/benchmark -f nethttp -t json", nil},
	} {
		re := resolveError(t, src, tt.line)
		for _, name := range profile.Names() {
			if strings.Contains(re.Fix, "`"+name+"`") && !slices.Contains(tt.offer, name) {
				t.Errorf("%s: Fix %q offers %s, which is not one of %v", tt.line, re.Fix, name, tt.offer)
			}
		}
		for _, name := range tt.offer {
			if !strings.Contains(re.Fix, "`"+name+"`") {
				t.Errorf("%s: Fix %q does not offer %s", tt.line, re.Fix, name)
			}
		}
	}
	// With no framework named, /benchmark-test offers runnable tests only.
	re := resolveError(t, src, "/benchmark-test -t "+never[:len(never)-1])
	for _, name := range profile.Names() {
		if p, _ := profile.Lookup(name); !p.Runnable() && strings.Contains(re.Fix, "`"+name+"`") {
			t.Errorf("Fix %q offers %s, which cannot run here", re.Fix, name)
		}
	}
}

// TestHostileNamesStayInCode: names from the command or the repository are echoed in code
// spans only, so none mentions a team or references an issue.
func TestHostileNamesStayInCode(t *testing.T) {
	files := head()
	files["frameworks/@org/team/meta.json"] = meta("team", true, "baseline")
	files["frameworks/#1/meta.json"] = meta("x", true, "baseline")
	files["frameworks/<script>/meta.json"] = meta("x", true, "baseline")
	files["frameworks/broken/meta.json"] = `{"display_name": "@org/team #1 <script>",`
	src := &fakeSource{files: files}
	for _, c := range []command.Command{
		{Kind: command.KindBenchmark, Frameworks: []string{"@org/team"}},
		{Kind: command.KindBenchmark, Frameworks: []string{"#1"}, Tests: []string{"<script>"}},
		{Kind: command.KindBenchmark, Frameworks: []string{"gin"}, Tests: []string{"@org/team"}},
		{Kind: command.KindBenchmark, Frameworks: []string{"gin"}, Compare: "@org/team`x"},
		{Kind: command.KindBenchmark, Frameworks: []string{"broken"}},
		{Kind: command.KindTest, Tests: []string{"#1"}},
	} {
		_, err := Resolve(context.Background(), src, c)
		re, ok := errors.AsType[*ResolveError](err)
		if !ok {
			t.Fatalf("Resolve(%+v) = %v, want a *ResolveError", c, err)
		}
		checkMarkdown(t, re)
	}
	src.changed = []string{"frameworks/@org/x", "frameworks/#1/x", "frameworks/gin/x"}
	_, err := Resolve(context.Background(), src, mustParse(t, "/benchmark"))
	re, ok := errors.AsType[*ResolveError](err)
	if !ok {
		t.Fatalf("Resolve(/benchmark) = %v, want a *ResolveError", err)
	}
	checkMarkdown(t, re)
}

// TestResolveLite: planned for --lite runners, the rows are the --lite connection counts.
func TestResolveLite(t *testing.T) {
	src := &fakeSource{files: head()}
	got, err := Options{Lite: true}.Resolve(context.Background(), src, mustParse(t, "/benchmark -f gin"))
	if err != nil {
		t.Fatal(err)
	}
	want := Plan{Kind: command.KindBenchmark, Lite: true, CPUProfile: profile.CPUProfileFirst, Targets: []Target{{Entry: "gin", Display: "Gin",
		Tests: []string{"baseline", "pipelined", "json", "upload"},
		Rows:  rows("gin", "baseline", 512, "pipelined", 512, "json", 512, "upload", 128)}}}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "Estimate" }, cmp.Ignore())); diff != "" {
		t.Errorf("lite plan (-want +got):\n%s", diff)
	}
	if full, _ := Resolve(context.Background(), src, mustParse(t, "/benchmark -f gin")); full.Rows() == got.Rows() || full.Lite {
		t.Errorf("the full plan has %d rows (lite %v), the lite one %d: want them to differ", full.Rows(), full.Lite, got.Rows())
	}
}

// TestPlanIsTheSelection: for every command, in both modes, the plan's rows are exactly
// what selection.Select lays out for its entries, as the runner does.
func TestPlanIsTheSelection(t *testing.T) {
	src := &fakeSource{files: head()}
	for _, line := range []string{
		"/benchmark -f gin", "/benchmark -f gin -t upload,baseline", "/benchmark-multiple -f fiber,gin,rusty",
		"/benchmark-multiple -f gin,fiber -t json", "/benchmark-test -t baseline", "/benchmark-test -t json", "/benchmark -f fasthttp",
	} {
		for _, lite := range []bool{false, true} {
			c := mustParse(t, line)
			p, err := Options{Lite: lite}.Resolve(context.Background(), src, c)
			if err != nil {
				t.Fatalf("Resolve(%q, lite %v): %v", line, lite, err)
			}
			var entries []frameworks.Entry
			var got []profile.Row
			for _, tg := range p.Targets {
				e, err := parse(tg.Entry, []byte(src.files["frameworks/"+tg.Entry+"/meta.json"]), nil)
				if err != nil {
					t.Fatal(err)
				}
				entries = append(entries, e)
				got = append(got, tg.Rows...)
			}
			want := selection.Select(selection.Request{Entries: entries, Tests: c.Tests, Lite: lite, Subscribers: c.Kind == command.KindTest}).Rows
			if diff := cmp.Diff(want, got); diff != "" || len(got) == 0 {
				t.Errorf("%s (lite %v): plan rows (-selection +plan):\n%s", line, lite, diff)
			}
		}
	}
}

// rows lays out entry's rows from test, conns pairs: rows("gin", "baseline", 512, "json", 4096).
func rows(entry string, testConns ...any) []profile.Row {
	var rs []profile.Row
	for i := 0; i+1 < len(testConns); i += 2 {
		rs = append(rs, profile.Row{Entry: entry, Test: testConns[i].(string), Conns: testConns[i+1].(int)})
	}
	return rs
}

// TestKeep: Keep drops the rows refused, the tests and frameworks left without rows and
// their pairing, and estimates what is left; keeping everything changes nothing.
func TestKeep(t *testing.T) {
	p := Plan{
		Targets: []Target{
			{Entry: "a", Tests: []string{"baseline", "api-16"}, Rows: []profile.Row{{Entry: "a", Test: "baseline", Conns: 512}, {Entry: "a", Test: "api-16", Conns: 1024}}},
			{Entry: "b", Tests: []string{"api-16"}, Rows: []profile.Row{{Entry: "b", Test: "api-16", Conns: 1024}}},
		},
		Paired: []string{"a", "b"},
	}
	p.Estimate = estimate(p.Targets, p.Paired, p.CPUProfile)
	if got := p.Keep(func(profile.Row) bool { return true }); !reflect.DeepEqual(got, p) {
		t.Errorf("Keep(all) = %+v, want the plan unchanged", got)
	}
	got := p.Keep(func(r profile.Row) bool { return r.Test != "api-16" })
	want := Plan{
		Targets: []Target{{Entry: "a", Tests: []string{"baseline"}, Rows: []profile.Row{{Entry: "a", Test: "baseline", Conns: 512}}}},
		Paired:  []string{"a"},
	}
	want.Estimate = estimate(want.Targets, want.Paired, "")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Keep(no api-16) = %+v, want %+v", got, want)
	}
	if got.Estimate >= p.Estimate {
		t.Errorf("the estimate did not shrink: %v, was %v", got.Estimate, p.Estimate)
	}
	if len(p.Targets) != 2 || len(p.Targets[0].Rows) != 2 {
		t.Errorf("Keep changed the plan it was called on: %+v", p)
	}
}
