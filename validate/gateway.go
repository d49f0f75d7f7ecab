package validate

// gatewayChecks are those of gateway-64 and gateway-h3, over the stack's edge on 8443 in
// h2 (the arena's suite checks HTTP/3 nowhere; gateway-h3's row says so in CheckScheme):
// the arena's certificate and ALPN h2, the static files the edge serves from disk, and the
// server's sums, json and async-db through the edge.
func gatewayChecks(p string) []check {
	checks := h2TLSChecks(p, "/static/reset.css")
	checks = append(checks, staticChecks(p)...)
	checks = append(checks, sumChecks(p)...)
	checks = append(checks, jsonChecks(p, "")...)
	return append(checks, asyncDBChecks(p, false)...)
}
