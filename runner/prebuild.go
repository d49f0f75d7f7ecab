package runner

import "context"

// Prebuild builds the images a plan will measure, before the host lock is taken: each
// target's image and its base's, and in --lite mode the load-generator image. A build uses
// no fixed port, so a run that then waits for the host has built meanwhile, and the host is
// held only while servers run. Failures are not returned: Measure meets them and reports
// them on the entry's rows as it would have without Prebuild, and a Dockerfile that failed
// is not built a second time. An image that built is asked for again by Measure and comes
// from Docker's layer cache.
func (b *Bencher) Prebuild(ctx context.Context, plan Plan) {
	if b.cfg.Lite {
		if err := b.images.Loadgen(ctx); err != nil {
			b.cfg.Log.Info("load-generator image not built ahead", "err", err) // Prepare reports it
		}
	}
	for _, t := range plan.Targets {
		if ctx.Err() != nil {
			return
		}
		if _, err := b.images.Entry(ctx, t.Entry); err != nil {
			continue // the entry's rows fail, and its base is not needed
		}
		if t.Base != nil && t.Base.Err == nil {
			b.images.Base(ctx, t.Base.Entry, t.Base.Ref, t.Base.Commit)
		}
	}
}

// BuildLoadgen builds the load-generator image that --lite runs the load tools in, unless it
// is built and current. Like Build, it needs neither Prepare nor the host lock.
func (b *Bencher) BuildLoadgen(ctx context.Context) error { return b.images.Loadgen(ctx) }
