package validate_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/validate"
	"github.com/arenabot/arenabot/validate/validatetest"
)

// breaks names, for every check of every profile, the fixture mode under which exactly
// that check fails.
var breaks = map[string]map[string]string{
	"baseline":     baselineModes("baseline"),
	"limited-conn": baselineModes("limited-conn"),
	"pipelined": {
		"probe GET /baseline11?a=1&b=1": "pipelined.probe-status",
		"GET /pipeline":                 "pipelined.pipeline-wrong-body",
		"GET /pipeline Content-Type":    "pipelined.pipeline-content-type",
		"16 pipelined GET /pipeline":    "pipelined.pipeline-burst",
		"16 pipelined mixed, in order":  "pipelined.pipeline-reorder",
	},
	"json":     withProbe("json", jsonModes("json"), "probe GET /json/1"),
	"async-db": withProbe("async-db", dbModes("async-db"), "probe GET /baseline11?a=1&b=1"),
	"api-4":    apiModes("api-4"),
	// api-16's checks are api-4's (TestSharedSuites), and crud's /async-db ones are
	// async-db's: their modes are exercised once, under api-4 and async-db.
	"crud": merge(map[string]string{"probe GET /baseline11?a=1&b=1": "crud.probe-status"}, map[string]string{
		"GET /crud/items list":             "crud.crud-list-wrong",
		"GET /crud/items/1":                "crud.crud-get-wrong",
		"GET /crud/items/42 MISS then HIT": "crud.crud-no-hit",
		"GET /crud/items/999999 404":       "crud.crud-404",
		"POST /crud/items then GET":        "crud.crud-create-lost",
		"PUT /crud/items/7 then GET MISS":  "crud.crud-stale-cache",
	}),
	"fortunes": {
		"probe GET /baseline11?a=1&b=1":    "fortunes.probe-status",
		"GET /fortunes Content-Type":       "fortunes.fortunes-content-type",
		"<!DOCTYPE html>":                  "fortunes.fortunes-no-doctype",
		"201 to 210 rows":                  "fortunes.fortunes-extra-rows",
		"row added at request time":        "fortunes.fortunes-runtime-text",
		"<script> row escaped":             "fortunes.fortunes-numeric-refs",
		"body size":                        "fortunes.fortunes-oversize",
		"header row":                       "fortunes.fortunes-no-header",
		"sorted by message, byte order":    "fortunes.fortunes-case-sort",
		"runtime row in place":             "fortunes.fortunes-runtime-last",
		"every message HTML-escaped":       "fortunes.fortunes-quotes-raw",
		"template engine in standard mode": "fortunes.fortunes-no-template",
	},
	"json-comp": {
		"probe GET /baseline11?a=1&b=1": "json-comp.probe-status",
		"gzip, br: load pairs":          "json-comp.comp-pairs-uncompressed",
		"gzip, br: random count and m":  "json-comp.comp-random-wrong",
		"gzip only":                     "json-comp.comp-gzip-only-br",
		"without Accept-Encoding":       "json-comp.json-compress-unasked",
		"compressed Content-Type":       "json-comp.comp-content-type",
		"Vary: Accept-Encoding":         "json-comp.comp-no-vary",
	},
	"upload": {
		"probe GET /baseline11?a=1&b=1": "upload.probe-status",
		"POST 17-byte text":             "upload.upload-17",
		"POST 48 random bytes":          "upload.upload-48",
		"POST 500 KB":                   "upload.upload-500k",
		"POST 2 MB":                     "upload.upload-2m",
		"POST 10 MB":                    "upload.upload-10m",
		"POST 20 MB":                    "upload.upload-20m",
		"POST chunked":                  "upload.upload-chunked",
		"Content-Type":                  "upload.upload-content-type",
	},
	"static":     staticModes("static"),
	"static-tls": merge(staticModes("static-tls"), tlsModes("static-tls")),
	"static-h2":  merge(staticModes("static-h2"), h2Modes("static-h2")),
	"json-tls": merge(jsonModes("json-tls"), tlsModes("json-tls"),
		map[string]string{"probe GET /json/1?m=1": "json-tls.probe-status"}),
	"json-h2c":    withProbe("json-h2c", jsonModes("json-h2c"), "probe GET /baseline2?a=1&b=1"),
	"baseline-h2": merge(h2BaselineModes("baseline-h2"), h2Modes("baseline-h2")),
	"baseline-h2c": merge(h2BaselineModes("baseline-h2c"), map[string]string{
		"HTTP/1.1 not answered 200": "baseline-h2c.h2c-accepts-h1",
	}),
	// latency-1m's and latency-500k-8cpu's checks are latency-10k's (TestSharedSuites).
	"latency-10k": {
		"probe GET /baseline11?a=1&b=1": "latency-10k.probe-status",
		"GET sum 13+42":                 "latency-10k.get-wrong-sum",
		"GET Content-Type":              "latency-10k.get-content-type",
		"GET random sum":                "latency-10k.get-random-wrong-sum",
		"GET framing":                   "latency-10k.framing",
		"fragmented request line":       "latency-10k.frag-line",
		"fragmented headers":            "latency-10k.frag-headers",
		"keep-alive":                    "latency-10k.keepalive-close",
	},
	"8gbit": merge(tlsModes("8gbit"), map[string]string{
		"probe GET /baseline11?a=1&b=1": "8gbit.probe-status",
		"POST /echo 0 bytes":            "8gbit.echo-0",
		"POST /echo 1 byte":             "8gbit.echo-1",
		"POST /echo 1,000 bytes":        "8gbit.echo-1000",
		"POST /echo 10,240 bytes":       "8gbit.echo-10k",
		"POST /echo 100,000 bytes":      "8gbit.echo-100k",
		"POST /echo headers":            "8gbit.echo-type",
	}),
	"async": {
		"probe GET /baseline11?a=1&b=1": "async.probe-status",
		"GET /delay/10":                 "async.delay-10-early",
		"GET /delay/200":                "async.delay-200-early",
		"GET /delay Content-Type":       "async.delay-type",
		"6 concurrent GET /delay/200":   "async.delay-serial",
	},
	"download": {
		"probe GET /baseline11?a=1&b=1": "download.probe-status",
		"GET /large/download.bin":       "download.download-corrupt",
		"404 for a missing large file":  "download.large-404",
		"no path traversal":             "download.large-traversal",
	},
	// echo-ws-pipeline's and echo-ws-limited's checks are echo-ws's (TestSharedSuites).
	"echo-ws": {
		"upgrade /ws":                   "echo-ws.ws-wrong-accept", // and every other check (brokenWith)
		"text echo":                     "echo-ws.ws-text-wrong",
		"binary echo":                   "echo-ws.ws-binary-as-text",
		"ping → pong":                   "echo-ws.ws-no-pong",
		"close":                         "echo-ws.ws-close-no-frame",
		"16 frames in flight":           "echo-ws.ws-burst-reorder",
		"upgrade again after 10 echoes": "echo-ws.ws-retire-early",
	},
	"baseline-h3": merge(h3Modes("baseline-h3"), map[string]string{
		"GET sum 13+42":    "baseline-h3.get-wrong-sum",
		"GET Content-Type": "baseline-h3.get-content-type",
		"GET random sum":   "baseline-h3.get-random-wrong-sum",
	}),
	"static-h3": merge(staticModes("static-h3"), h3Modes("static-h3"),
		map[string]string{"probe GET /static/reset.css": "static-h3.static-probe-status"}),
	"static-large": {
		"probe GET /baseline11?a=1&b=1":          "static-large.probe-status",
		"large files with Accept-Encoding: gzip": "static-large.large-uncompressed",
		"large files without Accept-Encoding":    "static-large.large-identity-short",
		"404 for a missing large file":           "static-large.large-404",
	},
}

