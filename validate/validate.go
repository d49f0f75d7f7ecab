package validate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/text"
	"github.com/arenabot/arenabot/validate/protocol"
)

// A Status is the verdict of one check.
type Status int

const (
	Pass Status = iota // the server did what the contract asks
	Fail               // it did not; the outcome says what was sent, expected and got
	Skip               // the check was not run; the outcome says why
	// Warn is an advisory check that the server missed: reported with the same detail as a
	// Fail, but it does not gate measurement (Strict turns it into a Fail).
	Warn
)

// String returns "PASS", "FAIL", "SKIP" or "WARN".
func (s Status) String() string {
	switch s {
	case Pass:
		return "PASS"
	case Fail:
		return "FAIL"
	case Skip:
		return "SKIP"
	case Warn:
		return "WARN"
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// A Tier says what a missed check means.
type Tier int

const (
	// Required checks are the arena's own contract (everything the old arena's suite asserts)
	// and what the measured number's meaning depends on (exact bodies and values, bytes
	// actually read, answers in order, a server that still answers): a miss fails the check
	// and the profile is not measured.
	Required Tier = iota
	// Advisory checks are RFC conformance and good practice beyond the arena's contract: a
	// miss is a Warn, reported but not gating.
	Advisory
)

// String returns "required" or "advisory".
func (t Tier) String() string {
	if t == Advisory {
		return "advisory"
	}
	return "required"
}

// An Outcome is the result of one check against one server.
type Outcome struct {
	Profile string // "baseline"
	Check   string // "GET sum 13+42"; empty for an outcome about the whole profile
	Status  Status
	// Tier is the tier of what the outcome judged: a Warn is always Advisory; a check with an
	// advisory part (Info.Advisory) reports its Required part as Fail and its advisory part
	// as Warn.
	Tier     Tier
	Request  string        // what was sent, printable and cut to about 300 bytes
	Expected string        // what the contract asks for
	Got      string        // what came back, printable and cut short
	Contract string        // the contract the check enforces, and where it is written down
	Reason   string        // why the check was skipped
	Elapsed  time.Duration // how long the check took
}

// String renders the outcome on one line: "PASS baseline: GET sum 13+42", "FAIL baseline:
// POST chunked body: sent …; expected …; got …; contract: …" (WARN alike) or "SKIP json-tls:
// reason".
func (o Outcome) String() string {
	name := o.Profile
	if o.Check != "" {
		name += ": " + o.Check
	}
	switch o.Status {
	case Pass:
		return "PASS " + name
	case Skip:
		return "SKIP " + name + ": " + o.Reason
	}
	var parts []string
	if o.Request != "" {
		parts = append(parts, "sent "+o.Request)
	}
	if o.Expected != "" {
		parts = append(parts, "expected "+o.Expected)
	}
	if o.Got != "" {
		parts = append(parts, "got "+o.Got)
	}
	if o.Contract != "" {
		parts = append(parts, "contract: "+o.Contract)
	}
	return o.Status.String() + " " + name + ": " + strings.Join(parts, "; ")
}

// A Target is a running server to check.
type Target struct {
	Host string // "127.0.0.1"; empty means 127.0.0.1
	Port int    // 0: the profile's port (profile); tests point it elsewhere
	// Ports replace the profiles' ports one by one (8443 → 41235), before Port does: tests
	// whose server listens for each protocol on a port of its own.
	Ports   map[int]int
	DataDir string        // the arena data directory the server was started with (dataset.json, static/)
	Timeout time.Duration // per read and per write; 0 means 5s
	// Source is the entry's directory ("frameworks/nethttp"), for the checks that look at how
	// it is built (fortunes' template file); "": those checks are skipped.
	Source string
	// Tuned: the entry declares the tuned mode, which may hand-roll what a standard entry
	// must render from a template (fortunes' page).
	Tuned bool
	// CertsTLSDir is the host directory mounted into the server at /certs-tls (an entry with
	// tls_check: a private copy of the data directory's certs), where the TLSCheck section's
	// rotation checks write a new pair; "" skips them.
	CertsTLSDir string
	// RotationInterval is the pause between the rotation checks' 30 requests; 0 means 1s.
	RotationInterval time.Duration
}

// defaultTimeout is Target.Timeout's zero value.
const defaultTimeout = 5 * time.Second

// parallelChecks bounds how many checks run at once.
const parallelChecks = 8

// Checks lists the names of the checks of a profile (or of the TLSCheck section), in the
// order Run reports them. It returns nil for a profile without checks (unknown, or one this
// harness cannot run yet).
func Checks(profileName string) []string {
	var names []string
	for _, c := range suite(profileName) {
		names = append(names, c.name)
	}
	return names
}

// Info describes one check for documentation.
type Info struct {
	Name     string
	Tier     Tier
	Contract string // what the check asks for, and where the rule comes from
	// Advisory, on a Required check, is the part of it that is advisory: a miss of only
	// that part is a Warn ("answered with a 4xx or a close (RFC 9112 §5.1)").
	Advisory string
}

// Describe returns the checks of a profile (or of the TLSCheck section) with their tiers, in
// the order Run reports them; nil for a profile without checks.
func Describe(profileName string) []Info {
	var out []Info
	for _, c := range suite(profileName) {
		out = append(out, Info{Name: c.name, Tier: c.tier, Contract: c.contract, Advisory: c.advisoryPart})
	}
	return out
}

// suite returns the checks of a profile, or of the TLSCheck section.
func suite(name string) []check {
	if name == TLSCheck {
		return tlsCheckSuite
	}
	return suites[name]
}

// Run runs the checks of the given profiles against a server and returns one outcome per
// check, in profile order (profile) and then check order (Checks), whatever the
// order of profiles. The name TLSCheck among them runs that section, after the profiles,
// against TLSCheckPort. A profile the harness cannot run yet yields one SKIP with the reason;
// an unknown name yields one FAIL. Checks run concurrently, at most 8 at a time, except the
// malformed-request checks, which run one after another once the others are done, each
// followed by a fresh request that shows whether the server still answers. When ctx ends,
// checks not yet finished are reported as skipped. Run returns when every check it started
// has returned.
func Run(ctx context.Context, t Target, profiles []string) []Outcome {
	if t.Host == "" {
		t.Host = "127.0.0.1"
	}
	if t.Timeout <= 0 {
		t.Timeout = defaultTimeout
	}
	data := newData(t.DataDir)
	var out []Outcome
	type job struct {
		slot int
		c    check
		e    *env
	}
	var parallel, serial []job
	for _, name := range orderProfiles(profiles) {
		if name == TLSCheck {
			for _, c := range tlsCheckSuite {
				j := job{len(out), c, tlsCheckEnv(t, data)}
				out = append(out, Outcome{Profile: name, Check: c.name, Contract: c.contract, Tier: c.tier})
				if c.serial {
					serial = append(serial, j)
				} else {
					parallel = append(parallel, j)
				}
			}
			continue
		}
		p, ok := profile.Lookup(name)
		if !ok {
			exp := "one of " + strings.Join(profile.Names(), ", ")
			if near := frameworks.Closest(name, profile.Names(), 3); len(near) > 0 {
				exp = "a profile name such as " + strings.Join(near, ", ")
			}
			out = append(out, Outcome{Profile: name, Status: Fail, Expected: exp, Got: "unknown profile " + strconv.Quote(name), Contract: "the profile table (" + DocsFile + ")"})
			continue
		}
		if !p.Runnable() {
			out = append(out, Outcome{Profile: name, Status: Skip, Reason: p.Unsupported})
			continue
		}
		checks := suites[name]
		if len(checks) == 0 {
			out = append(out, Outcome{Profile: name, Status: Skip, Reason: "validate has no checks for this profile yet"})
			continue
		}
		scheme := p.Scheme
		if p.CheckScheme != "" {
			scheme = p.CheckScheme
		}
		proto, err := protocol.For(scheme)
		if err != nil {
			out = append(out, Outcome{Profile: name, Status: Skip, Reason: "validate cannot speak its protocol yet: " + err.Error()})
			continue
		}
		port := p.Port
		if alt := t.Ports[port]; alt != 0 {
			port = alt
		} else if t.Port != 0 {
			port = t.Port
		}
		e := &env{
			profile: p,
			proto:   proto,
			addr:    net.JoinHostPort(t.Host, strconv.Itoa(port)),
			timeout: t.Timeout,
			data:    data,
			source:  t.Source,
			tuned:   t.Tuned,
		}
		for _, c := range checks {
			j := job{len(out), c, e}
			out = append(out, Outcome{Profile: name, Check: c.name, Contract: c.contract, Tier: c.tier})
			if c.serial {
				serial = append(serial, j)
			} else {
				parallel = append(parallel, j)
			}
		}
	}
	runJob := func(j job) {
		out[j.slot] = runCheck(ctx, j.e, j.c, out[j.slot])
	}
	jobs := make(chan job)
	var wg sync.WaitGroup
	for range min(parallelChecks, len(parallel)) {
		wg.Go(func() {
			for j := range jobs {
				runJob(j)
			}
		})
	}
	for _, j := range parallel {
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	for _, j := range serial {
		runJob(j)
	}
	return out
}

// orderProfiles returns the names once each, known ones in profile order, then TLSCheck,
// then unknown ones in the order given.
func orderProfiles(names []string) []string {
	var known, unknown []string
	tlsCheck := false
	for _, n := range names {
		if slices.Contains(known, n) || slices.Contains(unknown, n) {
			continue
		}
		switch {
		case n == TLSCheck:
			tlsCheck = true
		case profile.Index(n) >= 0:
			known = append(known, n)
		default:
			unknown = append(unknown, n)
		}
	}
	slices.SortFunc(known, func(a, b string) int { return profile.Index(a) - profile.Index(b) })
	if tlsCheck {
		known = append(known, TLSCheck)
	}
	return append(known, unknown...)
}

// tlsCheckEnv is the environment of the TLSCheck section: HTTP/1.1 over TLS on TLSCheckPort
// (or the port Target.Ports puts in its place), and the directory to rotate the pair in.
// One env serves all its checks, so the two rotation checks share one rotation.
func tlsCheckEnv(t Target, d *data) *env {
	port := TLSCheckPort
	if alt := t.Ports[port]; alt != 0 {
		port = alt
	}
	return &env{
		proto:         protocol.H1TLS,
		addr:          net.JoinHostPort(t.Host, strconv.Itoa(port)),
		timeout:       t.Timeout,
		data:          d,
		certsTLS:      t.CertsTLSDir,
		rotationEvery: t.RotationInterval,
	}
}

// checkBudget bounds one check in units of the per-operation timeout: the largest upload
// needs many reads and writes, none of which may stall for a whole timeout.
const checkBudget = 20

// runCheck runs one check under its own deadline and fills in o.
func runCheck(ctx context.Context, e *env, c check, o Outcome) Outcome {
	if err := ctx.Err(); err != nil {
		o.Status, o.Reason = Skip, "cancelled: "+err.Error()
		return o
	}
	start := time.Now()
	budget := checkBudget * e.timeout
	if c.budget > budget {
		budget = c.budget
	}
	cctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	r := c.run(cctx, e)
	o.Elapsed = time.Since(start)
	o.Request, o.Expected, o.Got = text.CutNoting(r.request, 400), text.CutNoting(r.expected, 400), text.CutNoting(r.got, 700)
	o.Status, o.Reason = r.status, r.reason
	if o.Status == Fail && (c.tier == Advisory || r.advisory) {
		o.Status, o.Tier = Warn, Advisory
	}
	switch {
	case ctx.Err() != nil && r.status != Pass:
		o.Status, o.Reason = Skip, "cancelled: "+ctx.Err().Error()
	case errors.Is(cctx.Err(), context.DeadlineExceeded) && r.status == Fail:
		o.Got += fmt.Sprintf(" (the check ran out of its %v budget)", budget)
	}
	return o
}

// Summary counts the outcomes and renders the final line, "N passed, N failed, N skipped".
// Warnings are in none of the three: AdvisoryLine counts them.
func Summary(o []Outcome) (pass, fail, skip int, line string) {
	for _, x := range o {
		switch x.Status {
		case Pass:
			pass++
		case Fail:
			fail++
		case Skip:
			skip++
		}
	}
	return pass, fail, skip, fmt.Sprintf("%d passed, %d failed, %d skipped", pass, fail, skip)
}

// Warnings returns the outcomes that are Warn, in order.
func Warnings(o []Outcome) []Outcome {
	var w []Outcome
	for _, x := range o {
		if x.Status == Warn {
			w = append(w, x)
		}
	}
	return w
}

// AdvisoryLine renders the line printed above the summary: how many advisory checks
// missed and what that means; "" when none did.
func AdvisoryLine(o []Outcome) string {
	n := len(Warnings(o))
	if n == 0 {
		return ""
	}
	s := "s"
	if n == 1 {
		s = ""
	}
	return fmt.Sprintf("%d advisory warning%s (WARN): RFC conformance or good practice beyond the arena's contract; not gating measurement (--strict makes them failures)", n, s)
}

// Strict returns the outcomes with every Warn turned into a Fail (validate --strict).
func Strict(o []Outcome) []Outcome {
	out := slices.Clone(o)
	for i := range out {
		if out[i].Status == Warn {
			out[i].Status = Fail
		}
	}
	return out
}

// FirstFailure returns the first failing outcome of the named profile, if there is one.
func FirstFailure(o []Outcome, profileName string) (Outcome, bool) {
	for _, x := range o {
		if x.Profile == profileName && x.Status == Fail {
			return x, true
		}
	}
	return Outcome{}, false
}

// An env is what the checks of one profile share: where the server is and the data it
// serves.
type env struct {
	profile profile.Profile
	proto   protocol.Protocol // the profile's (Scheme)
	addr    string            // "127.0.0.1:8080"
	timeout time.Duration
	data    *data
	source  string // Target.Source
	tuned   bool   // Target.Tuned
	// shared is the one answer the profile's checks judge together (fortunes' page).
	shared sharedResponse

	// The TLSCheck section's: the directory to rotate the pair in, the pause between the
	// rotation's requests, and the rotation, done once for both checks that report it.
	certsTLS      string
	rotationEvery time.Duration
	rotationOnce  sync.Once
	rotation      *rotation
}

// A sharedResponse is fetched once, by the first check that asks, and then judged by each.
type sharedResponse struct {
	once sync.Once
	r    *response
	err  error
}

// get returns the response, fetching it first if no check has.
func (s *sharedResponse) get(fetch func() (*response, error)) (*response, error) {
	s.once.Do(func() { s.r, s.err = fetch() })
	return s.r, s.err
}

// rand returns a new random source for one check (checks run concurrently).
func (e *env) rand() *rand.Rand { return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())) }

// A check is one named requirement of a profile's contract.
type check struct {
	name     string
	contract string
	tier     Tier
	// advisoryPart, on a Required check, names the part of it whose miss is only a Warn;
	// run marks such a miss with result.advisory.
	advisoryPart string
	serial       bool // run alone, after the others (malformed requests)
	// budget, when longer than the usual (checkBudget timeouts), is how long the check may
	// take: an external tool's run.
	budget time.Duration
	run    func(ctx context.Context, e *env) result
}

// advisory returns the check with its tier set to Advisory.
func (c check) advisory() check {
	c.tier = Advisory
	return c
}

// A result is what a check found.
type result struct {
	status                 Status
	request, expected, got string
	reason                 string
	advisory               bool // a Fail of the check's advisory part: reported as Warn
}

func passed(request, expected, got string) result {
	return result{status: Pass, request: request, expected: expected, got: got}
}

func failed(request, expected, got string) result {
	return result{status: Fail, request: request, expected: expected, got: got}
}

// data is the arena data directory, read once per Run and shared by its checks (the
// database seed once per process while the file is unchanged: cachedSeed).
type data struct {
	dir     string
	dataset func() (dataset, error)
	seed    func() (*seed, error) // the database's items table
	// fortunes is the database's fortune table, id → message.
	fortunes func() (map[int]string, error)
	cert     func() (*arenaCert, error)
}

func newData(dir string) *data {
	return &data{
		dir:      dir,
		dataset:  sync.OnceValues(func() (dataset, error) { return loadDataset(dir) }),
		seed:     sync.OnceValues(func() (*seed, error) { return cachedSeed(dir) }),
		fortunes: sync.OnceValues(func() (map[int]string, error) { return loadFortunes(dir) }),
		cert:     sync.OnceValues(func() (*arenaCert, error) { return loadCert(dir) }),
	}
}
