package host

import (
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/arenabot/arenabot/result"
)

func TestFactsFrom(t *testing.T) {
	root := fstest.MapFS{
		"proc/cpuinfo":                  {Data: []byte("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD Ryzen Threadripper PRO 3995WX 64-Cores\n\nprocessor\t: 1\n")},
		"proc/meminfo":                  {Data: []byte("MemTotal:       263518180 kB\nMemFree:        1000 kB\n")},
		"etc/os-release":                {Data: []byte("NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 24.04.4 LTS\"\n")},
		"proc/sys/kernel/osrelease":     {Data: []byte("6.17.0-22-generic\n")},
		"sys/devices/system/cpu/online": {Data: []byte("0-127\n")},
		"sys/devices/system/cpu/cpu0/topology/thread_siblings_list": {Data: []byte("0,64\n")},
		"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor":      {Data: []byte("performance\n")},
		"sys/class/net/lo/mtu":                     {Data: []byte("1500\n")},
		"proc/sys/net/ipv4/tcp_congestion_control": {Data: []byte("cubic\n")},
		"proc/sys/net/core/somaxconn":              {Data: []byte("65535\n")},
		"proc/sys/net/core/rmem_max":               {Data: []byte("7500000\n")},
		"proc/sys/net/core/wmem_max":               {Data: []byte("7500000\n")},
	}
	got := FactsFrom(root, "29.3.0", "runc", func() string { return "3200 MT/s" })
	want := result.HostFacts{
		CPU: "AMD Ryzen Threadripper PRO 3995WX 64-Cores", Cores: "64", Threads: "128", ThreadsPerCore: "2",
		RAM: "251Gi", RAMSpeed: "3200 MT/s", OS: "Ubuntu 24.04.4 LTS", Kernel: "6.17.0-22-generic",
		Docker: "29.3.0", DockerRuntime: "runc", Governor: "performance",
		TCP: &result.TCP{LoMTU: "1500", Congestion: "cubic", Somaxconn: "65535", RmemMax: "7500000", WmemMax: "7500000"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FactsFrom (-want +got):\n%s", diff)
	}

	// A machine that tells little: unknown values, no tcp block, no memory speed.
	old := NumCPU
	NumCPU = func() int { return 2 }
	defer func() { NumCPU = old }()
	got = FactsFrom(fstest.MapFS{"usr/lib/os-release": {Data: []byte("PRETTY_NAME='Debian GNU/Linux 12 (bookworm)'\n")}}, "", "", func() string { return "" })
	want = result.HostFacts{CPU: "unknown", Cores: "unknown", Threads: "2", ThreadsPerCore: "unknown", RAM: "unknown",
		OS: "Debian GNU/Linux 12 (bookworm)", Kernel: "unknown", Docker: "unknown", DockerRuntime: "unknown", Governor: "unknown"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FactsFrom of a bare machine (-want +got):\n%s", diff)
	}
}

func TestMemTotal(t *testing.T) {
	for kb, want := range map[string]string{"263518180": "251Gi", "8072000": "7.7Gi", "524288": "512Mi", "16384000": "16Gi", "x": ""} {
		if got := memTotal("MemTotal:    " + kb + " kB\n"); got != want {
			t.Errorf("memTotal(%s kB) = %q, want %q", kb, got, want)
		}
	}
}

func TestDMISpeed(t *testing.T) {
	out := "Memory Device\n\tSize: No Module Installed\n\tSpeed: Unknown\n\nMemory Device\n\tSize: 32 GB\n\tSpeed: 3200 MT/s\n\tConfigured Memory Speed: 2933 MT/s\n"
	if got := dmiSpeed([]byte(out)); got != "2933 MT/s" {
		t.Errorf("dmiSpeed = %q, want the configured speed", got)
	}
	if got := dmiSpeed([]byte("\tSpeed: 3200 MT/s\n")); got != "3200 MT/s" {
		t.Errorf("dmiSpeed = %q, want the rated speed", got)
	}
	if got := dmiSpeed([]byte("# No SMBIOS nor DMI entry point found, sorry.\n")); got != "" {
		t.Errorf("dmiSpeed without tables = %q", got)
	}
}
