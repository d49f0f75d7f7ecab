package loadgen

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/arenabot/arenabot/result"
)

// A RunLog is a file a tool's runs leave in Spec.OutDir beside their output, which
// completes the Measurement: h2load's request log, from which the latency percentiles come,
// or ghz's report. The runner clears it before a run (ClearLog) and reads it after Parse
// (ReadLog), which removes it.
type RunLog struct {
	// File is the file's name in Spec.OutDir.
	File string
	// Read reads the file at path, which a run left, and fills in what it knows into m.
	Read func(path string, m *Measurement) error
}

// logPath is spec.OutDir/name, or "" without an OutDir.
func logPath(spec Spec, name string) string {
	if spec.OutDir == "" {
		return ""
	}
	return filepath.Join(spec.OutDir, name)
}

// LogFile is the path of the run log for spec, or "" when the tool leaves none or spec has no
// OutDir (no log is asked for).
func (t Tool) LogFile(spec Spec) string {
	if t.Log == nil {
		return ""
	}
	return logPath(spec, t.Log.File)
}

// ClearLog removes the run log a previous run of spec left (h2load appends to its log), so
// that a run starts with none; it does nothing when there is no log.
func (t Tool) ClearLog(spec Spec) error {
	f := t.LogFile(spec)
	if f == "" {
		return nil
	}
	if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s run log: %w", t.Name, err)
	}
	return nil
}

// ReadLog fills in m from the run log a run of spec left and removes the log (one run's log
// at a time: it grows with the run); it does nothing when there is no log. A log that is not
// there is an error.
func (t Tool) ReadLog(spec Spec, m *Measurement) error {
	f := t.LogFile(spec)
	if f == "" {
		return nil
	}
	err := t.Log.Read(f, m)
	os.Remove(f)
	return err
}

// A RequestLog is what a per-request log says: how many requests got a response, how many
// failed, and the latency percentiles of the responses.
type RequestLog struct {
	Responses int64 // lines with an HTTP status
	Failed    int64 // lines with status -1: streams that failed
	// Latency percentiles of the responses (Mean stays 0: the tool's summary has it),
	// accurate to 1/1024 of the value (exact below 2048 µs).
	Latency result.Latency
}

// maxLogLine bounds one line of a request log.
const maxLogLine = 4 << 10

// ParseRequestLog reads h2load's --log-file: one line per request, tab-separated, the
// request's start in microseconds since the epoch, its HTTP status (-1 for a failed
// stream) and the microseconds until the end of its response; more columns may follow
// (h2load says more may be added). Memory stays bounded whatever the length: the latencies
// go into a log-linear histogram. A line that does not parse is an error, except a last
// line cut short without its newline (the tool stopped while writing).
func ParseRequestLog(r io.Reader) (RequestLog, error) {
	var out RequestLog
	var h histogram
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull || len(line) > maxLogLine {
			return RequestLog{}, fmt.Errorf("request log line %d: longer than %d bytes", n, maxLogLine)
		}
		if err == io.EOF {
			break // a last line without its newline is one the tool did not finish
		}
		if err != nil {
			return RequestLog{}, fmt.Errorf("request log: %w", err)
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) == 0 {
			continue
		}
		status, dur, err := logLine(line)
		if err != nil {
			return RequestLog{}, fmt.Errorf("request log line %d %q: %w", n, excerpt(line), err)
		}
		if status < 0 {
			out.Failed = min(out.Failed+1, maxCount)
			continue
		}
		out.Responses = min(out.Responses+1, maxCount)
		h.add(dur)
	}
	if out.Responses > 0 {
		us := func(q float64) float64 { return float64(h.quantile(q)) }
		out.Latency = result.Latency{P50: us(0.50), P90: us(0.90), P99: us(0.99), P999: us(0.999), Max: us(1)}
	}
	return out, nil
}

// logLine reads the status and the duration of one line.
func logLine(line []byte) (status int, dur uint64, err error) {
	fields := bytes.Split(line, []byte("\t"))
	if len(fields) < 3 {
		return 0, 0, fmt.Errorf("%d columns, want start, status and duration", len(fields))
	}
	if _, err := strconv.ParseUint(string(fields[0]), 10, 64); err != nil {
		return 0, 0, fmt.Errorf("start %q is not a count of microseconds", fields[0])
	}
	status, err = strconv.Atoi(string(fields[1]))
	if err != nil || status != -1 && (status < 100 || status > 999) {
		return 0, 0, fmt.Errorf("status %q is neither -1 nor an HTTP status", fields[1])
	}
	dur, err = strconv.ParseUint(string(fields[2]), 10, 64)
	if err != nil || dur > uint64(maxDuration/time.Microsecond) {
		return 0, 0, fmt.Errorf("duration %q is not a count of microseconds", fields[2])
	}
	return status, dur, nil
}

// The histogram keeps values below 2^subBits exactly and larger ones in buckets 1/2^(subBits-1)
// of their value wide: about 60,000 counters for any uint64, allocated as needed.
const subBits = 11

type histogram struct {
	counts []int64
	n      int64
	max    uint64
}

// bucket returns the index of v's bucket.
func bucket(v uint64) int {
	if v < 1<<subBits {
		return int(v)
	}
	shift := bits.Len64(v) - subBits // v >> shift has subBits bits, its top one set
	return 1<<subBits + (shift-1)<<(subBits-1) + int(v>>shift) - 1<<(subBits-1)
}

// upper returns the largest value of bucket i.
func upper(i int) uint64 {
	if i < 1<<subBits {
		return uint64(i)
	}
	i -= 1 << subBits
	shift := i>>(subBits-1) + 1
	top := uint64(i&(1<<(subBits-1)-1) + 1<<(subBits-1))
	return (top+1)<<shift - 1
}

func (h *histogram) add(v uint64) {
	i := bucket(v)
	if i >= len(h.counts) {
		h.counts = append(h.counts, make([]int64, i+1-len(h.counts))...)
	}
	h.counts[i]++
	h.n++
	h.max = max(h.max, v)
}

// quantile returns the nearest-rank q-quantile: the upper end of the bucket that holds the
// ⌈q·n⌉-th smallest value, never more than the largest value seen.
func (h *histogram) quantile(q float64) uint64 {
	if h.n == 0 {
		return 0
	}
	rank := max(min(int64(math.Ceil(q*float64(h.n))), h.n), 1)
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(upper(i), h.max)
		}
	}
	return h.max
}
