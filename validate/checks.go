package validate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/validate/protocol"
)

// DocsFile is where every profile's contract and checks are written down for contributors,
// in this repository (generated from the profile table and these checks).
const DocsFile = "docs/profiles.md"

// contract renders what a check asks for and where it is written down: "baseline — GET … →
// 200 … (docs/profiles.md#baseline)", with the RFC the rule comes from first, if any.
func contract(profileName, text, rfc string) string {
	where := DocsFile + "#" + profileName
	if rfc != "" {
		where = rfc + "; " + where
	}
	return profileName + " — " + text + " (" + where + ")"
}

// suites are the checks of every profile validate knows, by profile name: the one place in
// validate that names a profile. A builder takes the name for its contracts and reads
// whatever else differs between the profiles it serves from the name's row in the profile
// table (row), or takes it as a parameter here.
var suites = map[string][]check{
	"baseline":     append(baselineChecks("baseline"), malformedChecks("baseline")...),
	"limited-conn": baselineChecks("limited-conn"),
	"pipelined":    pipelinedChecks("pipelined"),
	"json":         jsonChecks("json", "/json/1"),
	"json-comp":    jsonCompChecks("json-comp"),
	"upload":       uploadChecks("upload"),
	"api-4":        apiChecks("api-4"),
	"api-16":       apiChecks("api-16"),
	"static":       staticChecks("static"),
	"async-db":     asyncDBChecks("async-db", true),
	"crud":         crudChecks("crud"),
	"fortunes":     fortunesChecks("fortunes"),

	"json-tls":     append(tlsChecks("json-tls", "/json/1?m=1", "/json/5?m=7"), jsonChecks("json-tls", "")...),
	"static-tls":   staticTLSChecks("static-tls"),
	"baseline-h2":  h2BaselineChecks("baseline-h2"),
	"static-h2":    staticH2Checks("static-h2"),
	"baseline-h2c": h2BaselineChecks("baseline-h2c"),
	"json-h2c":     jsonChecks("json-h2c", "/baseline2?a=1&b=1"),

	"baseline-h3": append(h3Checks("baseline-h3"), sumChecks("baseline-h3")...),
	"static-h3":   append(h3Checks("static-h3"), staticChecks("static-h3")...),

	"gateway-64":       gatewayChecks("gateway-64"),
	"gateway-h3":       append(h3Checks("gateway-h3"), gatewayChecks("gateway-h3")...),
	"production-stack": productionChecks("production-stack"),

	"unary-grpc":      grpcChecks("unary-grpc", false),
	"unary-grpc-tls":  grpcChecks("unary-grpc-tls", false),
	"stream-grpc":     grpcChecks("stream-grpc", true),
	"stream-grpc-tls": grpcChecks("stream-grpc-tls", true),

	"echo-ws":          wsChecks("echo-ws"),
	"echo-ws-pipeline": wsChecks("echo-ws-pipeline"),
	"echo-ws-limited":  wsChecks("echo-ws-limited"),

	"latency-10k":       latencyChecks("latency-10k"),
	"latency-1m":        latencyChecks("latency-1m"),
	"latency-500k-8cpu": latencyChecks("latency-500k-8cpu"),
	"8gbit":             echoChecks("8gbit"),
	"async":             asyncChecks("async"),
	"download":          downloadChecks("download"),
	"static-large":      staticLargeChecks("static-large"),
}

// row returns the profile table's row of the named profile, for a check builder that reads
// a fact from it. A name the table does not have is a mistake in suites.
func row(name string) profile.Profile {
	p, ok := profile.Lookup(name)
	if !ok {
		panic("validate: suites names " + strconv.Quote(name) + ", which is not in the profile table")
	}
	return p
}

// apiChecks are those of api-4 and api-16, whose load mixes baseline, /json/50?m=1 and
// /async-db requests: the three endpoints' checks, as the arena checked them (the sums and
// the fragmented requests of baseline, not its connection pattern).
func apiChecks(p string) []check {
	checks := append(h1SumChecks(p), fragmentChecks(p)...)
	checks = append(checks, jsonChecks(p, "")...)
	return append(checks, asyncDBChecks(p, false)...)
}

