package cpuprof

import (
	"bufio"
	"debug/elf"
	"debug/gosym"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// A Symbolizer names the frames perf script left as [unknown]. Its sources, tried in
// order for a user-space frame:
//
//   - a Go binary's own pclntab (.gopclntab), which survives -ldflags=-s -w;
//   - the ELF symbol tables (.symtab, then .dynsym) of any other binary;
//   - the perf map a JIT runtime writes (/tmp/perf-<pid>.map), looked for both on the
//     host and inside the process's root under its namespace PID, which is where a
//     runtime in a container writes it.
//
// Binaries are opened through /proc/<pid>/root first, so a container's file is read
// even when the host has no such path, then at the path itself. A frame nothing names is
// set to [Unknown]; its DSO stays, so it is counted per DSO, never dropped. Kernel frames
// are left to perf, which reads kallsyms.
//
// The zero value is ready to use; a Symbolizer caches what it opened and is not safe for
// concurrent use.
type Symbolizer struct {
	// ProcDir is the proc file system; "" means "/proc".
	ProcDir string
	// TmpDir is the host's directory of perf maps; "" means "/tmp".
	TmpDir string

	bins    map[string]*binary // by path opened; nil when it could not be read
	perfMap map[int]*perfMap   // by pid
}

// Symbolize fills in the Symbol of every frame of tr that has none.
func (s *Symbolizer) Symbolize(tr *Trace) {
	for i := range tr.Samples {
		smp := &tr.Samples[i]
		for j := range smp.Stack {
			f := &smp.Stack[j]
			if f.Symbol != "" {
				continue
			}
			// A caller's address is a return address, which may be the first byte after
			// the function when the call was its last instruction: look up the call.
			back := uint64(0)
			if j > 0 && f.Addr > 0 {
				back = 1
			}
			q := *f
			q.Addr -= back
			name, off, ok := s.lookup(tr, smp.PID, q)
			if !ok {
				f.Symbol = Unknown
				continue
			}
			f.Symbol, f.Offset = name, off+back
		}
	}
}

func (s *Symbolizer) lookup(tr *Trace, pid int, f Frame) (string, uint64, bool) {
	if f.Kernel() {
		return "", 0, false
	}
	if isFileDSO(f.DSO) {
		if b := s.binary(pid, f.DSO); b != nil {
			return b.lookup(f.Addr)
		}
		// Not an ELF file we can read (memfd JIT code, a deleted file): perf printed a
		// map-relative address; the perf map wants the process address.
		if addr, ok := processAddr(tr, pid, f); ok {
			return s.perfMapFor(pid).lookup(addr)
		}
		return "", 0, false
	}
	// Anonymous memory (perf names it after the perf map it looked for, or says
	// [unknown]): perf printed the process address.
	if f.DSO == "" || isPerfMapPath(f.DSO) || strings.HasPrefix(f.DSO, "//anon") || strings.HasPrefix(f.DSO, "[anon") {
		return s.perfMapFor(pid).lookup(f.Addr)
	}
	return "", 0, false
}

// isFileDSO reports whether perf named a file, not a pseudo-DSO like [vdso].
func isFileDSO(dso string) bool {
	return strings.HasPrefix(dso, "/") && !strings.HasPrefix(dso, "//") && !isPerfMapPath(dso)
}

func isPerfMapPath(dso string) bool {
	base := filepath.Base(dso)
	return strings.HasPrefix(base, "perf-") && strings.HasSuffix(base, ".map")
}

// processAddr turns a map-relative address back into the process's: the mapping of the
// same file whose file range holds it.
func processAddr(tr *Trace, pid int, f Frame) (uint64, bool) {
	for _, m := range tr.Mappings {
		if m.PID == pid && m.Path == f.DSO && f.Addr >= m.Pgoff && f.Addr < m.Pgoff+m.Len {
			return f.Addr - m.Pgoff + m.Start, true
		}
	}
	return 0, false
}

func (s *Symbolizer) procDir() string {
	if s.ProcDir == "" {
		return "/proc"
	}
	return s.ProcDir
}

func (s *Symbolizer) binary(pid int, path string) *binary {
	if s.bins == nil {
		s.bins = map[string]*binary{}
	}
	procRoot := filepath.Join(s.procDir(), strconv.Itoa(pid), "root")
	for _, root := range []string{procRoot, "/"} {
		p := filepath.Join(root, path)
		b, seen := s.bins[p]
		if !seen {
			b, _ = openBinary(p, root)
			s.bins[p] = b
		}
		if b != nil {
			return b
		}
	}
	return nil
}

// A binary is what one ELF file can say about its addresses.
type binary struct {
	loads []elf.ProgHeader // PT_LOAD, to turn file offsets into link-time addresses
	gotab *gosym.Table     // nil for a binary that is not Go
	syms  []elfSym         // sorted by value
}

type elfSym struct {
	value, size uint64
	name        string
}

// openBinary reads the ELF file at path; root is the file system it is in, where its
// separate debug file is looked for when it has no .symtab of its own.
func openBinary(path, root string) (*binary, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := &binary{}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			b.loads = append(b.loads, p.ProgHeader)
		}
	}
	if tab, err := goTable(f); err == nil {
		b.gotab = tab
	}
	b.syms = funcSymbols(f.Symbols)
	if len(b.syms) == 0 {
		// A distribution's library keeps its full table in a debug file named by build
		// ID (libc6-dbg: /usr/lib/debug/.build-id/93/ac61...debug).
		if id := buildID(f); len(id) > 1 {
			hex := fmt.Sprintf("%x", id)
			if d, err := elf.Open(filepath.Join(root, "usr/lib/debug/.build-id", hex[:2], hex[2:]+".debug")); err == nil {
				b.syms = funcSymbols(d.Symbols)
				d.Close()
			}
		}
	}
	if len(b.syms) == 0 {
		b.syms = funcSymbols(f.DynamicSymbols)
	}
	sort.SliceStable(b.syms, func(i, j int) bool { return b.syms[i].value < b.syms[j].value })
	if b.gotab == nil && len(b.syms) == 0 {
		return nil, fmt.Errorf("%s: no symbols", path)
	}
	return b, nil
}

