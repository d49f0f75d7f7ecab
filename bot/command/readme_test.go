package command

import (
	"os"
	"strings"
	"testing"
)

const readme = "../../README.md"

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
