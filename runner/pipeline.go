package runner

import (
	"context"

	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/runner/measure"
)

// A Pipeline measures a plan on this host in the one order `arenabot bench` and the job
// worker share: the images are built first (Prebuild), since a build needs no fixed port and
// a run that then waits for the host has built meanwhile; then the host lock is taken
// (servers listen on fixed host ports and measurements own the CPUs, so a bench, a validate
// and a job on this host take turns); under it the caller's check runs (the worker
// verifies the arena data its containers mount), the load tools are prepared, and the plan
// is measured.
type Pipeline struct {
	Bencher *measure.Bencher
	Hooks   Hooks
}

// Hooks let the caller follow a Pipeline and take part in it; nil hooks are skipped.
type Hooks struct {
	// Phase is told what the pipeline starts doing: "building the images", "waiting for
	// the host lock", "checking the load tools". The rows' progress comes through the
	// Bencher's configuration (OnRowStart, Progress).
	Phase func(phase string)
	// Waiting is called when another run holds the host lock, with what it wrote in the
	// lock file (host.LockHost).
	Waiting func(holder string)
	// LockWait is called with true before the wait for the host lock and with false after
	// it: the wait is another run's time (a job's limit does not run meanwhile).
	LockWait func(waiting bool)
	// Locked runs under the host lock, before the load tools are prepared; its error ends
	// the pipeline.
	Locked func() error
}

// Run measures plan and returns its rows (measure.Bencher.Measure) and unlock, which
// releases the host lock: nil when the lock was not taken, else for the caller to call
// once it is done with the host (the worker after its cleanup). When every target's image
// failed to build, no row can start a server and Run measures without the lock, so the
// rows report the build failures at once instead of after another run frees the host.
//
// The error is the lock's, Locked's or Prepare's, or ctx's when it ended (then the rows
// are those measured until then).
func (p Pipeline) Run(ctx context.Context, plan measure.Plan) (rows []result.Row, unlock func(), err error) {
	p.phase("building the images")
	if !p.Bencher.Prebuild(ctx, plan) {
		rows, err = p.Bencher.Measure(ctx, plan)
		return rows, nil, err
	}
	p.phase("waiting for the host lock")
	if p.Hooks.LockWait != nil {
		p.Hooks.LockWait(true)
	}
	unlock, err = host.LockHost(ctx, p.Hooks.Waiting)
	if p.Hooks.LockWait != nil {
		p.Hooks.LockWait(false)
	}
	if err == nil && ctx.Err() != nil { // cancelled while it got the lock
		unlock()
		err = ctx.Err()
	}
	if err != nil {
		return nil, nil, err
	}
	if p.Hooks.Locked != nil {
		if err := p.Hooks.Locked(); err != nil {
			return nil, unlock, err
		}
	}
	p.phase("checking the load tools")
	if err := p.Bencher.Prepare(ctx, plan); err != nil {
		return nil, unlock, err
	}
	rows, err = p.Bencher.Measure(ctx, plan)
	return rows, unlock, err
}

func (p Pipeline) phase(s string) {
	if p.Hooks.Phase != nil {
		p.Hooks.Phase(s)
	}
}

// HostFacts describes this host for the results (host.Facts), with the Docker daemon's
// version and default runtime when eng can say them (*docker.Engine can).
func HostFacts(ctx context.Context, eng any) result.HostFacts {
	var version, runtime string
	if ie, ok := eng.(interface {
		Info(context.Context) (docker.Info, error)
	}); ok {
		if in, err := ie.Info(ctx); err == nil {
			version, runtime = in.ServerVersion, in.DefaultRuntime
		}
	}
	return host.Facts(ctx, version, runtime)
}
