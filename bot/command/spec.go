package command

import (
	"strings"

	"github.com/arenabot/arenabot/md"
)

// A Spec is one command of the grammar, as data: its word, the flags it takes with their
// placeholders, what it does and who may use it. Specs drives the parser (which flags a
// command takes), the /benchmark-help reply and the README's table of commands.
type Spec struct {
	Kind Kind
	Uses []Use
	Does string // what it does, for the help table
	Who  string // who may use it, for the README
	// Operand is the placeholder of the one optional bare word the command takes ("<sha>"
	// of /benchmark-approve), "" when it takes none.
	Operand string
}

// A Use is a flag as one command takes it: "[-t <test>,...]", or "-t <test>" when required.
type Use struct {
	Flag     flag
	Arg      string // the value's placeholder ("<test>,..."); "" for a flag without one
	Required bool
}

// Specs lists every command, in the order the help shows them.
var Specs = []Spec{
	{KindBenchmark, []Use{{flagFramework, "<framework>", false}, {flagTest, "<test>,...", false}, {flagSave, "", false}, {flagCompare, "<framework>", false}, {flagBaseline, BaselineCommitted, false}, {flagProfile, "[=all|none]", false}},
		"measures one framework; without `-f`, the one framework this PR changes",
		"anyone: a user with write access or more, or one the arena's `.arenabot.yml` trusts, is approved at once; anyone else's request waits for a collaborator's 👍", ""},
	{KindMultiple, []Use{{flagFramework, "<framework>,...", false}, {flagTest, "<test>,...", false}, {flagSave, "", false}, {flagBaseline, BaselineCommitted, false}, {flagProfile, "[=all|none]", false}},
		"measures several frameworks in one job; without `-f`, every framework this PR changes",
		"as `/benchmark`", ""},
	{KindTest, []Use{{flagTest, "<test>", true}, {flagSave, "", false}, {flagBaseline, BaselineCommitted, false}, {flagProfile, "[=all|none]", false}},
		"measures one test on every framework subscribed to it",
		"as `/benchmark`", ""},
	{KindSweep, []Use{{flagFramework, "<framework>,...", false}, {flagTest, "<test>,...", false}},
		"measures every enabled framework on every test it subscribes to (only those `-f` and `-t` name), spread over the pool's hosts, and commits the results to this PR's branch in one commit; it gives its host to any other request between rows",
		"maintainers (write access or more)", ""},
	{KindCancel, nil, "cancels this PR's waiting or running job",
		"the requester; a maintainer (write access or more) cancels anyone's", ""},
	{KindApprove, nil, "approves this PR's pending request, as 👍 on the status comment does; " +
		"once the PR's head moved after the ack, only `<sha>` naming the acked commit (7 to 40 hex digits) approves it",
		"users with write, maintain or admin access", "<sha>"},
	{KindHelp, nil, "shows this help", "anyone", ""},
}

// Kinds lists every command, in the order Help shows them.
var Kinds = func() []Kind {
	ks := make([]Kind, len(Specs))
	for i, s := range Specs {
		ks[i] = s.Kind
	}
	return ks
}()

// specOf returns k's Spec.
func specOf(k Kind) Spec {
	for _, s := range Specs {
		if s.Kind == k {
			return s
		}
	}
	return Spec{Kind: k}
}

// flagsOf lists the flags kind takes.
func flagsOf(k Kind) []flag {
	var fs []flag
	for _, u := range specOf(k).Uses {
		fs = append(fs, u.Flag)
	}
	return fs
}

// Synopsis is the command as the help writes it: "/benchmark-test -t <test> [--save]".
func (s Spec) Synopsis() string {
	parts := []string{s.Kind.Word()}
	for _, u := range s.Uses {
		use := u.Flag.short
		if use == "" {
			use = u.Flag.long
		}
		switch {
		case strings.HasPrefix(u.Arg, "["): // an optional value, "--profile[=all|none]"
			use += u.Arg
		case u.Arg != "":
			use += " " + u.Arg
		}
		if !u.Required {
			use = "[" + use + "]"
		}
		parts = append(parts, use)
	}
	if s.Operand != "" {
		parts = append(parts, "["+s.Operand+"]")
	}
	return strings.Join(parts, " ")
}

// table renders the commands as a Markdown table, with the who column or without it.
func table(who bool) string {
	var b strings.Builder
	if who {
		b.WriteString("| command | does | who may use it |\n|---|---|---|\n")
	} else {
		b.WriteString("| command | does |\n|---|---|\n")
	}
	for _, s := range Specs {
		b.WriteString("| " + md.CodeCell(s.Synopsis()) + " | " + s.Does)
		if who {
			b.WriteString(" | " + s.Who)
		}
		b.WriteString(" |\n")
	}
	return b.String()
}

// READMETable is the table of commands that the README holds between its commands markers
// (cmd/arenabot's TestDocsGenerated keeps it equal).
func READMETable() string { return table(true) }
