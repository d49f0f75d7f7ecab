package measure

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/validate"
	"github.com/arenabot/arenabot/validate/protocol"
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

// Validate builds an entry (or reuses its image), starts it exactly as a measurement does
// (beside the sidecars its profiles need), waits until it answers, and runs the validation
// checks of the named profiles against it (validate.TLSCheck among them: that section, on
// the entry's :9000). Profiles the harness cannot run yet come back as SKIP outcomes; a
// profile whose sidecar did not come up as one FAIL that says why. The warnings about the
// entry's meta.json come first, as WARN outcomes (validate.MetaWarnings).
func (b *Bencher) Validate(ctx context.Context, e frameworks.Entry, profiles []string) (out []validate.Outcome, err error) {
	defer func() {
		if err == nil {
			out = append(validate.MetaWarnings(e), out...)
		}
	}()
	if _, err := b.eng.RemoveLabeled(ctx, build.LabelManaged, "true"); err != nil {
		return nil, fmt.Errorf("remove leftover containers: %w", err)
	}
	var image string
	if ps, known := lookupAll(profiles); !known || b.stages.ownImage(ps) { // a stack's images come from its compose file
		if image, err = b.images.Entry(ctx, e); err != nil {
			return nil, err
		}
	}
	outcomes, unready, err := b.validateImage(ctx, image, e, profiles)
	if err != nil || len(unready) == 0 {
		return outcomes, err
	}
	for _, name := range profiles {
		if err := unready[name]; err != nil {
			if se, ok := errors.AsType[*SidecarError](err); ok {
				out = append(out, validate.Outcome{Profile: name, Check: se.Name + " sidecar", Status: validate.Fail,
					Expected: "the " + se.Name + " sidecar ready before the server starts (the runner's part, not the entry's)", Got: err.Error()})
			} else {
				out = append(out, stackOutcome(name, err))
			}
			continue
		}
		for _, o := range outcomes {
			if o.Profile == name {
				out = append(out, o)
			}
		}
	}
	return out, nil
}

// validateImage validates the profiles, each on its stage: the compose-stack ones each on
// its own stack, the others in one container of image. A stack that did not come up, or a
// sidecar that did not, leaves its profile unchecked: unready holds why.
func (b *Bencher) validateImage(ctx context.Context, image string, e frameworks.Entry, profiles []string) ([]validate.Outcome, map[string]error, error) {
	var out []validate.Outcome
	var unready map[string]error
	for _, st := range b.stages.all() {
		names := slices.DeleteFunc(slices.Clone(profiles), func(name string) bool { return b.stages.ofCheck(name) != st })
		if len(names) == 0 {
			continue
		}
		o, u, err := st.validate(ctx, image, e, names)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, o...)
		for name, err := range u {
			if unready == nil {
				unready = map[string]error{}
			}
			unready[name] = err
		}
	}
	slices.SortStableFunc(out, func(a, b validate.Outcome) int { return order(a.Profile) - order(b.Profile) })
	return out, unready, nil
}

