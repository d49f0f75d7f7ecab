package profile

// A WriteLoad is a second load a profile runs beside its own (Profile.Writes), by the same
// tool, in parallel over the same window: production-stack's writes (compose.md: -c
// max(C/8, 8) -m 8 -t 8). A run counts both loads' responses; its RPS is both loads' 2xx
// responses ÷ the first load's duration, and its latency the first load's.
type WriteLoad struct {
	// Requests is the request file in the arena data's requests/ directory (for h2 tools a
	// file of URIs), Body the file every request posts, also in requests/.
	Requests, Body string
	// Headers are sent with every request, before the profile's Bearer token.
	Headers []string
	Streams int // concurrent streams per connection
	// ConnDivisor and MinConns size the load: the row's connections ÷ ConnDivisor, at least
	// MinConns (Conns).
	ConnDivisor, MinConns int
	Threads               int // the tool's threads, at most one per connection
}

// Conns is the load's connection count beside a row of conns connections.
func (w WriteLoad) Conns(conns int) int {
	return max(conns/w.ConnDivisor, w.MinConns)
}
