package bot

import "github.com/prometheus/client_golang/prometheus"

// ReplyMetrics registers the final replies' metrics with reg (the replies posted, by how the
// job ended, and the time from reading a job's final event to its results commit and to its
// reply) and returns the hook that records one reply: Config.OnReply.
func ReplyMetrics(reg prometheus.Registerer) func(ReplyTiming) {
	replies := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arena_final_replies_total", Help: "Final replies posted, by how the job ended.",
	}, []string{"state"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "arena_final_reply_seconds", Help: "Time from reading a job's final event to its results commit (step=commit) and to its reply posted (step=reply).",
		Buckets: []float64{0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 300},
	}, []string{"step"})
	reg.MustRegister(replies, latency)
	return func(t ReplyTiming) {
		replies.WithLabelValues(string(t.State)).Inc()
		if t.Commit > 0 {
			latency.WithLabelValues("commit").Observe(t.Commit.Seconds())
		}
		latency.WithLabelValues("reply").Observe(t.Reply.Seconds())
	}
}

// IntakeMetrics registers the gauge of the deliveries an earlier run was handling when it
// stopped and in holds back until Config.RecoverGrace has passed, and the counter of the
// deliveries dropped because their repository is not served (Config.Repos).
func IntakeMetrics(reg prometheus.Registerer, in *Intake) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "arena_webhook_recovering",
		Help: "Deliveries a stopped run was handling, held back after a restart until GitHub has settled the writes it had in flight.",
	}, func() float64 { return float64(in.recovering.Load()) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "arena_webhook_foreign_total",
		Help: "Deliveries dropped because their repository is not one the bot serves (ARENA_REPOS).",
	}, func() float64 { return float64(in.foreignSeen.Load()) }))
}
