package result

// HostFacts describe the machine a result was measured on, in the arena's current.json
// shape (site/data/current.json): every value a string, as the arena writes them (its
// write_current_json reads lscpu, nproc, free -h, dmidecode, the cpufreq governor,
// /etc/os-release, uname, docker version and info, ip link and sysctl). A value that could
// not be read is "unknown"; RAMSpeed is left out then, as the arena leaves it out.
type HostFacts struct {
	CPU            string `json:"cpu"`              // "AMD Ryzen Threadripper PRO 3995WX 64-Cores"
	Cores          string `json:"cores"`            // "64": Threads ÷ ThreadsPerCore
	Threads        string `json:"threads"`          // "128": online CPUs
	ThreadsPerCore string `json:"threads_per_core"` // "2"
	RAM            string `json:"ram"`              // "251Gi", as free -h prints it
	RAMSpeed       string `json:"ram_speed,omitempty"`
	OS             string `json:"os"`             // "Ubuntu 24.04.4 LTS"
	Kernel         string `json:"kernel"`         // "6.17.0-22-generic"
	Docker         string `json:"docker"`         // the daemon's version, "29.3.0"
	DockerRuntime  string `json:"docker_runtime"` // "runc"
	Governor       string `json:"governor"`       // cpu0's scaling_governor, "performance"
	TCP            *TCP   `json:"tcp,omitempty"`
}

// TCP are the network settings current.json records.
type TCP struct {
	LoMTU      string `json:"lo_mtu"`     // "1500"
	Congestion string `json:"congestion"` // "cubic"
	Somaxconn  string `json:"somaxconn"`  // "65535"
	RmemMax    string `json:"rmem_max"`   // "7500000"
	WmemMax    string `json:"wmem_max"`
}
