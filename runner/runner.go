// Package runner is the job service of the benchmark host: the queue worker behind
// `arenabot work` claims approved jobs, checks out the approved commit (and the merge base
// its rows are measured against), resolves the job's rows into a plan, has runner/measure
// measure it under the host lock, publishes progress and rows on the event stream, and
// finishes the job with a result.Report. Resolving names into plans for the local
// subcommands (NewPlan, ValidationTests, Against) lives here too.
package runner

import (
	"context"

	"github.com/arenabot/arenabot/runner/measure"
)

// Engine is the part of the Docker Engine API the worker and the measurements it runs use;
// *docker.Engine implements it.
type Engine interface {
	measure.Engine
	// ImageLabelValues lists the values of a label over the images that carry it: the
	// worker's sweep of leftover images reads the job IDs on them.
	ImageLabelValues(ctx context.Context, key string) ([]string, error)
}

// LabelJob carries the queue job's ID on the images and containers the worker's jobs
// create (through measure.Config.Labels), so a job's leftovers can be removed after it.
const LabelJob = "arenabot.job"
