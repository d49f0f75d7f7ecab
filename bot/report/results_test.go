package report

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/arenabot/arenabot/md"
	"github.com/arenabot/arenabot/md/mdtest"
	"github.com/arenabot/arenabot/result"
)

// measuredResult is a realistic result of three runs whose RPS spread by spreadPct percent.
func measuredResult(entry, display, profile string, conns int, rps float64, mem int64, spreadPct float64) *result.Result {
	r := &result.Result{
		Framework: display, Language: "Go", Connections: conns, Threads: 4, Duration: "5s",
		Pipeline: 1, Entry: entry, Profile: profile, Tool: "wrk", ToolVersion: "4.2.0",
		Commit: "0123456789abcdef0123456789abcdef01234567", Host: "bench-1",
		Time: time.Date(2024, 5, 3, 14, 0, 0, 0, time.UTC),
	}
	var runs []result.Run
	for i := range 3 {
		v := rps * (1 - spreadPct/100*float64(i)/2)
		runs = append(runs, result.Run{
			RPS: v, Requests: int64(v * 5), Status2xx: int64(v * 5), DurationS: 5, Bytes: int64(v * 5 * 160),
			LatencyUS: result.Latency{Mean: 40 * float64(conns) / 64, P50: 35 * float64(conns) / 64,
				P90: 80 * float64(conns) / 64, P99: 150 * float64(conns) / 64, P999: 400 * float64(conns) / 64, Max: 9000},
			CPUCores: 3.9, MemoryPeak: mem - int64(i)<<16,
		})
	}
	r.FromRuns(runs)
	return r
}

func row(entry, display, profile string, conns int, rps float64, mem int64, spreadPct float64) result.Row {
	return result.Row{Entry: entry, Display: display, Profile: profile, Conns: conns,
		Result: measuredResult(entry, display, profile, conns, rps, mem, spreadPct)}
}

func baseline(entry string, tests []string, rows ...result.Row) result.Baseline {
	b := result.Baseline{Entry: entry, Present: true, Tests: tests}
	for _, r := range rows {
		b.Results = append(b.Results, *r.Result)
	}
	return b
}

// doneResults is a /benchmark of gin on baseline and json, saved, with gin's committed
// results on main for two of its three rows.
func doneResults() Results {
	return Results{
		RequestID: "pr-42-c1001",
		Command:   "/benchmark -f gin -t baseline,json --save",
		Requester: "alice",
		State:     "done",
		SHA:       "0123456789abcdef0123456789abcdef01234567",
		Report: result.Report{
			Commit: "0123456789abcdef0123456789abcdef01234567", BaseRef: "main",
			BaseCommit: "abcdef0123456789abcdef0123456789abcdef01",
			Host:       "bench-1", Mode: "server CPUs 0-3, load CPUs 4-7", Runs: 3,
			Frameworks: []string{"gin"}, Tests: []string{"baseline", "json"},
			Rows: []result.Row{
				row("gin", "gin", "baseline", 512, 182_345, 24<<20, 1.2),
				row("gin", "gin", "baseline", 4096, 171_020, 41<<20, 2.5),
				row("gin", "gin", "json", 512, 120_400, 26<<20, 0.8),
			},
			Baselines: []result.Baseline{baseline("gin", []string{"baseline", "json"},
				row("gin", "gin", "baseline", 512, 160_000, 24<<20, 1),
				row("gin", "gin", "json", 512, 121_000, 25<<20, 1),
			)},
			Log: []string{
				"checkout 0123456789ab",
				"build gin: ok (42s)",
				"gin baseline 512c: 182345 rps",
				"gin baseline 4096c: 171020 rps",
				"gin json 512c: 120400 rps",
			},
		},
		CommitSHA: "fedcba9876543210fedcba9876543210fedcba98",
		CommitURL: "https://github.com/o/r/commit/fedcba9876543210fedcba9876543210fedcba98",
		StatusURL: "https://github.com/o/r/pull/42#issuecomment-1002",
	}
}

// interleavedRuns is realistic runs of the given RPS figures, their peak memory near mem.
func interleavedRuns(conns int, mem int64, rps ...float64) []result.Run {
	var runs []result.Run
	for i, v := range rps {
		runs = append(runs, result.Run{
			RPS: v, Requests: int64(v * 5), Status2xx: int64(v * 5), DurationS: 5, Bytes: int64(v * 5 * 160),
			LatencyUS: result.Latency{Mean: 40 * float64(conns) / 64, P50: 35 * float64(conns) / 64,
				P90: 80 * float64(conns) / 64, P99: 150 * float64(conns) / 64, P999: 400 * float64(conns) / 64, Max: 9000},
			CPUCores: 3.9, MemoryPeak: mem + int64(i%3)<<16,
		})
	}
	return runs
}

// order is the interleaving of n pairs: base, head, head, base, …
func order(n int) string {
	var b strings.Builder
	for i := range n {
		if i%2 == 0 {
			b.WriteString("BH")
		} else {
			b.WriteString("HB")
		}
	}
	return b.String()
}

const mergeBase = "89abcdef0123456789abcdef0123456789abcdef"

// fixedRateRuns are runs of a fixed-rate row at 10,000 requests/s over 20 s, one per CPU µs
// per request, with the given p99 and mean latency (µs).
func fixedRateRuns(mem int64, cpuPerReq, p99, mean []float64) []result.Run {
	var runs []result.Run
	for i, c := range cpuPerReq {
		rps := 9_990 + float64(i%3)
		runs = append(runs, result.Run{
			RPS: rps, Requests: int64(rps * 20), Status2xx: int64(rps * 20), DurationS: 20, Bytes: int64(rps * 20 * 160),
			LatencyUS: result.Latency{Mean: mean[i], P50: mean[i] * 0.8, P90: p99[i] * 0.5, P99: p99[i], P999: p99[i] * 2, Max: p99[i] * 4},
			CPUCores:  c * rps / 1e6, MemoryPeak: mem + int64(i%3)<<16,
		})
	}
	return runs
}

// fixedRateRow is entry's latency-10k 1024 row measured against its merge base, interleaved.
func fixedRateRow(entry string, head, base [3][]float64) result.Row {
	r := &result.Result{
		Framework: entry, Language: "Go", Connections: 1024, Threads: 4, Duration: "20s",
		Pipeline: 1, Entry: entry, Profile: "latency-10k", Tool: "arenaload", TargetRate: 10_000,
		Commit: "0123456789abcdef0123456789abcdef01234567", Host: "bench-1",
		Time: time.Date(2024, 5, 3, 14, 0, 0, 0, time.UTC),
	}
	r.FromRuns(fixedRateRuns(14<<20, head[0], head[1], head[2]))
	r.Base = &result.Side{Entry: entry, Ref: "main", Commit: mergeBase, Image: "arenabot-" + entry + ":89abcdef0123",
		Runs: fixedRateRuns(14<<20, base[0], base[1], base[2]), Order: order(len(head[0])), Stop: "interval narrow enough"}
	return result.Row{Entry: entry, Display: entry, Profile: "latency-10k", Conns: 1024, Result: r}
}

