package command

// help is the reply to /benchmark-help. It starts with a line of prose, not a heading, so
// that it renders whether the reply puts the requester's mention on a line of its own or in
// front of the first line; every heading stands on its own line between blank lines. Every
// command, flag and placeholder is a code span, and the examples sit in a code fence, so
// the reply itself holds no command.
const help = "These are the benchmark commands. Write one at the start of a line of a new comment; " +
	"the first command in a comment counts, and commands in code blocks and `>` quotes are ignored.\n" +
	"\n" +
	"### Commands\n" +
	"\n" +
	"| command | does |\n" +
	"|---|---|\n" +
	"| `/benchmark [-f <framework>] [-t <test>,...] [--save] [--compare <framework>]` | measures one framework; without `-f`, the one framework this PR changes |\n" +
	"| `/benchmark-multiple [-f <framework>,...] [-t <test>,...] [--save]` | measures several frameworks in one job; without `-f`, every framework this PR changes |\n" +
	"| `/benchmark-test -t <test> [--save]` | measures one test on every framework subscribed to it |\n" +
	"| `/benchmark-cancel` | cancels this PR's waiting or running job |\n" +
	"| `/benchmark-approve` | approves this PR's pending request (collaborators; same as 👍 on the status comment) |\n" +
	"| `/benchmark-help` | shows this help |\n" +
	"\n" +
	"### Flags\n" +
	"\n" +
	"Flags come in any order: `-f gin`, `-f=gin`, `--framework gin` and `--framework=gin` are the same " +
	"(`-t`/`--test` likewise). Lists are comma separated, with no spaces or inside quotes: `-f gin,fiber`. " +
	"Without `-t`, every test the framework subscribes to runs. `--save` commits the results to this PR's branch. " +
	"`--compare <framework>` adds that framework's results for comparison. " +
	"Names are lowercase letters, digits, `.`, `_` and `-`.\n" +
	"\n" +
	"### Examples\n" +
	"\n" +
	"```\n" +
	"/benchmark -f gin\n" +
	"/benchmark -f gin -t baseline,json --save\n" +
	"/benchmark -f gin --compare fiber\n" +
	"/benchmark-multiple -f gin,fiber,echo --save\n" +
	"/benchmark-multiple --save\n" +
	"/benchmark-test -t baseline\n" +
	"```\n"

// Help returns the grammar as Markdown, for /benchmark-help replies. Its first line is prose,
// not a heading, so a reply may put a mention in front of it.
func Help() string { return help }
