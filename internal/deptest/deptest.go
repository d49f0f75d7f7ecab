// Package deptest keeps the import arrows of docs/architecture.md ("Import rules") true: each
// package's TestDeps lists what its production build may depend on, and Check fails when
// it depends on more.
package deptest

import (
	"os/exec"
	"strings"
	"testing"
)

// Module is this module's path.
const Module = "github.com/arenabot/arenabot"

// Rules say what one package's production build may depend on.
type Rules struct {
	// Module lists the packages of this module it may import, as paths below the module
	// ("profile"); the package itself is always allowed.
	Module []string
	// ThirdParty lists the import path prefixes of other modules it may use; nil allows any,
	// StdOnly allows none.
	ThirdParty []string
	StdOnly    bool
	// Banned names dependencies it must never have, each with the reason.
	Banned map[string]string
}

// Check lists the dependencies of the package in the current directory and reports every
// one the rules do not allow. No package may depend on "testing".
func Check(t *testing.T, r Rules) {
	t.Helper()
	self, err := exec.Command("go", "list", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	name := strings.TrimSpace(string(self))
	allowed := map[string]bool{name: true}
	for _, m := range r.Module {
		allowed[Module+"/"+m] = true
	}
	for line := range strings.Lines(string(out)) {
		dep, std, _ := strings.Cut(strings.TrimSpace(line), " ")
		if why, ok := r.Banned[dep]; ok {
			t.Errorf("%s depends on %s: %s", name, dep, why)
		}
		switch {
		case dep == "testing":
			t.Errorf("%s depends on testing: no test code in production builds", name)
		case std == "true":
		case dep == Module || strings.HasPrefix(dep, Module+"/"):
			if !allowed[dep] {
				t.Errorf("%s depends on %s: allowed from this module are only %v", name, dep, r.Module)
			}
		case r.StdOnly:
			t.Errorf("%s depends on %s: it uses the standard library only", name, dep)
		case r.ThirdParty != nil && !hasPrefix(dep, r.ThirdParty):
			t.Errorf("%s depends on %s: allowed third-party modules are only %v", name, dep, r.ThirdParty)
		}
	}
}

func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if s == p || strings.HasPrefix(s, p+"/") {
			return true
		}
	}
	return false
}
