package measure

import (
	"context"
	"fmt"
	"slices"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/cgroup"
	"github.com/arenabot/arenabot/validate"
)

// A stage is what a profile's load goes to: one server container of the entry's image
// (serverStage) or the entry's compose stack (stackStage). Each profile has one
// (stages.of); the measurement, the validation and the builds ahead ask it, not the profile.
type stage interface {
	// ownImage reports whether the stage runs the entry's own image, the one its Dockerfile
	// builds; a stack's images come from its compose file.
	ownImage() bool
	// prebuild is the job that builds the images the stage runs for p ahead of the
	// measurement (Prebuild) beside the entry's own; nil when there are none.
	prebuild(ctx context.Context, e frameworks.Entry, p profile.Profile) func(*build.Builder)
	// validate runs the checks of the named profiles on the stage, started as a row starts
	// it, and says per profile why one could not be checked (unready).
	validate(ctx context.Context, image string, e frameworks.Entry, names []string) (out []validate.Outcome, unready map[string]error, err error)
	// open starts the stage for a row (its sidecars and its server or services, ready) and
	// prepares the load tool's run for conns connections.
	open(ctx context.Context, image string, e frameworks.Entry, p profile.Profile, conns int) (*session, error)
}

// stages are a Bencher's two stages.
type stages struct {
	server *serverStage
	stack  *stackStage
}

// of is the stage profile p runs on.
func (s stages) of(p profile.Profile) stage {
	if p.Compose {
		return s.stack
	}
	return s.server
}

// ofCheck is the stage that validates the named profile: its own when the harness can run
// it, else the server stage, whose validation reports an unknown name, a profile it
// cannot run and validate.TLSCheck.
func (s stages) ofCheck(name string) stage {
	if p, ok := profile.Lookup(name); ok && p.Runnable() {
		return s.of(p)
	}
	return s.server
}

// all are the stages in the order the validation goes through them.
func (s stages) all() []stage { return []stage{s.server, s.stack} }

// ownImage reports whether any of ps runs on the entry's own image (none counts as
// needing it): when none does, its Dockerfile is not built.
func (s stages) ownImage(ps []profile.Profile) bool {
	return len(ps) == 0 || slices.ContainsFunc(ps, func(p profile.Profile) bool { return s.of(p).ownImage() })
}

// lookupAll looks up every name; known is false when the table lacks one.
func lookupAll(names []string) (ps []profile.Profile, known bool) {
	for _, n := range names {
		p, ok := profile.Lookup(n)
		if !ok {
			return nil, false
		}
		ps = append(ps, p)
	}
	return ps, true
}

// entryProfiles are the profiles an entry subscribes to that the table knows.
func entryProfiles(e frameworks.Entry) []profile.Profile {
	var ps []profile.Profile
	for _, n := range e.Meta.Tests {
		if p, ok := profile.Lookup(n); ok {
			ps = append(ps, p)
		}
	}
	return ps
}

// A serverStage runs a profile's load against one container of the entry's image, beside
// the sidecars the profile needs. It has the Bencher's parts it needs.
type serverStage struct {
	cfg      *Config
	servers  *servers
	sidecars *sidecarStarter
	tools    *tools
}

func (ss *serverStage) ownImage() bool { return true }

// prebuild has nothing to add: the entry's own image is built per target.
func (ss *serverStage) prebuild(context.Context, frameworks.Entry, profile.Profile) func(*build.Builder) {
	return nil
}

// open starts the profile's sidecars and a fresh server container from image, waits until
// it answers and prepares the load tool's run for conns connections.
func (ss *serverStage) open(ctx context.Context, image string, e frameworks.Entry, p profile.Profile, conns int) (*session, error) {
	side, err := ss.sidecars.startAll(ctx, e, p, p.Sidecars)
	if err != nil {
		return nil, err
	}
	c, stop, err := ss.servers.start(ctx, image, e, p, side.env())
	if err != nil {
		side.stop()
		return nil, err
	}
	s := &session{entry: e.Name, cpus: ss.servers.options(image, e, p).CPUSet, side: side, stop: stop, tool: ss.tools.checks[p.Tool]}
	if s.group, err = cgroup.ForContainer(ss.cfg.CgroupRoot, c.Pid, c.ID); err != nil {
		s.close()
		return nil, fmt.Errorf("cgroup of %s: %w", e.Name, err)
	}
	if err := ss.tools.load(s, p, conns); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}
