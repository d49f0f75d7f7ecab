package command

// help is the reply to /benchmark-help. It starts with a line of prose, not a heading, so
// that it renders whether the reply puts the requester's mention on a line of its own or in
// front of the first line; every heading stands on its own line between blank lines. Every
// command, flag and placeholder is a code span, and the examples sit in a code fence, so
// the reply itself holds no command.
var help = "These are the benchmark commands. Write one at the start of a line of a new comment; " +
	"the first command in a comment counts, and commands in code blocks and `>` quotes are ignored.\n" +
	"\n" +
	"### Commands\n" +
	"\n" +
	table(false) +
	"\n" +
	"### Flags\n" +
	"\n" +
	"Flags come in any order: `-f gin`, `-f=gin`, `--framework gin` and `--framework=gin` are the same " +
	"(`-t`/`--test` likewise). Lists are comma separated, with no spaces or inside quotes: `-f gin,fiber`. " +
	"Without `-t`, every test the framework subscribes to runs. `--save` commits the results to this PR's branch. " +
	"`--compare <framework>` compares with that framework instead, measured in the same job and interleaved the same way. " +
	"`--profile` adds one more run of each test at its first connection count, not counted in the numbers, " +
	"while the runner samples the server's CPUs with perf: the top functions by self and cumulative CPU go under the table, " +
	"with the change from the base when it was measured in the job, and `--save` commits the pprof profile and its flame graph beside the results. " +
	"A `/benchmark` of one framework is profiled by default; `--profile=all` profiles every row, `--profile=none` none.\n" +
	"Names are lowercase letters, digits, `.`, `_` and `-`.\n" +
	"\n" +
	"### Δ columns\n" +
	"\n" +
	"By default each framework this PR changes is measured against itself built at the PR's merge base, " +
	"in the same job on the same host, interleaved run by run (base, head, head, base, …), " +
	"and each Δ is the relative difference of the means with its interval: " +
	"`-6.1% ±1.8% worse` is a change (better or worse for that figure: more CPU per request, p99 or memory is worse), " +
	"`~0% (±2.4%)` is none, and the ± is the smallest change the row could have shown. " +
	"The table's Δ is the figure each test is judged by (requests per second; CPU per request on the fixed-rate tests, " +
	"whose rate cannot move); a second table gives Δ CPU/req, Δ p99 and, on fixed-rate tests, the arena's 0–100 score. " +
	"A row's intervals are widened together (Bonferroni), so a row with no change shows one by luck in at most 5% of rows. " +
	"A framework new in this PR has no base (`NEW`); one this PR does not change is measured once " +
	"and compared with its committed results, labelled so. " +
	"`--baseline committed` skips the base and compares every framework with the results committed on the base branch, " +
	"measured at another time (the only value `--baseline` takes).\n" +
	"\n" +
	"### Queue\n" +
	"\n" +
	QueueRule + "\n" +
	"\n" +
	"### Examples\n" +
	"\n" +
	"```\n" +
	"/benchmark -f gin\n" +
	"/benchmark -f gin -t baseline,json --save\n" +
	"/benchmark -f gin --compare fiber\n" +
	"/benchmark -f gin --baseline committed\n" +
	"/benchmark -f gin -t json --profile=all\n" +
	"/benchmark-multiple -f gin,fiber,echo --save\n" +
	"/benchmark-multiple --save\n" +
	"/benchmark-test -t baseline\n" +
	"/benchmark-approve 1a2b3c4\n" +
	"```\n"

// QueueRule says how approved requests wait for the runner, as the arena's queue does: one
// deep per pull request. The /benchmark-help reply says it under "Queue".
const QueueRule = "Approved requests run in the order they were approved, one at a time on each benchmark host, and one at a time for each pull request. " +
	"Each pull request has at most one request waiting in line (the arena's settings file may allow more): a newer approved request on the same pull request " +
	"takes the place of its waiting one, which gets a reply saying so. " +
	"Requests of different pull requests never displace each other, and a new request never stops the running one " +
	"(`/benchmark-cancel` does). The status comment shows the request's place in line and the request ahead of it, " +
	"and follows the line as it moves."

// Help returns the grammar as Markdown, for /benchmark-help replies. Its first line is prose,
// not a heading, so a reply may put a mention in front of it.
func Help() string { return help }