// pairedRow is a row of entry measured against itself at the merge base, interleaved: every
// run of both sides.
func pairedRow(entry, profile string, conns int, mem, baseMem int64, head, base []float64, stop string) result.Row {
	r := &result.Result{
		Framework: entry, Language: "Go", Connections: conns, Threads: 4, Duration: "5s",
		Pipeline: 1, Entry: entry, Profile: profile, Tool: "wrk", ToolVersion: "4.1.0",
		Commit: "0123456789abcdef0123456789abcdef01234567", Host: "bench-1",
		Time: time.Date(2024, 5, 3, 14, 0, 0, 0, time.UTC),
	}
	r.FromRuns(interleavedRuns(conns, mem, head...))
	r.Base = &result.Side{Entry: entry, Ref: "main", Commit: mergeBase, Image: "arenabot-" + entry + ":89abcdef0123",
		Runs: interleavedRuns(conns, baseMem, base...), Order: order(len(head)), Stop: stop}
	return result.Row{Entry: entry, Display: entry, Profile: profile, Conns: conns, Result: r}
}

// cpuProfile is a realistic profile of a Go server; shift moves share from the kernel's
// write path to the allocator, as a change that allocates more per request would.
func cpuProfile(shift float64) *result.CPUProfile {
	return &result.CPUProfile{
		Samples: 4990, CPUNs: 9_980_000_000, DurationS: 5.01, Frequency: 499,
		Kernel: 58.3 - shift, GC: 4.2 + shift/3, Own: 0.6,
		TopSelf: []result.FuncShare{
			{Name: "[unknown] (vmlinux)", Self: 14.1 - shift, Cum: 14.1 - shift},
			{Name: "copy_user_enhanced_fast_string", Self: 7.9, Cum: 7.9},
			{Name: "runtime.mallocgc", Self: 3.1 + shift, Cum: 6.3 + shift},
			{Name: "syscall.Syscall6", Self: 2.8, Cum: 41.0},
			{Name: "runtime.futex", Self: 2.2, Cum: 2.2},
			{Name: "net/http.(*conn).serve", Self: 0.5, Cum: 88.2},
			{Name: "main.handleBaseline", Self: 0.4, Cum: 3.9 + shift},
			// A hostile name: what an entry compiles is the entry author's text.
			{Name: "main.`x|y` @alice <b>#1", Self: 0.2, Cum: 0.2},
		},
		TopCum: []result.FuncShare{
			{Name: "runtime.goexit", Self: 0, Cum: 90.1},
			{Name: "net/http.(*conn).serve", Self: 0.5, Cum: 88.2},
			{Name: "entry_SYSCALL_64_after_hwframe", Self: 0.1, Cum: 52.4 - shift},
			{Name: "syscall.Syscall6", Self: 2.8, Cum: 41.0},
			{Name: "net/http.(*response).finishRequest", Self: 0.1, Cum: 30.2},
			{Name: "net/http.(*conn).readRequest", Self: 0.3, Cum: 21.7},
			{Name: "runtime.mallocgc", Self: 3.1 + shift, Cum: 6.3 + shift},
			{Name: "main.handleBaseline", Self: 0.4, Cum: 3.9 + shift},
		},
		RPS: 96_200, RPSRatio: 0.99, CPURatio: 1.01,
	}
}

// profiledResults is a /benchmark of nethttp against its merge base, saved, whose baseline
// 512 row was profiled on both sides (the allocator grew: a difference block) and whose json
// 512 row could not be profiled (perf missing: said once).
func profiledResults() Results {
	r := doneResults()
	r.Command = "/benchmark -f nethttp -t baseline,json --save"
	r.Report.MergeBase = mergeBase
	r.Report.Rule = &result.Rule{MinEffect: 0.02, Target: 0.02, MinRuns: 3, MaxRuns: 10}
	r.Report.Frameworks = []string{"nethttp"}
	r.Report.Baselines = nil
	r.Report.Log = []string{"nethttp baseline 512c: CPU profile of 4990 samples in 6.2s"}
	b512 := pairedRow("nethttp", "baseline", 512, 18<<20, 18<<20,
		[]float64{96_000, 97_100, 96_600}, []float64{99_800, 100_300, 99_900}, "the interval is within ±2%")
	head, base := cpuProfile(8.2), cpuProfile(0)
	slices.SortStableFunc(head.TopSelf, func(a, b result.FuncShare) int { return cmp.Compare(b.Self, a.Self) })
	slices.SortStableFunc(head.TopCum, func(a, b result.FuncShare) int { return cmp.Compare(b.Cum, a.Cum) })
	head.Pprof, head.Flame = result.PprofFileName("baseline", 512), result.FlameFileName("baseline", 512)
	head.Base = base
	head.Diff = &result.CPUDiff{Kernel: -8.2, GC: 2.7, Own: 0, KernelMargin: 2.4, GCMargin: 1.5, OwnMargin: 0.6,
		Self: []result.CPUChange{
			{Name: "runtime.mallocgc", Before: 3.1, After: 11.3, Delta: 8.2, Margin: 2.3},
			{Name: "[unknown] (vmlinux)", Before: 14.1, After: 5.9, Delta: -8.2, Margin: 3.1},
		},
		Cum: []result.CPUChange{
			{Name: "runtime.mallocgc", Before: 6.3, After: 14.5, Delta: 8.2, Margin: 2.8},
			{Name: "main.handleBaseline", Before: 3.9, After: 12.1, Delta: 8.2, Margin: 2.6},
			{Name: "entry_SYSCALL_64_after_hwframe", Before: 52.4, After: 44.2, Delta: -8.2, Margin: 5.4},
		}}
	b512.Result.CPUProfile = head
	j512 := pairedRow("nethttp", "json", 512, 19<<20, 19<<20,
		[]float64{70_000, 70_400, 70_100}, []float64{70_200, 70_100, 70_300}, "the interval is within ±2%")
	j512.Result.CPUProfile = &result.CPUProfile{Err: "perf is not installed on the runner host; install it (Debian: apt-get install linux-perf) to get CPU profiles"}
	r.Report.Rows = []result.Row{b512, j512}
	return r
}

// committedProfileResults is a /benchmark of gin, not saved and measured without a base in
// the job, whose baseline 512 row is compared with the profile committed for it.
func committedProfileResults() Results {
	r := doneResults()
	r.Command = "/benchmark -f gin -t baseline"
	r.CommitSHA, r.CommitURL = "", ""
	r.Report.Rows = r.Report.Rows[:2]
	p := cpuProfile(1.4)
	p.Diff = &result.CPUDiff{Kernel: -1.4, GC: 0.5, Committed: true, KernelMargin: 2.1, GCMargin: 0.8, OwnMargin: 0.3,
		Self: []result.CPUChange{{Name: "runtime.mallocgc", Before: 3.1, After: 4.5, Delta: 1.4, Margin: 0.9}, {Name: "[unknown] (vmlinux)", Before: 14.1, After: 12.7, Delta: -1.4, Margin: 1.3}}}
	r.Report.Rows[0].Result.CPUProfile = p
	return r
}

