package result

import "maps"

// The runner on the benchmark host and the bot share no code but this: the runner publishes
// Progress and Row events while a job runs and finishes the job with a Report; the bot turns
// them into the status comment, the results reply and the results commit. They travel as
// JSON through the queue's event stream and the job record.

// Progress is the payload of a "progress" event: a measurement began.
type Progress struct {
	Entry   string `json:"entry"`   // "nethttp"
	Profile string `json:"profile"` // "baseline"
	Conns   int    `json:"conns"`   // 4096
	Row     int    `json:"row"`     // 1-based index of the row being measured
	Rows    int    `json:"rows"`    // rows in the whole job
	Done    int    `json:"done"`    // rows finished (measured or failed)
	Failed  int    `json:"failed"`  // rows finished without a result
	Note    string `json:"note,omitempty"`
	// Host, on the progress of a share of a job split over several hosts, is the host
	// measuring the share; Row, Rows, Done and Failed then count the share's rows.
	Host string `json:"host,omitempty"`
}

// A Row is one framework × profile × connection count of a job: its result, or why there is
// none. It is the payload of a "row" event and an element of Report.Rows.
type Row struct {
	Entry     string  `json:"entry"`             // directory name
	Display   string  `json:"display,omitempty"` // meta.json display_name
	Profile   string  `json:"profile"`           // "" when the entry failed before its profiles were known
	Conns     int     `json:"conns,omitempty"`
	WebSocket bool    `json:"websocket,omitempty"`
	Bandwidth bool    `json:"bandwidth,omitempty"` // the row's figure is bytes per second
	Result    *Result `json:"result,omitempty"`    // nil when the row failed
	Err       string  `json:"err,omitempty"`       // one line: why the row has no result
	// Short is the failed row's table cell, at most about 80 characters ("validation: GET
	// sum 13+42", "build failed", "not ready after 30s"); Err goes under the table. ""
	// means Err is short enough to be its own cell.
	Short string `json:"short,omitempty"`
	// Host is the host that measured the row, set when the job was split over several
	// hosts (each row wholly on one); "" means the report's Host.
	Host string `json:"host,omitempty"`
	// Advisories, on an entry's first row, are the advisory checks its validation missed:
	// one WARN line each (request, expected, got, contract). They never stop a measurement.
	Advisories []string `json:"advisories,omitempty"`
	// BuildLog is the tail of a failed build's log, on the entry's first row.
	BuildLog []string `json:"build_log,omitempty"`
	// Pprof and Flame, on a profiled row, are its CPU profile (gzipped pprof) and flame
	// graph (SVG), saved beside the result file (Result.CPUProfile names them).
	Pprof []byte `json:"pprof_data,omitempty"`
	Flame []byte `json:"flame_data,omitempty"`
}

// A Baseline is one entry's committed results on the base branch, which deltas compare
// against.
type Baseline struct {
	Entry string `json:"entry"`
	// Present is false when the entry does not exist (or does not load) on the base branch.
	Present bool `json:"present"`
	// Tests are the tests the entry subscribes to on the base branch.
	Tests   []string `json:"tests,omitempty"`
	Results []Result `json:"results,omitempty"`
}

// A Report is what a runner returns for a job, stored as the job's result.
type Report struct {
	Commit     string `json:"commit"`                // the measured commit
	BaseRef    string `json:"base_ref,omitempty"`    // "main"
	BaseCommit string `json:"base_commit,omitempty"` // the base branch's commit the baselines come from
	Host       string `json:"host,omitempty"`
	Mode       string `json:"mode,omitempty"` // "server CPUs 0, load CPUs 1"
	Runs       int    `json:"runs,omitempty"`
	// MergeBase is the commit the PR's changed entries were built at as their base (the
	// merge base of the measured commit and BaseCommit) when rows were measured against it
	// in the job; "" when every Δ compares with committed results.
	MergeBase string `json:"merge_base,omitempty"`
	// AgainstCommitted is set when the job was asked for --baseline committed: Δ against
	// the results committed on the base branch, measured on another day.
	AgainstCommitted bool `json:"against_committed,omitempty"`
	// Rule is the rule Δ cells apply: the minimum effect called a change and the interval
	// half-width a row stops at (fractions), and the runs per side.
	Rule       *Rule      `json:"rule,omitempty"`
	Frameworks []string   `json:"frameworks,omitempty"` // in the order measured
	Tests      []string   `json:"tests,omitempty"`      // in profile order
	Rows       []Row      `json:"rows,omitempty"`       // in plan order
	Baselines  []Baseline `json:"baselines,omitempty"`  // every measured entry and the --compare target
	// ScoreBests are, per fixed-rate profile of the job, the lowest figures among the
	// results committed on the base branch by every entry, at every connection count: what
	// the arena's score measures a row against.
	ScoreBests map[string]Bests `json:"score_bests,omitempty"`
	// FrameworksFile is site/data/frameworks.json as the measured commit's entries make it,
	// for the results commit; nil from a runner that did not build it.
	FrameworksFile map[string]FrameworkGroup `json:"frameworks_file,omitempty"`
	// Current is site/data/current.json, the benchmark host's facts: set by the queue's
	// runner (`arenabot work`, `serve --runner`) measuring in full mode, never by a local
	// bench or a --lite runner, so only the benchmark host ever writes that file.
	Current *HostFacts `json:"current,omitempty"`
	Log     []string   `json:"log,omitempty"` // the tail of the runner's log for this job
	// Error says why the job as a whole failed (a checkout that failed, a bad meta.json);
	// "" when rows were measured (some may still have failed).
	Error string `json:"error,omitempty"`
}