func staticModes(p string) map[string]string {
	m := map[string]string{
		"probe GET /static/reset.css":                      "probe-status",
		"20 files without Accept-Encoding":                 "static-identity",
		"Content-Type of app.js, manifest.json, reset.css": "static-css-type",
		"17 other files Content-Type":                      "static-content-type",
		"20 files with Accept-Encoding":                    "static-mislabel",
		"precompressed twins served":                       "static-uncompressed",
		"404 for a missing file":                           "static-404",
	}
	for k, v := range m {
		m[k] = p + "." + v
	}
	return m
}

// tlsModes break the TLS checks of the HTTP/1.1-over-TLS profiles (8081).
func tlsModes(p string) map[string]string {
	return map[string]string{
		"arena certificate": p + ".tls-own-cert",
		"ALPN http/1.1":     p + ".tls-alpn-h2-only",
	}
}

// h2Modes break the TLS checks of the h2 profiles (8443).
func h2Modes(p string) map[string]string {
	return map[string]string{
		"arena certificate": p + ".tls-own-cert",
		"ALPN h2":           p + ".h2-http1-only",
	}
}

// h3Modes break the checks every h3 profile starts with: HTTP/3 answering the probe
// request, and h2 over TCP on the same port.
func h3Modes(p string) map[string]string {
	return map[string]string{
		"h3 over QUIC":          p + ".h3-probe-status",
		"readiness over TCP h2": p + ".h2-probe-down",
	}
}

