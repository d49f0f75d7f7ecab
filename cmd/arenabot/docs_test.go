package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/bot/command"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/loadgen"
	"github.com/arenabot/arenabot/settings"
	"github.com/arenabot/arenabot/validate"
	"github.com/arenabot/arenabot/validate/protocol"
)

// The docs' facts come from the code: the parts of README.md and docs/ between BEGIN and
// END markers are rendered here (TestDocsGenerated), and every flag, environment variable
// and count the prose states is checked against the code (TestDocsFlags,
// TestDocsVariables, TestDocsCounts). A doc that disagrees fails the suite.

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated parts of README.md and docs/ from the code")

const docsRoot = "../.."

// docCommands are the subcommands whose --help docs/cli.md holds, in main's usage order.
var docCommands = []string{"bench", "build", "validate", "serve", "work", "doctor", "queue", "sweep", "site"}

// A commandHelp is one subcommand's --help text and the ARENA_ variables its parser read.
type commandHelp struct {
	name, usage string
	env         []string
}

// helps runs every subcommand's --help as a user would, with HOME "~" so that the defaults
// it prints are the same on every machine.
func helps(t *testing.T) []commandHelp {
	t.Helper()
	t.Setenv("HOME", "~")
	t.Setenv("XDG_CACHE_HOME", "")
	var out []commandHelp
	for _, name := range docCommands {
		var env []string
		getenv := func(k string) string {
			if strings.HasPrefix(k, "ARENA_") && !slices.Contains(env, k) {
				env = append(env, k)
			}
			if k == "HOME" {
				return "~"
			}
			return ""
		}
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), []string{name, "--help"}, getenv, &stdout, &stderr); err != nil {
			t.Fatalf("arenabot %s --help: %v (stderr: %s)", name, err, stderr.String())
		}
		usage := strings.ReplaceAll(stdout.String(), os.TempDir(), "$TMPDIR")
		out = append(out, commandHelp{name: name, usage: usage, env: env})
	}
	return out
}

// flagRe finds the long flags in a pflag usage text.
var flagRe = regexp.MustCompile(`(?m)^\s+(?:-[a-zA-Z], )?--([a-z0-9][a-z0-9-]*)`)

// renderCLI is docs/cli.md: main's usage, then each subcommand's --help, then the
// environment variables with the commands that read them.
func renderCLI(hs []commandHelp) string {
	var b strings.Builder
	b.WriteString("The reference of `arenabot`'s command line: what `arenabot --help` and each\n" +
		"`arenabot <command> --help` print, and the environment variables each command reads. A\n" +
		"flag given on the command line replaces its variable.\n\n```\n" + usage + "```\n")
	readers := map[string][]string{}
	var vars []string
	for _, h := range hs {
		fmt.Fprintf(&b, "\n## `arenabot %s`\n\n```\n%s```\n", h.name, h.usage)
		for _, v := range h.env {
			if readers[v] == nil {
				vars = append(vars, v)
			}
			readers[v] = append(readers[v], h.name)
		}
	}
	slices.Sort(vars)
	b.WriteString("\n## Environment variables\n\n| variable | read by |\n|---|---|\n")
	for _, v := range vars {
		fmt.Fprintf(&b, "| `%s` | %s |\n", v, "`"+strings.Join(readers[v], "`, `")+"`")
	}
	return b.String()
}

// renderProfiles is the README's list of the profiles by load tool.
func renderProfiles() (string, error) {
	byTool := map[string][]string{}
	runnable := 0
	var idle []string
	for _, p := range profile.All {
		if !p.Runnable() {
			idle = append(idle, "`"+p.Name+"` ("+p.Unsupported+")")
			continue
		}
		runnable++
		tool, err := loadgen.ForProfile(p)
		if err != nil {
			return "", err
		}
		byTool[tool.Name] = append(byTool[tool.Name], "`"+p.Name+"`")
	}
	var b strings.Builder
	if runnable == len(profile.All) {
		fmt.Fprintf(&b, "All %d profiles run, each with a pinned load tool; `--lite` runs the tool in its own image, built on first use:\n\n", len(profile.All))
	} else {
		fmt.Fprintf(&b, "%d of the %d profiles run, each with a pinned load tool; `--lite` runs the tool in its own image, built on first use. Not run yet: %s.\n\n", runnable, len(profile.All), strings.Join(idle, ", "))
	}
	b.WriteString("| load tool | `--lite` image | profiles |\n|---|---|---|\n")
	for _, t := range loadgen.All() {
		if ps := byTool[t.Name]; len(ps) > 0 {
			fmt.Fprintf(&b, "| %s %s | `%s` | %s |\n", t.Name, t.PinnedVersion, loadgen.ImageFor(t), strings.Join(ps, ", "))
		}
	}
	b.WriteString("\n`arenaload` is this module's own generator (`cmd/arenaload`), for the profiles no packaged tool runs faithfully. [`docs/profiles.md`](docs/profiles.md) has every profile's contract, command line and checks.\n")
	return b.String(), nil
}

