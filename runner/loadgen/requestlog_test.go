package loadgen

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
)

// requestLogTests are the request logs h2load wrote (TestRecord, cases with log), with the
// counts and the exact nearest-rank percentiles of their responses' durations, in µs,
// worked out by hand (sort -n of column 3 where column 2 is not -1).
var requestLogTests = []struct {
	file                     string
	responses, failed        int64
	p50, p90, p99, p999, max int64 // exact
}{
	{"h2load-h2c-log.log", 1375, 0, 5544, 5760, 13167, 30165, 30171},
	{"h2load-h2-log-reset.log", 1018, 339, 5585, 6050, 9390, 17756, 18914},
	{"h2load-h2c-log-non2xx.log", 676, 0, 5497, 6707, 12079, 24412, 24412},
}

// TestRequestLogCaptured parses the captured logs: the counts are exact and each
// percentile is the exact one or at most 1/1024 above it (the histogram's resolution).
func TestRequestLogCaptured(t *testing.T) {
	for _, tt := range requestLogTests {
		t.Run(tt.file, func(t *testing.T) {
			b := readTestdata(t, tt.file)
			got, err := ParseRequestLog(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if got.Responses != tt.responses || got.Failed != tt.failed {
				t.Errorf("%d responses, %d failed; want %d, %d", got.Responses, got.Failed, tt.responses, tt.failed)
			}
			ref := exactPercentiles(t, b)
			for i, c := range []struct {
				name      string
				got       float64 // µs
				hand, ref int64
			}{
				{"p50", got.Latency.P50, tt.p50, ref[0]}, {"p90", got.Latency.P90, tt.p90, ref[1]},
				{"p99", got.Latency.P99, tt.p99, ref[2]}, {"p99.9", got.Latency.P999, tt.p999, ref[3]},
				{"max", got.Latency.Max, tt.max, ref[4]},
			} {
				if c.hand != c.ref {
					t.Errorf("%s: the table says %d µs, the file %d µs (entry %d)", c.name, c.hand, c.ref, i)
				}
				us := int64(c.got)
				if us < c.ref || float64(us-c.ref) > float64(c.ref)/1024 {
					t.Errorf("%s = %d µs, want %d µs (at most 1/1024 above)", c.name, us, c.ref)
				}
			}
			t.Logf("%+v", got)
		})
	}
}

// exactPercentiles returns the nearest-rank p50, p90, p99, p99.9 and max of the
// responses' durations, by sorting them.
func exactPercentiles(t *testing.T, log []byte) [5]int64 {
	t.Helper()
	var d []int64
	sc := bufio.NewScanner(bytes.NewReader(log))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 3 || f[1] == "-1" {
			continue
		}
		v, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		d = append(d, v)
	}
	slices.Sort(d)
	var out [5]int64
	for i, q := range []float64{0.5, 0.9, 0.99, 0.999, 1} {
		out[i] = d[max(int(math.Ceil(q*float64(len(d))))-1, 0)]
	}
	return out
}