// h2BaselineModes break the /baseline2 checks of baseline-h2 and baseline-h2c.
func h2BaselineModes(p string) map[string]string {
	m := map[string]string{
		"probe GET /baseline2?a=1&b=1": "probe-status",
		"GET sum 13+42":                "get-wrong-sum",
		"GET Content-Type":             "get-content-type",
		"GET random sum":               "get-random-wrong-sum",
	}
	for k, v := range m {
		m[k] = p + "." + v
	}
	return m
}

func jsonModes(p string) map[string]string {
	return map[string]string{
		"GET /json load pairs":              p + ".json-pairs-wrong-total",
		"GET /json random count and m":      p + ".json-random-wrong",
		"GET /json Content-Type":            p + ".json-content-type",
		"GET /json without Accept-Encoding": p + ".json-compress-unasked",
	}
}

func dbModes(p string) map[string]string {
	return map[string]string{
		"GET /async-db load queries":  p + ".db-load-wrong",
		"GET /async-db arena ranges":  p + ".db-arena-wrong",
		"GET /async-db random ranges": p + ".db-random-wrong",
		"GET /async-db empty range":   p + ".db-empty-wrong",
		"GET /async-db Content-Type":  p + ".db-content-type",
		"GET /async-db limit clamp":   p + ".db-no-clamp",
		"GET /async-db defaults":      p + ".db-no-defaults",
	}
}

// apiModes: api-4 and api-16 check the baseline, /json and /async-db endpoints.
func apiModes(p string) map[string]string {
	return merge(baselineModes(p), jsonModes(p), dbModes(p))
}

func withProbe(p string, m map[string]string, probe string) map[string]string {
	m[probe] = p + ".probe-status"
	return m
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}