// validate runs the checks in one container started like the first runnable profile's,
// beside the union of the sidecars the runnable profiles need. A profile whose sidecar did
// not come up is not checked: unready holds its *SidecarError.
//
// validate.TLSCheck among the profiles runs that section too, once the server answers on
// :9000; the server is started like baseline's when no profile is runnable.
func (ss *serverStage) validate(ctx context.Context, image string, e frameworks.Entry, profiles []string) (out []validate.Outcome, unready map[string]error, err error) {
	// The entry's source is read by the checks that look at how it is built (fortunes'
	// template file), which a tuned entry (meta.json's mode, or April's type) is spared.
	target := validate.Target{Host: "127.0.0.1", DataDir: ss.cfg.DataDir, Source: e.Dir, Tuned: e.Meta.Tuned()}
	var needed []string
	neededBy := map[string]profile.Profile{} // the first profile that needs it, for its labels
	for _, name := range profiles {
		if p, ok := profile.Lookup(name); ok && p.Runnable() {
			for _, s := range p.Sidecars {
				if !slices.Contains(needed, s) {
					needed, neededBy[s] = append(needed, s), p
				}
			}
		}
	}
	side := &sidecars{srv: ss.servers, ctx: ctx}
	defer side.stop()
	down := map[string]error{}
	for _, name := range needed {
		r, err := ss.sidecars.start(ctx, e, neededBy[name], name)
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if err != nil {
			if _, ok := errors.AsType[*SidecarError](err); !ok {
				return nil, nil, err
			}
			down[name] = err
			continue
		}
		side.running = append(side.running, r)
	}
	var first profile.Profile
	found := false
	var check []string
	for _, name := range profiles {
		p, ok := profile.Lookup(name)
		if i := slices.IndexFunc(p.Sidecars, func(s string) bool { return down[s] != nil }); ok && p.Runnable() && i >= 0 {
			if unready == nil {
				unready = map[string]error{}
			}
			unready[name] = down[p.Sidecars[i]]
			continue
		}
		check = append(check, name)
		if ok && p.Runnable() && !found {
			first, found = p, true
		}
	}
	tlsCheck := slices.Contains(check, validate.TLSCheck)
	if !found && tlsCheck {
		first, found = profile.Lookup("baseline")
	}
	if !found { // nothing to start a server for: every outcome is a SKIP
		return validate.Run(ctx, target, check), unready, nil
	}
	c, stop, err := ss.servers.start(ctx, image, e, first, side.env())
	if err != nil {
		return nil, nil, err
	}
	defer stop()
	target.CertsTLSDir = c.certsTLS
	// One server answers every profile, but each on its own port and protocol (TLS, h2,
	// h2c) may come up later than the first: wait for each probe in its own protocol.
	// A profile whose probe does not answer gets one FAIL that says so.
	probed := map[string]error{fmt.Sprint(first.ProbeAt()) + first.Probe: nil}
	var ready, notReady []string
	for _, name := range check {
		if name == validate.TLSCheck {
			err := ss.servers.waitAnswer(ctx, c.Container, e, protocol.H1TLS, validate.TLSCheckPort, "/")
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			if _, unready := errors.AsType[*ReadyError](err); err != nil && !unready {
				return nil, nil, err
			}
			if err != nil {
				notReady = append(notReady, name)
				out = append(out, validate.Outcome{Profile: name, Check: "readiness probe", Status: validate.Fail,
					Expected: fmt.Sprintf("HTTP/1.1 over TLS on :%d, answering within %s", validate.TLSCheckPort, ss.cfg.ReadyTimeout), Got: err.Error(),
					Contract: name + " — the entry serves HTTP/1.1 over TLS on :9000 with the pair in /certs-tls (" + validate.TLSCheckDoc + ")"})
				continue
			}
			ready = append(ready, name)
			continue
		}
		p, ok := profile.Lookup(name)
		if !ok || !p.Runnable() {
			ready = append(ready, name)
			continue
		}
		key := fmt.Sprint(p.ProbeAt()) + p.Probe
		err, done := probed[key]
		if !done {
			err = ss.servers.waitReady(ctx, c.Container, e, p)
			probed[key] = err
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if _, unready := errors.AsType[*ReadyError](err); err != nil && !unready {
			return nil, nil, err
		}
		if err != nil {
			notReady = append(notReady, name)
			out = append(out, validate.Outcome{Profile: name, Check: "readiness probe", Status: validate.Fail,
				Expected: "an answer to " + p.Probe + " within " + ss.cfg.ReadyTimeout.String(), Got: err.Error(),
				Contract: name + " — the readiness probe (" + validate.DocsFile + "#" + name + ")"})
			continue
		}
		ready = append(ready, name)
	}
	start := time.Now()
	out = append(validate.Run(ctx, target, ready), out...)
	if len(notReady) > 0 {
		slices.SortStableFunc(out, func(a, b validate.Outcome) int { return order(a.Profile) - order(b.Profile) })
	}
	ss.cfg.Log.Info("validated", "framework", e.Name, "duration", time.Since(start).Round(time.Millisecond))
	return out, unready, ctx.Err()
}

// order is a profile's place in the table, then validate.TLSCheck, unknown names last.
func order(name string) int {
	if i := profile.Index(name); i >= 0 {
		return i
	}
	if name == validate.TLSCheck {
		return len(profile.All)
	}
	return len(profile.All) + 1
}

// gate validates the selected profiles of an entry before any of them is measured and
// returns, per profile, why it must not be measured, and the advisory checks it missed
// (which do not gate).
func (b *Bencher) gate(ctx context.Context, image string, t Target) (map[string]error, []validate.Outcome, error) {
	names := make([]string, len(t.Profiles))
	for i, p := range t.Profiles {
		names[i] = p.Name
	}
	b.out.note(fmt.Sprintf("%s: validating %d test(s)", t.Entry.Name, len(names)))
	outcomes, unready, err := b.validateImage(ctx, image, t.Entry, names)
	if err != nil {
		return nil, nil, err
	}
	failed := map[string]error{}
	for _, name := range names {
		if err := unready[name]; err != nil {
			failed[name] = err
			b.out.note(fmt.Sprintf("%s: %s was not validated and will not be measured: %v", t.Entry.Name, name, err))
		} else if o, ok := validate.FirstFailure(outcomes, name); ok {
			failed[name] = &ValidationFailure{Outcome: o}
			b.out.note(fmt.Sprintf("%s: %s fails validation and will not be measured: %s", t.Entry.Name, name, o.String()))
		}
	}
	warnings := append(validate.MetaWarnings(t.Entry), validate.Warnings(outcomes)...)
	if len(warnings) > 0 {
		b.out.note(fmt.Sprintf("%s: %d advisory check(s) missed; measured all the same: %s", t.Entry.Name, len(warnings), warnings[0].String()))
	}
	return failed, warnings, nil
}