// probeCheck is the readiness probe of the profile (profile's Probe path): the
// runner waits for it before measuring, so it must answer 200, not just anything (the
// arena accepted any status).
func probeCheck(profileName, path string) check {
	return check{
		name:     "probe GET " + path,
		contract: contract(profileName, "the readiness probe GET "+path+" → 200", ""),
		run: func(ctx context.Context, e *env) result {
			raw := request("GET", path, nil, nil)
			r, err := exchange(ctx, e, "GET", raw)
			if err != nil {
				return failed(show(raw), "200", err.Error())
			}
			if r.Status != 200 {
				return failed(show(raw), "200", describe(r))
			}
			return passed(show(raw), "200", describe(r))
		},
	}
}

// expectText sends raw on a fresh connection and wants 200 with exactly the body want.
func expectText(ctx context.Context, e *env, method string, raw []byte, want string) result {
	exp := fmt.Sprintf("200 with body %q", want)
	r, err := exchange(ctx, e, method, raw)
	if err != nil {
		return failed(show(raw), exp, err.Error())
	}
	if r.Status != 200 || string(r.Body) != want {
		return failed(show(raw), exp, describe(r))
	}
	return passed(show(raw), exp, describe(r))
}

// expectStatus sends raw on a fresh connection and wants the status code want.
func expectStatus(ctx context.Context, e *env, method string, raw []byte, want int) result {
	exp := strconv.Itoa(want)
	r, err := exchange(ctx, e, method, raw)
	if err != nil {
		return failed(show(raw), exp, err.Error())
	}
	if r.Status != want {
		return failed(show(raw), exp, describe(r))
	}
	return passed(show(raw), exp, describe(r))
}

// expectType sends raw on a fresh connection and wants 200 with the media type want.
func expectType(ctx context.Context, e *env, method string, raw []byte, want string) result {
	exp := "200 with Content-Type " + want
	r, err := exchange(ctx, e, method, raw)
	if err != nil {
		return failed(show(raw), exp, err.Error())
	}
	if r.Status != 200 || !typeMatches(r.get("Content-Type"), want) {
		return failed(show(raw), exp, describe(r))
	}
	return passed(show(raw), exp, describe(r))
}

// A session sends requests one after another on a kept-alive connection, as the load
// tools do, dialling again only when the server closed the connection (saying so, or
// before answering a request on a reused connection).
//
// Over h2 and h2c a session is one net/http client of the protocol, whose connection carries
// every request (roundTrip).
type session struct {
	e  *env
	c  *conn
	hc *http.Client // h2, h2c
}

func (s *session) do(ctx context.Context, method string, raw []byte) (*response, error) {
	if hp, ok := s.e.proto.(protocol.HTTP); ok && !isStream(s.e.proto) {
		if s.hc == nil {
			s.hc = hp.Client(protocol.Config{Timeout: s.e.timeout})
		}
		return roundTrip(ctx, s.hc, hp, s.e.addr, raw)
	}
	for attempt := 0; ; attempt++ {
		reused := s.c != nil
		if s.c == nil {
			c, err := dial(ctx, s.e)
			if err != nil {
				return nil, err
			}
			s.c = c
		}
		r, err := s.try(method, raw)
		if err == nil {
			if r.closes() {
				s.close()
			}
			return r, nil
		}
		s.close()
		if !reused || attempt > 0 || !errors.Is(err, errNoResponse) {
			return nil, err
		}
	}
}

func (s *session) try(method string, raw []byte) (*response, error) {
	if err := s.c.write(raw); err != nil {
		return nil, err
	}
	return s.c.response(method)
}

func (s *session) close() {
	if s.hc != nil {
		s.hc.CloseIdleConnections()
		s.hc = nil
	}
	if s.c != nil {
		s.c.close()
		s.c = nil
	}
}

// joinFailures renders the first failure in full and names the rest.
func joinFailures(fails []string, names []string) string {
	if len(fails) == 0 {
		return ""
	}
	s := fails[0]
	if len(names) > 1 {
		s += fmt.Sprintf(" (and %d more: %s)", len(names)-1, strings.Join(names[1:], ", "))
	}
	return s
}