func baselineModes(p string) map[string]string {
	m := map[string]string{
		"probe GET /baseline11?a=1&b=1": "probe-status",
		"GET sum 13+42":                 "get-wrong-sum",
		"GET Content-Type":              "get-content-type",
		"POST Content-Length body":      "post-cl-wrong-sum",
		"POST Content-Type":             "post-content-type",
		"POST chunked body":             "post-chunked-wrong-sum",
		"GET random sum":                "get-random-wrong-sum",
		"POST random bodies":            "post-random-wrong-sum",
		"GET framing":                   "framing",
		"fragmented request line":       "frag-line",
		"fragmented headers":            "frag-headers",
		"fragmented body after headers": "frag-body",
		"fragmented body split":         "frag-body-split",
	}
	if p == "baseline" {
		maps.Copy(m, map[string]string{
			"keep-alive":                   "keepalive-close",
			"malformed bad Content-Length": "malformed-bad-cl",
			"malformed bad header":         "malformed-bad-header",
			"malformed bare CR":            "malformed-bare-cr",
			"malformed NUL byte":           "malformed-nul",
			"malformed obs-fold":           "malformed-fold",
			"malformed 80 KB header":       "malformed-huge",
			"malformed binary junk":        "malformed-junk",
		})
	} else if p == "limited-conn" {
		m["10 requests per connection"] = "reconnect"
	}
	for k, v := range m {
		m[k] = p + "." + v
	}
	return m
}

// failing returns the names of the checks that missed (FAIL or WARN), and reports any
// outcome of the profile that is neither PASS nor a miss.
func failing(t *testing.T, out []validate.Outcome) []string {
	t.Helper()
	var names []string
	for _, o := range out {
		switch o.Status {
		case validate.Fail, validate.Warn:
			names = append(names, o.Check)
		case validate.Skip:
			t.Errorf("unexpected %s", o)
		}
	}
	return names
}

// mirrored are checks whose code another profile's modes already exercise, so they have
// no fixture run of their own: profile → the profile whose same-named checks they are.
var mirrored = map[string]string{"api-16": "api-4", "latency-1m": "latency-10k", "latency-500k-8cpu": "latency-10k",
	"echo-ws-pipeline": "echo-ws", "echo-ws-limited": "echo-ws"}

