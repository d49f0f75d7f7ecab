package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/runner/profile"
	"github.com/arenabot/arenabot/validate"
)

// A ValidationFailure is why a profile was not measured: the first check it failed.
type ValidationFailure struct {
	Outcome validate.Outcome
}

func (f *ValidationFailure) Error() string {
	return "validation failed, not measured: " + f.Outcome.String()
}

// Short is the table cell: "validation: <check>".
func (f *ValidationFailure) Short() string {
	if f.Outcome.Check == "" {
		return "validation: " + f.Outcome.Profile
	}
	return "validation: " + f.Outcome.Check
}

// Validate builds an entry (or reuses its image), starts it exactly as a measurement does,
// waits until it answers, and runs the validation checks of the named profiles against it.
// Profiles the harness cannot run yet come back as SKIP outcomes.
func (b *Bencher) Validate(ctx context.Context, e frameworks.Entry, profiles []string) ([]validate.Outcome, error) {
	if _, err := b.eng.RemoveLabeled(ctx, LabelManaged, "true"); err != nil {
		return nil, fmt.Errorf("remove leftover containers: %w", err)
	}
	image, err := b.buildEntry(ctx, e)
	if err != nil {
		return nil, err
	}
	return b.validateImage(ctx, image, e, profiles)
}

// validateImage runs the checks in one container started like the first runnable profile's.
func (b *Bencher) validateImage(ctx context.Context, image string, e frameworks.Entry, profiles []string) ([]validate.Outcome, error) {
	var first profile.Profile
	found := false
	for _, name := range profiles {
		if p, ok := profile.Lookup(name); ok && p.Runnable() {
			first, found = p, true
			break
		}
	}
	if !found { // nothing to start a server for: every outcome is a SKIP
		return validate.Run(ctx, validate.Target{Host: "127.0.0.1", DataDir: b.cfg.DataDir}, profiles), nil
	}
	_, stop, err := b.serve(ctx, image, e, first)
	if err != nil {
		return nil, err
	}
	defer stop()
	start := time.Now()
	out := validate.Run(ctx, validate.Target{Host: "127.0.0.1", DataDir: b.cfg.DataDir}, profiles)
	b.cfg.Log.Info("validated", "framework", e.Name, "duration", time.Since(start).Round(time.Millisecond))
	return out, ctx.Err()
}

// gate validates the selected profiles of an entry before any of them is measured and
// returns, per profile, why it must not be measured, and the advisory checks it missed
// (which do not gate).
func (b *Bencher) gate(ctx context.Context, image string, t Target) (map[string]error, []validate.Outcome, error) {
	names := make([]string, len(t.Profiles))
	for i, p := range t.Profiles {
		names[i] = p.Name
	}
	b.note(fmt.Sprintf("%s: validating %d test(s)", t.Entry.Name, len(names)))
	outcomes, err := b.validateImage(ctx, image, t.Entry, names)
	if err != nil {
		return nil, nil, err
	}
	failed := map[string]error{}
	for _, name := range names {
		if o, ok := validate.FirstFailure(outcomes, name); ok {
			failed[name] = &ValidationFailure{Outcome: o}
			b.note(fmt.Sprintf("%s: %s fails validation and will not be measured: %s", t.Entry.Name, name, o.String()))
		}
	}
	warnings := validate.Warnings(outcomes)
	if len(warnings) > 0 {
		b.note(fmt.Sprintf("%s: %d advisory check(s) missed; measured all the same: %s", t.Entry.Name, len(warnings), warnings[0].String()))
	}
	return failed, warnings, nil
}
