package validate

import "github.com/arenabot/arenabot/profile"

// checkScheme is the protocol a profile's checks speak where it is not the load's:
// gateway-h3 is checked over h2 on the edge's TCP 8443, as the arena's suite checks it
// (its h3Checks still make one request over QUIC).
var checkScheme = map[string]string{"gateway-h3": profile.SchemeH2}

// gatewayChecks are those of gateway-64 and gateway-h3, over the stack's edge on 8443 in
// h2 (the arena's suite checks HTTP/3 nowhere): the arena's certificate and ALPN h2, the
// static files the edge serves from disk, and the server's sums, json and async-db through
// the edge.
func gatewayChecks(p string) []check {
	checks := h2TLSChecks(p, "/static/reset.css")
	checks = append(checks, staticChecks(p)...)
	checks = append(checks, sumChecks(p)...)
	checks = append(checks, jsonChecks(p, "")...)
	return append(checks, asyncDBChecks(p, false)...)
}