// renderPorts is the table of the ports an entry's server listens on, by protocol, and the
// host ports the sidecars and compose stacks take.
func renderPorts() string {
	type key struct {
		port   int
		scheme string
		probe  bool
	}
	var keys []key
	names := map[key][]string{}
	add := func(k key, name string) {
		if names[k] == nil {
			keys = append(keys, k)
		}
		names[k] = append(names[k], "`"+name+"`")
	}
	for _, p := range profile.All {
		if p.Compose {
			continue
		}
		add(key{p.Port, p.Scheme, false}, p.Name)
		if port, scheme := p.ProbeAt(); port != p.Port || scheme != p.Scheme {
			add(key{port, scheme, true}, p.Name)
		}
	}
	slices.SortStableFunc(keys, func(a, b key) int { return a.port - b.port })
	var b strings.Builder
	b.WriteString("| port | protocol | profiles |\n|---|---|---|\n")
	for _, k := range keys {
		what := k.scheme
		if u, err := protocol.For(k.scheme); err == nil {
			what = u.Describe() // as the probe and the checks speak it
		}
		if k.probe {
			what += ", the readiness probe only"
		}
		fmt.Fprintf(&b, "| %d | %s | %s |\n", k.port, what, strings.Join(names[k], ", "))
	}
	fmt.Fprintf(&b, "| %d | HTTP/1.1 over TLS, its pair in `%s` | an entry with `\"tls_check\": true` |\n", frameworks.TLSCheckPort, frameworks.CertsTLSDir)
	var others []string
	for _, h := range profile.HostPorts() {
		by := map[string][]string{}
		var services []string
		for _, u := range h.Users {
			if u.Service == profile.ServiceServer {
				continue
			}
			if by[u.Service] == nil {
				services = append(services, u.Service)
			}
			by[u.Service] = append(by[u.Service], "`"+u.Profile+"`")
		}
		for _, svc := range services {
			others = append(others, fmt.Sprintf("%d (%s: %s)", h.Port, svc, strings.Join(by[svc], ", ")))
		}
	}
	if len(others) > 0 {
		fmt.Fprintf(&b, "\nSidecars and compose-stack services take these host ports while their rows run: %s.\n", strings.Join(others, ", "))
	}
	return b.String()
}

// renderers are the generated blocks, by the name in their markers.
func renderers(t *testing.T) map[string]string {
	t.Helper()
	profiles, err := renderProfiles()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"cli":      renderCLI(helps(t)),
		"profiles": profiles,
		"ports":    renderPorts(),
		"commands": command.READMETable(),
		"settings": settings.Schema(),
	}
}

// docFiles are the Markdown files the checks read: the README, docs/ and deploy/README.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{filepath.Join(docsRoot, "README.md"), filepath.Join(docsRoot, "deploy", "README.md")}
	more, err := filepath.Glob(filepath.Join(docsRoot, "docs", "*.md"))
	if err != nil || len(more) == 0 {
		t.Fatalf("no docs/*.md found (%v)", err)
	}
	return append(files, more...)
}

var beginRe = regexp.MustCompile(`<!-- BEGIN ([a-z-]+):[^\n]*-->\n`)

// regenerate returns s with every block whose name render knows rendered again, and the
// names of the blocks it found.
func regenerate(s string, render map[string]string) (string, []string, error) {
	var b strings.Builder
	var found []string
	for {
		m := beginRe.FindStringSubmatchIndex(s)
		if m == nil {
			b.WriteString(s)
			return b.String(), found, nil
		}
		name := s[m[2]:m[3]]
		b.WriteString(s[:m[1]])
		s = s[m[1]:]
		body, ok := render[name]
		if !ok {
			continue // not a generated block
		}
		end := "<!-- END " + name + " -->\n"
		j := strings.Index(s, end)
		if j < 0 {
			return "", nil, fmt.Errorf("block %q has no %q", name, strings.TrimSpace(end))
		}
		found = append(found, name)
		b.WriteString(body)
		s = s[j:]
	}
}

