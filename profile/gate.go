package profile

import (
	"maps"
	"slices"
)

// boardScored are the profiles the arena's board scores for its framework tiers (the
// catalog's flagship, emerging and experimental columns; the others are reference rows
// there). They are what a request's verdict is judged on unless the arena's settings
// file names its own (Gate).
var boardScored = []string{
	"baseline", "limited-conn", "async", "latency-10k", "latency-1m", "json-comp", "json-tls", "8gbit",
	"baseline-h2", "static-h2", "baseline-h2c", "json-h2c", "baseline-h3", "static-h3",
	"unary-grpc", "unary-grpc-tls", "gateway-64", "gateway-h3", "production-stack",
	"echo-ws", "echo-ws-pipeline", "echo-ws-limited",
}

// BoardScored reports whether the arena's board scores the profile for frameworks.
func BoardScored(name string) bool { return slices.Contains(boardScored, name) }

// A Gate is what a request's verdict (the bot's check run) is judged on: the gated
// profiles, each with the figure a row of it fails on when it got worse. A nil Gate is
// DefaultGate.
type Gate map[string]Figure

// DefaultGate gates every profile the arena's board scores, each on its primary figure.
func DefaultGate() Gate {
	g := Gate{}
	for _, name := range boardScored {
		if p, ok := Lookup(name); ok {
			g[name] = p.Figures().Primary
		}
	}
	return g
}

// Figure is the figure a row of the profile is judged on, and whether the profile is
// gated at all.
func (g Gate) Figure(name string) (Figure, bool) {
	if g == nil {
		if !BoardScored(name) {
			return "", false
		}
		p, ok := Lookup(name)
		return p.Figures().Primary, ok
	}
	f, ok := g[name]
	return f, ok
}

// Profiles returns the gated profiles in the table's order.
func (g Gate) Profiles() []string {
	if g == nil {
		g = DefaultGate()
	}
	names := slices.Collect(maps.Keys(g))
	slices.SortFunc(names, func(a, b string) int { return Index(a) - Index(b) })
	return names
}
