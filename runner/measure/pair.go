package measure

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/stats"
	"github.com/arenabot/arenabot/text"
)

// pairWarmup is how long a server started again for one interleaved run is warmed up before
// it (at least; a profile's own Warmup is longer), so JIT runtimes reach their steady state
// on both sides alike.
const pairWarmup = time.Second

// A baseSide is a target's base as Measure prepared it: its image, or why it cannot run.
type baseSide struct {
	Base
	image   string
	err     error            // the base did not build or validate at all
	invalid map[string]error // profiles whose validation the base failed
}

// failed returns why the base cannot be measured for a profile; nil when it can.
func (s *baseSide) failed(profile string) error {
	if s.err != nil {
		return s.err
	}
	return s.invalid[profile]
}

// prepareBase builds (or finds, for a base at a commit) the base's image and validates the
// target's profiles on it. A failure is kept in the baseSide: the rows are measured all the
// same and their Δ cells say that the base failed.
func (b *Bencher) prepareBase(ctx context.Context, t Target) *baseSide {
	s := &baseSide{Base: *t.Base}
	if s.err = t.Base.Err; s.err != nil {
		b.out.note(fmt.Sprintf("%s: no base: %v", t.Entry.Name, s.err))
		return s
	}
	s.image, s.err = b.images.Base(ctx, s.Entry, s.Ref, s.Commit)
	if s.err != nil {
		b.out.note(fmt.Sprintf("%s: the base %s did not build; its rows are measured without it: %v", t.Entry.Name, s.describe(), s.err))
		return s
	}
	if b.cfg.SkipValidation {
		return s
	}
	bt := Target{Entry: s.Entry}
	for _, p := range t.Profiles {
		if s.Entry.Subscribes(p.Name) {
			bt.Profiles = append(bt.Profiles, p)
		}
	}
	if len(bt.Profiles) > 0 {
		s.invalid, _, s.err = b.gate(ctx, s.image, bt)
	}
	return s
}

// describe names the base in notes: "nethttp at 0123456789ab (main)".
func (s *baseSide) describe() string {
	switch {
	case s.Ref != "":
		return fmt.Sprintf("%s at %s (%s)", s.Entry.Name, build.ShortCommit(s.Commit), s.Ref)
	case s.Commit != "":
		return fmt.Sprintf("%s at %s", s.Entry.Name, build.ShortCommit(s.Commit))
	}
	return s.Entry.Name
}

// overBudget reports whether a run that started at started has spent its time budget: rows
// then stop at their minimum runs. A zero budget or start never runs out.
func overBudget(budget time.Duration, started time.Time) bool {
	return budget > 0 && !started.IsZero() && time.Since(started) > budget
}

// A tally counts runs for the progress line; interleaved rows add to total as they extend.
type tally struct {
	out         *reporter
	desc        string
	done, total int
}

func (t *tally) ran() {
	t.done++
	t.out.step(t.desc, t.done, t.total)
}

// throughput is a row's rate: responses (or echoes) per second, or bytes per second on a
// bandwidth row (result.Figure). A profiling run's RPS is this figure; what a row is judged
// by is its profile's Figures.
func throughput(p profile.Profile) func(result.Run) float64 { return result.Figure(p.Bandwidth) }

// stop says whether an interleaved row of p whose sides have the given runs may stop, and
// why; "" means measure another pair. The interval the rule narrows is the profile's
// primary figure's (profile.Figures): RPS, MB/s or echoes/s, and CPU per request on a
// fixed-rate row, whose achieved rate is the offered rate whatever the server does (its RPS
// interval is ±0 after any number of runs). A narrow interval says which figure it was:
// "interval narrow enough (cpu/req)". A run without the figure (no CPU reading) adds no
// sample to the interval but counts toward the rule's run limit, so a row whose figure is
// never read still stops there.
func stop(rule stats.Rule, p profile.Profile, base, head []result.Run, overBudget bool) string {
	n := min(len(base), len(head))
	if n < rule.MinRuns {
		return ""
	}
	fig := string(p.Figures().Primary)
	if rule.Enough(result.Values(base, fig), result.Values(head, fig), false) == stats.StopNarrow {
		return fmt.Sprintf("%s (%s)", stats.StopNarrow, fig)
	}
	if n >= rule.MaxRuns {
		return stats.StopMaxRuns
	}
	if overBudget {
		return stats.StopBudget
	}
	return ""
}

