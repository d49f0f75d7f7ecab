package profiledoc_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/internal/profiledoc"
	"github.com/arenabot/arenabot/profile"
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
		t.Fatalf("%v; run: go test ./internal/profiledoc -update", err)
	}
	if string(want) != got {
		t.Fatalf("%s is stale: the profile table, the load tools or the checks changed; run: go test ./internal/profiledoc -update", profiledoc.Path)
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

// TestDocNamesFigures: the table and every section name the figures the profile's rows
// are judged by (profile.Figures): CPU per request and the score on a fixed-rate row, RPS
// on a closed-loop one, MB/s on a bandwidth one, echoes on WebSocket; and the score's
// formula is given once.
func TestDocNamesFigures(t *testing.T) {
	doc := profiledoc.Render()
	section := func(name string) string {
		s := doc[strings.Index(doc, "\n## "+name+"\n")+1:]
		if end := strings.Index(s[3:], "\n## "); end >= 0 {
			s = s[:end+3]
		}
		return s
	}
	for name, want := range map[string][2]string{
		"latency-10k": {"| CPU/req, score · p99 |", "- **Judged by:** primary: server CPU µs per request (the server's cgroup CPU time over the run ÷ its 2xx responses); scored: the arena's fixed-rate score (see [Figures](#figures)); secondary: 99th-percentile latency\n"},
		"baseline":    {"| RPS · CPU/req, p99 |", "- **Judged by:** primary: responses per second (2xx responses ÷ the run's duration); secondary: server CPU µs per request"},
		"download":    {"| MB/s · CPU/req, p99 |", "- **Judged by:** primary: response MB/s"},
		"echo-ws":     {"| echoes/s · CPU/req |", "- **Judged by:** primary: WebSocket echoes per second; secondary: server CPU µs per request"},
	} {
		_, row, _ := strings.Cut(doc, "\n| ["+name+"](#"+name+") |")
		if row, _, _ = strings.Cut(row, "\n"); !strings.Contains(row, want[0]) {
			t.Errorf("the table's row of %s is %q; want it to say %q", name, row, want[0])
		}
		if !strings.Contains(section(name), want[1]) {
			t.Errorf("the section of %s does not say %q:\n%s", name, want[1], section(name))
		}
	}
	for _, p := range profile.All {
		s := section(p.Name)
		if !strings.Contains(s, "- **Judged by:** primary: ") {
			t.Errorf("the section of %s names no figures", p.Name)
		}
		if scored := strings.Contains(s, "scored: the arena's fixed-rate score"); scored != p.Figures().Scored {
			t.Errorf("the section of %s says scored %v; its figures say %v", p.Name, scored, p.Figures().Scored)
		}
	}
	if !strings.Contains(doc, "`score = 100 × rate × (0.50·cpu + 0.25·p99 + 0.25·mean)`") {
		t.Error("the doc does not give the arena's fixed-rate score formula")
	}
}

// TestDocShowsReferencesAsWritten: a check that asks for a character reference written out
// (fortunes wants "&lt;script&gt;" in the body) shows it as written, not as the character it
// names, while a bare & (a query's) stays as it is.
func TestDocShowsReferencesAsWritten(t *testing.T) {
	doc := profiledoc.Render()
	if !strings.Contains(doc, `the body contains "&amp;lt;script&amp;gt;" and not "&lt;script&gt;alert"`) {
		t.Error(`the fortunes section does not show "&lt;script&gt;" as written`)
	}
	if !strings.Contains(doc, "| probe GET /baseline11?a=1&b=1 | required |") {
		t.Error("a query's & is escaped")
	}
}