// TestDocsGenerated keeps each generated block equal to what the code renders.
func TestDocsGenerated(t *testing.T) {
	render := renderers(t)
	seen := map[string]bool{}
	for _, path := range docFiles(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, found, err := regenerate(string(b), render)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, n := range found {
			seen[n] = true
		}
		if want == string(b) {
			continue
		}
		if *updateDocs {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s is stale: a generated block differs from the code; run: go test ./cmd/arenabot -run TestDocsGenerated -update-docs", path)
	}
	for name := range render {
		if !seen[name] {
			t.Errorf("no doc holds the %q block (<!-- BEGIN %s: … --> … <!-- END %s -->)", name, name, name)
		}
	}
}

// guides are the hand-written docs: every doc file but the generated ones.
func guides(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, path := range docFiles(t) {
		if base := filepath.Base(path); base == "cli.md" || base == "profiles.md" {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out[path] = string(b)
	}
	return out
}

// codeText is every file of the repository a doc may name a flag or a variable of other
// than the docs: Go sources (tests too: testing.md names their variables; not this file,
// which holds the invented names below), scripts, the deploy material. A token found
// nowhere in it is a doc's invention, or a leftover of code that is gone.
func codeText(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(docsRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "testdata" || name == "site" || name == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		keep := strings.HasSuffix(name, ".go") && name != "docs_test.go" ||
			strings.HasSuffix(name, ".sh") || strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".service") ||
			strings.HasSuffix(name, ".json") || strings.HasPrefix(filepath.ToSlash(path), docsRoot+"/.ci/") || name == "Dockerfile"
		if !keep {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		b.Write(data)
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var (
	docFlagRe = regexp.MustCompile("(?:^|[\\s`(\\[])--([a-z][a-z0-9-]*[a-z0-9])")
	docVarRe  = regexp.MustCompile(`\bARENA_[A-Z0-9_]*[A-Z0-9]\b`)
)

// lineOf is the 1-based line of offset i in s.
func lineOf(s string, i int) int { return strings.Count(s[:i], "\n") + 1 }

// knownFlags are the flags of every arenabot command (from their --help) and of the PR
// commands.
func knownFlags(t *testing.T, hs []commandHelp) map[string]bool {
	t.Helper()
	known := map[string]bool{}
	for _, h := range hs {
		for _, m := range flagRe.FindAllStringSubmatch(h.usage, -1) {
			known[m[1]] = true
		}
	}
	if len(known) < 20 {
		t.Fatalf("found only %d flags in the commands' --help; is flagRe still pflag's format?", len(known))
	}
	for _, m := range regexp.MustCompile(`--([a-z][a-z0-9-]*)`).FindAllStringSubmatch(command.READMETable()+usage, -1) {
		known[m[1]] = true
	}
	return known
}

// externalFlags are flags of outside tools that the operator's guide tells the reader to
// type (the Docker CLI), with the tool: they are nowhere in this repository's code.
var externalFlags = map[string]string{"rm": "docker run", "security-opt": "docker run"}

// staleFlags lists each --flag a guide names that no arenabot command, PR command or
// script or tool of the repository (code) takes.
func staleFlags(docs map[string]string, known map[string]bool, code string) []string {
	var out []string
	for _, path := range slices.Sorted(maps.Keys(docs)) {
		s := docs[path]
		for _, m := range docFlagRe.FindAllStringSubmatchIndex(s, -1) {
			f := s[m[2]:m[3]]
			if _, outside := externalFlags[f]; !known[f] && !outside && !strings.Contains(code, "--"+f) {
				out = append(out, fmt.Sprintf("%s:%d names --%s, which no arenabot command, PR command or script of this repository takes; correct the doc", path, lineOf(s, m[2]), f))
			}
		}
	}
	return out
}

// staleVars lists each ARENA_ variable a guide names that no code of the repository reads.
func staleVars(docs map[string]string, code string) []string {
	var out []string
	for _, path := range slices.Sorted(maps.Keys(docs)) {
		s := docs[path]
		for _, m := range docVarRe.FindAllStringIndex(s, -1) {
			v := s[m[0]:m[1]]
			if !strings.Contains(code, `"`+v+`"`) && !strings.Contains(code, v+"=") && !strings.Contains(code, "$"+v) && !strings.Contains(code, "${"+v) {
				out = append(out, fmt.Sprintf("%s:%d names %s, which no code of this repository reads; correct the doc", path, lineOf(s, m[0]), v))
			}
		}
	}
	return out
}

// A countFact is a count the prose may state, the pattern it is stated in and the values
// the code allows.
type countFact struct {
	re    *regexp.Regexp
	what  string
	allow []int
}

// countFacts are the counts the docs state, from the code.
func countFacts() []countFact {
	var required, advisory int
	for _, p := range profile.All {
		for _, c := range validate.Describe(p.Name) {
			if c.Tier == validate.Advisory {
				advisory++
			} else {
				required++
			}
		}
	}
	tls := len(validate.Describe(validate.TLSCheck))
	return []countFact{
		{regexp.MustCompile(`\b(\d+) (?:test )?profiles\b`), "profiles in profile.All", []int{len(profile.All)}},
		{regexp.MustCompile(`\b(\d+) tiers\b`), "tiers in frameworks.Tiers", []int{len(frameworks.Tiers)}},
		{regexp.MustCompile(`\b(\d+) required checks\b`), "required checks over all profiles", []int{required}},
		{regexp.MustCompile(`\b(\d+) advisory checks\b`), "advisory checks over all profiles", []int{advisory}},
		{regexp.MustCompile(`\b(\d+) (?:TLS |tls_check )?checks\b`), "checks (all profiles', the required, the advisory, or tls_check's)", []int{required + advisory, required, advisory, tls}},
	}
}

// staleCounts lists each count a guide states that the code does not have.
func staleCounts(docs map[string]string) []string {
	var out []string
	for _, path := range slices.Sorted(maps.Keys(docs)) {
		s := docs[path]
		for _, f := range countFacts() {
			for _, m := range f.re.FindAllStringSubmatchIndex(s, -1) {
				if n, _ := strconv.Atoi(s[m[2]:m[3]]); !slices.Contains(f.allow, n) {
					out = append(out, fmt.Sprintf("%s:%d says %q; the code has %v %s", path, lineOf(s, m[0]), s[m[0]:m[1]], f.allow, f.what))
				}
			}
		}
	}
	return out
}

// TestDocsFlags: every --flag a guide names is a flag of an arenabot command, of a PR
// command, or of a script or tool the repository runs (docs/cli.md lists every command's).
func TestDocsFlags(t *testing.T) {
	for _, e := range staleFlags(guides(t), knownFlags(t, helps(t)), codeText(t)) {
		t.Error(e)
	}
}

// TestDocsVariables: each command's --help names every ARENA_ variable its parser reads,
// and every ARENA_ variable a guide names is read by some code of the repository.
func TestDocsVariables(t *testing.T) {
	for _, h := range helps(t) {
		if len(h.env) == 0 && h.name != "site" {
			t.Errorf("arenabot %s --help read no ARENA_ variable; did the getenv plumbing change?", h.name)
		}
		for _, v := range h.env {
			if !strings.Contains(h.usage, v) {
				t.Errorf("arenabot %s reads %s, but its --help does not say so; name it in its flag's help", h.name, v)
			}
		}
	}
	for _, e := range staleVars(guides(t), codeText(t)) {
		t.Error(e)
	}
}

// TestDocsCounts: a count the prose states ("37 profiles", "5 tiers", "294 required
// checks") is the code's.
func TestDocsCounts(t *testing.T) {
	for _, e := range staleCounts(guides(t)) {
		t.Error(e)
	}
}

// portListRe finds a hand-written list of the host ports measuring takes: the firewall's
// "dport { … }" set, or a parenthesis that cites profile.HostPorts.
var portListRe = regexp.MustCompile(`dport \{ ([0-9, -]+) \}|\(([^()]*): ` + "`profile.HostPorts`" + `\)`)

// portRe is one port or a range of them in such a list.
var portRe = regexp.MustCompile(`\b([0-9]{2,5})(?:-([0-9]{2,5}))?\b`)

// stalePorts returns, for each hand-written list of host ports in the guides, the ports it
// leaves out or adds against profile.HostPorts (TCP; a range a-b counts each port).
func stalePorts(docs map[string]string) []string {
	var want []int
	for _, h := range profile.HostPorts() {
		want = append(want, h.Port)
	}
	var out []string
	for _, path := range slices.Sorted(maps.Keys(docs)) {
		s := docs[path]
		for _, m := range portListRe.FindAllStringSubmatchIndex(s, -1) {
			var list string
			if m[2] >= 0 {
				list = s[m[2]:m[3]]
			} else {
				list = s[m[4]:m[5]]
			}
			var got []int
			for _, p := range portRe.FindAllStringSubmatch(list, -1) {
				a, _ := strconv.Atoi(p[1])
				b := a
				if p[2] != "" {
					b, _ = strconv.Atoi(p[2])
				}
				for port := a; port <= b; port++ {
					got = append(got, port)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				out = append(out, fmt.Sprintf("%s:%d lists the host ports %v; profile.HostPorts has %v", path, lineOf(s, m[0]), got, want))
			}
		}
	}
	return out
}

// TestDocsHostPorts: the firewall example and the doctor's port list in the guides are the
// ports the profiles, sidecars and stacks listen on.
func TestDocsHostPorts(t *testing.T) {
	docs := guides(t)
	n := 0
	for _, s := range docs {
		n += len(portListRe.FindAllString(s, -1))
	}
	if n < 2 {
		t.Fatalf("found %d lists of host ports in the guides, want the firewall's and the doctor's", n)
	}
	for _, e := range stalePorts(docs) {
		t.Error(e)
	}
}

// TestDocsCatchStaleness: each check fails on one stale sentence added to a true doc: a
// count, a flag and a variable the code does not have, and a generated block edited by
// hand.
func TestDocsCatchStaleness(t *testing.T) {
	hs := helps(t)
	known, code := knownFlags(t, hs), codeText(t)
	if strings.Contains(code, "--not-a-flag-anywhere") || strings.Contains(code, `"ARENA_NO_SUCH_VAR"`) {
		t.Fatal("the repository took the invented names this test relies on")
	}
	current := guides(t)
	for _, c := range []struct {
		name, sentence string
		check          func(map[string]string) []string
	}{
		{"flag", "Run `arenabot bench --not-a-flag-anywhere`.", func(d map[string]string) []string { return staleFlags(d, known, code) }},
		{"variable", "Set ARENA_NO_SUCH_VAR=1 first.", func(d map[string]string) []string { return staleVars(d, code) }},
		{"profile count", fmt.Sprintf("All %d profiles run.", len(profile.All)-4), staleCounts},
		{"tier count", fmt.Sprintf("type takes %d tiers.", len(frameworks.Tiers)+1), staleCounts},
		{"host ports", "tcp dport { 5432, 8080-8082, 8443 } drop", stalePorts},
	} {
		if got := c.check(current); len(got) != 0 {
			t.Fatalf("%s: the docs as they are already fail: %v", c.name, got)
		}
		docs := maps.Clone(current)
		docs["README.md"] += "\n" + c.sentence + "\n"
		if got := c.check(docs); len(got) != 1 || !strings.HasPrefix(got[0], "README.md:") {
			t.Errorf("%s: the stale sentence %q gave %q, want one error naming README.md", c.name, c.sentence, got)
		}
	}
	render := renderers(t)
	stale := "<!-- BEGIN ports: x -->\n| 1 | nobody |\n<!-- END ports -->\n"
	if got, _, err := regenerate(stale, render); err != nil || got == stale {
		t.Errorf("a hand-edited ports block was not rendered again (err %v)", err)
	}
}

// TestREADMESampleReply: the README's sample reply is cut from a reply golden of
// bot/report, not written by hand: each of its lines (the quote marks taken off, "…" for
// what was cut) is a line of that golden, in the golden's order.
func TestREADMESampleReply(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(docsRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\[` + "`" + `(bot/report/testdata/[a-z-]+\.golden)` + "`" + `\]`).FindSubmatch(b)
	if m == nil {
		t.Fatal("README.md names no bot/report golden as the source of its sample reply")
	}
	golden, err := os.ReadFile(filepath.Join(docsRoot, string(m[1])))
	if err != nil {
		t.Fatal(err)
	}
	glines := strings.Split(string(golden), "\n")
	next, quoted := 0, 0
	for i, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, ">") {
			continue
		}
		quoted++
		want := strings.TrimSpace(strings.TrimPrefix(line, ">"))
		if want == "" {
			continue
		}
		found := false
		for j := next; j < len(glines) && !found; j++ {
			if sampleMatches(want, glines[j]) {
				next, found = j+1, true
			}
		}
		if !found {
			t.Errorf("README.md:%d %q is not a line of %s after the previous one; cut the sample from the golden again", i+1, want, m[1])
		}
	}
	if quoted < 10 {
		t.Errorf("README.md quotes %d lines of a reply; want the sample reply (at least 10)", quoted)
	}
}

// sampleMatches reports whether a line of the README's sample is golden's line, where
// each "…" in it stands for text cut out and a line wrapped in the README is matched
// by its first part.
func sampleMatches(sample, golden string) bool {
	rest := golden
	for i, part := range strings.Split(sample, "…") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		j := strings.Index(rest, part)
		if j < 0 || i == 0 && j != 0 && !strings.HasPrefix(sample, "…") {
			return false
		}
		rest = rest[j+len(part):]
	}
	return true
}