// funcSymbols are the defined functions of one symbol table.
func funcSymbols(read func() ([]elf.Symbol, error)) []elfSym {
	syms, err := read()
	if err != nil {
		return nil
	}
	var out []elfSym
	for _, sym := range syms {
		if elf.ST_TYPE(sym.Info) != elf.STT_FUNC && elf.ST_TYPE(sym.Info) != elf.STT_GNU_IFUNC || sym.Value == 0 || sym.Section == elf.SHN_UNDEF {
			continue
		}
		out = append(out, elfSym{value: sym.Value, size: sym.Size, name: sym.Name})
	}
	return out
}

// buildID is the GNU build ID note of f, nil when it has none.
func buildID(f *elf.File) []byte {
	sec := f.Section(".note.gnu.build-id")
	if sec == nil {
		return nil
	}
	data, err := sec.Data()
	// namesz, descsz, type, "GNU\x00", desc
	if err != nil || len(data) < 16 {
		return nil
	}
	namesz := f.ByteOrder.Uint32(data[0:4])
	descsz := f.ByteOrder.Uint32(data[4:8])
	start := 12 + (namesz+3)&^3
	if uint64(start)+uint64(descsz) > uint64(len(data)) {
		return nil
	}
	return data[start : start+descsz]
}

// goTable reads Go's function table from .gopclntab. Since Go 1.18 the table is
// self-describing given the start of the text; .text starts at runtime.text.
func goTable(f *elf.File) (*gosym.Table, error) {
	sec := f.Section(".gopclntab")
	text := f.Section(".text")
	if sec == nil || text == nil {
		return nil, errors.New("not a Go binary")
	}
	data, err := sec.Data()
	if err != nil {
		return nil, err
	}
	return gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
}

