package runner

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/cpuprof"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/measure"
	"github.com/arenabot/arenabot/validate"
)

// TestRowDoneCarriesShortAndAdvisories: a row that failed validation reaches the report and
// the row event with its short cell and its whole reason, and an entry's advisories ride on
// its first row as WARN lines, with the workspace's paths made relative.
func TestRowDoneCarriesShortAndAdvisories(t *testing.T) {
	q := queue.NewMemory(queue.Options{})
	w := NewWorker(q, nil, WorkerConfig{WorkDir: t.TempDir()})
	j := newJobRun(w, queue.Lease{Job: queue.Job{ID: "j1"}})
	j.ctx = t.Context()
	p, _ := profile.Lookup("baseline")
	e := frameworks.Entry{Name: "oldarena"}
	fail := validate.Outcome{Profile: "baseline", Check: "GET sum 13+42", Status: validate.Fail, Request: "GET /baseline11?a=13&b=42", Expected: `200 with body "55"`, Got: `"56"`, Contract: "baseline — … (docs/profiles.md#baseline)"}
	warn := validate.Outcome{Profile: "baseline", Check: "malformed bad header", Status: validate.Warn, Tier: validate.Advisory, Request: "GET …", Expected: "a 4xx", Got: "200 from " + j.dir + "/src/frameworks/oldarena", Contract: "baseline — … (RFC 9112 §5.1; docs/profiles.md#baseline)"}

	first512 := measure.FailedRow(e, p, 512, &measure.ValidationFailure{Outcome: fail})
	first512.Advisories = []string{warn.String()} // as Measure gives them, on the entry's first row
	j.rowDone(first512)
	j.rowDone(measure.FailedRow(e, p, 4096, &measure.ValidationFailure{Outcome: fail}))

	if len(j.report.Rows) != 2 {
		t.Fatalf("%d rows in the report, want 2", len(j.report.Rows))
	}
	first := j.report.Rows[0]
	if first.Short != "validation: GET sum 13+42" || !strings.HasPrefix(first.Err, "validation failed, not measured: FAIL baseline: GET sum 13+42: sent ") {
		t.Errorf("short %q, err %q", first.Short, first.Err)
	}
	if len(first.Advisories) != 1 || first.Advisories[0] != "WARN baseline: malformed bad header: sent GET …; expected a 4xx; got 200 from frameworks/oldarena; contract: baseline — … (RFC 9112 §5.1; docs/profiles.md#baseline)" {
		t.Errorf("advisories %q", first.Advisories)
	}
	if len(j.report.Rows[1].Advisories) != 0 {
		t.Errorf("the second row repeats the advisories: %q", j.report.Rows[1].Advisories)
	}
	ds, err := q.Events(t.Context(), "test", "c", 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	var sent []result.Row
	for _, d := range ds {
		if d.Event.Kind != queue.EventRow {
			continue
		}
		var r result.Row
		if err := json.Unmarshal(d.Event.Data, &r); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, r)
	}
	if len(sent) != 2 || sent[0].Short != first.Short || len(sent[0].Advisories) != 1 {
		t.Errorf("row events %+v, want the report's rows", sent)
	}
}

// TestRowDoneKeepsProfileFilesForSave: a profiled row's pprof profile and flame graph stay
// in the report of a --save job, for the results commit, and never ride on the row event;
// a job without --save keeps only the summary.
func TestRowDoneKeepsProfileFilesForSave(t *testing.T) {
	for _, save := range []bool{true, false} {
		q := queue.NewMemory(queue.Options{})
		w := NewWorker(q, nil, WorkerConfig{WorkDir: t.TempDir()})
		j := newJobRun(w, queue.Lease{Job: queue.Job{ID: "j1", Save: save}})
		j.ctx = t.Context()
		p, _ := profile.Lookup("baseline")
		res := &result.Result{Entry: "nethttp", Profile: "baseline", Connections: 512,
			CPUProfile: &result.CPUProfile{Samples: 10, Pprof: "baseline-512.cpu.pb.gz", Flame: "baseline-512.cpu.svg"}}
		j.rowDone(result.Row{Entry: "nethttp", Profile: p.Name, Conns: 512, Result: res, Pprof: []byte("pb"), Flame: []byte("svg")})
		row := j.report.Rows[0]
		if got := len(row.Pprof) > 0 && len(row.Flame) > 0; got != save {
			t.Errorf("save %v: the report keeps the files: %v", save, got)
		}
		ds, err := q.Events(t.Context(), "test", "c", 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.Event.Kind == queue.EventRow && strings.Contains(string(d.Event.Data), `"pprof_data"`) {
				t.Errorf("save %v: the row event carries the files: %s", save, d.Event.Data)
			}
		}
	}
}

// TestRowDoneComparesWithCommittedProfile: a profiled row with no base profiled in the job
// gets the difference from the profile committed for it on the base branch (extracted with
// the base's results), marked as such; without a committed one it has none.
func TestRowDoneComparesWithCommittedProfile(t *testing.T) {
	q := queue.NewMemory(queue.Options{})
	w := NewWorker(q, nil, WorkerConfig{WorkDir: t.TempDir()})
	j := newJobRun(w, queue.Lease{Job: queue.Job{ID: "j1"}})
	j.ctx = t.Context()
	p, _ := profile.Lookup("baseline")
	head, committed := testPprof(t, 110), testPprof(t, 30) // of 1,000 samples: 8 points apart
	dir := filepath.Join(j.dir, "base", "frameworks", "nethttp", result.Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, result.PprofFileName("baseline", 512)), committed, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, conns := range []int{512, 4096} {
		res := &result.Result{Entry: "nethttp", Profile: "baseline", Connections: conns, CPUProfile: &result.CPUProfile{Samples: 100}}
		j.rowDone(result.Row{Entry: "nethttp", Profile: p.Name, Conns: conns, Result: res, Pprof: head})
	}
	d := j.report.Rows[0].Result.CPUProfile.Diff
	if d == nil || !d.Committed || len(d.Self) == 0 || d.Self[0].Name != "runtime.mallocgc" || d.Self[0].Delta != 8 {
		t.Errorf("512: difference %+v; want +8 pts runtime.mallocgc against the committed profile", d)
	}
	if d := j.report.Rows[1].Result.CPUProfile.Diff; d != nil {
		t.Errorf("4096 (nothing committed): difference %+v; want none", d)
	}
}

// testPprof is a gzipped pprof profile: malloc of 100 samples in runtime.mallocgc, the rest
// in the kernel.
func testPprof(t *testing.T, malloc int) []byte {
	t.Helper()
	var samples []cpuprof.Sample
	for i := range 1000 {
		leaf := cpuprof.Frame{Symbol: "tcp_sendmsg", DSO: cpuprof.KernelDSO, Addr: 0xffffffff81000000}
		if i < malloc {
			leaf = cpuprof.Frame{Symbol: "runtime.mallocgc", DSO: "/server", Addr: 0x2000}
		}
		samples = append(samples, cpuprof.Sample{PID: 1, Period: 2_000_000, Stack: []cpuprof.Frame{leaf}})
	}
	var buf bytes.Buffer
	if err := cpuprof.WritePprof(&buf, cpuprof.ToPprof(samples, time.Second)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
