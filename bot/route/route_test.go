package route

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
)

func rows(tests ...string) []profile.Row {
	var out []profile.Row
	for _, t := range tests {
		out = append(out, profile.Row{Entry: "nethttp", Test: t, Conns: 512}, profile.Row{Entry: "gin", Test: t, Conns: 512})
	}
	return out
}

// TestChoose: the first pool that runs every row; a big profile goes to the pool with a big
// host; a row no pool runs is refused with the largest host's size; a row only another pool
// runs is refused naming it; no live host at all routes to the first pool and refuses nothing.
func TestChoose(t *testing.T) {
	small := queue.Host{Pool: "default", Name: "vm", Threads: "2"}
	big := queue.Host{Pool: "big", Name: "tr", Threads: "128"}
	lite := queue.Host{Pool: "default", Name: "laptop", Threads: "2", Lite: true}
	for _, c := range []struct {
		name  string
		pools []string
		hosts []queue.Host
		rows  []profile.Row
		want  Decision
	}{
		{"small rows stay in the first pool", []string{"default", "big"}, []queue.Host{small, big}, rows("baseline", "json"),
			Decision{Pool: "default"}},
		{"a big row goes to the big pool", []string{"default", "big"}, []queue.Host{small, big}, rows("baseline", "latency-500k-8cpu"),
			Decision{Pool: "big"}},
		{"no pool is big enough", []string{"default"}, []queue.Host{small}, rows("baseline", "latency-500k-8cpu"),
			Decision{Pool: "default", Refused: []Refusal{{Test: "latency-500k-8cpu", Need: 68, Most: 2}}}},
		{"the first pool big enough", []string{"default", "mid", "big"}, []queue.Host{small, {Pool: "mid", Name: "m", Threads: "70"}, big}, rows("baseline", "latency-500k-8cpu"),
			Decision{Pool: "mid"}},
		{"what no host runs is refused, the rest goes where it fits", []string{"default", "mid"}, []queue.Host{small, {Pool: "mid", Name: "m", Threads: "70"}}, rows("baseline", "api-16", "latency-500k-8cpu"),
			Decision{Pool: "mid", Refused: []Refusal{{Test: "api-16", Need: 72, Most: 70}}}},
		{"a lite host runs anything", []string{"default"}, []queue.Host{lite}, rows("latency-500k-8cpu"),
			Decision{Pool: "default"}},
		{"a pool runs a row when every live host of it does", []string{"default", "big"}, []queue.Host{small, big, {Pool: "big", Name: "tr-small", Threads: "32"}}, rows("baseline", "latency-500k-8cpu"),
			Decision{Pool: "default", Refused: []Refusal{{Test: "latency-500k-8cpu", Need: 68, Most: 32}}}},
		{"a host of a pool not served is not counted", []string{"default"}, []queue.Host{big}, rows("latency-500k-8cpu"),
			Decision{Pool: "default", NoHosts: true}},
		{"no live host", []string{"x", "y"}, nil, rows("latency-500k-8cpu"),
			Decision{Pool: "x", NoHosts: true}},
		{"no pools configured", nil, []queue.Host{{Pool: queue.DefaultPool, Threads: "unknown"}}, rows("api-16"),
			Decision{Pool: queue.DefaultPool}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Choose(c.pools, c.hosts, c.rows)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Choose (-want +got):\n%s", diff)
			}
			for _, r := range c.rows {
				refused := false
				for _, f := range c.want.Refused {
					refused = refused || f.Test == r.Test
				}
				if got.Runs(r) == refused {
					t.Errorf("Runs(%v) = %v, want %v", r, got.Runs(r), !refused)
				}
			}
		})
	}
}

// TestNote: the ack's note names each refused test in a code span, what it needs, and the
// pool the rest runs in.
func TestNote(t *testing.T) {
	d := Decision{Pool: "mid", Refused: []Refusal{{Test: "latency-500k-8cpu", Need: 68, Most: 2}, {Test: "api-16", Need: 72, Most: 2}}}
	want := "Not run: `latency-500k-8cpu` needs a runner host with 68 CPUs and no pool has only such hosts (the best has 2); " +
		"`api-16` needs a runner host with 72 CPUs and no pool has only such hosts (the best has 2). " +
		"The other rows run in pool `mid`."
	if got := d.Note(); got != want {
		t.Errorf("Note =\n%s\nwant\n%s", got, want)
	}
	if got := (Decision{Pool: "default"}).Note(); got != "" {
		t.Errorf("Note with nothing refused = %q, want none", got)
	}
}
