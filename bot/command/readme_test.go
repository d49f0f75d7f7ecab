package command

import (
	stdflag "flag"
	"os"
	"strings"
	"testing"
)

var update = stdflag.Bool("update", false, "rewrite the README's table of commands from Specs")

const (
	readme      = "../../README.md"
	beginMarker = "<!-- BEGIN commands: rendered from bot/command.Specs by go test ./bot/command -update; do not edit -->\n"
	endMarker   = "<!-- END commands -->\n"
)

// TestREADMECommands keeps the README's table of commands equal to Specs, the table that
// also drives the parser and the /benchmark-help reply.
func TestREADMECommands(t *testing.T) {
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, beginMarker), strings.Index(s, endMarker)
	if i < 0 || j < i {
		t.Fatalf("%s has no commands markers (%q … %q)", readme, beginMarker, endMarker)
	}
	want := s[:i+len(beginMarker)] + READMETable() + s[j:]
	if *update {
		if err := os.WriteFile(readme, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if s != want {
		t.Errorf("the README's table of commands is not Specs'; run: go test ./bot/command -update\nwant:\n%s", READMETable())
	}
}

// TestSpecsDriveTheParser: each command takes exactly the flags its Spec lists, and a
// required one cannot be left out.
func TestSpecsDriveTheParser(t *testing.T) {
	values := map[flag]string{flagFramework: "gin", flagTest: "baseline", flagCompare: "fiber", flagBaseline: BaselineCommitted}
	for _, s := range Specs {
		for _, f := range allFlags {
			listed := false
			for _, u := range s.Uses {
				listed = listed || u.Flag == f
			}
			line := strings.TrimSpace(s.Kind.Word() + " " + f.long + " " + values[f])
			if s.Kind == KindTest && f != flagTest {
				line += " -t baseline"
			}
			_, found, err := Parse(line)
			if !found {
				t.Fatalf("%q: no command found", line)
			}
			if listed && err != nil {
				t.Errorf("%q: refused although its Spec lists %s: %v", line, f.long, err)
			}
			if !listed && err == nil {
				t.Errorf("%q: accepted although its Spec does not list %s", line, f.long)
			}
		}
		for _, u := range s.Uses {
			if _, _, err := Parse(s.Kind.Word()); u.Required && err == nil {
				t.Errorf("%s without its required %s was accepted", s.Kind.Word(), u.Flag.long)
			}
		}
	}
}

// TestREADMEQueueRule: the README states the queue's rule in the words /benchmark-help
// replies with (QueueRule), so the two cannot drift apart.
func TestREADMEQueueRule(t *testing.T) {
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(string(b)), " "), QueueRule) {
		t.Errorf("%s does not state the queue's rule as /benchmark-help does; add it verbatim:\n%s", readme, QueueRule)
	}
}