// measurePair measures one row of the head image against its base, interleaved: each run
// is one fresh server (with fresh sidecars), warmed up, then measured once; pairs run base
// then head, then head then base, and so on, so that drift and warm-up fall on both sides
// alike (base run i and head run i are always adjacent). After the rule's minimum runs a
// side it stops when the interval of the profile's primary figure is narrow enough (stop),
// at the rule's maximum, or when the run's time budget is spent. A base that fails leaves the head measured alone, its Side saying
// why.
//
// A profiled row then has one profiling run of each side, base first, each on a fresh
// server warmed up as the interleaved runs were, so the difference compares like with like.
func (b *Bencher) measurePair(ctx context.Context, image string, e frameworks.Entry, base *baseSide, p profile.Profile, conns int, t *tally, profiled bool) (*result.Result, *cpuRun, error) {
	if base.err == nil && !base.Entry.Subscribes(p.Name) {
		// The base does not run this test (the --compare entry, or the entry before the PR
		// subscribed it): the row is measured alone, and its Δ says n/a or NEW.
		return b.measureOne(ctx, image, e, p, conns, t.ran, profiled)
	}
	rule := result.Rule(b.cfg.Rule)
	side := &result.Side{Entry: base.Entry.Name, Ref: base.Ref, Commit: base.Commit, Image: base.image, Rule: &rule}
	if err := base.failed(p.Name); err != nil {
		side.Err = text.OneLine(err.Error())
		r, cpu, err := b.measureOne(ctx, image, e, p, conns, t.ran, profiled)
		if r != nil {
			r.Base = side
		}
		return r, cpu, err
	}
	r, err := b.interleave(ctx, image, e, base, side, p, conns, t)
	if err != nil || !profiled {
		return r, nil, err
	}
	var baseCPU *cpuRun
	if side.Err == "" {
		baseCPU = b.profileTurn(ctx, base.image, base.Entry, p, conns, side.Runs)
	}
	cpu := b.profileTurn(ctx, image, e, p, conns, r.Runs)
	cpu.attach(r, baseCPU, p, conns)
	return r, cpu, nil
}

// profileTurn is a profiling run on a fresh server, warmed up as an interleaved run is.
func (b *Bencher) profileTurn(ctx context.Context, image string, e frameworks.Entry, p profile.Profile, conns int, measured []result.Run) *cpuRun {
	s, err := b.open(ctx, image, e, p, conns)
	if err != nil {
		return &cpuRun{res: &result.CPUProfile{Err: "the profiled run's server: " + text.OneLine(err.Error())}}
	}
	defer s.close()
	if err := b.tools.warmUp(ctx, s.tool.tool, s.spec, max(p.Warmup, min(pairWarmup, s.spec.Duration))); err != nil {
		return &cpuRun{res: &result.CPUProfile{Err: "the profiled run's warm-up: " + text.OneLine(err.Error())}}
	}
	return b.prof.run(ctx, s, e, p, conns, measured)
}

