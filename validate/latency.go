package validate

import "slices"

// latencyGetChecks are the baseline checks a fixed-rate latency profile keeps: its load is
// GET /baseline11 alone.
var latencyGetChecks = []string{"probe GET /baseline11?a=1&b=1", "GET sum 13+42", "GET Content-Type",
	"GET random sum", "GET framing", "fragmented request line", "fragmented headers"}

// latencyChecks are the checks of latency-10k, latency-1m and latency-500k-8cpu: the paced
// load sends GET /baseline11?a=1&b=2 on 1,024 kept-alive connections, so the baseline
// checks of GET, and keep-alive.
func latencyChecks(p string) []check {
	var checks []check
	for _, c := range append(h1SumChecks(p), fragmentChecks(p)...) {
		if slices.Contains(latencyGetChecks, c.name) {
			checks = append(checks, c)
		}
	}
	return append(checks, check{
		name:     "keep-alive",
		contract: contract(p, "connections are kept alive between requests (the paced load sends every request of a run on the same connections, each at its own fixed rate)", ""),
		run:      keepAliveCheck,
	})
}