// interleavedResults is a /benchmark-multiple whose changed entries were measured against
// themselves at the merge base in the job: nethttp got slower in baseline 512 (-9.1%) and
// is unchanged elsewhere; fasthttp's base did not build; quickhttp is new in the PR; gin,
// which the PR does not change, was measured once and compares with its committed results.
func interleavedResults() Results {
	r := doneResults()
	r.Command = "/benchmark-multiple -f nethttp,fasthttp,quickhttp,gin -t baseline,json"
	r.CommitSHA, r.CommitURL = "", ""
	r.Report.MergeBase = mergeBase
	r.Report.Rule = &result.Rule{MinEffect: 0.02, Target: 0.02, MinRuns: 3, MaxRuns: 10}
	r.Report.Frameworks = []string{"nethttp", "fasthttp", "quickhttp", "gin"}
	baseFailed := func(row result.Row) result.Row {
		row.Result.Base.Runs, row.Result.Base.Order, row.Result.Base.Stop = nil, "", ""
		row.Result.Base.Err = "build of fasthttp at 89abcdef0123 failed: RUN go build -o /app ./...: exit status 1 (./main.go:14:2: undefined: fasthttp.ServeConn)"
		return row
	}
	r.Report.Rows = []result.Row{
		pairedRow("nethttp", "baseline", 512, 18<<20, 18<<20,
			[]float64{100000, 101000, 99500}, []float64{110000, 109000, 111500}, "interval narrow enough"),
		pairedRow("nethttp", "baseline", 4096, 33<<20, 33<<20,
			[]float64{91300, 90100, 92500, 89900, 91800, 90700, 92200, 90400, 91100, 90900},
			[]float64{90800, 92600, 89700, 91900, 90300, 92800, 89500, 91400, 90600, 92100}, "run limit reached"),
		pairedRow("nethttp", "json", 512, 19<<20, 19<<20,
			[]float64{71250, 70900, 71600, 71100}, []float64{71000, 71500, 70700, 71300}, "interval narrow enough"),
		// A spin of about 15% more CPU per request at the same offered rate: RPS cannot move.
		fixedRateRow("nethttp",
			[3][]float64{{46.1, 45.2, 47.0, 46.4}, {1180, 1090, 1240, 1150}, {292, 281, 301, 288}},
			[3][]float64{{40.2, 39.6, 40.9, 40.1}, {1010, 1120, 980, 1060}, {262, 270, 255, 266}}),
		pairedRow("fasthttp", "baseline", 512, 12<<20, 12<<20, []float64{182000, 181500, 183100}, nil, ""),
		pairedRow("fasthttp", "json", 512, 13<<20, 13<<20, []float64{150200, 149800, 151000}, nil, ""),
		row("quickhttp", "QuickHTTP", "baseline", 512, 123_400, 9<<20, 1),
		row("gin", "gin", "baseline", 512, 182_345, 24<<20, 1.2),
		row("gin", "gin", "json", 512, 120_400, 26<<20, 0.8),
	}
	r.Report.Rows[4] = baseFailed(r.Report.Rows[4])
	r.Report.Rows[5] = baseFailed(r.Report.Rows[5])
	// The committed latency-10k results the score's bests come from: fasthttp's spends
	// less CPU per request than either side of nethttp's row.
	fastLatency := &result.Result{Entry: "fasthttp", Profile: "latency-10k", Connections: 1024, TargetRate: 10_000}
	fastLatency.FromRuns(fixedRateRuns(9<<20, []float64{31.5}, []float64{1400}, []float64{240}))
	r.Report.Baselines = []result.Baseline{
		baseline("nethttp", []string{"baseline", "json", "latency-10k"}, row("nethttp", "nethttp", "baseline", 512, 150_000, 18<<20, 1)),
		{Entry: "fasthttp", Present: true, Tests: []string{"baseline", "json", "latency-10k"}, Results: []result.Result{*fastLatency}},
		baseline("gin", []string{"baseline", "json"},
			row("gin", "gin", "baseline", 512, 160_000, 24<<20, 1),
			row("gin", "gin", "json", 512, 121_000, 25<<20, 1),
		),
		{Entry: "quickhttp", Present: false},
	}
	r.Report.Log = []string{
		"checkout 0123456789ab; merge base with main: 89abcdef0123",
		"build nethttp: ok (38s); base nethttp at 89abcdef0123: ok (35s)",
		"build fasthttp: ok (41s); base fasthttp at 89abcdef0123: build failed",
		"nethttp baseline 512c: 3 runs a side, interval narrow enough",
	}
	return r
}