// Bests are the lowest CPU µs per request, p99 and mean latency (µs) among Results
// committed results of one profile; a figure no result had is 0.
type Bests struct {
	CPUPerRequest float64 `json:"cpu_per_request_us"`
	P99           float64 `json:"p99_us"`
	Mean          float64 `json:"mean_us"`
	Results       int     `json:"results"`
}

// Lower takes r's figures into b where they are lower, and counts r when it has a CPU per
// request (a result without one cannot be scored and sets no best).
func (b *Bests) Lower(r Result) {
	if r.CPUPerRequest <= 0 {
		return
	}
	b.Results++
	b.LowerPoint(ScorePoint{CPU: r.CPUPerRequest, P99: r.LatencyUS.P99, Mean: r.LatencyUS.Mean})
}

// LowerPoint takes a point's figures into b where they are lower, without counting a
// result: the two sides of a row measured against each other.
func (b *Bests) LowerPoint(p ScorePoint) {
	for _, f := range []struct {
		best *float64
		v    float64
	}{{&b.CPUPerRequest, p.CPU}, {&b.P99, p.P99}, {&b.Mean, p.Mean}} {
		if f.v > 0 && (*f.best <= 0 || f.v < *f.best) {
			*f.best = f.v
		}
	}
}

// A Rule is the run count and interval rule of a job's interleaved rows (stats.Rule).
type Rule struct {
	MinEffect float64 `json:"min_effect"`
	Target    float64 `json:"target"`
	MinRuns   int     `json:"min_runs"`
	MaxRuns   int     `json:"max_runs"`
}

// Committed returns an entry's committed result for a profile and connection count from the
// report's baselines (nil when there is none) and whether the entry runs that profile at all.
func (r Report) Committed(entry, profile string, conns int) (*Result, bool) {
	for _, b := range r.Baselines {
		if b.Entry != entry {
			continue
		}
		if !b.Present {
			return nil, false
		}
		subscribed := false
		for _, t := range b.Tests {
			if t == profile {
				subscribed = true
			}
		}
		for i := range b.Results {
			if b.Results[i].Profile == profile && b.Results[i].Connections == conns {
				return &b.Results[i], true
			}
		}
		return nil, subscribed
	}
	return nil, false
}

// Failed counts the rows without a result.
func (r Report) Failed() int {
	n := 0
	for _, row := range r.Rows {
		if row.Result == nil {
			n++
		}
	}
	return n
}

// Saved returns the files a results commit writes, keyed by their path in the repository:
// each measured framework's results file (site/data/results/<slug>.json, or under
// results/lite for --lite rows) with the job's rows merged into its current content, which
// read gives (an error wrapping fs.ErrNotExist when there is none; see SiteFiles),
// site/data/frameworks.json and, from the benchmark host, site/data/current.json; and a
// profiled row's profile and flame graph in the entry
// (<frameworksDir>/<entry>/results/<file>).
func (r Report) Saved(frameworksDir string, read func(path string) ([]byte, error)) (map[string][]byte, error) {
	var rows []Result
	files := map[string][]byte{}
	for _, row := range r.Rows {
		if row.Result == nil {
			continue
		}
		rows = append(rows, *row.Result)
		dir := frameworksDir + "/" + row.Entry + "/" + Dir + "/"
		if p := row.Result.CPUProfile; p != nil {
			if p.Pprof != "" && len(row.Pprof) > 0 {
				files[dir+p.Pprof] = row.Pprof
			}
			if p.Flame != "" && len(row.Flame) > 0 {
				files[dir+p.Flame] = row.Flame
			}
		}
	}
	site, err := SiteFiles(rows, read)
	if err != nil {
		return nil, err
	}
	maps.Copy(files, site)
	if len(r.FrameworksFile) > 0 {
		b, err := EncodeJSON(r.FrameworksFile)
		if err != nil {
			return nil, err
		}
		files[FrameworksPath] = b
	}
	if r.Current != nil {
		b, err := EncodeJSON(r.Current)
		if err != nil {
			return nil, err
		}
		files[CurrentPath] = b
	}
	return files, nil
}
