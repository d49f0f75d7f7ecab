package plan

import (
	"strings"

	"github.com/arenabot/arenabot/md"
	"github.com/arenabot/arenabot/profile"
)

// HelpTests is the part of the /benchmark-help reply that names the tests: every test the
// harness runs, in the order replies list rows, and those it cannot run yet, with why.
func HelpTests() string {
	var runs []string
	notYet := map[string][]string{}
	var reasons []string
	for _, p := range profile.All {
		if p.Runnable() {
			runs = append(runs, md.Code(p.Name))
			continue
		}
		if _, ok := notYet[p.Unsupported]; !ok {
			reasons = append(reasons, p.Unsupported)
		}
		notYet[p.Unsupported] = append(notYet[p.Unsupported], md.Code(p.Name))
	}
	var b strings.Builder
	b.WriteString("### Tests\n\n")
	b.WriteString("`-t` takes these names; a framework runs the ones its `meta.json` subscribes to. ")
	b.WriteString(md.Plural(len(runs), "test runs", "tests run") + ", in the order replies list them: ")
	b.WriteString(strings.Join(runs, ", ") + ".\n")
	for _, r := range reasons {
		b.WriteString("\nNot run yet (" + md.Text(r) + "): " + strings.Join(notYet[r], ", ") + ".\n")
	}
	return b.String()
}