func resultsCases() map[string]Results {
	cases := map[string]Results{}
	cases["single"] = doneResults()
	cases["profile"] = profiledResults()
	cases["profile-committed"] = committedProfileResults()

	multi := doneResults()
	multi.Command = "/benchmark-multiple -f gin,nethttp -t baseline,json"
	multi.CommitSHA, multi.CommitURL = "", ""
	multi.Report.Frameworks = []string{"gin", "nethttp"}
	multi.Report.Rows = append(multi.Report.Rows,
		row("nethttp", "go-nethttp", "baseline", 512, 98_700, 18<<20, 1.5),
		row("nethttp", "go-nethttp", "baseline", 4096, 91_300, 33<<20, 3),
		row("nethttp", "go-nethttp", "json", 512, 71_250, 19<<20, 1),
	)
	multi.Report.Baselines = append(multi.Report.Baselines, baseline("nethttp", []string{"baseline", "json"},
		row("nethttp", "go-nethttp", "baseline", 512, 99_000, 18<<20, 1),
		row("nethttp", "go-nethttp", "baseline", 4096, 80_000, 30<<20, 1),
		row("nethttp", "go-nethttp", "json", 512, 71_000, 19<<20, 1),
	))
	cases["multi"] = multi

	// The same rows measured over three hosts (a job split into shares): each table says
	// which host measured which of its rows.
	hosts := doneResults()
	hosts.Command = multi.Command
	hosts.CommitSHA, hosts.CommitURL = "", ""
	hosts.Report.Frameworks, hosts.Report.Baselines = multi.Report.Frameworks, multi.Report.Baselines
	hosts.Report.Rows = slices.Clone(multi.Report.Rows)
	hosts.Report.Host = "bench-a, bench-b, bench-c"
	for i := range hosts.Report.Rows {
		hosts.Report.Rows[i].Host = []string{"bench-a", "bench-b", "bench-c"}[i*3/len(hosts.Report.Rows)]
	}
	cases["hosts"] = hosts

	// gin against fasthttp's committed results: +x% (baseline 512), ~0% (baseline 4096,
	// inside the spread), NEW (fasthttp runs json but has no committed json result) and
	// n/a (fasthttp does not run upload).
	cmpare := doneResults()
	cmpare.Command = "/benchmark -f gin --compare fasthttp"
	cmpare.Compare = "fasthttp"
	cmpare.CommitSHA, cmpare.CommitURL = "", ""
	cmpare.Report.Tests = []string{"baseline", "json", "upload"}
	cmpare.Report.Rows = append(cmpare.Report.Rows, row("gin", "gin", "upload", 64, 1_450, 180<<20, 2))
	cmpare.Report.Baselines = append(cmpare.Report.Baselines, baseline("fasthttp", []string{"baseline", "json"},
		row("fasthttp", "fasthttp", "baseline", 512, 150_000, 12<<20, 1),
		row("fasthttp", "fasthttp", "baseline", 4096, 170_000, 40<<20, 1),
	))
	cases["compare"] = cmpare

	// Splitting: one framework with so many rows that its table continues in a second
	// comment, with its heading and column header repeated; the log closes part 2.
	split := doneResults()
	split.Command = "/benchmark -f gin"
	split.CommitSHA, split.CommitURL = "", ""
	split.Report.Rows = nil
	for i := range 760 {
		split.Report.Rows = append(split.Report.Rows, row("gin", "gin", fmt.Sprintf("p%03d", i), 512, 150_000+float64(i*13), 24<<20, 1))
	}
	cases["split"] = split

	// A build that failed with a hostile log, a validation failure, an entry whose meta.json
	// does not load.
	fail := doneResults()
	fail.Command = "/benchmark-multiple -f gin,broken,badmeta"
	fail.CommitSHA, fail.CommitURL = "", ""
	fail.Report.Frameworks = []string{"gin", "broken", "badmeta"}
	fail.Report.Rows = []result.Row{
		row("gin", "gin", "baseline", 512, 182_345, 24<<20, 1.2),
		{Entry: "gin", Display: "gin", Profile: "json", Conns: 512,
			Err:   "validation failed, not measured: FAIL json: GET /json Content-Type: sent GET /json/50?m=1 HTTP/1.1; expected 200 with Content-Type application/json; got HTTP/1.1 500 Internal Server Error; contract: json — GET /json/{count}?m={m} → 200 application/json (docs/profiles.md#json)",
			Short: "validation: GET /json Content-Type"},
		{Entry: "broken", Display: "Broken | *entry* @someone", Profile: "baseline", Conns: 512,
			Err:   "build of broken failed: RUN go build ./...: exit status 1",
			Short: "build failed",
			BuildLog: []string{
				"#8 [build 4/5] RUN go build -o /app ./...",
				"#8 0.512 ./main.go:12:2: undefined: fasthttp.Serve",
				"#8 0.513 ``` try to close the fence ````",
				"</details> <script>alert(1)</script>",
				"@someone please look <!-- arenabot:results pr-42-c1001 part=2 -->",
				"\x1b[31mERROR\x1b[0m: process \"/bin/sh -c go build\" did not complete successfully: exit code: 1",
			}},
		{Entry: "broken", Display: "Broken | *entry* @someone", Profile: "json", Conns: 512,
			Err: "build of broken failed: RUN go build ./...: exit status 1", Short: "build failed"},
		{Entry: "badmeta", Err: `frameworks/badmeta/meta.json: field "tests": unknown test "jsonn" (did you mean "json"?)`},
	}
	fail.Report.Rows[0].Advisories = []string{
		`WARN baseline: malformed bad header: sent GET /baseline11?a=13&b=42 HTTP/1.1\r\nX-Bad : 1\r\n\r\n; expected a 4xx response or the connection closed without one; got HTTP/1.1 200 OK @someone; contract: baseline — … (RFC 9112 §5.1; docs/profiles.md#baseline)`,
		"WARN json-comp: Vary: Accept-Encoding: sent GET /json/25?m=4 HTTP/1.1; expected 200 with Vary: Accept-Encoding; got HTTP/1.1 200 OK ``` </details>; contract: json-comp — … (RFC 9110 §12.5.5; docs/profiles.md#json-comp)",
	}
	cases["failures"] = fail

	jobErr := doneResults()
	jobErr.State = "failed"
	jobErr.Reason = ""
	jobErr.CommitSHA, jobErr.CommitURL = "", ""
	jobErr.Report = result.Report{
		Frameworks: []string{"gin"}, Tests: []string{"baseline", "json"},
		Error: "checkout of 0123456789ab failed: fatal: reference is not a tree: 0123456789abcdef0123456789abcdef01234567",
		Log: []string{
			"fetch origin pull/42/head",
			"fatal: reference is not a tree: 0123456789abcdef0123456789abcdef01234567",
		},
	}
	cases["error"] = jobErr

	cancelled := doneResults()
	cancelled.State = "cancelled"
	cancelled.Reason = "cancelled by alice with /benchmark-cancel"
	cancelled.CommitSHA, cancelled.CommitURL = "", ""
	cancelled.Report.Rows = cancelled.Report.Rows[:2]
	cancelled.Report.Log = append(cancelled.Report.Log[:3], "cancel flag set: stopping")
	cases["cancelled"] = cancelled

	lost := doneResults()
	lost.State = "lost"
	lost.Reason = "no heartbeat for 2m0s, retried once"
	lost.CommitSHA, lost.CommitURL = "", ""
	lost.Report.Rows = lost.Report.Rows[:1]
	cases["lost"] = lost

	patch := doneResults()
	patch.CommitSHA, patch.CommitURL = "", ""
	patch.SaveNote = "Pushing to `contributor:feature` was refused: the fork does not allow edits by maintainers."
	patch.Report.Rows = patch.Report.Rows[:2]
	for _, r := range patch.Report.Rows {
		patch.Patch = append(patch.Patch, testDiff(r.Result))
	}
	cases["patch"] = patch

	cases["interleaved"] = interleavedResults()

	// The same job asked for --baseline committed: no base measured, every Δ against the
	// committed results, said so in the header and under each table.
	committed := doneResults()
	committed.Command = "/benchmark -f gin -t baseline,json --baseline committed"
	committed.CommitSHA, committed.CommitURL = "", ""
	committed.Report.AgainstCommitted = true
	cases["committed"] = committed
	return cases
}

// testDiff is a `git apply` diff that creates the result file of r.
func testDiff(r *result.Result) string {
	b, err := result.Marshal(*r)
	if err != nil {
		panic(err)
	}
	path := "frameworks/" + r.Entry + "/" + result.Dir + "/" + result.FileName(r.Profile, r.Connections)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var d strings.Builder
	fmt.Fprintf(&d, "diff --git a/%s b/%s\nnew file mode 100644\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n", path, path, path, len(lines))
	for _, l := range lines {
		d.WriteString("+" + l + "\n")
	}
	return d.String()
}

// commentSeparator joins the comments of a reply in a golden file.
const commentSeparator = "\n\n-----8<----- next comment -----8<-----\n\n"

func TestRenderResultsGolden(t *testing.T) {
	for name, r := range resultsCases() {
		t.Run(name, func(t *testing.T) {
			parts := RenderResults(r)
			checkParts(t, r, parts)
			got := strings.Join(parts, commentSeparator) + "\n"
			checkGolden(t, filepath.Join("testdata", "results-"+name+".golden"), got)
		})
	}
}

