package arenaload

import (
	"strings"
	"testing"
	"time"
)

func TestCPUSaturated(t *testing.T) {
	for _, tt := range []struct {
		cpu, elapsed time.Duration
		cores        int
		want         string
	}{
		{1950 * time.Millisecond, time.Second, 2, "generator CPU saturated: 1.95 of 2 cores (98%) over the run"},
		{1700 * time.Millisecond, time.Second, 2, ""},
		{900 * time.Millisecond, time.Second, 1, "generator CPU saturated: 0.90 of 1 cores (90%) over the run"},
		{time.Second, 0, 2, ""},
	} {
		if got := CPUSaturated(tt.cpu, tt.elapsed, tt.cores); got != tt.want {
			t.Errorf("CPUSaturated(%v, %v, %d) = %q, want %q", tt.cpu, tt.elapsed, tt.cores, got, tt.want)
		}
	}
	if n := UsableCores(); n < 1 {
		t.Errorf("UsableCores = %d", n)
	}
}

func TestHistogram(t *testing.T) {
	h := NewHistogram()
	for i := range 1000 {
		Record(h, time.Duration(i+1)*time.Microsecond)
	}
	Record(h, -time.Second)   // clamped to 1 µs
	Record(h, 1000*time.Hour) // clamped to the top
	l := Summarize(h)
	if l.P50 < 490 || l.P50 > 510 || l.P99 < 980 || l.P99 > 1000 || l.Max < 99_000_000 || l.P50 > l.P90 || l.P90 > l.P99 || l.P99 > l.P999 {
		t.Errorf("Summarize = %+v", l)
	}
	if (Summarize(NewHistogram()) != Latency{}) {
		t.Error("an empty histogram has percentiles")
	}
	if v := FullVersion(); !strings.HasPrefix(v, Version) {
		t.Errorf("FullVersion %q does not start with %s", v, Version)
	}
}
