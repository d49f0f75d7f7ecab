package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/frameworks"
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

func TestNewPlan(t *testing.T) {
	root := t.TempDir()
	writeEntry(t, root, "alpha", meta("alpha", `"baseline","json","baseline-h2","noisy"`))
	writeEntry(t, root, "beta", meta("beta", `"baseline"`))
	writeEntry(t, root, "gamma", meta("gamma", `"baseline-h2"`))
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
		if len(p.Targets[0].Skipped) != 1 || !strings.HasPrefix(p.Targets[0].Skipped[0], "baseline-h2: ") {
			t.Errorf("skipped = %q, want baseline-h2 with its reason", p.Targets[0].Skipped)
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
		{name: "unknown test", fws: []string{"alpha"}, tests: []string{"baselin"}, want: []string{`unknown test "baselin"`, "did you mean baseline"}},
		{name: "unsupported test", fws: []string{"alpha"}, tests: []string{"baseline-h2"}, want: []string{"cannot be run by this harness yet", "pick one of"}},
		{name: "not subscribed", fws: []string{"beta"}, tests: []string{"json"}, want: []string{`beta does not subscribe to "json"`, "meta.json"}},
		{name: "nothing runnable", fws: []string{"gamma"}, want: []string{"subscribes to no test this harness can run"}},
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

func profileNames(t Target) string {
	var n []string
	for _, p := range t.Profiles {
		n = append(n, p.Name)
	}
	return strings.Join(n, ",")
}