func TestRenderResultsContent(t *testing.T) {
	cases := resultsCases()
	for _, tt := range []struct {
		name       string
		want, not  []string
		wantTables int
	}{
		{name: "single", wantTables: 1, want: []string{
			"✅ **Benchmark done** for @alice.", "`/benchmark -f gin -t baseline,json --save`",
			"committed results on `main` at `abcdef012345`", "**Commit:** `0123456789ab`",
			"[`fedcba987654`](https://github.com/o/r/commit/", "3 measured, 0 failed",
			"| baseline | 512 | 182.3K |", "| +13.9% ±2.3% better | ~0% (±0.9%) |", "NEW", "```mermaid\nxychart-beta\n",
			"Δ of `gin` baseline 512, json 512 is against its committed results on `main` at `abcdef012345`, measured at another time, not in this job.",
			`x-axis ["baseline 512", "baseline 4096", "json 512"]`, "bar [160000, 0, 121000]\n    bar [182345, 171020, 120400]\n", "<details><summary>Full log (last 5 lines)</summary>",
		}},
		{name: "interleaved", wantTables: 4, want: []string{
			"- **Baseline:** Δ of each changed entry against itself at `89abcdef0123` (merge base with `main`), measured in this job, " +
				"interleaved run by run (base, head, head, base, …), 3–10 runs each (median 4); " +
				"Δ is each row's primary figure (RPS, CPU/req on fixed-rate rows), the one its runs were measured until its interval was narrow enough; " +
				"each of a row's 4 Δ cells has a Welch interval of the relative difference of the means at 98.75%, not 95% (Bonferroni over the row's cells): " +
				"a row with no change flags one of them by luck in at most 5% of rows; a change says whether it is `better` or `worse` for that figure (more CPU/req, p99 or Mem is worse); " +
				"a change is at least 2% with an interval that excludes zero, " +
				"else `~0% (±w)`: the smallest change the row could have shown. An entry unchanged from its base was measured once",
			"RPS: the best of each row's runs",
			"| baseline | 512 | 101.0K | — | 39us | 1.20ms | 3.20ms | 390% | 18MiB | -9.1% ±3.4% worse | ~0% (±1.2%) |",
			"| ~0% (±1.1%) |",
			"| baseline | 512 | 183.1K | — | 21us | 1.20ms | 3.20ms | 390% | 12MiB | base failed | base failed |",
			"Why the base of `fasthttp` failed",
			"- baseline 512, json 512: build of fasthttp at 89abcdef0123 failed: RUN go build",
			"| baseline | 512 | 123.4K | — | 32us | 1.20ms | 3.20ms | 390% | 9MiB | NEW | NEW |",
			"Δ of `gin` is against its committed results on `main` at `abcdef012345`, measured at another time, not in this job: it is unchanged from its base, so it was measured once.",
			"RPS of `nethttp` against the baseline (its base, measured in this job)", "bar [111500, 92800, 71500]\n    bar [101000, 92500, 71600]\n", "fixed-rate rows are not drawn, their RPS being the rate offered",
			// The fixed-rate row: its Δ is CPU per request (a spin: worse), and its score
			// drops (hand-computed: the bests are fasthttp's committed 31.5 µs and mean
			// 240 µs and the base's p99 1,042.5 µs; base 100 × (0.5 × 31.5/40.2 + 0.25 +
			// 0.25 × (1 − log10(263.25/240))) = 88.2, head 81.6).
			"| latency-10k | 1024 | 10.0K | 0.9992 | 47us | 1.24ms | 2.48ms | 47% | 14MiB | +14.9% ±4.3% worse | ~0% (±1.1%) |",
			"| latency-10k | 1024 | = Δ | ~0% (±15.7%) | 88.2 → 81.6 | -6.5 ±2.7 pts worse |",
			"#### `nethttp`: Δ of the other figures\n\n| Test | Conn | Δ CPU/req | Δ p99 | Score | Δ Score |",
			"#### `fasthttp`: Δ of the other figures\n\n| Test | Conn | Δ CPU/req | Δ p99 |\n",
			"For latency-10k 1024 the bests are the lowest CPU/req, p99 and mean latency among the committed results of the profile on `main` at `abcdef012345`",
		}, not: []string{"best of 3 runs", "Δ of `nethttp` is against", "Δ of `quickhttp`", "Why rows of"}},
		{name: "committed", wantTables: 1, want: []string{
			"- **Baseline:** Δ against each framework's committed results on `main` at `abcdef012345`, measured at another time, not in this job (`--baseline committed`); Δ is each row's primary figure (RPS); with two runs a side or more, each of a row's 4 Δ cells has a Welch interval",
			"Δ of `gin` baseline 512, json 512 is against its committed results on `main` at `abcdef012345`, measured at another time, not in this job (`--baseline committed`).",
		}, not: []string{"interleaved", "merge base"}},
		{name: "multi", wantTables: 2, want: []string{"### ✅ `gin`", "### ✅ `nethttp` (go-nethttp)", "RPS of `nethttp`"}},
		{name: "compare", wantTables: 1, want: []string{
			"Δ against `fasthttp`", "| +21.4% ±2.4% better |", "| ~0% (±4.9%) |", "| NEW | NEW |", "| n/a | n/a |", "bar [150000, 170000, 0, 0]\n    bar [182345, 171020, 120400, 1450]\n",
			"Δ of `gin` baseline 512, baseline 4096 is against `fasthttp`'s committed results on `main` at `abcdef012345`, measured at another time, not in this job.",
		}},
		{name: "failures", wantTables: 3, want: []string{
			"### ❌ `broken` (Broken \\| \\*entry\\* @\u200bsomeone)",
			"<details><summary>Build log of <code>broken</code> (last 6 lines)</summary>\n\n`````text\n",
			"| json | 512 | ❌ validation: GET /json Content-Type |",
			"<details><summary>Why rows of <code>gin</code> failed (1)</summary>",
			"json 512: validation failed, not measured: FAIL json: GET /json Content-Type: sent GET /json/50?m=1",
			"| baseline | 512 | ❌ build failed |",
			"baseline 512, json 512: build of broken failed: RUN go build ./...: exit status 1",
			"⚠️ 2 advisories for `gin`: ",
			"<details><summary>Advisories of <code>gin</code> (2)</summary>",
			"WARN baseline: malformed bad header: sent",
			"| — | — | ❌ frameworks/badmeta/meta.json",
			"ERROR: process", "1 measured, 4 failed",
		}, not: []string{"\x1b", "RPS of `broken`", "RPS of `badmeta`", "| — | 0 |"}},
		{name: "error", wantTables: 0, want: []string{
			"❌ **Benchmark failed** for @alice: checkout of 0123456789ab failed", "**Error:**\n\n```text\ncheckout",
			"<details><summary>Full log (last 2 lines)</summary>",
		}, not: []string{"**Baseline:**", "xychart"}},
		{name: "cancelled", wantTables: 1, want: []string{
			"⏹️ **Benchmark cancelled** for @alice: cancelled by alice with /benchmark-cancel. The tables show the rows measured before it stopped.",
			"2 measured, 0 failed",
		}},
		{name: "lost", wantTables: 1, want: []string{"⚠️ **Runner lost** for @alice: no heartbeat"}},
		{name: "patch", wantTables: 1, want: []string{
			"> [!NOTE]\n> Pushing to `contributor:feature` was refused",
			"### 📎 Results patch", "`git apply <file>`",
			"<details><summary><code>frameworks/gin/results/baseline-512.json</code></summary>\n\n```diff\ndiff --git a/frameworks/gin/results/baseline-512.json",
			"<summary><code>frameworks/gin/results/baseline-4096.json</code></summary>",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := strings.Join(RenderResults(cases[tt.name]), "\n")
			holds(t, "output", out, tt.want, tt.not)
			if n := strings.Count(out, "| Test | Conn | RPS |"); n != tt.wantTables {
				t.Errorf("%d tables, want %d", n, tt.wantTables)
			}
		})
	}
}

