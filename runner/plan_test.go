package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/profile/selection"
	"github.com/arenabot/arenabot/runner/measure"
)

// writeEntry makes a minimal entry under root.
func writeEntry(t *testing.T, root, name, meta string) {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

const metaTmpl = `{"display_name":"%s","language":"Go","type":"production","engine":"x","description":"","repo":"","enabled":true,"tests":[%s],"maintainers":[]}`

func meta(name, tests string) string {
	return strings.Replace(strings.Replace(metaTmpl, "%s", name, 1), "%s", tests, 1)
}

// unrunnable returns the name of a profile the harness cannot run yet, skipping the test
// when every profile can run.
func unrunnable(t *testing.T) string {
	t.Helper()
	for _, p := range profile.All {
		if !p.Runnable() {
			return p.Name
		}
	}
	t.Skip("every profile can run")
	return ""
}

func TestNewPlan(t *testing.T) {
	root := t.TempDir()
	never := unrunnable(t)
	writeEntry(t, root, "alpha", meta("alpha", `"baseline","json","`+never+`","noisy"`))
	writeEntry(t, root, "beta", meta("beta", `"baseline"`))
	writeEntry(t, root, "gamma", meta("gamma", `"`+never+`"`))
	writeEntry(t, root, "broken", strings.Replace(meta("broken", `"baseline"`), `"display_name":"broken"`, `"display_name":3`, 1))

	t.Run("default selects runnable subscribed profiles in order", func(t *testing.T) {
		p, err := NewPlan(root, []string{"alpha"}, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		got := profileNames(p.Targets[0])
		if want := "baseline,json"; got != want {
			t.Errorf("profiles = %s, want %s", got, want)
		}
		if s := p.Targets[0].Skipped; len(s) != 1 || !strings.HasPrefix(s[0], never+` (test "`+never+`" cannot run here yet: `) {
			t.Errorf("skipped = %q, want %s with its reason", s, never)
		}
		// baseline full: 512, 4096; json full: 4096.
		if p.Rows() != 3 {
			t.Errorf("Rows() = %d, want 3", p.Rows())
		}
	})
	t.Run("explicit tests keep profile order and dedupe", func(t *testing.T) {
		p, err := NewPlan(root, []string{"alpha", "beta", "alpha"}, []string{"baseline"}, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Targets) != 2 || p.Rows() != 2 {
			t.Errorf("targets %d rows %d, want 2 and 2 (lite: one conn count)", len(p.Targets), p.Rows())
		}
		p, err = NewPlan(root, []string{"alpha"}, []string{"json", "baseline", "json"}, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := profileNames(p.Targets[0]); got != "baseline,json" {
			t.Errorf("profiles = %s, want baseline,json", got)
		}
	})
	errCases := []struct {
		name   string
		fws    []string
		tests  []string
		lite   bool
		want   []string
		isMeta bool
	}{
		{name: "unknown framework", fws: []string{"alpah"}, want: []string{"alpah", "alpha"}},
		{name: "unknown test", fws: []string{"alpha"}, tests: []string{"baselin"}, want: []string{`unknown test "baselin"`, `did you mean "baseline"`}},
		{name: "unsupported test", fws: []string{"alpha"}, tests: []string{never}, want: []string{`test "` + never + `" cannot run here yet`, `choose a runnable test of "alpha": "baseline", "json"`}},
		{name: "not subscribed", fws: []string{"beta"}, tests: []string{"json"}, want: []string{`"beta" does not subscribe to test "json"`, `subscribe "beta" to it in its "meta.json"`}},
		{name: "nothing runnable", fws: []string{"gamma"}, want: []string{"subscribes to no test this harness can run"}},
		{name: "one of two entries does not subscribe", fws: []string{"alpha", "beta"}, tests: []string{"json"}, want: []string{`"beta" does not subscribe to test "json"`}},
		{name: "bad meta", fws: []string{"broken"}, want: []string{"broken/meta.json"}, isMeta: true},
		{name: "no framework", want: []string{"no framework given"}},
	}
	for _, tt := range errCases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewPlan(root, tt.fws, tt.tests, tt.lite)
			if !errors.Is(err, ErrInput) {
				t.Fatalf("err = %v, want an ErrInput", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			if _, ok := errors.AsType[*frameworks.MetaError](err); ok != tt.isMeta {
				t.Errorf("MetaError in chain = %v, want %v", ok, tt.isMeta)
			}
		})
	}
}

func profileNames(t measure.Target) string {
	var n []string
	for _, p := range t.Profiles {
		n = append(n, p.Name)
	}
	return strings.Join(n, ",")
}

// TestPlanRows: a plan laid out from rows (a queued job's) measures exactly those rows,
// whatever the mode's own connection counts, and its Rows() counts them.
func TestPlanRows(t *testing.T) {
	alpha := frameworks.Entry{Name: "alpha", Meta: frameworks.Meta{Tests: []string{"baseline", "json"}}}
	beta := frameworks.Entry{Name: "beta", Meta: frameworks.Meta{Tests: []string{"baseline"}}}
	entries := []frameworks.Entry{alpha, beta}
	rows := []profile.Row{
		{Entry: "beta", Test: "baseline", Conns: 512},
		{Entry: "alpha", Test: "json", Conns: 512}, // a lite row, planned for a full runner
		{Entry: "alpha", Test: "baseline", Conns: 4096},
		{Entry: "alpha", Test: "baseline", Conns: 512},
		{Entry: "alpha", Test: "baseline", Conns: 512}, // given twice: measured once
		{Entry: "gone", Test: "baseline", Conns: 512},  // not among the entries
	}
	for _, lite := range []bool{false, true} {
		p := planRows(entries, rows, nil, lite)
		got := planStrings(p)
		want := []string{"beta/baseline/512", "alpha/json/512", "alpha/baseline/4096", "alpha/baseline/512"}
		if !slices.Equal(got, want) || p.Rows() != len(want) || p.Lite != lite {
			t.Errorf("lite %v: rows %v (Rows() %d), want %v", lite, got, p.Rows(), want)
		}
	}
}

// TestNewPlanIsTheSelection: a bench measures the selection's rows, in its order.
func TestNewPlanIsTheSelection(t *testing.T) {
	root := t.TempDir()
	writeEntry(t, root, "alpha", meta("alpha", `"baseline","json","upload"`))
	writeEntry(t, root, "beta", meta("beta", `"json","baseline"`))
	for _, lite := range []bool{false, true} {
		p, err := NewPlan(root, []string{"beta", "alpha"}, nil, lite)
		if err != nil {
			t.Fatal(err)
		}
		var entries []frameworks.Entry
		for _, tg := range p.Targets {
			entries = append(entries, tg.Entry)
		}
		var want []string
		for _, r := range selection.Select(selection.Request{Entries: entries, Lite: lite}).Rows {
			want = append(want, fmt.Sprintf("%s/%s/%d", r.Entry, r.Test, r.Conns))
		}
		if got := planStrings(p); !slices.Equal(got, want) {
			t.Errorf("lite %v: plan %v, want the selection's %v", lite, got, want)
		}
	}
}

func planStrings(p measure.Plan) []string {
	var out []string
	for _, tg := range p.Targets {
		for _, pr := range tg.Profiles {
			for _, n := range pr.ConnCounts(p.Lite) {
				out = append(out, fmt.Sprintf("%s/%s/%d", tg.Entry.Name, pr.Name, n))
			}
		}
	}
	return out
}

// TestValidationTestsTLSCheck: an entry whose meta.json sets tls_check is validated on that
// section too (all its tests, or -t tls_check); another entry asked for it is told how to opt in.
func TestValidationTestsTLSCheck(t *testing.T) {
	root := t.TempDir()
	writeEntry(t, root, "plain", meta("plain", `"json","baseline"`))
	writeEntry(t, root, "hardened", strings.Replace(meta("hardened", `"json","baseline"`), `"enabled":true`, `"enabled":true,"tls_check":true`, 1))
	for _, tt := range []struct {
		entry string
		tests []string
		want  []string
		err   string
	}{
		{"plain", nil, []string{"baseline", "json"}, ""},
		{"hardened", nil, []string{"baseline", "json", "tls_check"}, ""},
		{"hardened", []string{"tls_check", "json", "tls_check"}, []string{"tls_check", "json"}, ""},
		{"plain", []string{"json", "tls_check"}, nil, `plain does not opt into the tls_check checks; set "tls_check": true in its meta.json (docs/meta-json.md) or leave tls_check out of -t`},
	} {
		_, got, err := ValidationTests(root, tt.entry, tt.tests)
		if tt.err != "" {
			if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ValidationTests(%s, %q) error = %v, want %q", tt.entry, tt.tests, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ValidationTests(%s, %q) = %q, %v; want %q", tt.entry, tt.tests, got, err, tt.want)
		}
	}
}
