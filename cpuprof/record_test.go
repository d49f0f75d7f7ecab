package cpuprof

import (
	"strings"
	"testing"
	"time"
)

func TestRecordingArgs(t *testing.T) {
	tests := []struct {
		name string
		rec  Recording
		want string
	}{
		{"pids", Recording{PIDs: []int{12, 345}, Duration: 1500 * time.Millisecond, Output: "/tmp/p.data"},
			"record --quiet -e cpu-clock -F 499 --call-graph fp --no-buildid-cache -o /tmp/p.data -p 12,345 -- sleep 1.500"},
		{"cgroup", Recording{Cgroup: "/system.slice/docker-abc.scope", Frequency: 99, CallGraph: DWARF, Duration: 5 * time.Second, Output: "o"},
			"record --quiet -e cpu-clock -F 99 --call-graph dwarf --no-buildid-cache -o o -a -G system.slice/docker-abc.scope -- sleep 5.000"},
		{"cpus", Recording{CPUs: "2-3", Frequency: 999, Duration: time.Second, Output: "o"},
			"record --quiet -e cpu-clock -F 999 --call-graph fp --no-buildid-cache -o o -a -C 2-3 -- sleep 1.000"},
	}
	for _, tt := range tests {
		got, err := tt.rec.Args()
		if err != nil {
			t.Errorf("%s: Args() error %v", tt.name, err)
			continue
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("%s: Args() = %s\nwant %s", tt.name, g, tt.want)
		}
	}
	bad := []Recording{
		{Duration: time.Second, Output: "o"}, // no target
		{PIDs: []int{1}, Cgroup: "x", Duration: time.Second, Output: "o"},
		{Cgroup: "x", CPUs: "0", Duration: time.Second, Output: "o"},
		{PIDs: []int{1}, Output: "o"},                        // no duration
		{PIDs: []int{1}, Duration: time.Second},              // no output
		{PIDs: []int{0}, Duration: time.Second, Output: "o"}, // bad pid
		{PIDs: []int{1}, Duration: time.Second, Output: "o", CallGraph: "lbr"},
		{PIDs: []int{1}, Duration: time.Second, Output: "o", Frequency: -1},
	}
	for _, r := range bad {
		if args, err := r.Args(); err == nil {
			t.Errorf("%+v: Args() = %v, want an error", r, args)
		}
	}
}

func TestScriptArgs(t *testing.T) {
	if got, want := strings.Join(ScriptArgs("p.data"), " "), "script -i p.data -F "+ScriptFields+" --show-mmap-events"; got != want {
		t.Errorf("ScriptArgs(p.data) = %s, want %s", got, want)
	}
	if got, want := strings.Join(ScriptArgs("p.data", 7, 9), " "), "script -i p.data -F "+ScriptFields+" --show-mmap-events --pid 7,9"; got != want {
		t.Errorf("ScriptArgs(p.data, 7, 9) = %s, want %s", got, want)
	}
}