// lookup names the function at a file offset.
func (b *binary) lookup(fileOff uint64) (string, uint64, bool) {
	addr, ok := b.vaddr(fileOff)
	if !ok {
		return "", 0, false
	}
	if b.gotab != nil {
		if fn := b.gotab.PCToFunc(addr); fn != nil {
			return fn.Name, addr - fn.Entry, true
		}
	}
	i := sort.Search(len(b.syms), func(i int) bool { return b.syms[i].value > addr }) - 1
	if i < 0 {
		return "", 0, false
	}
	sym := b.syms[i]
	if sym.size > 0 && addr >= sym.value+sym.size {
		return "", 0, false
	}
	return demangle.Filter(sym.name), addr - sym.value, true
}

// vaddr turns a file offset into the address the ELF file was linked at: the load
// segment holding the offset says where it goes. This is the same for PIE and non-PIE
// binaries because perf already removed the load bias.
func (b *binary) vaddr(off uint64) (uint64, bool) {
	for _, p := range b.loads {
		if off >= p.Off && off < p.Off+p.Filesz {
			return off - p.Off + p.Vaddr, true
		}
	}
	return 0, false
}

// A perfMap is a JIT runtime's list of code ranges.
type perfMap struct {
	entries []perfMapEntry // sorted by start
}

type perfMapEntry struct {
	start, size uint64
	name        string
}

func (s *Symbolizer) perfMapFor(pid int) *perfMap {
	if s.perfMap == nil {
		s.perfMap = map[int]*perfMap{}
	}
	if m, ok := s.perfMap[pid]; ok {
		return m
	}
	tmp := s.TmpDir
	if tmp == "" {
		tmp = "/tmp"
	}
	paths := []string{filepath.Join(tmp, fmt.Sprintf("perf-%d.map", pid))}
	if ns, ok := nsPID(filepath.Join(s.procDir(), strconv.Itoa(pid), "status")); ok {
		paths = append(paths, filepath.Join(s.procDir(), strconv.Itoa(pid), "root", "tmp", fmt.Sprintf("perf-%d.map", ns)))
	}
	m := &perfMap{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		m.entries = append(m.entries, parsePerfMap(f)...)
		f.Close()
	}
	sort.SliceStable(m.entries, func(i, j int) bool { return m.entries[i].start < m.entries[j].start })
	s.perfMap[pid] = m
	return m
}

// nsPID is the process's PID in its innermost PID namespace: the last field of NSpid.
func nsPID(status string) (int, bool) {
	data, err := os.ReadFile(status)
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(data)) {
		rest, ok := strings.CutPrefix(line, "NSpid:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0, false
		}
		n, err := strconv.Atoi(fields[len(fields)-1])
		return n, err == nil
	}
	return 0, false
}

func (m *perfMap) lookup(addr uint64) (string, uint64, bool) {
	// The last entry starting at or below addr; when JIT code was replaced at the same
	// address, the later line of the file wins because the sort is stable.
	i := sort.Search(len(m.entries), func(i int) bool { return m.entries[i].start > addr }) - 1
	if i < 0 || addr >= m.entries[i].start+m.entries[i].size {
		return "", 0, false
	}
	e := m.entries[i]
	return e.name, addr - e.start, true
}

// parsePerfMap reads a perf map file: lines of "START SIZE name", START and SIZE in hex
// (with or without 0x), the name the rest of the line. Lines it cannot read are skipped.
func parsePerfMap(r io.Reader) []perfMapEntry {
	var out []perfMapEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.SplitN(strings.TrimSpace(sc.Text()), " ", 3)
		if len(fields) < 3 {
			continue
		}
		start, err1 := strconv.ParseUint(strings.TrimPrefix(fields[0], "0x"), 16, 64)
		size, err2 := strconv.ParseUint(strings.TrimPrefix(fields[1], "0x"), 16, 64)
		if err1 != nil || err2 != nil || size == 0 {
			continue
		}
		out = append(out, perfMapEntry{start: start, size: size, name: strings.TrimSpace(fields[2])})
	}
	return slices.Clip(out)
}
