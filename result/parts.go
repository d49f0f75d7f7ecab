package result

// A Part is one of the loads of a run made of several at once (production-stack's reads
// and writes): its own counts, kept beside the run's sums.
type Part struct {
	Name      string  `json:"name"` // "reads", "writes"
	Requests  int64   `json:"requests"`
	Status2xx int64   `json:"status_2xx"`
	DurationS float64 `json:"duration_s"`
	RPS       float64 `json:"rps"` // its 2xx per second of its own duration
}