func TestResultsOutcome(t *testing.T) {
	for state, want := range map[string]string{
		"done":       "✅ **Benchmark done** for @alice.",
		"failed":     "❌ **Benchmark failed** for @alice: it broke. The tables show the rows measured before it failed.",
		"cancelled":  "⏹️ **Benchmark cancelled** for @alice: it broke. The tables show the rows measured before it stopped.",
		"lost":       "⚠️ **Runner lost** for @alice: it broke. The tables show the rows measured before it was lost.",
		"superseded": "⏭️ **Benchmark superseded** for @alice.", // the queue's reason names the newer request's ID
		"expired":    "⌛ **Benchmark request expired** for @alice: it broke.",
		"rejected":   "⛔ **Benchmark request declined** for @alice: it broke.",
		"weird":      "ℹ️ **Benchmark ended** (`weird`) for @alice: it broke.",
	} {
		r := doneResults()
		r.State, r.Reason = state, "it broke"
		if got := outcome(r); got != want {
			t.Errorf("%s: outcome\n %q, want\n %q", state, got, want)
		}
	}
	r := doneResults()
	r.State, r.Reason, r.Report.Rows = "cancelled", "", nil
	if got, want := outcome(r), "⏹️ **Benchmark cancelled** for @alice. Nothing was measured before it stopped."; got != want {
		t.Errorf("cancelled before any row: %q, want %q", got, want)
	}
}

// TestRenderResultsTitle: only a reply with rows is titled "Benchmark Results"; one that
// ended before any row is titled by how it ended.
func TestRenderResultsTitle(t *testing.T) {
	for state, want := range map[string]string{
		"done": "## Benchmark done", "failed": "## Benchmark failed", "cancelled": "## Benchmark cancelled",
		"lost": "## Benchmark lost", "superseded": "## Benchmark request superseded",
	} {
		r := doneResults()
		r.State, r.Report.Rows, r.Report.Frameworks, r.Report.Tests = state, nil, nil, nil
		first, _, _ := strings.Cut(RenderResults(r)[0], "\n")
		if first != want {
			t.Errorf("%s without rows: title %q, want %q", state, first, want)
		}
		r.Report.Rows = doneResults().Report.Rows
		if first, _, _ := strings.Cut(RenderResults(r)[0], "\n"); first != "## Benchmark Results" {
			t.Errorf("%s with rows: title %q, want ## Benchmark Results", state, first)
		}
	}
}

// TestRenderResultsShowsNoRequestID: the request ID is only in the hidden markers, and a
// superseded job's reason, which names the newer request's ID, is not shown.
func TestRenderResultsShowsNoRequestID(t *testing.T) {
	for _, state := range []string{"done", "failed", "cancelled", "lost", "superseded", "weird"} {
		for _, rows := range []bool{true, false} {
			r := doneResults()
			r.RequestID, r.State = "r987654321", state
			if state == "superseded" {
				r.Reason = "superseded by newer request r123456789 (o/r#42 by bob)"
			}
			if !rows {
				r.Report.Rows = nil
			}
			for i, p := range RenderResults(r) {
				visible := strings.ReplaceAll(p, ResultsMarker(r.RequestID, i+1), "")
				for _, id := range []string{"r987654321", "r123456789"} {
					if strings.Contains(visible, id) {
						t.Errorf("%s (rows %v): the reply shows the request ID %s:\n%s", state, rows, id, visible)
					}
				}
			}
		}
	}
}

func TestRenderResultsPatchIsVerbatim(t *testing.T) {
	r := resultsCases()["patch"]
	out := strings.Join(RenderResults(r), "\n")
	for _, d := range r.Patch {
		if !strings.Contains(out, "```diff\n"+d+"```\n") {
			t.Errorf("the diff is not rendered verbatim in a diff fence:\n%s", d)
		}
	}
}

func TestResultsMarker(t *testing.T) {
	if got, want := ResultsMarker("pr-42-c1001", 3), "<!-- arenabot:results pr-42-c1001 part=3 -->"; got != want {
		t.Errorf("ResultsMarker = %q, want %q", got, want)
	}
	if got := ResultsMarker("a -->b\n", 1); strings.Count(got, "-->") != 1 || strings.Contains(got, "\n") {
		t.Errorf("ResultsMarker of a hostile id = %q", got)
	}
}

// bigResults is a job large enough to need several comments: a table longer than a comment,
// a long build log, a long runner log and a patch with one file larger than a comment.
func bigResults() Results {
	r := doneResults()
	r.Command = "/benchmark-test -t baseline"
	r.Report.Frameworks = nil
	r.Report.Rows = nil
	for i := range 700 {
		r.Report.Rows = append(r.Report.Rows, row("huge", "Huge", fmt.Sprintf("huge-p%03d", i), 64*(i%8+1), 10_000+float64(i*37), 20<<20, 1))
	}
	for i := range 40 {
		r.Report.Rows = append(r.Report.Rows, row("gin", "gin", fmt.Sprintf("gin-p%03d", i), 512, 150_000+float64(i*11), 24<<20, 1))
	}
	r.Report.Rows = append(r.Report.Rows, result.Row{Entry: "broken", Profile: "broken-p000", Conns: 512, Err: "build failed"})
	for i := range 5000 {
		r.Report.Rows[len(r.Report.Rows)-1].BuildLog = append(r.Report.Rows[len(r.Report.Rows)-1].BuildLog,
			fmt.Sprintf("#%d step %d: compiling package %s ```", i, i, strings.Repeat("x", i%90)))
	}
	for i := range 3000 {
		r.Report.Log = append(r.Report.Log, fmt.Sprintf("%05d runner: measured row %d of %d, nothing to see here", i, i, 3000))
	}
	r.Patch = []string{
		testDiff(r.Report.Rows[0].Result),
		"diff --git a/frameworks/huge/results/mid.json b/frameworks/huge/results/mid.json\n+++ b/frameworks/huge/results/mid.json\n" +
			strings.Repeat("+"+strings.Repeat("m", 79)+"\n", 500),
		"diff --git a/frameworks/huge/results/giant.json b/frameworks/huge/results/giant.json\n+++ b/frameworks/huge/results/giant.json\n" +
			strings.Repeat("+"+strings.Repeat("g", 79)+"\n", 1000),
	}
	return r
}

func TestRenderResultsSplits(t *testing.T) {
	r := bigResults()
	parts := RenderResults(r)
	if len(parts) < 3 {
		t.Fatalf("%d parts, want at least 3", len(parts))
	}
	checkParts(t, r, parts)
	all := strings.Join(parts, "\n")
	if !strings.Contains(parts[0], "**Command:**") {
		t.Error("part 1 lacks the header block")
	}
	for i, p := range parts[1:] {
		if strings.Contains(p, "**Command:**") {
			t.Errorf("part %d repeats the header block", i+2)
		}
	}
	if !strings.Contains(all, "### ✅ `huge` (Huge) (continued)\n\n| Test | Conn |") {
		t.Error("the long table does not continue with its heading and column header repeated")
	}
	for _, w := range []string{
		"earlier lines omitted", "02999 runner: measured row 2999", "#4999 step 4999",
		"The diff of `frameworks/huge/results/giant.json` is too large for a comment and was left out: run `arenabot bench huge --save` locally",
	} {
		if !strings.Contains(all, w) {
			t.Errorf("output lacks %q", w)
		}
	}
	if strings.Contains(all, "00000 runner") {
		t.Error("the oldest log line survived although the log is longer than a comment")
	}
	// The mid-sized diff fits in a comment but not beside the others: it is whole, in one part.
	mid := r.Patch[1]
	found := 0
	for _, p := range parts {
		if strings.Contains(p, mid) {
			found++
		}
	}
	if found != 1 {
		t.Errorf("the mid-sized diff appears whole in %d parts, want 1", found)
	}
}

func TestRenderResultsRandomSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 25
	if testing.Short() {
		n = 5
	}
	for iter := range n {
		r := randomResults(rng)
		parts := RenderResults(r)
		t.Run(fmt.Sprint(iter), func(t *testing.T) {
			checkParts(t, r, parts)
			if again := RenderResults(r); !gocmp.Equal(parts, again) {
				t.Error("RenderResults is not deterministic")
			}
		})
	}
}

func randomResults(rng *rand.Rand) Results {
	r := doneResults()
	r.State = []string{"done", "failed", "cancelled", "lost"}[rng.IntN(4)]
	r.Reason = strings.Repeat("why ", rng.IntN(20))
	r.Report.Rows = nil
	r.Report.Frameworks = nil
	text := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			switch rng.IntN(12) {
			case 0:
				b.WriteString(strings.Repeat("`", rng.IntN(9)))
			case 1:
				b.WriteString("</details>")
			case 2:
				b.WriteString("@someone")
			case 3:
				b.WriteString("\r")
			case 4:
				b.WriteString("<!-- x -->")
			case 5:
				b.WriteString("é界")
			default:
				b.WriteString("word ")
			}
		}
		return b.String()
	}
	for f := range rng.IntN(5) {
		entry := fmt.Sprintf("fw%d", f)
		r.Report.Frameworks = append(r.Report.Frameworks, entry)
		n := rng.IntN(400)
		if rng.IntN(4) == 0 {
			n = rng.IntN(1500)
		}
		for i := range n {
			profile := fmt.Sprintf("%s-p%04d", entry, i)
			if rng.IntN(6) == 0 {
				r.Report.Rows = append(r.Report.Rows, result.Row{Entry: entry, Display: text(rng.IntN(300)), Profile: profile, Conns: 512, Err: text(rng.IntN(400))})
				continue
			}
			m := row(entry, entry, profile, 512, float64(rng.IntN(1e6)), int64(rng.IntN(1<<30)), rng.Float64()*5)
			switch rng.IntN(6) {
			case 0, 1:
				other := measuredResult(entry, entry, profile, 512, float64(rng.IntN(1e6)), int64(rng.IntN(1<<30)), rng.Float64()*5)
				m.Result.Base = &result.Side{Entry: entry, Ref: "main", Commit: mergeBase, Runs: other.Runs}
			case 2:
				m.Result.Base = &result.Side{Entry: entry, Ref: "main", Commit: mergeBase, Err: text(rng.IntN(3000))}
			}
			r.Report.Rows = append(r.Report.Rows, m)
		}
		if n > 0 && rng.IntN(3) == 0 {
			first := len(r.Report.Rows) - n
			r.Report.Rows[first].Result = nil
			r.Report.Rows[first].Err = "build failed"
			for range rng.IntN(3000) {
				r.Report.Rows[first].BuildLog = append(r.Report.Rows[first].BuildLog, text(rng.IntN(2000)))
			}
		}
	}
	r.Report.Log = nil
	for range rng.IntN(4000) {
		r.Report.Log = append(r.Report.Log, text(rng.IntN(200)))
	}
	if rng.IntN(3) == 0 {
		r.Report.Error = text(rng.IntN(20000))
	}
	r.Patch = nil
	for i := range rng.IntN(6) {
		path := fmt.Sprintf("frameworks/fw%d/results/p-%d.json", i, i)
		r.Patch = append(r.Patch, "+++ b/"+path+"\n"+strings.Repeat("+"+text(70)+"\n", rng.IntN(1200)))
	}
	return r
}

var (
	liveTagRE  = regexp.MustCompile(`</?[A-Za-z!][^>]*>?`)
	mentionRE  = regexp.MustCompile(`@[A-Za-z0-9]`)
	headingRE  = regexp.MustCompile(`^## (Benchmark [A-Za-z ]+?)(?: \(part (\d+) of (\d+)\))?$`)
	allowedTag = map[string]bool{
		"<details>": true, "</details>": true, "<summary>": true, "</summary>": true, "<code>": true, "</code>": true,
	}
)

// checkParts checks what every reply must satisfy: each part under MaxComment bytes, headed
// and numbered, ending with its marker, with balanced fences and <details> blocks, no live
// HTML but the layout's own tags, the requester mentioned exactly once and no one else, and
// every row of the report in exactly one table row.
func checkParts(t *testing.T, r Results, parts []string) {
	t.Helper()
	if len(parts) == 0 {
		t.Fatal("no parts")
	}
	mentions := 0
	var tableLines, deltaLines []string
	second := false
	for i, p := range parts {
		name := fmt.Sprintf("part %d of %d", i+1, len(parts))
		if len(p) >= MaxComment {
			t.Errorf("%s is %d bytes, want < %d", name, len(p), MaxComment)
		}
		marker := ResultsMarker(r.RequestID, i+1)
		if !strings.HasSuffix(p, "\n"+marker) {
			t.Errorf("%s does not end with its marker %q", name, marker)
		}
		for j := range len(parts) + 1 {
			if n := strings.Count(p, ResultsMarker(r.RequestID, j+1)); n != 0 && j != i {
				t.Errorf("%s holds the marker of part %d", name, j+1)
			}
		}
		first, _, _ := strings.Cut(p, "\n")
		m := headingRE.FindStringSubmatch(first)
		switch {
		case m == nil:
			t.Errorf("%s starts with %q", name, first)
		case (m[1] == "Benchmark Results") != (len(r.Report.Rows) > 0):
			t.Errorf("%s is titled %q for a report of %d rows: only a reply with results is titled Benchmark Results", name, first, len(r.Report.Rows))
		case len(parts) == 1 && m[2] != "":
			t.Errorf("a single part is numbered: %q", first)
		case len(parts) > 1 && (m[2] != fmt.Sprint(i+1) || m[3] != fmt.Sprint(len(parts))):
			t.Errorf("%s is headed %q", name, first)
		}

		var open string
		details := 0
		lines := strings.Split(p, "\n")
		for _, line := range lines[:len(lines)-1] { // the last line is the marker
			if open != "" {
				l := strings.TrimLeft(line, " ")
				if len(line)-len(l) <= 3 && strings.HasPrefix(l, open) && strings.Trim(l, "` ") == "" {
					open = ""
				}
				continue
			}
			if strings.HasPrefix(line, "@") && !strings.HasPrefix(line, "@"+r.Requester) {
				t.Errorf("%s: line starts with a mention: %q", name, line)
			}
			if l := strings.TrimLeft(line, "`"); len(line)-len(l) >= 3 {
				open = line[:len(line)-len(l)]
				continue
			}
			// The results tables' lines, and the second tables' (Δ of the other figures); a
			// <details> block's tables (CPU profiles) are not rows.
			if strings.HasPrefix(line, "| Test |") {
				second = strings.HasPrefix(line, "| "+strings.Join(DeltaColumns[:4], " | ")+" |")
			}
			if details == 0 && strings.HasPrefix(line, "|") && !strings.HasPrefix(line, "| Test |") && !strings.HasPrefix(line, "|---") {
				if second {
					deltaLines = append(deltaLines, line)
				} else {
					tableLines = append(tableLines, line)
				}
			}
			if strings.HasPrefix(line, "<details>") {
				details++
			}
			if line == "</details>" {
				details--
				if details < 0 {
					t.Errorf("%s closes a <details> it did not open", name)
				}
			}
			if strings.Contains(line, "<!--") {
				t.Errorf("%s: HTML comment outside code in %q", name, line)
			}
			live, code := liveSyntax(line)
			if code {
				t.Errorf("%s: unbalanced code span in %q", name, line)
			}
			for _, tag := range liveTagRE.FindAllString(live, -1) {
				if !allowedTag[tag] {
					t.Errorf("%s: live HTML %q in %q", name, tag, line)
				}
			}
			for _, at := range mentionRE.FindAllStringIndex(live, -1) {
				mentions++
				rest, ok := strings.CutPrefix(live[at[0]:], "@"+r.Requester)
				if i != 0 || !ok || !md.ValidLogin(r.Requester) || rest != "" && md.ValidLogin(rest[:1]) {
					t.Errorf("%s: mention in %q", name, line)
				}
			}
		}
		if open != "" {
			t.Errorf("%s leaves a %q fence open", name, open)
		}
		if details != 0 {
			t.Errorf("%s leaves %d <details> open", name, details)
		}
	}
	want := 0
	if md.ValidLogin(r.Requester) {
		want = 1
	}
	if mentions != want {
		t.Errorf("%d mentions, want %d (requester %q)", mentions, want, r.Requester)
	}
	checkCharts(t, strings.Join(parts, "\n"))

	// Every row of the report is exactly one table line, and every measured row one line of
	// the second table.
	counts := func(lines []string) map[string]int {
		count := map[string]int{}
		for _, l := range lines {
			cells := strings.SplitN(l, " | ", 3)
			if len(cells) < 3 {
				t.Errorf("odd table line %q", l)
				continue
			}
			count[strings.TrimPrefix(cells[0], "| ")+" "+cells[1]]++
		}
		return count
	}
	wantRows, wantMeasured := map[string]int{}, map[string]int{}
	for _, row := range r.Report.Rows {
		p, c := md.Cell(md.Clip(row.Profile, 64)), fmt.Sprint(row.Conns)
		if p == "" {
			p = "—"
		}
		if row.Conns <= 0 {
			c = "—"
		}
		wantRows[p+" "+c]++
		if row.Result != nil {
			wantMeasured[p+" "+c]++
		}
	}
	if diff := gocmp.Diff(wantMeasured, counts(deltaLines), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("second-table rows differ from the report's measured rows (-want +got):\n%s", diff)
	}
	if diff := gocmp.Diff(wantRows, counts(tableLines)); diff != "" {
		t.Errorf("table rows differ from the report's rows (-want +got):\n%s", diff)
	}
}

