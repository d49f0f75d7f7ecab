package profile

import "testing"

func TestCPUProfileMode(t *testing.T) {
	tests := []struct {
		flag     string
		oneEntry bool
		want     string
	}{
		{"", true, CPUProfileFirst},
		{"", false, CPUProfileNone},
		{"on", false, CPUProfileFirst},
		{"on", true, CPUProfileFirst},
		{"all", false, CPUProfileAll},
		{"none", true, CPUProfileNone},
	}
	for _, tt := range tests {
		if got := CPUProfileMode(tt.flag, tt.oneEntry); got != tt.want {
			t.Errorf("CPUProfileMode(%q, %v) = %q, want %q", tt.flag, tt.oneEntry, got, tt.want)
		}
	}
}

func TestCPUProfiled(t *testing.T) {
	counts := []int{512, 4096}
	tests := []struct {
		mode  string
		conns int
		want  bool
	}{
		{CPUProfileFirst, 512, true},
		{CPUProfileFirst, 4096, false},
		{CPUProfileAll, 4096, true},
		{CPUProfileNone, 512, false},
	}
	for _, tt := range tests {
		if got := CPUProfiled(tt.mode, tt.conns, counts); got != tt.want {
			t.Errorf("CPUProfiled(%q, %d, %v) = %v, want %v", tt.mode, tt.conns, counts, got, tt.want)
		}
	}
	if CPUProfiled(CPUProfileFirst, 512, nil) {
		t.Error("CPUProfiled with no counts = true")
	}
}