// modeProfiles are the profiles the modes test runs: runnable, and the WebSocket and h3
// profiles, which runnable does not list (TestChecks wants every runnable profile to
// start with its readiness probe; theirs start with the upgrade and the QUIC request).
var modeProfiles = func() []string {
	out := slices.Clone(runnable)
	for _, p := range []string{"baseline-h3", "static-h3", "echo-ws", "echo-ws-pipeline", "echo-ws-limited"} {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}()

// brokenWith are the modes that cannot break their check alone, with every check they
// fail. The WebSocket checks each open their connection with the same upgrade (a random
// key, nothing else to tell them apart), and gorilla's dialer refuses a wrong Accept before
// any check sees the 101, so a server that answers a wrong Accept fails every check of the
// profile; "upgrade /ws" is the one whose failure names the cause, the others fail at their
// own upgrade.
var brokenWith = map[string][]string{"echo-ws.ws-wrong-accept": validate.Checks("echo-ws")}

// mirroredChecks are, per profile, the names of checks that are another profile's (crud's
// /async-db block is async-db's).
var mirroredChecks = map[string]string{"crud": "async-db"}

// TestSharedSuites: the checks the modes test does not run on their own are the same checks
// as those it does run.
func TestSharedSuites(t *testing.T) {
	names := func(p string) []string {
		var out []string
		for _, c := range validate.Describe(p) {
			out = append(out, c.Name)
		}
		return out
	}
	for p, other := range mirrored {
		if a, b := names(p), names(other); !slices.Equal(a, b) {
			t.Errorf("%s's checks %q differ from %s's %q", p, a, other, b)
		}
	}
	for _, n := range names("async-db") {
		if !strings.HasPrefix(n, "probe ") && !slices.Contains(names("crud"), n) {
			t.Errorf("crud lacks async-db's check %q", n)
		}
	}
}

// requiredPartBroken are the modes that break the required part of a check that also has
// an advisory part: the server stops answering after the malformed request.
var requiredPartBroken = map[string]bool{"baseline.malformed-nul": true,
	"json-tls.tls-alpn-h2-only": true, "static-tls.tls-alpn-h2-only": true, "8gbit.tls-alpn-h2-only": true}

// wantStatus is how a miss of the check under the mode must be reported: WARN for an
// advisory check, or for the advisory part of a required one; FAIL otherwise.
func wantStatus(info validate.Info, mode string) validate.Status {
	switch {
	case info.Tier == validate.Advisory:
		return validate.Warn
	case info.Advisory != "" && !requiredPartBroken[mode]:
		return validate.Warn
	}
	return validate.Fail
}

// TestEachCheckCatchesItsMode starts the fixture once per check with the mode that breaks
// that check, and wants exactly that check to miss while the profile's others pass: as a
// FAIL when the check (or the part of it that broke) is required, as a WARN when it is
// advisory, and as a FAIL again under Strict.
func TestEachCheckCatchesItsMode(t *testing.T) {
	dir := data(t)
	used := map[string]bool{}
	warned := 0
	for _, p := range modeProfiles {
		if _, ok := mirrored[p]; ok {
			continue
		}
		for _, info := range validate.Describe(p) {
			name := info.Name
			if other, ok := mirroredChecks[p]; ok && !strings.HasPrefix(name, "probe ") && slices.Contains(validate.Checks(other), name) {
				continue
			}
			mode, ok := breaks[p][name]
			if !ok {
				t.Errorf("check %s: %q has no mode that breaks it", p, name)
				continue
			}
			used[mode] = true
			want := wantStatus(info, mode)
			if want == validate.Warn {
				warned++
			}
			t.Run(p+"/"+name, func(t *testing.T) {
				t.Parallel()
				s := validatetest.Start(t, dir, mode)
				out := validate.Run(t.Context(), target(t, s), []string{p})
				got := failing(t, out)
				wantFailing := []string{name}
				if all, ok := brokenWith[mode]; ok {
					wantFailing = all
				}
				// A fragment mode sees the pieces only when they arrive in separate reads; a
				// loaded machine can merge two pieces sent 30 ms apart. A server that answers
				// /delay/N early is told apart by time alone; a machine stalled for N ms in each
				// of the check's tries makes an instant answer look late. Those modes get up to
				// three tries. So does any mode whose run saw another check time out (a
				// machine stalled past a check's 2 s without progress, as .ci/flaky's load
				// did on static-large's large files, or past a request's own timeout). A
				// check that stopped catching its mode fails all three. Each try meets a
				// fixture started afresh: the crud checks write, and a second run on the
				// first one's server would find the rows it updated and created.
				timing := strings.Contains(mode, ".frag-") || strings.HasSuffix(mode, "-early")
				for try := 1; try < 3 && (timing || stalled(out, wantFailing)) && !slices.Equal(got, wantFailing); try++ {
					t.Logf("try %d of mode %s: failing checks %q; the machine's timing may have hidden it, trying again", try, mode, got)
					s.Close()
					s = validatetest.Start(t, dir, mode)
					out = validate.Run(t.Context(), target(t, s), []string{p})
					got = failing(t, out)
				}
				if !slices.Equal(got, wantFailing) {
					t.Errorf("mode %s (%s): failing checks %q, want exactly %q", mode, validatetest.Describe(mode), got, wantFailing)
					for _, o := range out {
						if o.Status != validate.Pass {
							t.Log(o)
						}
					}
					return
				}
				for i, o := range out {
					if o.Status != validate.Fail && o.Status != validate.Warn {
						continue
					}
					if o.Status != want {
						t.Errorf("mode %s: %s is %s, want %s (tier %s)", mode, o.Check, o.Status, want, info.Tier)
					}
					if (o.Status == validate.Warn) != (o.Tier == validate.Advisory) {
						t.Errorf("%s outcome has tier %s", o.Status, o.Tier)
					}
					if o.Request == "" || o.Expected == "" || o.Got == "" || o.Contract == "" {
						t.Errorf("failing outcome lacks a part: %#v", o)
					}
					prefix := want.String() + " " + p + ": " + o.Check + ": sent "
					if line := o.String(); !strings.HasPrefix(line, prefix) || !strings.Contains(line, "; contract: ") || strings.Contains(line, "\n") {
						t.Errorf("String() = %q, want one line: %s…; expected …; got …; contract: …", line, prefix)
					}
					if !strings.Contains(o.Contract, validate.DocsFile+"#"+p) {
						t.Errorf("contract %q does not point into %s", o.Contract, validate.DocsFile)
					}
					strict := validate.Strict(out)
					if strict[i].Status != validate.Fail {
						t.Errorf("Strict: %s is %s, want FAIL", name, strict[i].Status)
					}
					_, fail, _, _ := validate.Summary(out)
					_, sfail, _, _ := validate.Summary(strict)
					if want == validate.Warn && (fail != 0 || sfail != 1 || validate.AdvisoryLine(out) == "" || validate.AdvisoryLine(strict) != "") {
						t.Errorf("a WARN: %d failed (%d under Strict), advisory line %q; want 0 (1) and a line", fail, sfail, validate.AdvisoryLine(out))
					}
					t.Log(o)
				}
			})
		}
	}
	if warned < 10 {
		t.Errorf("only %d checks miss as WARN; the advisory tier is not exercised", warned)
	}
	// Every check has its own mode.
	seen := map[string]string{}
	for p, m := range breaks {
		for name, mode := range m {
			if prev, dup := seen[mode]; dup {
				t.Errorf("mode %s breaks both %s and %s/%s", mode, prev, p, name)
			}
			seen[mode] = p + "/" + name
			if !slices.Contains(validate.Checks(p), name) {
				t.Errorf("breaks lists %s/%q, which is not a check", p, name)
			}
		}
	}
}

// TestMoreWaysToBreak runs modes outside the one-per-check table: each must make at
// least the listed checks fail.
func TestMoreWaysToBreak(t *testing.T) {
	dir := data(t)
	for _, tt := range []struct {
		mode    string
		profile string
		want    []string
	}{
		{"baseline.no-length", "baseline", []string{"GET framing", "keep-alive"}},
		{"static.static-no-vary", "static", []string{"precompressed twins served"}},
		{"static-h2.static-no-vary", "static-h2", []string{"precompressed twins served"}},
		{"static-h3.static-no-vary", "static-h3", []string{"precompressed twins served"}},
		// The second upgrade after 10 echoes is refused; any other check's upgrade that comes
		// after the 10th echo (of any connection) is refused too.
		{"echo-ws.ws-reconnect-refused", "echo-ws", []string{"upgrade again after 10 echoes"}},
		// A server that selects no ALPN protocol misses the advisory part of the check.
		{"json-tls.tls-no-alpn", "json-tls", []string{"ALPN http/1.1"}},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			s := validatetest.Start(t, dir, tt.mode)
			out := validate.Run(t.Context(), target(t, s), []string{tt.profile})
			got := failing(t, out)
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("mode %s: failing checks %q, want them to include %q", tt.mode, got, w)
				}
			}
			for _, o := range out {
				if o.Status == validate.Fail {
					t.Log(o)
				}
			}
		})
	}
}

// stalled reports whether a check other than the wanted ones failed because the server made
// no progress in time: a stalled machine, not a broken check.
func stalled(out []validate.Outcome, want []string) bool {
	for _, o := range out {
		if o.Status != validate.Pass && !slices.Contains(want, o.Check) && timedOut(o.Got) {
			return true
		}
	}
	return false
}

// timedOut reports whether a check's result is a client's time limit running out (its 2 s
// without progress, or the request's own timeout: a stalled fresh CI machine cancelled an
// HTTP/3 body read so), which says nothing of the server's answer.
func timedOut(got string) bool {
	for _, s := range []string{"no progress within", "Client.Timeout", "context deadline exceeded", "i/o timeout"} {
		if strings.Contains(got, s) {
			return true
		}
	}
	return false
}
