package cpuprof

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A stand-in for a JIT: it writes a loop into anonymous executable memory, prints its
// address and runs it.
const jitC = `#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

int main(void) {
	/* push %rbp; mov %rsp,%rbp; 1: jmp 1b */
	unsigned char code[] = {0x55, 0x48, 0x89, 0xe5, 0xeb, 0xfe};
	void *p = mmap(0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) return 1;
	memcpy(p, code, sizeof code);
	printf("%lx\n", (unsigned long)p);
	fflush(stdout);
	((void (*)(void))p)();
	return 0;
}
`

// TestSymbolizeJIT records code in anonymous memory that perf cannot name, then writes
// the perf map a JIT would have written (where perf did not look) and checks the
// Symbolizer names the samples from it: perf's addresses for such code are the
// process's.
func TestSymbolizeJIT(t *testing.T) {
	needPerf(t)
	needTool(t, "gcc", "gcc")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "jit.c"), []byte(jitC), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "jit")
	run(t, dir, "gcc", "-O1", "-o", bin, "jit.c")
	cmd := exec.Command(bin)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	start, err := strconv.ParseUint(strings.TrimSpace(line), 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "perf.data")
	if err := (Recording{PIDs: []int{cmd.Process.Pid}, Duration: time.Second, Output: data}).Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	tr, err := Script(t.Context(), "", data)
	if err != nil {
		t.Fatal(err)
	}
	if got := leafShare(tr, ""); got < 0.5 {
		t.Fatalf("share of samples perf left unnamed = %.2f, want most; first stack %+v", got, tr.Samples[0].Stack)
	}
	t.Logf("perf printed the leaf as %+v", tr.Samples[0].Stack[0])
	maps := t.TempDir()
	m := fmt.Sprintf("%x 6 jit_spin_loop\n", start)
	if err := os.WriteFile(filepath.Join(maps, fmt.Sprintf("perf-%d.map", cmd.Process.Pid)), []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Symbolizer{TmpDir: maps}
	s.Symbolize(tr)
	if got := leafShare(tr, "jit_spin_loop"); got < 0.5 {
		t.Errorf("share of samples in jit_spin_loop = %.2f, want most; first stack %+v", got, tr.Samples[0].Stack)
	}
}
