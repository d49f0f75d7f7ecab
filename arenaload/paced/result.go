package paced

import (
	"fmt"
	"strings"
	"time"

	"github.com/arenabot/arenabot/arenaload"
)

// Thresholds of Result.Limit.
const (
	// cpuLimitShare is the share of the usable cores at which the CPU the generator's cost
	// per request needs at the target rate counts as saturated (arenaload.SaturatedShare).
	cpuLimitShare = arenaload.SaturatedShare
	// minWakeLimit is the least wake-up lag p99 that counts as the generator being late;
	// the threshold is the larger of it and the per-connection interval.
	minWakeLimit = time.Millisecond
)

// result merges the workers' counts and histograms into the run's Result; interrupted says
// the run was cancelled at stopped, before its window ended.
func (r *run) result(cpu time.Duration, stopped time.Time, interrupted bool) (arenaload.Result, extra) {
	window := r.cfg.Duration
	if el := stopped.Sub(r.t0); interrupted && el < window {
		window = el // the part of the window that ran
	}
	res := arenaload.Result{
		Tool:        "arenaload",
		Version:     arenaload.FullVersion(),
		Mode:        Mode,
		Target:      r.cfg.URL,
		Connections: r.cfg.Connections,
		Duration:    window.Seconds(),
		TargetRate:  r.cfg.Rate,
		CPU:         cpu.Seconds(),
	}
	var attempts, unsent int64
	var maxLag time.Duration
	for _, w := range r.workers {
		res.Requests += w.requests
		res.Bytes += w.cr.n
		res.Status.S2xx += w.status.S2xx
		res.Status.S3xx += w.status.S3xx
		res.Status.S4xx += w.status.S4xx
		res.Status.S5xx += w.status.S5xx
		res.Errors.Connect += w.errs.Connect
		res.Errors.Read += w.errs.Read
		res.Errors.Write += w.errs.Write
		res.Errors.Timeout += w.errs.Timeout
		attempts += w.attempts
		unsent += w.unsent
		maxLag = max(maxLag, w.maxLag)
	}
	res.OK = res.Status.S2xx
	if window > 0 {
		res.AchievedRate = float64(res.Requests) / window.Seconds()
	}
	res.RateRatio = res.AchievedRate / r.cfg.Rate
	res.MaxScheduleLag = float64(maxLag) / float64(time.Microsecond)
	if res.Requests > 0 {
		res.CPUPerRequest = float64(cpu) / float64(time.Microsecond) / float64(res.Requests)
	}

	latency, wake := arenaload.NewHistogram(), arenaload.NewHistogram()
	for i := range r.shards {
		s := &r.shards[i]
		latency.Merge(s.latency)
		wake.Merge(s.wake)
	}
	res.Latency = arenaload.Summarize(latency)

	x := extra{unsent: unsent}
	if wake.TotalCount() > 0 {
		x.wakeP50 = time.Duration(wake.ValueAtPercentile(50)) * time.Microsecond
		x.wakeP99 = time.Duration(wake.ValueAtPercentile(99)) * time.Microsecond
	}
	res.Limit = limit(limitInput{
		cpu:      cpu,
		elapsed:  stopped.Sub(r.t0),
		cores:    arenaload.UsableCores(),
		attempts: attempts,
		rate:     r.cfg.Rate,
		wakeP99:  x.wakeP99,
		interval: time.Duration(r.interval),
	})
	return res, x
}

// limitInput is what limit judges.
type limitInput struct {
	cpu, elapsed time.Duration // the generator's CPU time and the wall time of the run
	cores        int           // cores the generator may use
	attempts     int64         // requests due: written, or charged to a failed dial
	rate         float64       // the target rate
	wakeP99      time.Duration // p99 of the generator's wake-up lag on free connections
	interval     time.Duration // the per-connection interval C/R
}

// limit says why the generator, not the server, limited the run, or "" when it did not.
// It names three causes: the generator's CPU over the run was at least 90% of its cores;
// its CPU cost per request, at the target rate, needs 90% of its cores or more (the
// generator could not have offered the rate even to an infinitely fast server); or it woke
// late on free connections (wake-up lag p99 above max(1 ms, C/R)). A slow server raises
// none of them: its delays are schedule lag on busy connections, not wake-up lag.
func limit(in limitInput) string {
	var why []string
	cores := float64(in.cores)
	if sat := arenaload.CPUSaturated(in.cpu, in.elapsed, in.cores); sat != "" {
		why = append(why, sat)
	}
	if in.attempts > 0 {
		perReq := in.cpu.Seconds() / float64(in.attempts)
		need := perReq * in.rate
		if need >= cpuLimitShare*cores {
			why = append(why, fmt.Sprintf("generator too slow for the target rate: %.1f µs of CPU per request at %.0f req/s needs %.1f cores, it may use %d",
				perReq*1e6, in.rate, need, in.cores))
		}
	}
	if bound := max(minWakeLimit, in.interval); in.wakeP99 > bound {
		why = append(why, fmt.Sprintf("generator woke late: wake-up lag p99 %.2f ms above %.2f ms (the larger of 1 ms and the per-connection interval)",
			ms(in.wakeP99), ms(bound)))
	}
	return strings.Join(why, "; ")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
