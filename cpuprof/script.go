package cpuprof

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ScriptFields is the -F list [ScriptArgs] asks perf script for; [ParseScript] reads
// exactly this layout (a header line per sample, then one line per frame).
const ScriptFields = "comm,pid,tid,time,period,event,ip,sym,symoff,dso"

// Unknown is the name of a frame nobody could name: perf printed it as [unknown] and
// [Symbolizer] found nothing either. Such frames are kept, never dropped.
const Unknown = "[unknown]"

// KernelDSO is the DSO perf reports for kernel frames.
const KernelDSO = "[kernel.kallsyms]"

// A Trace is what one perf script run says about a recording.
type Trace struct {
	Samples []Sample
	// Mappings are the executable mappings perf saw (synthesized at attach time or
	// recorded later), in order; [Symbolizer] uses them to turn perf's map-relative
	// addresses back into process addresses where it needs them.
	Mappings []Mapping
}

// KeepPIDs drops the samples of processes other than pids, as after recording a CPU
// set system-wide.
func (t *Trace) KeepPIDs(pids ...int) {
	t.Samples = slices.DeleteFunc(t.Samples, func(s Sample) bool { return !slices.Contains(pids, s.PID) })
}

// A Sample is one stack perf took.
type Sample struct {
	PID, TID int
	Comm     string
	// Period is the sample's weight: for the cpu-clock event, nanoseconds of CPU time.
	Period uint64
	// Stack is leaf first.
	Stack []Frame
}

// A Frame is one entry of a sample's call chain.
type Frame struct {
	// Addr is the address as perf printed it: the absolute address for kernel frames and
	// memory with no file behind it (anonymous JIT code), and for a file-backed user frame
	// the map-relative address perf computes (address - mapping start + file offset), which
	// is the offset in the file.
	Addr uint64
	// Symbol is the function name, "" when nobody resolved it yet ([Symbolizer.Symbolize]
	// sets it, to [Unknown] at worst). perf's "+0x.." offset is cut off into Offset.
	Symbol string
	Offset uint64
	// DSO is the path of the file the address belongs to as perf reported it
	// ("/usr/lib/x86_64-linux-gnu/libc.so.6", "[kernel.kallsyms]", "[vdso]"), "" when perf
	// did not know ("[unknown]").
	DSO string
}

// Kernel reports whether the frame is in the kernel: perf's kernel DSO, or an address in
// the upper half of the address space when perf did not say.
func (f Frame) Kernel() bool {
	return f.DSO == KernelDSO || strings.HasPrefix(f.DSO, "[kernel.") || f.Addr >= 1<<63
}

// Name is the frame's display name: the symbol, or [Unknown] followed by the DSO's base
// name in parentheses when the symbol is unknown and the DSO is known.
func (f Frame) Name() string {
	if f.Symbol != "" && f.Symbol != Unknown {
		return f.Symbol
	}
	if f.DSO == "" {
		return Unknown
	}
	return Unknown + " (" + baseName(f.DSO) + ")"
}

// A Mapping is one executable mapping of a process, from a PERF_RECORD_MMAP or MMAP2 line.
type Mapping struct {
	PID         int
	Start, Len  uint64
	Pgoff       uint64
	Path        string
	Prot        string // "r-xp"; "x" for the kernel's own records
	Synthesized bool   // perf read it from /proc when it attached (time 0)
	Kernel      bool
}

var (
	// "srv  2697/2701    884.623866:    2004008 cpu-clock:pppH: " — comm may hold spaces.
	headerRE = regexp.MustCompile(`^(.*?)\s+(-?\d+)/(-?\d+)\s+(\d+\.\d+):\s+(\d+)\s+(\S+?):?\s*$`)
	// "... PERF_RECORD_MMAP2 2697/2697: [0x55937e260000(0x9f000) @ 0 fe:00 10264646 0]: r-xp /tmp/x"
	mmapRE = regexp.MustCompile(`PERF_RECORD_MMAP2? (-?\d+)/(-?\d+): \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (0x[0-9a-f]+|\d+)[^\]]*\]: (\S+) (.*)$`)
	// "+0x1c" at the end of a symbol.
	symoffRE = regexp.MustCompile(`\+0x([0-9a-f]+)$`)
)