func TestLogLines(t *testing.T) {
	got := logLines([]string{
		"a\r\nb", "progress 10%\rprogress 100%", "\x1b[1;31mred\x1b[0m", "bi\u202edi", "<!-- x -->", "tab\there  ",
		strings.Repeat("é", 800),
	})
	want := []string{"a", "b", "progress 100%", "red", "bidi", "<!-- x -->", "tab\there"}
	if diff := gocmp.Diff(want, got[:len(want)]); diff != "" {
		t.Errorf("logLines (-want +got):\n%s", diff)
	}
	if last := got[len(got)-1]; len(last) > maxLogLine+len("…") || !strings.HasSuffix(last, "…") {
		t.Errorf("a long line is %d bytes, want it cut at %d", len(last), maxLogLine)
	}
}

func TestChartText(t *testing.T) {
	for in, want := range map[string]string{
		"baseline 512":          "baseline 512",
		`a"b` + "\n" + `c%%d;e`: "a b c d e",
		"```":                   "-",
		"":                      "-",
		"json-comp 4096":        "json-comp 4096",
	} {
		if got := chartText(in, 40); got != want {
			t.Errorf("chartText(%q) = %q, want %q", in, got, want)
		}
	}
}

var (
	chartLineRE = regexp.MustCompile(`^(?:xychart-beta|    title "[^"%;` + "`" + `]*"|    y-axis "RPS"|    x-axis \[("[^"%;` + "`" + `]+"(?:, "[^"%;` + "`" + `]+")*)\]|    bar \[(\d+(?:, \d+)*)\])$`)
)

// checkCharts checks that every mermaid block is an xychart in the subset of the grammar the
// renderer writes, with as many values in each bar series as labels on the x-axis.
func checkCharts(t *testing.T, out string) {
	t.Helper()
	for _, block := range strings.Split(out, "```mermaid\n")[1:] {
		block, _, ok := strings.Cut(block, "\n```\n")
		if !ok {
			t.Errorf("unterminated mermaid block:\n%s", block)
			continue
		}
		lines := strings.Split(block, "\n")
		if lines[0] != "xychart-beta" {
			t.Errorf("chart starts with %q", lines[0])
		}
		labels, bars := -1, 0
		for _, l := range lines {
			m := chartLineRE.FindStringSubmatch(l)
			switch {
			case m == nil:
				t.Errorf("invalid chart line %q", l)
			case m[1] != "":
				labels = strings.Count(m[1], `", "`) + 1
			case m[2] != "":
				bars++
				if n := strings.Count(m[2], ",") + 1; n != labels {
					t.Errorf("bar series of %d values for %d labels: %q", n, labels, l)
				}
			}
		}
		if labels < 1 || bars < 1 || bars > 2 || labels > maxChartBars {
			t.Errorf("chart with %d labels and %d bar series:\n%s", labels, bars, block)
		}
	}
}

func TestRenderResultsHostileText(t *testing.T) {
	const evil = "@everyone <script>x</script> [x](http://e) www.evil.example fixes #12 | ``` </details> <!-- \"quote\" % ; -->\n# heading"
	r := resultsCases()["failures"]
	r.State = "failed"
	r.Command, r.Reason, r.Compare, r.CommitSHA = evil, evil, evil, evil
	r.StatusURL, r.CommitURL = "javascript:alert(1)", "https://e/x) [y](https://evil"
	r.Report.Host, r.Report.Mode, r.Report.BaseRef, r.Report.BaseCommit = evil, evil, evil, evil
	r.Report.Frameworks = append(r.Report.Frameworks, evil)
	r.Report.Tests = append(r.Report.Tests, evil)
	r.Report.Rows = append(r.Report.Rows,
		result.Row{Entry: evil, Display: evil, Profile: evil, Conns: 1, Err: evil, BuildLog: []string{evil}},
		row(evil, evil, evil+"2", 2, 1000, 1<<20, 1))
	r.Report.Log = append(r.Report.Log, evil)
	r.Report.Error = evil
	r.Patch = []string{"+++ b/frameworks/" + strings.ReplaceAll(evil, "\n", " ") + "/results/x.json\n+x\n"}
	for _, req := range []string{"alice", "@everyone", "al ice", "a]b", ""} {
		r.Requester = req
		parts := RenderResults(r)
		checkParts(t, r, parts)
		out := strings.Join(parts, "\n")
		var allowed []string
		if md.ValidLogin(req) {
			allowed = append(allowed, req)
		}
		if abuse := mdtest.Abuse(out, allowed...); len(abuse) > 0 {
			t.Errorf("requester %q: %v", req, abuse)
		}
		live := mdtest.Live(out)
		for _, bad := range []string{"javascript:", "https://evil", "\n# heading", "http://e", "<script"} {
			if strings.Contains(live, bad) {
				t.Errorf("requester %q: output contains %q", req, bad)
			}
		}
	}
}
