package profiledoc_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/profiledoc"
	"github.com/arenabot/arenabot/validate"
)

var update = flag.Bool("update", false, "rewrite docs/profiles.md")

// TestDocIsCurrent fails when docs/profiles.md is not what the profile table, the load-tool
// adapters and the checks render; -update rewrites it.
func TestDocIsCurrent(t *testing.T) {
	path := filepath.Join("..", "..", filepath.FromSlash(profiledoc.Path))
	got := profiledoc.Render()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; run: go test ./runner/profiledoc -update", err)
	}
	if string(want) != got {
		t.Fatalf("%s is stale: the profile table, the load tools or the checks changed; run: go test ./runner/profiledoc -update", profiledoc.Path)
	}
}

// TestDocCoversEverything: every profile has its section and anchor, and every check of
// every profile is listed with its tier.
func TestDocCoversEverything(t *testing.T) {
	doc := profiledoc.Render()
	advisory := 0
	for _, p := range profile.All {
		if !strings.Contains(doc, "\n## "+p.Name+"\n") || !strings.Contains(doc, "](#"+p.Name+")") {
			t.Errorf("profile %s has no section or no link to it", p.Name)
		}
		for _, c := range validate.Describe(p.Name) {
			line := "| " + strings.NewReplacer("*", "\\*", "<", "&lt;", ">", "&gt;").Replace(c.Name) + " | " + c.Tier.String()
			if !strings.Contains(doc, line) {
				t.Errorf("%s: check %q is not listed with its tier (%q)", p.Name, c.Name, line)
			}
			if c.Tier == validate.Advisory || c.Advisory != "" {
				advisory++
			}
		}
	}
	if advisory == 0 {
		t.Error("no advisory check documented")
	}
	for _, bad := range []string{"design.md", "httparena", "protocols.md"} {
		if strings.Contains(doc, bad) {
			t.Errorf("the doc cites %q, which is not in the repository", bad)
		}
	}
}