// TestReadLog: h2load's ReadLog fills in the percentiles from OutDir, leaves what Parse
// found alone and removes the log; a tool without a run log has nothing to clear or read.
func TestReadLog(t *testing.T) {
	dir := t.TempDir()
	spec := Spec{OutDir: dir}
	tool := H2load()
	if got := tool.LogFile(Spec{}); got != "" {
		t.Errorf("LogFile without OutDir = %q, want none", got)
	}
	log := tool.LogFile(spec)
	if err := os.WriteFile(log, readTestdata(t, "h2load-h2c-log.log"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := tool.Parse(readTestdata(t, "h2load-h2c-log.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := tool.ReadLog(spec, &m); err != nil {
		t.Fatal(err)
	}
	want := result.Latency{Mean: 5800, P50: 5547, P90: 5763, P99: 13167, P999: 30171, Max: 30170}
	if m.Latency != want || m.Requests != 1375 {
		t.Errorf("latency %+v, %d requests; want %+v, 1375", m.Latency, m.Requests, want)
	}
	if _, err := os.Stat(log); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after ReadLog the log is still there (%v)", err)
	}
	if err := tool.ReadLog(Spec{OutDir: filepath.Join(dir, "missing")}, &m); err == nil {
		t.Error("ReadLog of a missing log succeeded")
	}
	if err := os.WriteFile(log, []byte("old run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := tool.ClearLog(spec); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(log); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after ClearLog the log is still there (%v)", err)
	}
	if err := tool.ClearLog(spec); err != nil {
		t.Errorf("ClearLog without a log: %v", err)
	}
	wrk := Wrk()
	before := m
	if wrk.LogFile(spec) != "" || wrk.ClearLog(spec) != nil || wrk.ReadLog(spec, &m) != nil || m != before {
		t.Errorf("wrk, which leaves no run log: LogFile %q, or ClearLog or ReadLog did something", wrk.LogFile(spec))
	}
}

// TestLogArgs: a tool with a run log asks for it where LogFile says, and only with an OutDir.
func TestLogArgs(t *testing.T) {
	for _, tt := range []struct {
		tool Tool
		p    profile.Profile
	}{{H2load(), h2cProfile}, {Ghz(), streamProfile}} {
		s := spec(tt.p, 64, 4)
		s.OutDir = "/out"
		args, err := tt.tool.Args(s)
		if err != nil {
			t.Fatal(err)
		}
		if f := tt.tool.LogFile(s); f == "" || !slices.Contains(args, f) {
			t.Errorf("%s: args %q do not name its run log %q", tt.tool.Name, args, f)
		}
		s.OutDir = ""
		args, _ = tt.tool.Args(s)
		if slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, tt.tool.Log.File) }) {
			t.Errorf("%s without an OutDir: args %q name a run log", tt.tool.Name, args)
		}
	}
	for _, tool := range All() {
		if (tool.Log == nil) != (tool.Name == profile.ToolWrk || tool.Name == profile.ToolArenaload) || tool.Log != nil && (tool.Log.File == "" || tool.Log.Read == nil) {
			t.Errorf("%s: run log %+v; want one, with a file and a reader, for h2load and ghz only", tool.Name, tool.Log)
		}
	}
}

func TestParseRequestLog(t *testing.T) {
	for _, tt := range []struct {
		name, log string
		want      RequestLog
		wantErr   string
	}{
		{name: "empty", log: ""},
		{name: "one", log: "1796127176617715\t200\t583\n", want: RequestLog{Responses: 1,
			Latency: result.Latency{P50: 583, P90: 583, P99: 583, P999: 583, Max: 583}}},
		{name: "failed only", log: "1\t-1\t5\n2\t-1\t7\n", want: RequestLog{Failed: 2}},
		{name: "more columns, CRLF, blank line", log: "1\t404\t10\textra\r\n\n2\t200\t20\n", want: RequestLog{Responses: 2,
			Latency: result.Latency{P50: 10, P90: 20, P99: 20, P999: 20, Max: 20}}},
		{name: "last line cut short", log: "1\t200\t10\n2\t20", want: RequestLog{Responses: 1,
			Latency: result.Latency{P50: 10, P90: 10, P99: 10, P999: 10, Max: 10}}},
		{name: "two columns", log: "1\t200\n", wantErr: "columns"},
		{name: "bad status", log: "1\t20\t5\n", wantErr: "status"},
		{name: "negative duration", log: "1\t200\t-5\n", wantErr: "duration"},
		{name: "huge duration", log: "1\t200\t99999999999999999\n", wantErr: "duration"},
		{name: "bad start", log: "x\t200\t5\n", wantErr: "start"},
		{name: "long line", log: strings.Repeat("1", 5000) + "\n", wantErr: "longer"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRequestLog(strings.NewReader(tt.log))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseRequestLog = %+v, %v; want an error about %s", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseRequestLog = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestHistogramBuckets: every value falls in a bucket whose upper end is at most 1/1024 of
// it above it, and buckets are ordered as their values are.
func TestHistogramBuckets(t *testing.T) {
	prev := -1
	for _, v := range []uint64{0, 1, 2047, 2048, 2049, 2050, 4095, 4096, 5544, 1 << 20, 1<<20 + 1, 1<<32 - 1, 1 << 42, uint64(maxDuration / time.Microsecond)} {
		i := bucket(v)
		if i < prev {
			t.Errorf("bucket(%d) = %d, below the previous value's %d", v, i, prev)
		}
		prev = i
		up := upper(i)
		if up < v || float64(up-v) > float64(v)/1024 {
			t.Errorf("bucket(%d) = %d with upper end %d: not within 1/1024 above", v, i, up)
		}
		if i > 0 && upper(i-1) >= v {
			t.Errorf("bucket %d's upper end %d is not below %d, which is in bucket %d", i-1, upper(i-1), v, i)
		}
	}
}