// interleave is measurePair's runs: base and head alternating until the rule has enough.
func (b *Bencher) interleave(ctx context.Context, image string, e frameworks.Entry, base *baseSide, side *result.Side, p profile.Profile, conns int, t *tally) (*result.Result, error) {
	head := &headSide{image: image, entry: e, profile: p, conns: conns}
	var order strings.Builder
	for pair := 0; ; pair++ {
		sides := []bool{true, false} // base, head
		if pair%2 == 1 {
			sides = []bool{false, true}
		}
		for _, isBase := range sides {
			if !isBase {
				if err := b.headTurn(ctx, head); err != nil {
					return nil, err
				}
				order.WriteByte('H')
				t.ran()
				continue
			}
			err := base.stillThere(ctx, b.eng, b.images, b.out)
			var run result.Run
			if err == nil {
				run, _, err = b.turn(ctx, base.image, base.Entry, p, conns)
			}
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				side.Err = fmt.Sprintf("run %d of the base: %s", len(side.Runs)+1, text.OneLine(err.Error()))
				b.out.note(fmt.Sprintf("%s %s %dc: the base failed, measuring the head alone: %s", e.Name, p.Name, conns, side.Err))
				// The head's runs so far stand; it gets the rest of Runs alone.
				for len(head.runs) < b.cfg.Runs {
					if err := b.headTurn(ctx, head); err != nil {
						return nil, err
					}
					t.ran()
				}
				return head.result(side), nil
			}
			side.Runs = append(side.Runs, run)
			order.WriteByte('B')
			t.ran()
		}
		side.Order = order.String()
		if side.Stop = stop(b.cfg.Rule, p, side.Runs, head.runs, overBudget(b.cfg.Budget, b.started)); side.Stop != "" {
			return head.result(side), nil
		}
		t.total += 2
	}
}

// stillThere checks before each base run that the base's image is still on the host: a
// base image is kept between jobs, so something outside the job (an operator's prune,
// another process's cleanup) may remove it while the job runs; it is then built again,
// saying so, instead of failing the base's run.
func (base *baseSide) stillThere(ctx context.Context, eng Engine, images *build.Builder, out *reporter) error {
	if ok, err := eng.ImageExists(ctx, base.image); err != nil || ok {
		return nil // an engine that does not answer fails the run itself, with its own error
	}
	out.note(fmt.Sprintf("%s: the base image %s is no longer on the host; building it again", base.Entry.Name, base.image))
	image, err := images.Base(ctx, base.Entry, base.Ref, base.Commit)
	if err != nil {
		return fmt.Errorf("the base image went missing and did not build again: %w", err)
	}
	base.image = image
	return nil
}

// A headSide is the head of an interleaved row: what each run starts, the runs so far and
// the result the first run's server made.
type headSide struct {
	image   string
	entry   frameworks.Entry
	profile profile.Profile
	conns   int
	runs    []result.Run
	first   *result.Result
}

// headTurn measures the head once more, on a fresh server.
func (b *Bencher) headTurn(ctx context.Context, h *headSide) error {
	run, r, err := b.turn(ctx, h.image, h.entry, h.profile, h.conns)
	if err != nil {
		return fmt.Errorf("%s %s %dc run %d: %w", h.entry.Name, h.profile.Name, h.conns, len(h.runs)+1, err)
	}
	if h.first == nil {
		h.first = r
	}
	h.runs = append(h.runs, run)
	return nil
}

// result is the row's result: the head's runs and the base's side.
func (h *headSide) result(side *result.Side) *result.Result {
	h.first.FromRuns(h.runs)
	h.first.Base = side
	return h.first
}

// turn is one interleaved run: a fresh server, warmed up, measured once, removed. It also
// returns the row's result without runs, as this server's settings make it.
func (b *Bencher) turn(ctx context.Context, image string, e frameworks.Entry, p profile.Profile, conns int) (result.Run, *result.Result, error) {
	s, err := b.open(ctx, image, e, p, conns)
	if err != nil {
		return result.Run{}, nil, err
	}
	defer s.close()
	if err := b.tools.warmUp(ctx, s.tool.tool, s.spec, max(p.Warmup, min(pairWarmup, s.spec.Duration))); err != nil {
		return result.Run{}, nil, fmt.Errorf("warm-up: %w", err)
	}
	run, err := b.tools.measuredRun(ctx, s, fmt.Sprintf("%s %s %dc", e.Name, p.Name, conns))
	if err != nil {
		return result.Run{}, nil, err
	}
	return run, b.newResult(e, p, conns, s.spec, s.tool, s.side.versions()), nil
}