// ParseScript reads perf script output produced with [ScriptArgs] (fields [ScriptFields],
// mmap events shown). Lines it does not recognise outside a sample are skipped; a frame
// line it cannot read is an error naming the line.
func ParseScript(r io.Reader) (*Trace, error) {
	tr := &Trace{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var cur *Sample
	flush := func() {
		if cur != nil {
			tr.Samples = append(tr.Samples, *cur)
			cur = nil
		}
	}
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if cur != nil && (line[0] == '\t' || line[0] == ' ') {
			f, err := parseFrame(line)
			if err != nil {
				return nil, fmt.Errorf("perf script line %d: %w", n, err)
			}
			cur.Stack = append(cur.Stack, f)
			continue
		}
		flush()
		if strings.Contains(line, "PERF_RECORD_MMAP") {
			if m, ok := parseMmap(line); ok {
				tr.Mappings = append(tr.Mappings, m)
			}
			continue
		}
		if strings.Contains(line, "PERF_RECORD_") {
			continue
		}
		s, ok := parseHeader(line)
		if !ok {
			continue
		}
		cur = &s
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading perf script output: %w", err)
	}
	return tr, nil
}

func parseHeader(line string) (Sample, bool) {
	m := headerRE.FindStringSubmatch(line)
	if m == nil {
		return Sample{}, false
	}
	pid, _ := strconv.Atoi(m[2])
	tid, _ := strconv.Atoi(m[3])
	period, err := strconv.ParseUint(m[5], 10, 64)
	if err != nil {
		return Sample{}, false
	}
	return Sample{PID: pid, TID: tid, Comm: strings.TrimSpace(m[1]), Period: period}, true
}

// parseFrame reads "\t    9e870 main.spin+0x1c (/tmp/x)". The symbol may contain spaces
// and parentheses (demangled C++), so the DSO is the last parenthesised group at the end.
func parseFrame(line string) (Frame, error) {
	s := strings.TrimSpace(line)
	addrText, rest, _ := strings.Cut(s, " ")
	addr, err := strconv.ParseUint(addrText, 16, 64)
	if err != nil {
		return Frame{}, fmt.Errorf("frame %q: address: %w", s, err)
	}
	rest = strings.TrimSpace(rest)
	var f Frame
	f.Addr = addr
	if i := openParen(rest); i >= 0 {
		f.DSO = rest[i+1 : len(rest)-1]
		rest = strings.TrimSpace(rest[:i])
	}
	if f.DSO == Unknown {
		f.DSO = ""
	}
	if m := symoffRE.FindStringSubmatchIndex(rest); m != nil {
		off, err := strconv.ParseUint(rest[m[2]:m[3]], 16, 64)
		if err == nil {
			f.Offset = off
			rest = rest[:m[0]]
		}
	}
	if rest != Unknown {
		f.Symbol = rest
	}
	return f, nil
}

// openParen is the index of the parenthesis that opens the group closing at the end of
// s, -1 when s does not end with one. Paths may hold parentheses ("/x.so (deleted)").
func openParen(s string) int {
	if !strings.HasSuffix(s, ")") {
		return -1
	}
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 && (i == 0 || s[i-1] == ' ') {
				return i
			}
		}
	}
	return -1
}

func parseMmap(line string) (Mapping, bool) {
	m := mmapRE.FindStringSubmatch(line)
	if m == nil {
		return Mapping{}, false
	}
	pid, _ := strconv.Atoi(m[1])
	start, err1 := strconv.ParseUint(m[3], 16, 64)
	size, err2 := strconv.ParseUint(m[4], 16, 64)
	pgoff, err3 := strconv.ParseUint(m[5], 0, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return Mapping{}, false
	}
	mp := Mapping{PID: pid, Start: start, Len: size, Pgoff: pgoff, Prot: m[6], Path: strings.TrimSpace(m[7])}
	mp.Synthesized = strings.Contains(line, " 0.000000: ")
	mp.Kernel = pid == -1 || strings.HasPrefix(mp.Path, KernelDSO)
	return mp, true
}

func baseName(p string) string {
	if strings.HasPrefix(p, "[") {
		return p
	}
	if i := strings.LastIndexByte(p, '/'); i >= 0 && i < len(p)-1 {
		return p[i+1:]
	}
	return p
}
