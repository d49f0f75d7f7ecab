package profile

import "testing"

// TestDefaultGate: every profile the board scores is in the table (a name that is not
// would drop out of the default gate unseen), each gated on its primary figure.
func TestDefaultGate(t *testing.T) {
	g := DefaultGate()
	if len(g) != len(boardScored) || len(g) != 22 {
		t.Fatalf("default gate of %d profiles, want the board's 22 (%d listed)", len(g), len(boardScored))
	}
	for _, name := range boardScored {
		p, ok := Lookup(name)
		if !ok {
			t.Errorf("%s is not a profile", name)
			continue
		}
		if f, gated := Gate(nil).Figure(name); !gated || f != p.Figures().Primary || g[name] != f {
			t.Errorf("%s: gated %v on %q, want its primary figure %q", name, gated, f, p.Figures().Primary)
		}
	}
	if _, gated := Gate(nil).Figure("json"); gated {
		t.Error("json, a reference row on the board, is gated by default")
	}
	if got := (Gate{"json-tls": FigureRPS, "baseline": FigureP99}).Profiles(); len(got) != 2 || got[0] != "baseline" {
		t.Errorf("profiles %v, want the table's order", got)
	}
}
